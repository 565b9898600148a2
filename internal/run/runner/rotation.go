package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// Counting in rotation. When the events of a run do not fit the PMU budget
// (the number of events a repeat may count), they are not multiplexed inside
// each window: they are split into groups and each repeat of a measurement
// counts one group, repeat r the group (r-1) mod G, so that every counter
// runs the whole window. The anchors are in every group: task-clock (added
// when not asked for: software, it needs no counter and gives cpu/o), and
// cycles and instructions when asked for, so that IPC and the MPKI of every
// miss event are always ratios inside one window. Each Record says which
// group it counted (record.Rotation); the report gives each event's per-op
// value from the repeats that counted it.
//
// The budget is the user's (--pmu-budget, run.pmu_budget), or the smallest
// number of general-purpose counters of the machine's core PMUs. A forced
// budget counts every event but task-clock against it, software events
// included, so that the rotation can be tried where there is no PMU; the
// PMU's budget counts the events of the core PMUs only (the others need none
// of its counters and are counted in every repeat).

// rotation is how the run's events are split over the repeats.
type rotation struct {
	budget  int
	source  string
	anchors []perfevent.Event
	groups  [][]perfevent.Event
}

// splitEvents returns the rotation of events under budget: nil when the
// events that count against it (those counts says so of, besides task-clock)
// fit. taskClock is added to the anchors when events lack it.
func splitEvents(events perfevent.List, budget int, counts func(perfevent.Event) bool, taskClock perfevent.Event) (*rotation, error) {
	var anchors, others []perfevent.Event
	hasClock := false
	used := 0 // anchors that take a counter
	for _, e := range events.Events {
		switch {
		case isTaskClock(e):
			hasClock = true
			anchors = append(anchors, e)
		case !counts(e):
			anchors = append(anchors, e)
		case isCyclesOrInstructions(e):
			anchors = append(anchors, e)
			used++
		default:
			others = append(others, e)
		}
	}
	if used+len(others) <= budget {
		return nil, nil
	}
	if len(events.Groups) > 0 {
		return nil, errors.New("the events do not fit the PMU budget and have {...} groups: groups cannot be counted in rotation; list the events without braces")
	}
	room := budget - used
	if room < 1 {
		return nil, fmt.Errorf("a budget of %d events leaves no counter for the other events beside cycles and instructions "+
			"(counted in every repeat): use a budget of at least %d", budget, used+1)
	}
	if !hasClock {
		anchors = append(anchors, taskClock)
	}
	rot := &rotation{budget: budget, anchors: anchors}
	for len(others) > 0 {
		n := min(room, len(others))
		rot.groups = append(rot.groups, others[:n:n])
		others = others[n:]
	}
	return rot, nil
}

// isTaskClock reports whether e is the task-clock software event.
func isTaskClock(e perfevent.Event) bool {
	return e.Kind == perfevent.KindSoftware && len(e.Encodings) == 1 && e.Encodings[0].Type == 1 && e.Encodings[0].Config == 1
}

// isCyclesOrInstructions reports whether e is the generic cycles or
// instructions event (PERF_TYPE_HARDWARE, config 0 or 1; on hybrid CPUs the
// PMU type sits in the config's upper 32 bits), modifiers or not.
func isCyclesOrInstructions(e perfevent.Event) bool {
	if e.Kind != perfevent.KindHardware || len(e.Encodings) == 0 {
		return false
	}
	low := e.Encodings[0].Config & 0xffffffff
	return e.Encodings[0].Type == 0 && low <= 1
}

// forcedBudget counts every event but task-clock against a budget the user
// set.
func forcedBudget(perfevent.Event) bool { return true }

// onCorePMU reports whether e takes a counter of one of the core PMUs (by
// name): the events the PMU's budget counts.
func onCorePMU(core []string) func(perfevent.Event) bool {
	return func(e perfevent.Event) bool {
		switch e.Kind {
		case perfevent.KindHardware, perfevent.KindCache, perfevent.KindRaw:
			return true
		case perfevent.KindPMU:
			for _, enc := range e.Encodings {
				if slices.Contains(core, enc.PMU) {
					return true
				}
			}
		}
		return false
	}
}

// pmuBudget is the smallest number of general-purpose counters of the core
// PMUs of sys and their names; 0 when a core PMU's budget is not known.
func pmuBudget(sys *perfevent.System) (int, []string) {
	budget := 0
	var names []string
	for _, p := range sys.CorePMUs() {
		if !p.Counters.Known || p.Counters.Generic < 1 {
			return 0, nil
		}
		names = append(names, p.Name)
		if budget == 0 || p.Counters.Generic < budget {
			budget = p.Counters.Generic
		}
	}
	return budget, names
}

// group is the events repeat counts and its 1-based group number.
func (rot *rotation) group(repeat int) (perfevent.List, int) {
	g := (repeat - 1) % len(rot.groups)
	if g < 0 {
		g = 0
	}
	return perfevent.List{Events: slices.Concat(rot.anchors, rot.groups[g])}, g + 1
}

