//go:build linux

package perfevent

import (
	"testing"
)

// BenchmarkAttach2000Threads attaches 8 software events to every thread of a
// process with 2,000 threads, reads them once and closes them: what
// "perf stat -e <8 events> -p PID -- sleep 0" does. scripts/bench-attach.sh
// times the two side by side.
func BenchmarkAttach2000Threads(b *testing.B) {
	w := startWorkload(b)
	w.do(b, "park %d", 2000-len(ints(b, w.do(b, "tids"))))
	threads := len(ints(b, w.do(b, "tids")))
	b.ResetTimer()
	for b.Loop() {
		a, err := Attach(w.pid, eightSoftware, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Read(); err != nil {
			b.Fatal(err)
		}
		if err := a.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(threads), "threads")
}
