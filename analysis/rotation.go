package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfbench/perfbench/record"
)

// rotation notes, on a Record whose events were counted in rotation over
// the repeats (record.Rotation), which repeat counted which events: the same
// text on every repeat of the measurement, so that a report says it once.
// The events of the groups are absent from the Records of the other repeats,
// so their values come from the repeats that counted them (Cell.N of
// Cell.Of); IPC and MPKI stay ratios inside one window, cycles and
// instructions being anchors counted in every repeat.
func (k *computation) rotation() {
	if t := rotationNote(k.r.Rotation); t != "" {
		var events []string
		for _, g := range k.r.Rotation.Groups {
			events = append(events, g...)
		}
		k.p.Notes = append(k.p.Notes, Note{Text: t, Topic: TopicCounters, Events: events})
	}
}

// rotationNote says which group of rot counted which events, and which
// repeat counts which group; "" when rot
// is nil or has no group.
func rotationNote(rot *record.Rotation) string {
	if rot == nil || len(rot.Groups) == 0 {
		return ""
	}
	var gs []string
	// Groups, not repeats: with fewer repeats than groups, "repeat 3"
	// would name a repeat that never ran (the report says which groups
	// no repeat counted).
	for i, g := range rot.Groups {
		gs = append(gs, fmt.Sprintf("group %d: %s", i+1, strings.Join(g, ", ")))
	}
	then := ""
	if len(rot.Groups) > 1 {
		then = fmt.Sprintf(" (repeat r counts group (r-1) mod %d)", len(rot.Groups))
	}
	within := ""
	if slices.Contains(rot.Anchors, "cycles") || slices.Contains(rot.Anchors, "instructions") {
		within = "; IPC and MPKI are ratios inside each window"
	}
	return fmt.Sprintf("events counted in rotation so that none multiplexed, %d a repeat besides task-clock (%s): %s%s; %s "+
		"in every repeat%s. A value of a rotated event is from the repeats that counted it: [n/m] on it means n of the m "+
		"repeats counted it, the others did not count it (not a failure)",
		rot.Budget, budgetSource(rot.Source), strings.Join(gs, "; "), then, strings.Join(rot.Anchors, ", "), within)
}

// budgetSource says where a rotation's budget came from.
func budgetSource(s string) string {
	switch s {
	case "pmu":
		return "the core PMU's general-purpose counters"
	case "run.pmu_budget":
		return "the plan's run.pmu_budget"
	case "":
		return "budget of unknown origin"
	}
	return s
}
