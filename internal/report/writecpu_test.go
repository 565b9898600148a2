//go:build linux

package report

import (
	"io"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCampaignWriteCPU is BenchmarkCampaignReport (and the summary
// alone, from the Records read as for it) with the CPU time of the process per report, user and system,
// beside the wall time, and the page faults per report: on a shared
// machine the wall time of a report built on every CPU swings with what
// else runs, its CPU time less. With -benchtime 1x and GOGC=50 (as
// perfbench report sets it), a report is written as perfbench report
// writes it, after the loading.
// go test -run '^$' -bench CampaignWriteCPU ./internal/report
func BenchmarkCampaignWriteCPU(b *testing.B) {
	for _, c := range []struct {
		name string
		opt  Options
	}{{"text", Options{}}, {"summary", Options{Tables: []string{tableSummary}}}} {
		// The Records as perfbench report reads them for these tables.
		in, err := LoadInputWith([]string{benchCampaign(b)}, FieldsFor(c.opt, false))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			start, faults := cpuTime(b)
			for b.Loop() {
				if err := Write(io.Discard, "text", in.Records, nil, c.opt); err != nil {
					b.Fatal(err)
				}
			}
			end, faultsEnd := cpuTime(b)
			b.ReportMetric(float64((end-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(faultsEnd-faults)/float64(b.N), "faults/op")
		})
	}
}

// cpuTime is the user and system CPU time of the process so far, and
// its minor page faults: each fresh page of memory costs one.
func cpuTime(b *testing.B) (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt
}