// record says, in the Record of a repeat, what it counted.
func (rot *rotation) record(repeat int) *record.Rotation {
	_, g := rot.group(repeat)
	out := &record.Rotation{Budget: rot.budget, Source: rot.source, Anchors: names(rot.anchors), Group: g}
	for _, grp := range rot.groups {
		out.Groups = append(out.Groups, names(grp))
	}
	return out
}

// uncounted are the events of the groups no repeat reaches with repeats
// repeats.
func (rot *rotation) uncounted(repeats int) []string {
	var out []string
	for g := repeats; g < len(rot.groups); g++ {
		out = append(out, names(rot.groups[g])...)
	}
	return out
}

// describe is the rotation in a line of the run's progress.
func (rot *rotation) describe() string {
	var gs []string
	for i, g := range rot.groups {
		gs = append(gs, fmt.Sprintf("repeat %d: %s", i+1, strings.Join(names(g), ", ")))
	}
	return fmt.Sprintf("the events do not fit a budget of %d a repeat (%s): counted in rotation, one group a repeat, none "+
		"multiplexed: %s (then again from the first); %s in every repeat",
		rot.budget, rot.source, strings.Join(gs, "; "), strings.Join(names(rot.anchors), ", "))
}

func names(events []perfevent.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.RecordName()
	}
	return out
}

// setRotation decides, once the run's events are known, whether they are
// counted in rotation, and says so. With the PMU's own budget the events
// rotate only when every measurement has a repeat for each group; else
// they multiplex inside each window as before, and the run says why.
func (r *runner) setRotation() error {
	if r.rotated || len(r.events.Events) == 0 {
		return r.rotErr
	}
	r.rotated = true
	r.rotErr = r.decideRotation()
	return r.rotErr
}

// decideRotation is setRotation's decision, made once.
func (r *runner) decideRotation() error {
	budget, source := r.opts.PMUBudget, "--pmu-budget"
	counts := forcedBudget
	if budget == 0 && r.plan.PMUBudget > 0 {
		budget, source = r.plan.PMUBudget, "run.pmu_budget"
	}
	if budget == 0 {
		var core []string
		budget, core = pmuBudget(r.sys)
		if budget == 0 {
			return nil
		}
		source, counts = "pmu", onCorePMU(core)
	}
	clock, err := perfevent.Parse("task-clock", r.sys)
	if err != nil || len(clock.Events) != 1 {
		return fmt.Errorf("task-clock for the events' rotation: %w", err)
	}
	if source == "pmu" && len(r.events.Groups) > 0 {
		return nil // the user's {...} groups decide
	}
	rot, err := splitEvents(r.events, budget, counts, clock.Events[0])
	switch {
	case err != nil && source == "pmu":
		r.prog.printf("perfbench run: the events are not counted in rotation over the repeats: %v; they multiplex inside each window", err)
		return nil
	case err != nil:
		return fmt.Errorf("events of the run under a budget of %d (%s): %w", budget, source, err)
	case rot == nil:
		return nil
	}
	rot.source = source
	if source == "pmu" && r.plan.Repeats < len(rot.groups) {
		r.prog.printf("perfbench run: the events do not fit the PMU's %d counters: with %d repeats or more they would be "+
			"counted in rotation, one group a repeat; with %d they multiplex inside each window (cells show the running fraction)",
			budget, len(rot.groups), r.plan.Repeats)
		return nil
	}
	r.rot = rot
	r.prog.printf("perfbench run: %s", rot.describe())
	if left := rot.uncounted(r.plan.Repeats); len(left) > 0 {
		r.prog.printf("perfbench run: warning: %d repeats for %d groups: %s counted in no repeat", r.plan.Repeats, len(rot.groups), strings.Join(left, ", "))
	}
	return nil
}

// rotate sets on rec what its repeat counted, when the events rotate, and
// warns of the events no repeat counts.
func (r *runner) rotate(rec *record.Record, it plan.Item) {
	if r.rot == nil {
		return
	}
	rec.Rotation = r.rot.record(it.Repeat)
	if left := r.rot.uncounted(r.plan.Repeats); len(left) > 0 {
		rec.AddWarning(record.Warning{Code: record.WarnNotCounted, Events: left,
			Text: fmt.Sprintf("%s counted in no repeat: the events rotate over %d groups (budget %d, %s) and the plan has %d "+
				"repeats; run %d repeats or raise the budget",
				strings.Join(left, ", "), len(r.rot.groups), r.rot.budget, r.rot.source, r.plan.Repeats, len(r.rot.groups))})
	}
}

// eventsOf are the events measurement it counts.
func (r *runner) eventsOf(it plan.Item) perfevent.List {
	if r.rot == nil {
		return r.events
	}
	l, _ := r.rot.group(it.Repeat)
	return l
}
