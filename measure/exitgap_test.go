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
// each edge: [end.lo-start.hi, end.hi-start.lo]. More than 5% (and 2 ms)
// below it makes an ok Record partial, both numbers and the
// cause first in its Error (per thread below: the starts, exits and
// switches per-thread counters miss, and cgroup mode as the cure); per
// thread, 3–5% below is a cpu-gap warning with the gap per context switch,
// and so is more than 5% when it is no more than 10 µs a context switch
// (the switches' slice per-thread counting misses). In cgroup mode up to
// 25% below is a cpu-gap warning (ordinary windows reached 16%, not
// explained), beyond it partial. Above the interval is never partial
// (ordinary windows on a loaded host reached 9%, not explained): more
// than 3% per thread and 5% in cgroup mode is a cpu-gap warning saying
// task-clock ran above the CPU the kernel had charged at the edges.
// Inside the interval nothing is said even where the point read after the
// counters is more than 5% off. Per thread, task-clock above a reference
// without the children's CPU says nothing; an edge not read is a warning
// in cgroup mode; a failed Record stays failed.
func TestCheckCPU(t *testing.T) {
	// 4000 context switches: a gap of 80 ms is 20 µs a switch, more than
	// switches miss.
	reading := func(ms float64, st perfevent.Status) perfevent.Reading {
		return perfevent.Reading{Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "context-switches"}, Value: 4000, Status: perfevent.StatusCounted},
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
		status     perfevent.Status
		start, end cpuRef
		kind       refKind
		outcome    record.Outcome // the Record's before the check
		want       record.Outcome
		error      []string // what the Error says (in order of the list)
		warning    []string // what a cpu-gap warning says; nil: none
	}{
		{"10% below, forks", 720, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomePartial,
			[]string{"task-clock 720.0 ms is 10.0% below the server's CPU time over the window (800.0–800.0 ms: its CPU clock and its child processes', read right before and right after the counters at both edges)",
				"forks above all", "--cgroup", "(4000 context switches in the window, 20.00 µs short per switch)"}, nil},
		{"6% below, scaled", 752, perfevent.StatusScaled, ps, pe, refProcess, record.OutcomeOK, record.OutcomePartial,
			[]string{"task-clock 752.0 ms is 6.0% below"}, nil},
		{"5% below", 760, perfevent.StatusCounted, ps, pe, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 760.0 ms is 5.0% below", "10.00 µs short per switch"}},
		{"2% below", 784, perfevent.StatusCounted, ps, pe, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"6% above, children read", 848, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 848.0 ms is 6.0% above the CPU time the kernel had charged to the server at the window's edges (800.0–800.0 ms over the window: its CPU clock and its child processes'",
				"not explained yet", "so the Record stays ok", "high by up to 48.0 ms"}},
		{"20% above, children read", 960, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 960.0 ms is 20.0% above"}},
		{"4% above, children read", 832, perfevent.StatusCounted, cs, ce, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 832.0 ms is 4.0% above"}},
		{"above a skewed interval", 900, perfevent.StatusCounted, cpuRef{lo: 5e9, hi: 5.04e9, children: true}, cpuRef{lo: 5.79e9, hi: 5.85e9, children: true}, refProcess, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 900.0 ms is 5.9% above the CPU time the kernel had charged to the server at the window's edges (750.0–850.0 ms over the window"}},
		{"6% above, children not read", 848, perfevent.StatusCounted, ps, pe, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"inside a skewed interval", 760, perfevent.StatusCounted, ss, se, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"below a skewed interval", 700, perfevent.StatusCounted, ss, se, refProcess, record.OutcomeOK, record.OutcomePartial,
			[]string{"task-clock 700.0 ms is 6.7% below the server's CPU time over the window (750.0–850.0 ms"}, nil},
		{"a little", 7.6, perfevent.StatusCounted, cpuRef{lo: 5e9, hi: 5e9}, cpuRef{lo: 5.008e9, hi: 5.008e9}, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"task-clock not counted", 700, perfevent.StatusNotCounted, ps, pe, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"clock not read", 700, perfevent.StatusCounted, cpuRef{err: errors.New("gone")}, pe, refProcess, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"already failed", 720, perfevent.StatusCounted, ps, pe, refProcess, record.OutcomeFailed, record.OutcomeFailed,
			[]string{"task-clock 720.0 ms is 10.0% below", "; the count of cycles is unknown"}, nil},
		{"cgroup: 7.5 of 194 ms", 7.5, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomePartial,
			[]string{"task-clock 7.5 ms is 96.1% below the cgroup's CPU time over the window (194.0–194.0 ms: cpu.stat usage_usec read right before and right after the counters at both edges"}, nil},
		{"cgroup: 6% above", 205.64, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 205.6 ms is 6.0% above the CPU time the kernel had charged to the cgroup at the window's edges (194.0–194.0 ms over the window: cpu.stat usage_usec", "CONFIG_IRQ_TIME_ACCOUNTING"}},
		{"alone in its cgroup: 6% below", 752, perfevent.StatusCounted, cs, ce, refAlone, record.OutcomeOK, record.OutcomePartial,
			[]string{"task-clock 752.0 ms is 6.0% below the server's CPU time over the window (800.0–800.0 ms: the cpu.stat usage_usec of the cgroup it is alone in", "--cgroup"}, nil},
		{"cgroup: 14% below", 166.84, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomeOK,
			nil, []string{"task-clock 166.8 ms is 14.0% below the cgroup's CPU time", "the Record is partial only beyond 25%"}},
		{"cgroup: 30% below", 135.8, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomePartial,
			[]string{"task-clock 135.8 ms is 30.0% below the cgroup's CPU time"}, nil},
		{"cgroup: 4% above", 201.76, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomeOK, nil, nil},
		{"cgroup: 4% below", 186.24, perfevent.StatusCounted, gs, ge, refCgroup, record.OutcomeOK, record.OutcomeOK, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := record.New(record.KindStat)
			r.Outcome = tc.outcome
			if tc.outcome == record.OutcomeFailed {
				r.Error = "the count of cycles is unknown"
			}
			checkCPU(r, reading(tc.taskClock, tc.status), tc.start, tc.end, tc.kind)
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
	// Per thread 10% below, 2 µs a context switch (40000 of them, by the
	// counter or, not counted, by /proc): the switches' slice, a cpu-gap
	// warning on an ok Record; 6 µs a switch too; 12 µs is partial.
	for _, c := range []struct {
		name     string
		counted  float64 // context switches counted, 0: not counted
		proc     float64 // by /proc
		switches string
		want     record.Outcome
	}{
		{"counted", 40000, 0, "(40000 context switches in the window, 2.00 µs short per switch)", record.OutcomeOK},
		{"by /proc", 0, 40000, "(40000 context switches in the window, 2.00 µs short per switch)", record.OutcomeOK},
		{"6 µs a switch", 0, 13334, "(13334 context switches in the window, 6.00 µs short per switch)", record.OutcomeOK},
		{"12 µs a switch", 6667, 40000, "(6667 context switches in the window, 12.00 µs short per switch)", record.OutcomePartial},
		{"switches not read", 0, 0, "task-clock 720.0 ms is 10.0% below", record.OutcomePartial},
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
		r.OS = &record.OS{VoluntaryCS: c.proc / 2, InvoluntaryCS: c.proc / 2}
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
	checkCPU(r, reading(7.5, perfevent.StatusCounted), cpuRef{err: errors.New("no cpu.stat")}, ge, refCgroup)
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
