//go:build linux

package perfevent

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkAttach2000Threads attaches 8 software events to every thread of a
// process with 2,000 threads, reads them once and closes them: what
// "perf stat -e <8 events> -p PID -- sleep 0" does. Each iteration also runs
// that perf stat on the same process, outside the timed part, and the
// benchmark reports its time per run (perf-stat-ns/op) and the ratio of the
// two (perf-stat/perfbench): the two measured side by
// side, interleaved, in one run. scripts/bench-attach.sh compares the whole
// perfbench stat command with perf stat.
func BenchmarkAttach2000Threads(b *testing.B) {
	w := startWorkload(b)
	w.do(b, "park %d", 2000-len(ints(b, w.do(b, "tids"))))
	threads := len(ints(b, w.do(b, "tids")))
	perf := perfBinary(b)
	var names []string
	for _, e := range eightSoftware {
		names = append(names, e.Name)
	}
	var ours, theirs time.Duration
	n := 0
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
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
		ours += time.Since(t0)
		n++
		b.StopTimer()
		t1 := time.Now()
		out, err := exec.Command(perf, "stat", "-e", strings.Join(names, ","), "-p", strconv.Itoa(w.pid), "--", "sleep", "0").CombinedOutput()
		if err != nil {
			b.Fatalf("perf stat: %v\n%s", err, out)
		}
		theirs += time.Since(t1)
		b.StartTimer()
	}
	b.ReportMetric(float64(threads), "threads")
	if n > 0 {
		b.ReportMetric(float64(theirs.Nanoseconds())/float64(n), "perf-stat-ns/op")
		b.ReportMetric(float64(theirs)/float64(ours), "perf-stat/perfbench")
	}
}
