package report

import (
	"math"
	"sort"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/suite"
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
	var regs []regression
	for _, sc := range b.c.Scopes {
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
						regs = append(regs, regression{sc, v, s, q})
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
		emit(t)
	}
	sort.SliceStable(regs, func(i, j int) bool { return regs[i].q.Value < regs[j].q.Value })
	if len(regs) == 0 {
		return
	}
	t := &table{ID: tableSummary, Title: "Largest regressions", pad: padAuto, LabelHeader: "step", Relative: true,
		Header: []string{"host", "threads", "version", "rQPS", "verdict", "tracks it best"}}
	t.Preamble = []string{"Relative to: " + b.c.Base}
	best := map[analysis.Scope]map[string]string{}
	metrics := append(append([]string(nil), b.c.CounterMetrics()...), analysis.CPUIOMetrics[1:]...)
	sec := section{}
	for _, r := range regs[:min(len(regs), maxRegressions)] {
		k := analysis.Key(r.sc, r.v, r.step)
		t.addRatioKeys(k, b.c.BaseKey(k))
		if best[r.sc] == nil {
			best[r.sc] = map[string]string{}
		}
		m, ok := best[r.sc][r.v]
		if !ok {
			m = "-"
			if cr := b.c.Correlate(r.sc, r.v, metrics); len(cr) > 0 && !math.IsNaN(cr[0].Rho) {
				m = cr[0].Metric
			}
			best[r.sc][r.v] = m
		}
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
	t.Notes = []string{"the steps whose rQPS is significantly below 1 (from a single repeat: below " + analysis.FormatFixed(math.Exp(-analysis.NoChange), 3) + "), lowest first, at most 20; verdict as in the attribution table; tracks it best: the metric ranked first in the correlation table of that host and version"}
	if len(regs) > maxRegressions {
		t.Notes = append(t.Notes, plural(len(regs)-maxRegressions, "more regression")+" not listed")
	}
	emit(t)
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
