package plan

import (
	"fmt"
	"math"
)

// Adaptive repeats (run.repeats = "auto"): the run goes on adding rounds (every
// version of every step once, interleaved as ever) until the rQPS of every
// version against the base has a 95% interval within ±Precision, for each
// step and thread count apart, or the step reaches MaxRepeats.
const (
	// defaultPrecision is run.precision when the plan does not give it:
	// ±2% at 95%.
	defaultPrecision = 0.02
	// defaultMaxRepeats is run.max_repeats when the plan does not give it.
	defaultMaxRepeats = 10
	// MinAutoRepeats is the fewest repeats an adaptive step runs: the
	// report's interval of a ratio (analysis.ratioInterval, a bootstrap of
	// the ratio of medians) needs 6 repeats on each side, and with fewer
	// there is no interval to stop on.
	MinAutoRepeats = 6
	// maxRetryBusy bounds run.retry_busy.
	maxRetryBusy = 10
)

// AutoRepeats is how a plan with repeats = "auto" decides when a step has
// had enough repeats.
type AutoRepeats struct {
	// Precision is the largest half-width wanted of the 95% interval of
	// an rQPS, relative to the rQPS (0.02: ±2%).
	Precision float64
	// Max is the most repeats a step runs (Plan.Repeats is the same
	// number: the plan expands to it).
	Max int
}

// repeatsValue is run.repeats: a number, or "auto".
type repeatsValue struct {
	n    int64
	auto bool
	set  bool
}

func (r *repeatsValue) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		r.n = x
	case string:
		if x != "auto" {
			return fmt.Errorf("repeats %q: give a number of repeats, or \"auto\" to repeat until run.precision is reached", x)
		}
		r.auto = true
	default:
		return fmt.Errorf("repeats is a number of repeats or \"auto\", not %#v", v)
	}
	r.set = true
	return nil
}

// repeats sets Plan.Repeats, Plan.Auto and Plan.RetryBusy from the run
// table.
func (p *parser) repeats(plan *Plan, r *rawRun) {
	plan.Repeats = 1
	if r.Repeats.set && !r.Repeats.auto {
		if r.Repeats.n < 1 || r.Repeats.n > maxRepeats {
			p.errorf("run.repeats", "repeats is %d, must be 1 to %d", r.Repeats.n, maxRepeats)
			return
		}
		plan.Repeats = int(r.Repeats.n)
	}
	if !r.Repeats.auto {
		if r.Precision != nil || r.MaxRepeats != nil {
			p.errorf("run.precision", "precision and max_repeats go with repeats = \"auto\": set it, or leave them out")
		}
	} else {
		a := &AutoRepeats{Precision: defaultPrecision, Max: defaultMaxRepeats}
		if r.Precision != nil {
			a.Precision = *r.Precision
			if math.IsNaN(a.Precision) || a.Precision <= 0 || a.Precision >= 1 {
				p.errorf("run.precision", "precision %v: give the half-width wanted of the rQPS interval as a fraction, 0.02 for ±2%%", *r.Precision)
			}
		}
		if r.MaxRepeats != nil {
			a.Max = *r.MaxRepeats
			if a.Max < MinAutoRepeats || a.Max > maxRepeats {
				p.errorf("run.max_repeats", "max_repeats is %d, must be %d to %d: the rQPS interval needs %d repeats of each version",
					a.Max, MinAutoRepeats, maxRepeats, MinAutoRepeats)
			}
		}
		plan.Auto = a
		plan.Repeats = a.Max
	}
	if r.RetryBusy != nil {
		plan.RetryBusy = *r.RetryBusy
		if plan.RetryBusy < 0 || plan.RetryBusy > maxRetryBusy {
			p.errorf("run.retry_busy", "retry_busy is %d, must be 0 to %d (how many times a window flagged busy is measured again)", plan.RetryBusy, maxRetryBusy)
		}
	}
}

// aaOf sets the versions' AAOf: the plan's aa_of, checked, or, for a
// managed version that repeats an earlier one exactly (same basedir, my.cnf,
// options, init and commands), that version.
func (p *parser) aaOf(plan *Plan, raws []rawVersion) {
	at := map[string]int{}
	for i := range plan.Versions {
		at[plan.Versions[i].Label] = i
	}
	for i, r := range raws {
		j, ok := at[r.Label]
		if !ok || r.AAOf == "" {
			continue
		}
		key := fmt.Sprintf("version[%d].aa_of", i)
		k, found := at[r.AAOf]
		switch {
		case !found:
			p.errorf(key, "version %q: aa_of %q is not the label of a version", r.Label, r.AAOf)
		case k == j:
			p.errorf(key, "version %q: aa_of names the version itself: name the version it measures again", r.Label)
		case plan.Versions[k].AAOf != "":
			p.errorf(key, "version %q: aa_of %q, itself the A/A twin of %q: name %q", r.Label, r.AAOf, plan.Versions[k].AAOf, plan.Versions[k].AAOf)
		default:
			plan.Versions[j].AAOf = r.AAOf
		}
	}
	for j := range plan.Versions {
		v := &plan.Versions[j]
		if v.AAOf != "" || v.Managed == nil {
			continue
		}
		for k := range j {
			w := &plan.Versions[k]
			if w.AAOf == "" && sameServer(v.Managed, w.Managed) {
				v.AAOf = w.Label
				break
			}
		}
	}
}

// sameServer reports whether two managed versions start the same server
// the same way (the port aside).
func sameServer(a, b *Managed) bool {
	if a == nil || b == nil {
		return false
	}
	return a.Basedir == b.Basedir && a.Mycnf == b.Mycnf && a.Init == b.Init &&
		fmt.Sprintf("%q%q%q", a.Options, a.Start, a.Stop) == fmt.Sprintf("%q%q%q", b.Options, b.Start, b.Stop)
}
