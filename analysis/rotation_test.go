package analysis

import (
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// Six repeats of one step whose events rotate over three groups, cycles,
// instructions and task-clock in every one: each rotated event's value is
// the median of the two repeats that counted it, not multiplexed, IPC and
// MPKI are ratios inside each window, and one note says which repeat
// counted what.
func TestRotatedEventsStitched(t *testing.T) {
	groups := [][]string{{"cache-misses", "context-switches"}, {"branch-misses", "page-faults"}, {"L1-dcache-load-misses", "major-faults"}}
	// Values of the rotated events by repeat (1000 ops a window).
	rotated := map[int][]record.Counter{
		1: {counted("cache-misses", 1e5), counted("context-switches", 1000)},
		2: {counted("branch-misses", 5e4), counted("page-faults", 7000)},
		3: {counted("L1-dcache-load-misses", 2e6), counted("major-faults", 0)},
		4: {counted("cache-misses", 3e5), counted("context-switches", 2000)},
		5: {counted("branch-misses", 5e4), counted("page-faults", 9000)},
		6: {counted("L1-dcache-load-misses", 4e6), counted("major-faults", 0)},
	}
	var recs []*record.Record
	for r := 1; r <= 6; r++ {
		cycles := 4e7
		if r%2 == 0 {
			cycles = 5e7
		}
		cs := append([]record.Counter{counted("cycles", cycles), counted("instructions", 2e7), counted("task-clock", 3e9)}, rotated[r]...)
		rec := stepRecord("v", "s", r, 1000, cs...)
		rec.Rotation = &record.Rotation{Budget: 4, Source: "--pmu-budget", Anchors: []string{"cycles", "instructions",
			"task-clock"}, Groups: groups, Group: (r-1)%3 + 1}
		recs = append(recs, rec)
	}
	c, err := New(recs, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := Key(Scope{"h", 1}, "v", "s")
	for metric, want := range map[string]struct {
		v float64
		n int
	}{
		"cache-misses/o":              {200, 2},  // 100 and 300
		"context-switches/o":          {1.5, 2},  // 1 and 2
		"branch-misses/o":             {50, 2},   // 50 and 50
		"page-faults/o":               {8, 2},    // 7 and 9
		"major-faults/o":              {0, 2},    // a counted 0, twice
		"MPKI(cache-misses)":          {10, 2},   // 1e5 and 3e5 per 2e7 instructions: 5 and 15
		"MPKI(L1-dcache-load-misses)": {150, 2},  // 100 and 200
		IPC:                           {0.45, 6}, // 0.5 three times, 0.4 three times
		"task-clock/o":                {3e6, 6},
	} {
		got := c.Value(k, metric)
		if !got.OK() || !near(got.Value, want.v) || got.N != want.n || got.Of != 6 || got.Multiplexed() {
			t.Errorf("%s = %+v, want %v from %d of 6 repeats, not multiplexed", metric, got, want.v, want.n)
		}
	}
	// A repeat that did not count an event has no value for it: missing,
	// not "not counted".
	if got := c.Sample(k).PerOp[1].Get("cache-misses/o"); got.State != Missing {
		t.Errorf("repeat 2's cache-misses/o is %v, want missing", got.State)
	}
	var notes []string
	for _, w := range c.Warnings([]record.Key{k}, TopicCounters, nil) {
		if strings.Contains(w, "events counted in rotation") {
			notes = append(notes, w)
		}
	}
	want := "group 1: cache-misses, context-switches; group 2: branch-misses, page-faults; group 3: L1-dcache-load-misses, major-faults (repeat r counts group (r-1) mod 3); cycles, instructions, task-clock in every repeat; IPC and MPKI are ratios inside each window"
	if len(notes) != 1 || !strings.Contains(notes[0], want) || !strings.Contains(notes[0], "4 a repeat besides task-clock (--pmu-budget)") {
		t.Errorf("rotation notes %q, want one with %q", notes, want)
	}
	// A table of the anchors alone does not carry it.
	for _, w := range c.Warnings([]record.Key{k}, TopicCounters, []string{"cycles", "instructions"}) {
		if strings.Contains(w, "rotation") {
			t.Errorf("the anchors' table carries %q", w)
		}
	}
}
