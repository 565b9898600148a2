package measure

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// TestCheckCPU: a window's task-clock is checked against the interval the
// reference was in over the window, read on both sides of the counters at
// each edge: [end.lo-start.hi, end.hi-start.lo], and judged per context
// switch of the window. More than 100 µs a switch outside it (and 2 ms)
// makes an ok Record partial, both numbers and the cause first in its
// Error: the counters missed CPU (below) or counted CPU the kernel did not
// charge (above). More than 40 µs a switch is a cpu-gap warning, in
// either mode and either way; so is, per thread, more than 3% below (the
// slices of switches, starts and exits per-thread counters miss), and,
// without a switch count, more than 5% either way. Less is nothing: a
// cgroup-mode window 14% below at 27 µs a switch or 6% above at 12 µs,
// the kernel charging a woken task from its wake-up. Inside the interval
// nothing is said even where the point read after the counters is more
// than 5% off. Per thread, task-clock above a reference without the
// children's CPU says nothing; an edge not read is a warning in cgroup
// mode; a failed Record stays failed.
func TestCheckCPU(t *testing.T) {
	reading := func(ms, switches float64, st perfevent.Status) perfevent.Reading {
		cs := perfevent.StatusCounted
		if switches == 0 {
			cs = perfevent.StatusNotCounted
		}
		return perfevent.Reading{Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "context-switches"}, Value: switches, Status: cs},
			{Event: perfevent.Event{Name: "task-clock"}, Value: ms * 1e6, Status: st},
		}}
	}
	// point is a reference read with no skew: 800 ms over the window.
	point := func(children bool) (cpuRef, cpuRef) {
		return cpuRef{lo: 5e9, hi: 5e9, children: children}, cpuRef{lo: 5.8e9, hi: 5.8e9, children: children}
	}
	ps, pe := point(false)
	cs, ce := point(true)
	// Skewed: 5000–5040 ms at the start, 5800–5850 ms at the end: the
	// window's reference is 750–850 ms (after the counters: 810 ms).
	ss, se := cpuRef{lo: 5e9, hi: 5.04e9}, cpuRef{lo: 5.79e9, hi: 5.85e9}
	// A cgroup window of 194 ms.
	gs, ge := cpuRef{lo: 5e9, hi: 5e9, children: true}, cpuRef{lo: 5.194e9, hi: 5.194e9, children: true}
	for _, tc := range []struct {
		name       string
		taskClock  float64 // ms
		switches   float64 // 0: not counted
		status     perfevent.Status
		start, end cpuRef
		kind       refKind
		outcome    record.Outcome // the Record's before the check
		want       record.Outcome
		error      []string // what the Error says (in order of the list)
		warning    []string // what a cpu-gap warning says; nil: none
	}{
		{"per thread 10% below, 20 µs a switch", 720, 4000, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 720.0 ms is 10.0% below the server's CPU time over the window (800.0–800.0 ms: its CPU " +
				"clock and its child processes', read right before and right after the counters at both edges), 20.00 µs a context switch (4000 in the window)",
				"forks above all", "--cgroup", "CPU per op is the kernel's"}},
		{"per thread 56% below, 112.5 µs a switch", 350, 4000, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomePartial,
			[]string{"task-clock 350.0 ms is 56.2% below the server's CPU time over the window (800.0–800.0 ms", "112.50 µs a context switch (4000 in the window)",
				"more than 100 µs a switch", "the counters missed 450.0 ms the kernel charged"}, nil},
		{"per thread 50% below, 100 µs a switch", 400, 4000, perfevent.StatusScaled, ps, pe, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 400.0 ms is 50.0% below", "100.00 µs a context switch"}},
		{"per thread 5% below", 760, 4000, perfevent.StatusCounted, ps, pe, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 760.0 ms is 5.0% below", "10.00 µs a context switch"}},
		{"per thread 2% below", 784, 4000, perfevent.StatusCounted, ps, pe, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"per thread 6% above, 12 µs a switch", 848, 4000, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"per thread 25% above, 50 µs a switch", 1000, 4000, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 1000.0 ms is 25.0% above the server's CPU time over the window (800.0–800.0 ms: its CPU clock and its child processes'",
				"50.00 µs a context switch", "from its wake-up", "more than 40 µs a switch"}},
		{"per thread 62% above, 125 µs a switch", 1300, 4000, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomePartial,
			[]string{"task-clock 1300.0 ms is 62.5% above", "125.00 µs a context switch", "the counters counted 500.0 ms the kernel did not charge"}, nil},
		{"per thread 62% above, children not read", 1300, 4000, perfevent.StatusCounted, ps, pe, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"per thread 10% above, no switch count", 880, 0, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 880.0 ms is 10.0% above the server's CPU time over the window (800.0–800.0 ms: its CPU " +
				"clock and its child processes', read right before and right after the counters at both edges): ", "no context switch count"}},
		{"per thread 4% below, no switch count", 768, 0, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 768.0 ms is 4.0% below"}},
		{"inside a skewed interval", 760, 4000, perfevent.StatusCounted, ss, se, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"below a skewed interval", 700, 4000, perfevent.StatusCounted, ss, se, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 700.0 ms is 6.7% below the server's CPU time over the window (750.0–850.0 ms", "12.50 µs a context switch"}},
		{"a little", 7.6, 100, perfevent.StatusCounted, cpuRef{lo: 5e9, hi: 5e9}, cpuRef{lo: 5.008e9, hi: 5.008e9},
			refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"task-clock not counted", 400, 4000, perfevent.StatusNotCounted, ps, pe, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"clock not read", 400, 4000, perfevent.StatusCounted, cpuRef{err: errors.New("gone")}, pe, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"already failed", 7.5, 1000, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeFailed, record.OutcomeFailed,
			[]string{"task-clock 7.5 ms is 96.1% below", "; the count of cycles is unknown"}, nil},
		{"cgroup: 7.5 of 194 ms", 7.5, 1000, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomePartial,
			[]string{"task-clock 7.5 ms is 96.1% below the cgroup's CPU time over the window (194.0–194.0 ms: cpu.stat " +
				"usage_usec read right before and right after the counters at both edges",
				"186.50 µs a context switch (1000 in the window)", "the counters missed 186.5 ms"}, nil},
		{"cgroup: 6% above, 12 µs a switch", 205.64, 1000, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"cgroup: 14% below, 27 µs a switch", 166.84, 1000, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"cgroup: 30% below, 58 µs a switch", 135.8, 1000, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 135.8 ms is 30.0% below the cgroup's CPU time", "58.20 µs a context switch", "more than 40 µs a switch"}},
		{"cgroup: 30% below, no switch count", 135.8, 0, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 135.8 ms is 30.0% below the cgroup's CPU time"}},
		{"cgroup: 4% below, no switch count", 186.24, 0, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"alone in its cgroup: 6% below", 752, 4000, perfevent.StatusCounted, cs, ce, refAlone, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 752.0 ms is 6.0% below the server's CPU time over the window (800.0–800.0 ms: the cpu.stat " +
				"usage_usec of the cgroup it is alone in", "--cgroup"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := record.New(record.KindStat)
			r.Outcome = tc.outcome
			if tc.outcome == record.OutcomeFailed {
				r.Error = "the count of cycles is unknown"
			}
			checkCPU(r, reading(tc.taskClock, tc.switches, tc.status), tc.start, tc.end, tc.kind)
			if r.Outcome != tc.want {
				t.Errorf("outcome %s (%q), want %s", r.Outcome, r.Error, tc.want)
			}
			at := 0
			for _, s := range tc.error {
				i := strings.Index(r.Error[at:], s)
				if i < 0 {
					t.Errorf("error %q does not say %q (after byte %d)", r.Error, s, at)
					break
				}
				at += i + len(s)
			}
			if tc.error == nil && tc.outcome == record.OutcomeOK && r.Error != "" {
				t.Errorf("error %q, want none", r.Error)
			}
			i := slices.IndexFunc(r.Warnings, func(w record.Warning) bool { return w.Code == record.WarnCPUGap })
			switch {
			case tc.warning == nil && len(r.Warnings) > 0:
				t.Errorf("warnings %q, want none", r.WarningTexts())
			case tc.warning != nil && i < 0:
				t.Errorf("warnings %q, want a cpu-gap warning", r.WarningTexts())
			case tc.warning != nil:
				for _, s := range tc.warning {
					if !strings.Contains(r.Warnings[i].Text, s) {
						t.Errorf("warning %q does not say %q", r.Warnings[i].Text, s)
					}
				}
			}
		})
	}
	// Per thread 10% below with the switches counted or, not counted,
	// from /proc: 2 µs a switch, or 6 or 12, is a cpu-gap warning on an
	// ok Record; 114 µs a switch is partial; without switches, 10% below
	// is a warning.
	for _, c := range []struct {
		name     string
		counted  float64 // context switches counted, 0: not counted
		proc     float64 // by /proc
		switches string
		want     record.Outcome
	}{
		{"counted", 40000, 0, "2.00 µs a context switch (40000 in the window)", record.OutcomeOK},
		{"by /proc", 0, 40000, "2.00 µs a context switch (40000 in the window)", record.OutcomeOK},
		{"6 µs a switch", 0, 13334, "6.00 µs a context switch (13334 in the window)", record.OutcomeOK},
		{"12 µs a switch", 6667, 40000, "12.00 µs a context switch (6667 in the window)", record.OutcomeOK},
		{"114 µs a switch", 700, 40000, "114.29 µs a context switch (700 in the window)", record.OutcomePartial},
		{"switches not read", 0, 0, "task-clock 720.0 ms is 10.0% below", record.OutcomeOK},
	} {
		r := record.New(record.KindStat)
		st := perfevent.StatusCounted
		if c.counted == 0 {
			st = perfevent.StatusNotCounted
		}
		all := perfevent.Reading{Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "context-switches"}, Value: c.counted, Status: st},
			{Event: perfevent.Event{Name: "task-clock"}, Value: 720e6, Status: perfevent.StatusCounted},
		}}
		if c.proc > 0 {
			r.OS = &record.OS{VoluntaryCS: c.proc / 2, InvoluntaryCS: c.proc / 2}
		}
		checkCPU(r, all, ps, pe, refProcess)
		text := r.Error
		if c.want == record.OutcomeOK {
			if i := slices.IndexFunc(r.Warnings, func(w record.Warning) bool { return w.Code == record.WarnCPUGap }); i >= 0 {
				text = r.Warnings[i].Text
			} else {
				text = ""
			}
		}
		if r.Outcome != c.want || !strings.Contains(text, c.switches) {
			t.Errorf("%s: outcome %s, error %q, warnings %q; want %s saying %q", c.name, r.Outcome, r.Error, r.WarningTexts(), c.want, c.switches)
		}
	}

	// Cgroup mode, an edge not read: a warning that the check was not
	// made.
	r := record.New(record.KindStat)
	checkCPU(r, reading(7.5, 1000, perfevent.StatusCounted), cpuRef{err: errors.New("no cpu.stat")}, ge, refCgroup)
	if r.Outcome != record.OutcomeOK || !slices.Contains(r.WarningTexts(), "task-clock could not be checked against the cgroup's CPU time: no cpu.stat") {
		t.Errorf("cgroup edge not read: outcome %s, warnings %q", r.Outcome, r.WarningTexts())
	}
}

// TestRefBrackets: the reference read on both sides of a counter read
// gives an interval whose low end is the read before and whose high end
// is the read after plus the slack; the kernel's tick is read from its
// config.
func TestRefBrackets(t *testing.T) {
	g := compare(790e6, cpuRef{lo: 1e9, hi: 1.03e9, children: true}, cpuRef{lo: 1.8e9, hi: 1.84e9, children: true})
	if g.lo != 770e6 || g.hi != 840e6 || g.off != 0 {
		t.Errorf("interval %.0f–%.0f ms, off %.0f ms; want 770–840 ms, 0", g.lo/1e6, g.hi/1e6, g.off/1e6)
	}
	if g := compare(700e6, cpuRef{lo: 1e9, hi: 1.03e9}, cpuRef{lo: 1.8e9, hi: 1.84e9}); g.off != -70e6 || g.share() != 70.0/770 {
		t.Errorf("700 ms below 770–840 ms: off %.1f ms, share %.4f", g.off/1e6, g.share())
	}
	if d := kernelTick(); d < time.Millisecond || d > 10*time.Millisecond {
		t.Errorf("kernel tick %s, want 1–10 ms", d)
	}
}
