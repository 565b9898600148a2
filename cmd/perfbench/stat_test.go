package main

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

// busy keeps a goroutine burning CPU until the test ends, so a window on
// this process has something to count.
func busy(t *testing.T) {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		x := 1
		for !stop.Load() {
			for i := range 100000 {
				x = x*31 + i
			}
		}
		runtime.KeepAlive(x)
	}()
	t.Cleanup(func() { stop.Store(true); <-done })
}

func TestStatJSON(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("perf events are Linux only")
	}
	busy(t)
	code, out, errs := runCLI(t, "stat", "--pid", strconv.Itoa(os.Getpid()), "-e", "task-clock,page-faults,cycles", "--duration", "300ms", "--interval", "100ms", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r, err := record.Parse([]byte(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tc, ok := r.Counter("task-clock")
	if !ok || tc.Status != record.StatusCounted || tc.Raw == 0 || tc.Value != float64(tc.Raw) || tc.Unit != "ns" {
		t.Errorf("task-clock %+v", tc)
	}
	// A goroutine spinning through the window: at least a tenth of the
	// window in CPU time, at most every CPU for the whole window.
	if secs := float64(tc.Raw) / 1e9; secs < 0.1*r.Window.Seconds || secs > float64(runtime.NumCPU())*r.Window.Seconds*1.1 {
		t.Errorf("task-clock %.3f s of CPU in a %.3f s window", secs, r.Window.Seconds)
	}
	if c, _ := r.Counter("cycles"); c.Status == "" || (c.Status == record.StatusNotSupported) != (c.Reason != "") {
		t.Errorf("cycles %+v", c)
	}
	if r.Kind != record.KindStat || r.Outcome != record.OutcomeOK || r.Server == nil || r.Server.Pid != os.Getpid() || len(r.Series) < 2 {
		t.Errorf("record: kind %s outcome %s server %+v series %d", r.Kind, r.Outcome, r.Server, len(r.Series))
	}
	if !strings.Contains(errs, "counting 3 events") {
		t.Errorf("stderr %q", errs)
	}
}

func TestStatInterrupted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("perf events are Linux only")
	}
	busy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out, errb strings.Builder
	code := run(ctx, []string{"stat", "--pid", strconv.Itoa(os.Getpid()), "-e", "task-clock", "--duration", "1h"}, strings.NewReader(""), &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "(partial: 1h0m0s planned)") || !strings.Contains(out.String(), " counted") || !strings.Contains(errb.String(), "partial window") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
}

func TestStatBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"stat"}, exitUsage, "--pid is required"},
		{[]string{"stat", "--pid", "1", "--format", "xml"}, exitUsage, "--format must be text or json"},
		{[]string{"stat", "--pid", "1", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"stat", "--pid", "2147483000", "--duration", "1s"}, exitFailure, "pid 2147483000: no such process"},
		{[]string{"stat", "--pid", "1", "-e", "task-clok", "--duration", "1s"}, exitFailure, `did you mean "task-clock"`},
	} {
		code, out, errs := runCLI(t, tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errs, tc.says) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d saying %q on one line", tc.args, code, out, errs, tc.code, tc.says)
		}
	}
}
