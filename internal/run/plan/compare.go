package plan

import (
	"fmt"
	"time"
)

// Comparison modes ([run] compare): how the versions of a step are
// measured against each other.
const (
	// CompareAuto (the default) measures each step's versions together:
	// in duet where the machine has CPUs for every version of the
	// measurement (as many as its client threads each), in slices
	// otherwise. Steps that cannot be compared so (custom commands,
	// insert-benchmark steps, client op counts) are measured in windows.
	CompareAuto = "auto"
	// CompareDuet runs every version's server and load at once, each on
	// CPUs of its own, the CPUs rotated among the versions every slice,
	// and reads every server at the same instants.
	CompareDuet = "duet"
	// CompareSlices connects and warms every version's load, then runs
	// one at a time (the others stopped), switching every slice in a
	// random order each turn.
	CompareSlices = "slices"
	// compareWindows measures each version in a window of its own, one
	// after the other (A B A B over repeats): the only mode for absolute
	// numbers of a version measured alone.
	compareWindows = "windows"
)

// Slice length bounds: a slice reads every server's status and counters
// at each edge (a few milliseconds of the server's CPU), so much shorter
// slices measure perfbench; much longer ones let the host's phases fall
// on one side of a pair.
const (
	defaultSlice = time.Second
	minSlice     = 250 * time.Millisecond
	maxSlice     = time.Minute
)

// compare reads [run] compare and slice. Which steps can be compared is
// decided once the steps and versions are known (compareSteps).
func (p *parser) compare(plan *Plan, r *rawRun) {
	plan.Compare = CompareAuto
	plan.Slice = defaultSlice
	switch r.Compare {
	case "":
	case CompareAuto, CompareDuet, CompareSlices, compareWindows:
		plan.Compare = r.Compare
		plan.CompareLine = p.lines.line("run.compare")
	default:
		p.errorf("run.compare", "compare %q: use %q (duet where the CPUs allow it, slices otherwise), %q (every version at "+
			"once, on CPUs of its own), %q (one version at a time, switching every slice) or %q (each version in a window of its own)",
			r.Compare, CompareAuto, CompareDuet, CompareSlices, compareWindows)
	}
	if r.Slice.set {
		plan.Slice = r.Slice.d
		if plan.Slice < minSlice || plan.Slice > maxSlice {
			p.errorf("run.slice", "slice %v: use %s to %s (each slice reads every server's status at its edges)", plan.Slice, minSlice, maxSlice)
		}
	}
}

// compareSteps decides how each step's versions are compared
// (Step.Compare): with fewer than two versions, or with compare =
// "windows", in windows; a step that cannot be paused or paired (a custom
// command, an insert-benchmark step, an op count the client keeps) in
// windows under "auto", and a plan error under "duet" or "slices", as
// are servers = "one-at-a-time" and placements duet cannot keep. It
// sets servers = "all-running" when a step is compared.
func (p *parser) compareSteps(plan *Plan, r *rawRun) {
	if plan.Compare == compareWindows || len(plan.Versions) < 2 {
		return
	}
	forced := plan.Compare != CompareAuto
	if r.Servers == serversOneAtATime {
		if forced {
			p.errorf("run.compare", "compare %q runs every version's server at once: remove servers = %q, or use compare = %q",
				plan.Compare, serversOneAtATime, compareWindows)
		}
		return
	}
	if plan.Compare == CompareDuet && plan.Placement.Mode != PlacementThreads {
		p.errorf("run.compare", "compare %q places every version on CPUs of its own (as many as its client threads) and "+
			"rotates them: remove placement, cpus lists or server_cpus/client_cpus, or use compare = %q", CompareDuet, CompareSlices)
		return
	}
	any := false
	for i := range plan.Steps {
		st := &plan.Steps[i]
		why := ""
		switch {
		case st.Insert != nil:
			why = "an insert-benchmark step runs its own rate-limited clients, which cannot be paused or paired"
		case st.Custom():
			why = "a custom step's command cannot be paused or paired"
		case isClientOp(st.Ops):
			why = "its op count (" + st.Ops + ") is the client's, which has no count per slice"
		}
		if why != "" {
			if forced {
				p.errorf("run.compare", "compare %q cannot measure step %s (line %d): %s; use compare = %q for the plan, or leave "+
					"the step out", plan.Compare, st.Label, st.Line, why, CompareAuto)
			}
			continue
		}
		st.Compare = plan.Compare
		any = true
	}
	if any {
		plan.Servers = serversAllRunning
	}
}

