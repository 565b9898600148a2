package main

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAt: the clock between two reads is interpolated; outside the series,
// or between reads further apart than the gap, there is no value.
func TestAt(t *testing.T) {
	t0 := time.Unix(100, 0)
	s := []point{{t0, 1 * time.Second}, {t0.Add(10 * time.Millisecond), 1*time.Second + 8*time.Millisecond}, {t0.Add(300 * time.Millisecond), 2 * time.Second}}
	if v, ok := at(s, t0.Add(5*time.Millisecond), 100*time.Millisecond); !ok || v != 1*time.Second+4*time.Millisecond {
		t.Errorf("halfway: %v %v, want 1.004s", v, ok)
	}
	if _, ok := at(s, t0.Add(-time.Millisecond), 100*time.Millisecond); ok {
		t.Error("before the first read: a value")
	}
	if _, ok := at(s, t0.Add(400*time.Millisecond), 100*time.Millisecond); ok {
		t.Error("after the last read: a value")
	}
	if _, ok := at(s, t0.Add(100*time.Millisecond), 100*time.Millisecond); ok {
		t.Error("between reads 290 ms apart: a value")
	}
}

// TestProcessCPU: the clock read by pid is this process's own CPU clock
// (CLOCK_PROCESS_CPUTIME_ID, read between two reads by pid), and grows with
// the CPU it burns.
func TestProcessCPU(t *testing.T) {
	a, ok := processCPU(os.Getpid())
	if !ok {
		t.Skip("no per-process CPU clock here")
	}
	x := 0
	for i := range 50_000_000 {
		x += i
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	self := time.Duration(ts.Nano())
	b, _ := processCPU(os.Getpid())
	if self < a || self > b || b-a < time.Millisecond || x == 0 {
		t.Errorf("by pid %v then %v, CLOCK_PROCESS_CPUTIME_ID %v between them: want it inside, over a busy loop's ms", a, b, self)
	}
}
