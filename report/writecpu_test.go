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
// beside the wall time: on a shared machine the wall time of a report
// built on every CPU swings with what else runs, its CPU time less.
// go test -run '^$' -bench CampaignWriteCPU ./report
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
			start := cpuTime(b)
			for b.Loop() {
				if err := Write(io.Discard, "text", in.Records, nil, c.opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
