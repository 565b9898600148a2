package insertbench

import (
	"bytes"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/record"
)

// TestDriverProcess runs steps through StartDriver, the driver as a
// process of its own (this test binary, as perfbench insert-driver): it
// waits for Start before its first operation, says when its last one
// ended, and returns its Result; its CPU time is its own: a goroutine of
// this process that spins through the load is not in it. Stop interrupts
// a q step, which still reports what it did; a step that cannot start
// (no tables) reports why.
func TestDriverProcess(t *testing.T) {
	srv := testdb.Shared(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{exe, DriverCommand}
	opts := func(name string) Options {
		o := DefaultOptions(mustStep(t, name))
		o.Tables, o.Table = 2, "drv"
		return o
	}
	start := func(o Options) (*Driver, *bytes.Buffer) {
		t.Helper()
		var log bytes.Buffer
		d, err := StartDriver(argv, loadConfig(srv), o, nil, &log)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-d.Ready():
		case <-d.Exited():
			res, err := d.Wait()
			t.Fatalf("%s: the driver ended before its load: %v, %+v; log:\n%s", o.Step.Name, err, res, log.String())
		}
		return d, &log
	}

	o := opts("l.i0")
	o.Rows = 20_000
	d, _ := start(o)
	// Not started: nothing is loaded while the driver waits (a pause the
	// test makes, to see that nothing happens in it).
	time.Sleep(200 * time.Millisecond)
	select {
	case <-d.Ended():
		t.Fatal("l.i0 ended before Start")
	default:
	}
	var spinning atomic.Bool
	spinning.Store(true)
	spun := make(chan time.Duration)
	go func() {
		t0 := time.Now()
		for spinning.Load() {
		}
		spun <- time.Since(t0)
	}()
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	<-d.Ended()
	spinning.Store(false)
	spin := <-spun
	res, err := d.Wait()
	if err != nil {
		t.Fatal(err)
	}
	cpu := res.DriverUser + res.DriverSystem
	t.Logf("l.i0 in the driver process: %d rows in %.2f s, driver CPU %s (%s per row), peak RSS %.1f MB; this process spun %s meanwhile",
		res.Inserted, res.Seconds, cpu, res.DriverCPUPerOp(), float64(res.DriverPeakRSSBytes)/(1<<20), spin)
	if res.Inserted != 40_000 || res.Histograms[record.OpInsert].Count() != 400 || len(res.Series) == 0 || res.DriverPeakRSSBytes <= 0 {
		t.Errorf("l.i0: %d rows in %d statements, %d points, peak RSS %d", res.Inserted,
			res.Histograms[record.OpInsert].Count(), len(res.Series), res.DriverPeakRSSBytes)
	}
	if cpu <= 0 || cpu >= spin*8/10 {
		t.Errorf("l.i0: the driver's CPU %s, while this process spun %s: the driver's is not its own", cpu, spin)
	}
	if math.IsNaN(res.P50) != (res.RateSeconds == 0) { // NaN without a full second, carried as such
		t.Errorf("l.i0: p50 %v from %d seconds", res.P50, res.RateSeconds)
	}

	// A q step before the indexes exist: the driver says why.
	d2, err := StartDriver(argv, loadConfig(srv), opts("qr100"), nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Wait(); err == nil || !strings.Contains(err.Error(), "lacks the secondary indexes") {
		t.Errorf("qr100 before l.x: %v", err)
	}

	d, _ = start(opts("l.x"))
	d.Start()
	if _, err := d.Wait(); err != nil {
		t.Fatal(err)
	}

	// Stop interrupts a q step of an hour: it reports what it did. It is
	// stopped once the server has inserted a batch more than there are
	// writers, one a second each: one writer's first batch is done, and
	// the queries, which run without a pause, have run for a second.
	q := opts("qr100")
	d, log := start(q)
	d.Start()
	testdb.WaitStatus(t, srv, "Handler_write", float64(q.Tables*q.RowsPerCommit))
	d.Stop(10 * time.Second)
	res, err = d.Wait()
	if err == nil || !strings.Contains(err.Error(), "interrupted") || res == nil || res.Queries == 0 || res.Inserted == 0 {
		t.Errorf("qr100 stopped: %v, %+v; log:\n%s", err, res, log.String())
	}
	if _, err := os.Stat(d.dir); err == nil {
		t.Errorf("the driver's request folder %s is left behind", d.dir)
	}
}
