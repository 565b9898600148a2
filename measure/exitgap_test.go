package measure

import (
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/osstat"
	"github.com/perfbench/perfbench/perfevent"
)

// TestExitGapWarning: a per-thread window whose task-clock is more than 3%
// below the process's CPU clock over the window is marked with both numbers
// and the cure (cgroup mode); 3% or less, 2 ms or less, cgroup mode, a
// clock not read at both edges, a process restarted in between, or a
// task-clock not counted are not.
func TestExitGapWarning(t *testing.T) {
	snap := func(clock time.Duration, has bool, started uint64) *osstat.Snapshot {
		return &osstat.Snapshot{CPUClock: clock, HasCPUClock: has, Process: &osstat.Process{Stat: osstat.ProcStat{PID: 500, StartTime: started}}}
	}
	reading := func(ms float64, st perfevent.Status) perfevent.Reading {
		return perfevent.Reading{Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "context-switches"}, Value: 1e9, Status: perfevent.StatusCounted},
			{Event: perfevent.Event{Name: "task-clock"}, Value: ms * 1e6, Status: st},
		}}
	}
	const (
		t0 = 5 * time.Second
		t1 = t0 + 800*time.Millisecond // 800 ms of CPU in the window
	)
	for _, tc := range []struct {
		name       string
		taskClock  float64 // ms
		status     perfevent.Status
		start, end *osstat.Snapshot
		cgroup     bool
		want       []string // nil: no warning
	}{
		{"5% short", 760, perfevent.StatusCounted, snap(t0, true, 1), snap(t1, true, 1), false,
			[]string{"task-clock 760.0 ms is 5.0% below", "800.0 ms by its CPU clock", "--cgroup"}},
		{"scaled, 4% short", 768, perfevent.StatusScaled, snap(t0, true, 1), snap(t1, true, 1), false,
			[]string{"task-clock 768.0 ms is 4.0% below"}},
		{"5% short of a little", 7.6, perfevent.StatusCounted, snap(t0, true, 1), snap(t0+8*time.Millisecond, true, 1), false, nil},
		{"3% short", 776, perfevent.StatusCounted, snap(t0, true, 1), snap(t1, true, 1), false, nil},
		{"above the clock", 810, perfevent.StatusCounted, snap(t0, true, 1), snap(t1, true, 1), false, nil},
		{"cgroup mode", 700, perfevent.StatusCounted, snap(t0, true, 1), snap(t1, true, 1), true, nil},
		{"clock not read at the end", 700, perfevent.StatusCounted, snap(t0, true, 1), snap(0, false, 1), false, nil},
		{"no snapshot at the start", 700, perfevent.StatusCounted, nil, snap(t1, true, 1), false, nil},
		{"restarted", 700, perfevent.StatusCounted, snap(t0, true, 1), snap(t1, true, 2), false, nil},
		{"task-clock not counted", 700, perfevent.StatusNotCounted, snap(t0, true, 1), snap(t1, true, 1), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := exitGapWarning(reading(tc.taskClock, tc.status), tc.start, tc.end, tc.cgroup)
			if tc.want == nil {
				if got != "" {
					t.Errorf("warning %q, want none", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("warning %q does not say %q", got, w)
				}
			}
		})
	}
}
