package measure

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

// A process with thousands of threads: perfbench reads /proc of every one
// of them right after the window's start counters, inside the window,
// which is timed from the counters. With a plan shorter than that
// reading, the window lasts as long as the reading, and the Record names
// perfbench's own reading (and the threads it read) as the cause, not a
// stalled machine or server. (Timed from after the reading, the window
// lasted the reading plus its plan, unmarked below 0.5 s over, and
// blamed a stall above.)
func TestManyThreadsOwnReading(t *testing.T) {
	needLinux(t)
	const threads = 4000
	w := startChurnProc(t, "")
	w.do(t, fmt.Sprintf("park %d", threads))
	list, sys := events(t, "task-clock")
	s, err := Start(context.Background(), Config{Pid: w.cmd.Process.Pid, Events: list, System: sys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const planned = time.Millisecond
	r, err := s.Measure(context.Background(), WindowSpec{Duration: planned})
	if err != nil {
		t.Fatal(err)
	}
	if r.Window.Seconds <= planned.Seconds() {
		t.Fatalf("a window of %d threads lasted %.4f s, no longer than its %v plan", threads, r.Window.Seconds, planned)
	}
	var own []string
	for _, wn := range r.Warnings {
		if strings.Contains(wn.Text, "stalled") {
			t.Errorf("the window's overrun is blamed on a stall: %q", wn.Text)
		}
		if wn.Code == record.WarnGeneral && strings.Contains(wn.Text, "perfbench's own reading kept it open") {
			own = append(own, wn.Text)
		}
	}
	if len(own) != 1 {
		t.Fatalf("window of %.3f s for a %v plan: %d warnings name perfbench's own reading: %q", r.Window.Seconds, planned, len(own), r.WarningTexts())
	}
	var n int
	if i := strings.Index(own[0], "/proc of "); i < 0 {
		t.Errorf("the warning does not say how many threads were read: %q", own[0])
	} else if fmt.Sscanf(own[0][i:], "/proc of %d threads", &n); n < threads {
		t.Errorf("the warning names %d threads, the process has over %d: %q", n, threads, own[0])
	}
	t.Logf("window %.3f s for a %v plan: %s", r.Window.Seconds, planned, own[0])
}
