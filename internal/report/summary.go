package report

import (
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/load/suite"
)

// tableSummary is the one-screen summary at the top of a report.
const tableSummary = "summary"

// maxRegressions is how many regressions the summary lists.
const maxRegressions = 20

// summaryGroups are the groups the summary averages over.
var summaryGroups = []string{string(suite.GroupPoint), string(suite.GroupRange), string(suite.GroupWrites)}

// summary builds, for each scope, the geometric mean of rQPS over the
// steps of each group per version with the number of steps significantly
// worse and better than the base, then one table of the largest
// regressions over all scopes: the rQPS cells of the rqps table that are
// significantly below 1 (or, from a single repeat, not tested and below
// the attribution's no-change bound), lowest first, with the attribution's
// verdict and the counter whose ratio tracks 1/rQPS best across the
// version's steps (the correlation table's first row).
func (b *builder) summary(emit func(*table)) {
	others := b.others()
	if len(others) == 0 {
		return
	}
	type regression struct {
		sc   analysis.Scope
		v    string
		step string
		q    analysis.Cell
	}
	// The scopes' tables are built on every CPU, and emitted in order;
	// their regressions are listed in the order of the scopes.
	tables := make([]*table, len(b.c.Scopes))
	found := make([][]regression, len(b.c.Scopes))
	parallel(len(b.c.Scopes), func(i int) {
		sc := b.c.Scopes[i]
		tables[i] = b.summaryTable(sc, others, func(v, step string, q analysis.Cell) {
			found[i] = append(found[i], regression{sc, v, step, q})
		})
	})
	var regs []regression
	for i, t := range tables {
		emit(t)
		regs = append(regs, found[i]...)
	}
	sort.SliceStable(regs, func(i, j int) bool { return regs[i].q.Value < regs[j].q.Value })
	if len(regs) == 0 {
		return
	}
	t := &table{ID: tableSummary, Title: "Largest regressions", pad: padAuto, LabelHeader: "step", Relative: true,
		Header: []string{"host", "threads", "version", "rQPS", "verdict", "tracks it best"}}
	t.Preamble = []string{"Relative to: " + b.c.Base}
	more := len(regs) - maxRegressions
	regs = regs[:min(len(regs), maxRegressions)]
	// The metric that tracks each listed version's rQPS best in its
	// scope, the correlations of those versions computed on every CPU.
	type scopeVersion struct {
		sc analysis.Scope
		v  string
	}
	var pairs []scopeVersion
	for _, r := range regs {
		if p := (scopeVersion{r.sc, r.v}); !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
	}
	metrics := append(append([]string(nil), b.c.CounterMetrics()...), analysis.CPUIOMetrics[1:]...)
	tracks := make([]string, len(pairs))
	parallel(len(pairs), func(i int) {
		tracks[i] = "-"
		if cr := b.c.Correlate(pairs[i].sc, pairs[i].v, metrics); len(cr) > 0 && !math.IsNaN(cr[0].Rho) {
			tracks[i] = cr[0].Metric
		}
	})
	sec := section{}
	for _, r := range regs {
		k := analysis.Key(r.sc, r.v, r.step)
		t.addRatioKeys(k, b.c.BaseKey(k))
		b.tallyPairs(t, k, b.c.Base)
		m := tracks[slices.Index(pairs, scopeVersion{r.sc, r.v})]
		word := func(metric, text string) tableCell {
			return tableCell{Cell: analysis.Stated(analysis.Missing), Text: text, Version: r.v, Step: r.step, Metric: metric, word: true}
		}
		sec.Rows = append(sec.Rows, row{Label: r.step, Cells: []tableCell{
			word("host", r.sc.Host), word("threads", itoa(r.sc.Threads)), word("version", r.v),
			ratioCell(r.q, fmtRatio, k, analysis.OpsPerSecond),
			word("verdict", string(b.c.Attribute(k).Verdict)), word("tracks", m),
		}})
	}
	t.Sections = []section{sec}
	t.Notes = []string{"the steps whose rQPS is significantly below 1 (from a single repeat: below " +
		analysis.FormatFixed(math.Exp(-analysis.NoChange), 3) + "), lowest first, at most 20; verdict as in the attribution " +
		"table; tracks it best: the metric ranked first in the correlation table of that host and version"}
	if more > 0 {
		t.Notes = append(t.Notes, plural(more, "more regression")+" not listed")
	}
	emit(t)
}

