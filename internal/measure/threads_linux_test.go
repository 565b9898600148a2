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

// At the window's end, /proc is read again only for the threads that ran
// (by their task-clock); the others' switches and CPU are those of the
// start. The workload's main thread answers 20 commands inside the window
// (at least 20 voluntary context switches) while 500 parked threads do
// nothing: the Record has the main thread's switches, and its split adds
// up to perf's count of them.
func TestEndEdgeReadsThreadsThatRan(t *testing.T) {
	needLinux(t)
	w := startChurnProc(t, "")
	w.do(t, "park 500")
	list, sys := events(t, "task-clock,context-switches")
	s, err := Start(context.Background(), Config{Pid: w.cmd.Process.Pid, Events: list, System: sys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const commands = 20
	done := make(chan struct{})
	r, err := s.Measure(context.Background(), WindowSpec{Duration: 300 * time.Millisecond, Opened: func(time.Time) {
		go func() {
			defer close(done)
			for range commands {
				w.do(t, "tids")
			}
		}()
	}})
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if r.OS == nil {
		t.Fatalf("no /proc deltas: %q", r.WarningTexts())
	}
	cs, ok := r.Counter("context-switches")
	if !ok || !cs.Measured() {
		t.Fatalf("context-switches %+v", cs)
	}
	t.Logf("voluntary %v, involuntary %v; perf's context-switches %v", r.OS.VoluntaryCS, r.OS.InvoluntaryCS, cs.Value)
	if r.OS.VoluntaryCS < commands {
		t.Errorf("%v voluntary context switches in /proc's split, the main thread waited for %d commands (perf counted %v "+
			"switches)", r.OS.VoluntaryCS, commands, cs.Value)
	}
	// /proc is read right after the counters, so it may see a few more
	// switches, not fewer: a thread that ran but was taken from the start
	// would take its switches away.
	if sum := r.OS.VoluntaryCS + r.OS.InvoluntaryCS; sum < 0.8*cs.Value {
		t.Errorf("/proc's split adds up to %v context switches, perf counted %v over the same threads", sum, cs.Value)
	}
}
