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
