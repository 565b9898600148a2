package runner

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

func parseEvents(t *testing.T, spec string) perfevent.List {
	t.Helper()
	l, err := perfevent.Parse(spec, nil)
	if err != nil {
		t.Fatalf("parse %s: %v", spec, err)
	}
	return l
}

func taskClockEvent(t *testing.T) perfevent.Event {
	return parseEvents(t, "task-clock").Events[0]
}

func groupNames(rot *rotation) [][]string {
	var out [][]string
	for _, g := range rot.groups {
		out = append(out, names(g))
	}
	return out
}

// Six software events under a forced budget of 2: three groups of two in
// the order given, task-clock added as the anchor; repeat r counts group
// (r-1) mod 3.
func TestSplitEventsForcedBudget(t *testing.T) {
	six := parseEvents(t, "cpu-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults")
	rot, err := splitEvents(six, 2, forcedBudget, taskClockEvent(t))
	if err != nil || rot == nil {
		t.Fatalf("split: %v %v", rot, err)
	}
	want := [][]string{{"cpu-clock", "context-switches"}, {"cpu-migrations", "page-faults"}, {"minor-faults", "major-faults"}}
	if got := groupNames(rot); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("groups %v, want %v", got, want)
	}
	if got := names(rot.anchors); !slices.Equal(got, []string{"task-clock"}) {
		t.Errorf("anchors %v, want [task-clock]", got)
	}
	for repeat, want := range map[int][]string{
		1: {"task-clock", "cpu-clock", "context-switches"},
		2: {"task-clock", "cpu-migrations", "page-faults"},
		3: {"task-clock", "minor-faults", "major-faults"},
		4: {"task-clock", "cpu-clock", "context-switches"},
	} {
		l, g := rot.group(repeat)
		if got := names(l.Events); !slices.Equal(got, want) || g != (repeat-1)%3+1 {
			t.Errorf("repeat %d counts group %d %v, want %d %v", repeat, g, got, (repeat-1)%3+1, want)
		}
	}
	rot.source = "--pmu-budget"
	rec := rot.record(2)
	if rec.Group != 2 || rec.Budget != 2 || rec.Source != "--pmu-budget" || len(rec.Groups) != 3 || !slices.Equal(rec.Groups[1], want[1]) {
		t.Errorf("record of repeat 2: %+v", rec)
	}
	if got := rot.uncounted(3); len(got) != 0 {
		t.Errorf("3 repeats leave %v uncounted", got)
	}
	if got := rot.uncounted(2); !slices.Equal(got, []string{"minor-faults", "major-faults"}) {
		t.Errorf("2 repeats leave %v uncounted, want minor-faults, major-faults", got)
	}

	// task-clock asked for stays where it was and is not counted against
	// the budget: 3 events besides it under a budget of 3 fit.
	if rot, err := splitEvents(parseEvents(t, "task-clock,cpu-clock,page-faults,context-switches"), 3, forcedBudget, taskClockEvent(t)); rot != nil || err != nil {
		t.Errorf("3 events and task-clock under a budget of 3: %v %v, want no rotation", rot, err)
	}
	// 5 events under 2: groups of 2, 2, 1.
	rot, err = splitEvents(parseEvents(t, "cpu-clock,task-clock,page-faults,context-switches,minor-faults,major-faults"), 2, forcedBudget, taskClockEvent(t))
	if err != nil || rot == nil || len(rot.groups) != 3 || len(rot.groups[2]) != 1 || !slices.Equal(names(rot.anchors), []string{"task-clock"}) {
		t.Fatalf("5 events under 2: %v %v", rot, err)
	}
}

// cycles and instructions are in every group and take two of the budget.
func TestSplitEventsCyclesInstructionsAnchors(t *testing.T) {
	l := parseEvents(t, "cycles,instructions,cache-misses,branch-misses,L1-dcache-load-misses,context-switches")
	rot, err := splitEvents(l, 4, forcedBudget, taskClockEvent(t))
	if err != nil || rot == nil {
		t.Fatalf("split: %v %v", rot, err)
	}
	if got := names(rot.anchors); !slices.Equal(got, []string{"cycles", "instructions", "task-clock"}) {
		t.Errorf("anchors %v", got)
	}
	want := [][]string{{"cache-misses", "branch-misses"}, {"L1-dcache-load-misses", "context-switches"}}
	if got := groupNames(rot); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("groups %v, want %v", got, want)
	}
	// A budget that leaves nothing beside the anchors is refused.
	if _, err := splitEvents(l, 2, forcedBudget, taskClockEvent(t)); err == nil || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("budget 2 with cycles and instructions: %v", err)
	}
	// The PMU's budget counts the core PMU's events only: software events
	// are counted in every repeat.
	rot, err = splitEvents(l, 3, onCorePMU([]string{"cpu"}), taskClockEvent(t))
	if err != nil || rot == nil {
		t.Fatalf("split: %v %v", rot, err)
	}
	if got := names(rot.anchors); !slices.Equal(got, []string{"cycles", "instructions", "context-switches", "task-clock"}) {
		t.Errorf("anchors under the PMU's budget %v", got)
	}
	want = [][]string{{"cache-misses"}, {"branch-misses"}, {"L1-dcache-load-misses"}}
	if got := groupNames(rot); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("groups under the PMU's budget %v, want %v", got, want)
	}
	// {...} groups cannot rotate.
	if _, err := splitEvents(parseEvents(t, "{cycles,instructions},cache-misses,branch-misses"), 3, forcedBudget, taskClockEvent(t)); err == nil {
		t.Errorf("{...} groups over the budget: no error")
	}
}

