package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

// cell is a step at a thread count: what repeats = "auto" decides on.
type cell struct {
	step    string
	threads int
}

// settled returns the cells of plan p whose rQPS are precise enough to stop
// repeating them (repeats = "auto"): for every version but the base, the
// 95% interval of its rQPS against the base, as reports compute it
// (analysis.Comparison.ThroughputRatio), is within ±p.Auto.Precision, and
// so is that of the second label of an A/A pair against its first (the
// report's floor); in a plan of one version, the interval of its QPS. A cell with fewer than
// plan.MinAutoRepeats repeats on a side has no interval and is not settled.
func settled(recs []*record.Record, p *plan.Plan) map[cell]bool {
	out := map[cell]bool{}
	if p.Auto == nil || len(recs) == 0 {
		return out
	}
	c, err := analysis.New(recs, p.Base, analysis.Options{})
	if err != nil {
		return out // no Record of the base yet: nothing to stop on
	}
	for _, sc := range c.Scopes {
		for _, st := range p.Steps {
			if !slices.Contains(st.Threads, sc.Threads) {
				continue
			}
			precise := true
			for _, v := range p.Versions {
				k := analysis.Key(sc, v.Label, st.Label)
				switch {
				case v.Label != p.Base:
					precise = precise && c.ThroughputRatio(k).Precise(p.Auto.Precision)
					if v.AAOf != "" && v.AAOf != p.Base {
						precise = precise && c.RatioTo(k, v.AAOf, analysis.OpsPerSecond).Precise(p.Auto.Precision)
					}
				case len(p.Versions) == 1:
					precise = precise && c.Value(k, analysis.OpsPerSecond).Precise(p.Auto.Precision)
				}
			}
			if precise {
				out[cell{st.Label, sc.Threads}] = true
			}
		}
	}
	return out
}

// dropDone leaves out of items the measurements done says need not run,
// the flushes before them, and a server's start and stop with nothing left
// to measure between them. It returns the items kept and the measurements
// left out.
func dropDone(items []plan.Item, done func(plan.Item) bool) (kept, dropped []plan.Item) {
	keep := make([]bool, len(items))
	measured := map[string]bool{}
	for i, it := range items {
		keep[i] = it.Action != plan.ActionMeasure || !done(it)
		if it.Action == plan.ActionMeasure {
			if keep[i] {
				measured[it.ID] = true
			} else {
				dropped = append(dropped, it)
			}
		}
	}
	for i, it := range items {
		switch it.Action {
		case plan.ActionFlush:
			keep[i] = measured[it.Before]
		case plan.ActionStart:
			j := i + 1
			for j < len(items) && !(items[j].Action == plan.ActionStop && items[j].Version == it.Version) {
				j++
			}
			used := false
			for k := i + 1; k < j; k++ {
				used = used || (items[k].Action == plan.ActionMeasure && keep[k] && items[k].Version == it.Version)
			}
			if !used {
				keep[i] = false
				if j < len(items) {
					keep[j] = false
				}
			}
		}
	}
	for i, it := range items {
		if keep[i] {
			kept = append(kept, it)
		}
	}
	return kept, dropped
}

// nextRound is called as round begins (repeats = "auto"): from the 7th
// round on, the cells whose rQPS are precise enough after the rounds run
// are dropped from the rest of the run, and the run says so.
func (r *runner) nextRound(round int, rest []plan.Item) []plan.Item {
	if r.plan.Auto == nil || round <= plan.MinAutoRepeats {
		return rest
	}
	recs := make([]*record.Record, 0, len(r.existing)+len(r.ran))
	for _, l := range r.existing {
		recs = append(recs, l.Record)
	}
	recs = append(recs, r.ran...)
	done := settled(recs, r.plan)
	kept, dropped := dropDone(rest, func(it plan.Item) bool { return done[cell{it.Step.Label, it.Threads}] })
	var said []string
	for _, it := range dropped {
		c := cell{it.Step.Label, it.Threads}
		if !r.settledSaid[c] {
			r.settledSaid[c] = true
			said = append(said, fmt.Sprintf("%s at %d thread%s", c.step, c.threads, plural(c.threads)))
		}
	}
	if len(said) > 0 {
		r.prog.printf("perfbench run: repeats = auto: rQPS within ±%g%% after %d repeats, no more rounds of %s",
			100*r.plan.Auto.Precision, round-1, strings.Join(said, ", "))
	}
	r.prog.drop(dropped)
	return kept
}

// busy reports whether a Record's window was flagged busy.
func busy(rec *record.Record) bool {
	return slices.ContainsFunc(rec.Warnings, func(w record.Warning) bool { return w.Code == record.WarnBusy })
}

// retryBusy measures a window flagged busy again, up to plan.Plan.RetryBusy
// times (run.retry_busy), with again; it returns the last Record, which
// says how many windows were measured before it and how busy they were.
// A window still busy after the retries keeps its busy warning.
func (r *runner) retryBusy(ctx context.Context, it plan.Item, rec *record.Record, again func() *record.Record) *record.Record {
	var earlier []string
	for len(earlier) < r.plan.RetryBusy && rec.Outcome == record.OutcomeOK && busy(rec) && ctx.Err() == nil {
		other := "?"
		if in := rec.Interference; in != nil && in.Seconds > 0 {
			other = fmt.Sprintf("%.2f", in.OtherSeconds/in.Seconds)
		}
		earlier = append(earlier, other)
		r.prog.printf("perfbench run: %s: the window was busy (other processes used %s CPU): measuring it again (%d of at most %d, retry_busy)",
			it.ID, other, len(earlier), r.plan.RetryBusy)
		rec = again()
	}
	if len(earlier) > 0 {
		rec.Warnf(record.WarnGeneral, "measured %d more time(s) because the window was busy (retry_busy = %d): other "+
			"processes used %s CPU in the window(s) before this one",
			len(earlier), r.plan.RetryBusy, strings.Join(earlier, ", "))
	}
	return rec
}