// summaryTable is the summary's table of one scope: the geometric means
// of each version's rQPS by group of steps; regressed is called with
// each rQPS the regressions table may list, in table order.
func (b *builder) summaryTable(sc analysis.Scope, others []string, regressed func(v, step string, q analysis.Cell)) *table {
	t := b.newTable(tableSummary, "Summary: rQPS, geometric mean over each group of steps", sc)
	t.Preamble = []string{"Relative to: " + b.c.Base}
	t.LabelHeader = "version"
	steps := b.stepsIn(sc, false)
	var groups []string
	for _, g := range summaryGroups {
		for _, s := range steps {
			if b.group(s) == g {
				groups = append(groups, g)
				break
			}
		}
	}
	for _, g := range groups {
		t.Header = append(t.Header, g, "worse", "better")
	}
	sec := section{}
	var below []string // version and step left out: below the target insert rate
	for _, v := range others {
		row := row{Label: v}
		for _, g := range groups {
			var logs float64
			n, tested, worse, better := 0, 0, 0, 0
			estimated, partial := false, false
			for _, s := range steps {
				if b.group(s) != g {
					continue
				}
				k := analysis.Key(sc, v, s)
				t.addRatioKeys(k, b.c.BaseKey(k))
				q := b.c.ThroughputRatio(k)
				if !q.OK() || q.Value <= 0 || math.IsInf(q.Value, 0) {
					continue
				}
				if b.c.BelowTarget(k) || b.c.BelowTarget(b.c.BaseKey(k)) {
					below = append(below, v+" "+s)
					continue
				}
				n++
				logs += math.Log(q.Value)
				estimated, partial = estimated || q.Estimated, partial || q.Partial
				if q.Tested {
					tested++
				}
				switch {
				case q.Tested && !q.Same && q.Value < 1:
					worse++
				case q.Tested && !q.Same && q.Value > 1:
					better++
				}
				if q.Value < 1 && ((q.Tested && !q.Same) || (!q.Tested && -math.Log(q.Value) > analysis.NoChange)) {
					regressed(v, s, q)
				}
			}
			geo := analysis.NoValue("no step of the group has an rQPS")
			if n > 0 {
				geo = analysis.Val(math.Exp(logs / float64(n)))
				geo.Estimated, geo.Partial = estimated, partial
			}
			row.Cells = append(row.Cells,
				tableCell{Cell: geo, Text: cellText(geo, fmtRatio, textNone), Version: v, Metric: "geomean:" + g, better: 1, rel: true, format: fmtRatio},
				b.count(v, "worse:"+g, worse, tested), b.count(v, "better:"+g, better, tested))
		}
		sec.Rows = append(sec.Rows, row)
	}
	t.Sections = []section{sec}
	t.Notes = []string{"each group's geometric mean of the rQPS of its steps (as in the rqps table); worse and better: how many of those steps are significantly below or above the base"}
	if len(below) > 0 {
		t.Notes = append(t.Notes, "left out of the means, the counts and the regressions: "+strings.Join(below, ", ")+" (insert benchmark: the version or the base did not sustain the step's target insert rate, marked "+textBelowTarget+" in the rqps table)")
	}
	return t
}

// count is a cell holding a number of steps, not computable when none of
// the group's steps was tested.
func (b *builder) count(v, metric string, n, tested int) tableCell {
	c := analysis.Val(float64(n))
	if tested == 0 {
		c = analysis.NoValue("no step of the group was tested for significance (a single repeat of the version or the base)")
	}
	return tableCell{Cell: c, Text: cellText(c, fmtInt, textNone), Version: v, Metric: metric, format: fmtInt}
}

// parallel calls f(0) to f(n-1) on every CPU and returns when each has
// returned.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
