package measure

import (
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/osstat"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// TestExitGap: a per-thread window whose task-clock is more than 3% below
// the process's CPU time over the window (its CPU clock, plus its child
// processes' CPU when read at both edges: inherited counters count them)
// carries a cpu-gap warning giving both numbers and the cure (cgroup
// mode); 3% or less, 2 ms or less, cgroup mode, a clock not read at both
// edges, a process restarted in between, or a task-clock not counted do
// not.
func TestExitGap(t *testing.T) {
	snap := func(clock time.Duration, has bool, started uint64) *osstat.Snapshot {
		return &osstat.Snapshot{CPUClock: clock, HasCPUClock: has, Process: &osstat.Process{Stat: osstat.ProcStat{PID: 500, StartTime: started}}}
	}
	// withChildren is snap with its children's CPU read.
	withChildren := func(clock, children time.Duration) *osstat.Snapshot {
		s := snap(clock, true, 1)
		s.ChildrenCPU, s.HasChildrenCPU = children, true
		return s
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
			[]string{"task-clock 760.0 ms is 5.0% below", "800.0 ms: by its CPU clock", "--cgroup"}},
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
		// A forking process: 800 ms by its clock, 100 ms by its
		// children; task-clock counts both.
		{"children: 5% short of both", 855, perfevent.StatusCounted, withChildren(t0, time.Second), withChildren(t1, time.Second+100*time.Millisecond), false,
			[]string{"task-clock 855.0 ms is 5.0% below", "900.0 ms: 800.0 ms by its CPU clock and 100.0 ms of its child processes'"}},
		{"children: 2% short of both", 882, perfevent.StatusCounted, withChildren(t0, time.Second), withChildren(t1, time.Second+100*time.Millisecond), false, nil},
		{"children read at one edge only", 776, perfevent.StatusCounted, snap(t0, true, 1), withChildren(t1, 100*time.Millisecond), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := exitGap(reading(tc.taskClock, tc.status), tc.start, tc.end, tc.cgroup)
			if tc.want == nil {
				if w.Text != "" {
					t.Errorf("warning %q, want none", w.Text)
				}
				return
			}
			if w.Code != record.WarnCPUGap {
				t.Errorf("warning code %q, want %s", w.Code, record.WarnCPUGap)
			}
			for _, s := range tc.want {
				if !strings.Contains(w.Text, s) {
					t.Errorf("warning %q does not say %q", w.Text, s)
				}
			}
		})
	}
}
