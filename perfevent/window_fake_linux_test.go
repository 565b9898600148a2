package perfevent

import (
	"context"
	"testing"
	"time"
)

func TestMeasureSeriesAddsUp(t *testing.T) {
	f := newFakeSys()
	a, err := attachFake(t, f, fakeRoot(t, 100, threads(100, 101)), 100, []Event{taskClock, pageFaults}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var started, ended time.Time
	var live int
	w, err := Measure(context.Background(), a, WindowOptions{
		Duration:   120 * time.Millisecond,
		Interval:   30 * time.Millisecond,
		OnInterval: func(Reading) { live++ },
		OnStart:    func(at time.Time) error { started = at; return nil },
		OnEnd:      func(at time.Time) error { ended = at; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.Partial {
		t.Error("a window that ran its course is partial")
	}
	if !started.Equal(w.Total.Start) || !ended.Equal(w.Total.End) {
		t.Errorf("hooks saw %v..%v, window is %v..%v", started, ended, w.Total.Start, w.Total.End)
	}
	if len(w.Series) < 2 || live != len(w.Series) {
		t.Fatalf("%d intervals, %d reported live", len(w.Series), live)
	}
	// Every read adds config+1 per thread: the intervals' deltas add up to
	// the window's, and each read happened once.
	var sum Count
	for _, s := range w.Series {
		sum = sum.Add(s.Events[1].Count)
	}
	reads := len(w.Series) + 1
	if sum != w.Total.Events[1].Count || w.Total.Events[1].Count.Raw != uint64(2*3*(reads-1)) {
		t.Errorf("series sums to %+v, total %+v after %d reads", sum, w.Total.Events[1].Count, reads)
	}
	if last := w.Series[len(w.Series)-1].Events[1]; last.Status != StatusCounted || last.Value != 6 {
		t.Errorf("last interval's page-faults %+v, want 6 counted (one read of 2 threads, 3 each)", last)
	}
}

func TestMeasureInterrupted(t *testing.T) {
	for _, planned := range []time.Duration{time.Hour, 0} {
		f := newFakeSys()
		a, err := attachFake(t, f, fakeRoot(t, 100, threads(100)), 100, []Event{taskClock}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		w, err := Measure(ctx, a, WindowOptions{Duration: planned})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		// Ending by ctx interrupts a planned window; without a plan it is
		// the plan.
		if w.Partial != (planned > 0) {
			t.Errorf("planned %v: partial %v", planned, w.Partial)
		}
		if w.Total.Events[0].Count.Raw != 2 {
			t.Errorf("planned %v: task-clock %+v, want the last read's 2", planned, w.Total.Events[0].Count)
		}
	}
}

// The window is timed from the start counter read: what OnStart reads (a
// server's status, /proc of thousands of threads) runs inside it, and a
// start edge longer than the plan makes the window that long, not the plan
// longer. The intervals are timed from the start read too. Measured side
// by side: the window against OnStart's own length plus the plan, which
// is what a timer started after OnStart gives.
func TestMeasureTimedFromStartRead(t *testing.T) {
	f := newFakeSys()
	a, err := attachFake(t, f, fakeRoot(t, 100, threads(100)), 100, []Event{taskClock}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const edge, planned = 400 * time.Millisecond, 200 * time.Millisecond
	var beforeEnd time.Time
	w, err := Measure(context.Background(), a, WindowOptions{
		Duration:  planned,
		Interval:  100 * time.Millisecond,
		OnStart:   func(time.Time) error { time.Sleep(edge); return nil },
		BeforeEnd: func() { beforeEnd = time.Now(); time.Sleep(10 * time.Millisecond) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.StartTook < edge || w.BeforeEndTook < 10*time.Millisecond {
		t.Fatalf("StartTook %v, BeforeEndTook %v: the sleeps were %v and 10ms", w.StartTook, w.BeforeEndTook, edge)
	}
	secs := w.Total.End.Sub(w.Total.Start)
	// The end comes as soon as OnStart is done (past the planned end):
	// less than half the plan after it, where a timer started after
	// OnStart ends it a whole plan after.
	afterStart := beforeEnd.Sub(w.Total.Start) - w.StartTook
	if afterStart > planned/2 {
		t.Errorf("the end began %v after OnStart returned (window %v, OnStart %v, plan %v): the window was timed from after OnStart", afterStart, secs, w.StartTook, planned)
	}
	// The intervals' ticks came during OnStart: the first read after it
	// takes them, and no interval waits a whole interval after OnStart.
	switch {
	case len(w.Series) == 0:
		t.Error("no series interval")
	case w.Series[0].End.Sub(w.Total.Start) > w.StartTook+planned/2:
		t.Errorf("first interval ended at %v of a window whose OnStart took %v", w.Series[0].End.Sub(w.Total.Start), w.StartTook)
	}
}
