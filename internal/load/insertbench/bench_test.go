package insertbench

import (
	"context"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/perfbench/perfbench/internal/host/osstat"
	"github.com/perfbench/perfbench/internal/testdb"
)

// BenchmarkDriverCPU measures, in one run, the driver's CPU per operation
// next to the server's: l.i0 loading 2 tables × 200,000 rows (per
// insert) over TCP and again over the server's Unix socket, then, after
// l.x, qr100 for 10 s (per query). The driver runs in the test's process
// here, so that -cpuprofile profiles it; perfbench run runs it as a
// process of its own and prints the same two numbers.
// It reports both in µs per operation (and the driver's system part),
// the driver's as a percentage of the server's, and the peak resident
// memory of the driver (sampled every second) and the server's at the
// end of the step.
//
//	flock /tmp/pb-heavy.lock go test -run '^$' -bench DriverCPU -benchtime 1x ./internal/load/insertbench
func BenchmarkDriverCPU(b *testing.B) {
	srv := testdb.New(b, testdb.Options{Options: []string{"--innodb-buffer-pool-size=512M"}})
	fs := osstat.FS{}
	measure := func(b *testing.B, cfg *mysql.Config, o Options, ops func(*Result) int64) {
		var s0, s1 *osstat.Snapshot
		var err0, err1 error
		o.AtStart = func(time.Time) { s0, err0 = fs.Snapshot(srv.Pid, "") }
		o.AtEnd = func(time.Time) { s1, err1 = fs.Snapshot(srv.Pid, "") }
		res, err := runStep(context.Background(), cfg, o)
		if err != nil {
			b.Fatal(err)
		}
		if err0 != nil || err1 != nil {
			b.Fatal(err0, err1)
		}
		os, _, err := osstat.Delta(s0, s1)
		if err != nil {
			b.Fatal(err)
		}
		n := float64(ops(res))
		server := (os.UserSeconds + os.SystemSeconds) / n * 1e6
		driver := (res.DriverUser + res.DriverSystem).Seconds() / n * 1e6
		b.ReportMetric(driver, "driver-µs/op")
		b.ReportMetric(res.DriverSystem.Seconds()/n*1e6, "driver-sys-µs/op")
		b.ReportMetric(server, "server-µs/op")
		b.ReportMetric(100*driver/server, "driver-%-of-server")
		b.ReportMetric(float64(res.DriverPeakRSSBytes)/(1<<20), "driver-peak-RSS-MiB")
		b.ReportMetric(os.RSSBytes/(1<<20), "server-RSS-MiB")
		b.ReportMetric(n/res.Seconds, "ops/s")
	}
	opts := func(name string) Options {
		o := DefaultOptions(mustStep(b, name))
		o.Tables, o.Table = 2, "bench"
		return o
	}
	// l.i0 over TCP, then over the server's Unix socket, as perfbench run
	// connects.
	sock := loadConfig(srv)
	sock.Net, sock.Addr = "unix", srv.Socket
	for _, v := range []struct {
		name string
		cfg  *mysql.Config
	}{{"l.i0", loadConfig(srv)}, {"l.i0-unix", sock}} {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				o := opts("l.i0")
				o.Rows = 200_000
				measure(b, v.cfg, o, func(r *Result) int64 { return r.Inserted })
			}
		})
	}
	if _, err := runStep(context.Background(), loadConfig(srv), opts("l.x")); err != nil {
		b.Fatal(err)
	}
	b.Run("qr100", func(b *testing.B) {
		for range b.N {
			o := opts("qr100")
			o.Duration = 10 * time.Second
			measure(b, loadConfig(srv), o, func(r *Result) int64 { return r.Queries })
		}
	})
}
