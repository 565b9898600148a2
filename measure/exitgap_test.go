package measure

import (
	"errors"
	"slices"
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
			w, _, _ := exitGap(reading(tc.taskClock, tc.status), tc.start, tc.end, tc.cgroup)
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

// TestMarkCPUGap: a per-thread window whose task-clock is more than 3%
// below the server's CPU time carries the cpu-gap warning, with the
// window's context switches and the gap per switch; the outcome and error
// stay what they were.
func TestMarkCPUGap(t *testing.T) {
	snap := func(clock time.Duration) *osstat.Snapshot {
		return &osstat.Snapshot{CPUClock: clock, HasCPUClock: true, Process: &osstat.Process{Stat: osstat.ProcStat{PID: 500, StartTime: 1}}}
	}
	reading := func(ms float64) perfevent.Reading {
		return perfevent.Reading{Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "task-clock"}, Value: ms * 1e6, Status: perfevent.StatusCounted},
			{Event: perfevent.Event{Name: "context-switches"}, Value: 40000, Status: perfevent.StatusCounted},
		}}
	}
	start, end := snap(5*time.Second), snap(5*time.Second+800*time.Millisecond)
	for _, tc := range []struct {
		name      string
		taskClock float64
		outcome   record.Outcome
		error     string
		warning   string // a part of the warning, "" for none
	}{
		{"12.5% short", 700, record.OutcomeOK, "", "task-clock 700.0 ms is 12.5% below the server's CPU time over the window (800.0 ms"},
		{"12.5% short, per switch", 700, record.OutcomeOK, "", "(40000 context switches in the window, 2.50 µs short per switch: per-thread counters miss a slice of each)"},
		{"4% short", 768, record.OutcomeOK, "", "is 4.0% below"},
		{"2% short", 784, record.OutcomeOK, "", ""},
		{"12.5% short, failed", 700, record.OutcomeFailed, "the count of cycles is unknown", "is 12.5% below"},
		{"12.5% short, partial already", 700, record.OutcomePartial, "the server's status could not be read", "is 12.5% below"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := record.New(record.KindStat)
			r.Outcome, r.Error = tc.outcome, tc.error
			markCPUGap(r, reading(tc.taskClock), start, end, false)
			i := slices.IndexFunc(r.Warnings, func(w record.Warning) bool { return w.Code == record.WarnCPUGap })
			if r.Outcome != tc.outcome || r.Error != tc.error {
				t.Errorf("outcome %s, error %q; want them unchanged: %s, %q", r.Outcome, r.Error, tc.outcome, tc.error)
			}
			switch {
			case tc.warning == "" && i >= 0:
				t.Errorf("warning %q, want none", r.Warnings[i].Text)
			case tc.warning != "" && (i < 0 || !strings.Contains(r.Warnings[i].Text, tc.warning)):
				t.Errorf("warnings %q, want a cpu-gap warning saying %q", r.WarningTexts(), tc.warning)
			}
		})
	}
	// Cgroup mode sees all of the CPU: nothing to mark.
	r := record.New(record.KindStat)
	markCPUGap(r, reading(700), start, end, true)
	if r.Outcome != record.OutcomeOK || len(r.Warnings) != 0 {
		t.Errorf("cgroup mode: outcome %s, warnings %q", r.Outcome, r.WarningTexts())
	}
}

// TestMarkCgroupGap: in cgroup mode a window's task-clock is checked
// against the cgroup's CPU time read at its edges: within 3% nothing is
// said, beyond 5% either way is a cpu-gap warning with both numbers (a
// window that counted 7.5 ms of the cgroup's 194 ms passed unmarked); an
// edge not read is a warning that the check was not made. The outcome
// stays ok.
func TestMarkCgroupGap(t *testing.T) {
	reading := func(ms float64) perfevent.Reading {
		return perfevent.Reading{Events: []perfevent.EventCount{{Event: perfevent.Event{Name: "task-clock"}, Value: ms * 1e6, Status: perfevent.StatusCounted}}}
	}
	start := edge{cgUsage: 5e9}
	end := edge{cgUsage: 5e9 + 194e6}
	for _, tc := range []struct {
		name      string
		taskClock float64
		start     edge
		want      record.Outcome
		error     string // prefix
		warning   string // prefix, "" for none
	}{
		{"7.5 of 194 ms", 7.5, start, record.OutcomeOK, "",
			"task-clock 7.5 ms is 96.1% below the cgroup's CPU time over the window (194.0 ms, from cpu.stat usage_usec read right after the counters)"},
		{"6% above", 205.64, start, record.OutcomeOK, "", "task-clock 205.6 ms is 6.0% above"},
		{"6% below", 182.36, start, record.OutcomeOK, "", "task-clock 182.4 ms is 6.0% below"},
		{"4% above", 201.76, start, record.OutcomeOK, "", ""},
		{"2% below", 190.12, start, record.OutcomeOK, "", ""},
		{"start not read", 7.5, edge{cgErr: errors.New("no cpu.stat")}, record.OutcomeOK, "", "task-clock could not be checked against the cgroup's CPU time: no cpu.stat"},
		{"thread mode", 7.5, edge{}, record.OutcomeOK, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := record.New(record.KindStat)
			e := end
			if tc.start.cgUsage == 0 {
				e = edge{}
			}
			markCgroupGap(r, reading(tc.taskClock), tc.start, e)
			texts := r.WarningTexts()
			warned := slices.ContainsFunc(texts, func(s string) bool { return tc.warning != "" && strings.HasPrefix(s, tc.warning) })
			if r.Outcome != tc.want || !strings.HasPrefix(r.Error, tc.error) || warned != (tc.warning != "") || (tc.warning == "" && len(texts) > 0) {
				t.Errorf("outcome %s, error %q, warnings %q; want %s, %q…, warning %q…", r.Outcome, r.Error, texts, tc.want, tc.error, tc.warning)
			}
		})
	}
}