func TestPlanPMUBudget(t *testing.T) {
	p := parsePlan(t, `name = "b"
[run]
pmu_budget = 2
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
`)
	if p.PMUBudget != 2 {
		t.Errorf("pmu_budget %d, want 2", p.PMUBudget)
	}
	for _, bad := range []string{"0", "65", "-1"} {
		_, err := loadPlanText(t, "name = \"b\"\n[run]\npmu_budget = "+bad+"\n[steps]\nlist = "+
			"[\"point-query\"]\n[[version]]\nlabel = \"a\"\nbasedir = \"installed\"\n")
		if err == nil || !strings.Contains(err.Error(), "pmu_budget is "+bad) {
			t.Errorf("pmu_budget = %s: %v", bad, err)
		}
	}
}

// Fewer repeats than groups: the Record of each repeat says what it
// counted, and warns of the events no repeat counts.
func TestRotateRecordWarnsUncounted(t *testing.T) {
	six := parseEvents(t, "cpu-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults")
	rot, err := splitEvents(six, 2, forcedBudget, taskClockEvent(t))
	if err != nil {
		t.Fatal(err)
	}
	rot.source = "run.pmu_budget"
	r := &runner{plan: &plan.Plan{Repeats: 2}, rot: rot}
	rec := record.New(record.KindStep)
	r.rotate(rec, plan.Item{Repeat: 2})
	if rec.Rotation == nil || rec.Rotation.Group != 2 || rec.Rotation.Source != "run.pmu_budget" {
		t.Errorf("rotation %+v", rec.Rotation)
	}
	if len(rec.Warnings) != 1 || rec.Warnings[0].Code != record.WarnNotCounted ||
		!slices.Equal(rec.Warnings[0].Events, []string{"minor-faults", "major-faults"}) ||
		!strings.Contains(rec.Warnings[0].Text, "plan has 2 repeats; run 3 repeats") {
		t.Errorf("warnings %+v", rec.Warnings)
	}
	// Without a rotation nothing is set.
	rec = record.New(record.KindStep)
	(&runner{plan: &plan.Plan{Repeats: 2}}).rotate(rec, plan.Item{Repeat: 1})
	if rec.Rotation != nil || len(rec.Warnings) != 0 {
		t.Errorf("no rotation: %+v %+v", rec.Rotation, rec.Warnings)
	}
}

// On a machine whose PMU has 6 general-purpose counters (an AMD Zen from
// its cpuinfo), 8 hardware events and a software one rotate over 2 groups
// when the plan has 2 repeats or more, and multiplex as before with 1.
func TestRotationFromPMUBudget(t *testing.T) {
	sys, err := perfevent.LoadSystem("../../../perfevent/testdata/amd-zen")
	if err != nil {
		t.Fatal(err)
	}
	if b, core := pmuBudget(sys); b != 6 || len(core) != 1 {
		t.Fatalf("budget %d of %v, want 6 of one core PMU", b, core)
	}
	events,
		err := perfevent.Parse("cycles,instructions,cache-misses,branch-misses,L1-dcache-loads,L1-dcache-load-misses,dTLB-load-misses,iTLB-load-misses,context-switches", sys)
	if err != nil {
		t.Fatal(err)
	}
	for _, repeats := range []int{1, 2} {
		var progress bytes.Buffer
		r := &runner{plan: &plan.Plan{Repeats: repeats}, sys: sys, events: events}
		r.prog = newProgress(&progress, false, 0, nil, 0)
		if err := r.setRotation(); err != nil {
			t.Fatalf("%d repeats: %v", repeats, err)
		}
		r.prog.close()
		said := progress.String()
		if repeats == 1 {
			if r.rot != nil || !strings.Contains(said, "do not fit the PMU's 6 counters: with 2 repeats or more") {
				t.Errorf("1 repeat: rotation %v, said %q", r.rot, said)
			}
			if got := r.eventsOf(plan.Item{Repeat: 1}); len(got.Events) != len(events.Events) {
				t.Errorf("1 repeat counts %d events, want all %d", len(got.Events), len(events.Events))
			}
			continue
		}
		if r.rot == nil || r.rot.source != "pmu" {
			t.Fatalf("2 repeats: no rotation; said %q", said)
		}
		want := [][]string{{"cache-misses", "branch-misses", "L1-dcache-loads", "L1-dcache-load-misses"}, {"dTLB-load-misses", "iTLB-load-misses"}}
		if got := groupNames(r.rot); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("groups %v, want %v", got, want)
		}
		l := r.eventsOf(plan.Item{Repeat: 2})
		if got := names(l.Events); !slices.Equal(got, []string{"cycles", "instructions", "context-switches", "task-clock", "dTLB-load-misses", "iTLB-load-misses"}) {
			t.Errorf("repeat 2 counts %v", got)
		}
	}
}