// isClientOp reports whether an op source is counted by the load client.
func isClientOp(op string) bool {
	switch op {
	case "client.queries", "client.transactions", "client.events":
		return true
	}
	return false
}

// Compared reports whether the plan measures some step's versions
// together (duet or slices).
func (p *Plan) Compared() bool {
	for i := range p.Steps {
		if p.Steps[i].Compare != "" {
			return true
		}
	}
	return false
}

// comparisonID names the comparison of a step at a thread count and
// repeat: the same for every version measured in it.
func comparisonID(step string, threads, repeat int) string {
	return fmt.Sprintf("%s/t%d/r%d", step, threads, repeat)
}

// expandCompared is Expand for a plan that compares some steps' versions
// together: every server runs from the start (and is loaded then), and
// the plan goes step by step rather than version by version:
//
//	start every managed server, load every version
//	for each repeat, for each step, for each of its thread counts:
//	  compared step: flush every version that needs it, then measure
//	  every version (one comparison: the runner measures them together)
//	  other step: for each version, flush when needed and measure
//	stop the servers
func (p *Plan) expandCompared() []Item {
	var items []Item
	dirty := map[string]bool{}
	for vi := range p.Versions {
		v := &p.Versions[vi]
		if v.Managed != nil {
			items = append(items, Item{Action: ActionStart, ID: fmt.Sprintf("start/%s/r%d", v.Label, 1), Version: v, Repeat: 1})
		}
	}
	if p.Data.Load {
		for vi := range p.Versions {
			v := &p.Versions[vi]
			items = append(items, Item{Action: ActionLoad, ID: "load/" + v.Label, Version: v, Repeat: 1})
		}
	}
	flush := func(v *Version, st *Step, th, r int) {
		id := measurementID(v.Label, st.Label, th, r)
		if !st.Write && dirty[v.Label] {
			items = append(items, Item{Action: ActionFlush, ID: "flush/" + id, Version: v, Repeat: r, Step: st, Threads: th, Before: id})
			dirty[v.Label] = false
		}
	}
	measure := func(v *Version, st *Step, th, r int) {
		it := Item{Action: ActionMeasure, ID: measurementID(v.Label, st.Label, th, r), Version: v, Repeat: r, Step: st, Threads: th}
		if st.Compare != "" {
			it.Comparison = comparisonID(st.Label, th, r)
		}
		items = append(items, it)
		if st.Write {
			dirty[v.Label] = true
		}
	}
	for r := 1; r <= p.Repeats; r++ {
		for si := range p.Steps {
			st := &p.Steps[si]
			for _, th := range st.Threads {
				for vi := range p.Versions {
					v := &p.Versions[vi]
					flush(v, st, th, r)
					if st.Compare == "" {
						measure(v, st, th, r)
					}
				}
				if st.Compare != "" {
					for vi := range p.Versions {
						measure(&p.Versions[vi], st, th, r)
					}
				}
			}
		}
	}
	for vi := range p.Versions {
		v := &p.Versions[vi]
		if v.Managed != nil {
			items = append(items, Item{Action: ActionStop, ID: "stop/" + v.Label, Version: v})
		}
	}
	return items
}

// WholeComparisons widens a list of pending items (Pending's) so that a
// comparison runs whole: when one of its measurements is pending, every
// measurement of it is, with the flushes before them, since Records of
// versions measured together pair only with each other. all is the
// plan's expansion.
func WholeComparisons(all, pending []Item) []Item {
	want := map[string]bool{}
	for _, it := range pending {
		if it.Action == ActionMeasure && it.Comparison != "" {
			want[it.Comparison] = true
		}
	}
	if len(want) == 0 {
		return pending
	}
	have := map[string]bool{}
	for _, it := range pending {
		have[it.ID] = true
	}
	measured := map[string]bool{}
	for _, it := range all {
		if it.Action == ActionMeasure && want[it.Comparison] {
			measured[it.ID] = true
		}
	}
	// Keep pending's order; add the missing members (and their flushes)
	// where the plan has them.
	var out []Item
	for _, it := range all {
		switch {
		case have[it.ID]:
			out = append(out, it)
		case it.Action == ActionMeasure && measured[it.ID]:
			out = append(out, it)
		case it.Action == ActionFlush && measured[it.Before]:
			out = append(out, it)
		}
	}
	return out
}
