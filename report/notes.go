package report

import (
	"fmt"
	"math"
	"sort"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// Colour rules (design): relative cells below 0.95 are yellow and above 1.05
// blue; among the absolute cells compared together (the versions of one
// step and metric), those in the bottom quarter of the range between the
// smallest and largest are red when higher is better (green when lower is
// better) and those in the top quarter green (red), except that red is not
// used when the smallest is at least 80% of the largest.
const (
	RelativeLow  = 0.95
	RelativeHigh = 1.05
	Quartile     = 0.25
	RedSuppress  = 0.8
)

func colour(tables []*Table) {
	sets := map[string][]*Cell{}
	var order []string
	for _, t := range tables {
		for si := range t.Sections {
			for ri := range t.Sections[si].Rows {
				row := &t.Sections[si].Rows[ri]
				for ci := range row.Cells {
					c := &row.Cells[ci]
					if c.Empty || c.word || !c.OK() || math.IsInf(c.Value, 0) || math.IsNaN(c.Value) {
						continue
					}
					switch {
					case c.rel:
						if c.Value < RelativeLow {
							c.Class = "yellow"
						} else if c.Value > RelativeHigh {
							c.Class = "blue"
						}
					case c.set != "" && c.better != 0:
						if sets[c.set] == nil {
							order = append(order, c.set)
						}
						sets[c.set] = append(sets[c.set], c)
					}
				}
			}
		}
	}
	for _, k := range order {
		cells := sets[k]
		if len(cells) < 2 {
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range cells {
			lo, hi = math.Min(lo, c.Value), math.Max(hi, c.Value)
		}
		if hi == lo {
			continue
		}
		noRed := lo >= RedSuppress*hi
		span := hi - lo
		for _, c := range cells {
			bottom := c.Value <= lo+Quartile*span
			top := c.Value >= hi-Quartile*span
			good, bad := top, bottom
			if c.better < 0 {
				good, bad = bottom, top
			}
			switch {
			case good:
				c.Class = "green"
			case bad && !noRed:
				c.Class = "red"
			}
		}
	}
}

// finish adds the notes of a table: the markers its cells use, statistics,
// and the warnings of the Records behind it.
func (b *builder) finish(t *Table) {
	var mux, na, nc, missing, failed, partial, inf, ci, noCI, same, few bool
	tested, repeats := 0, false
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			for _, c := range r.Cells {
				if c.Empty || c.word {
					continue
				}
				switch c.State {
				case analysis.NotSupported:
					na = true
				case analysis.NotCounted:
					nc = true
				case analysis.Missing:
					missing = true
				case analysis.Failed:
					failed = true
				}
				if !c.OK() {
					continue
				}
				mux = mux || c.Multiplexed()
				partial = partial || c.Partial
				inf = inf || math.IsInf(c.Value, 0)
				if c.N >= 2 {
					repeats = true
					if c.HasCI() {
						ci = true
					} else {
						noCI = true
					}
				}
				if c.Tested {
					tested++
					same = same || c.Same
					few = few || c.N < 4
				}
			}
		}
	}
	var notes []string
	switch t.ID {
	case TableCPUIO, TableCPUIORel, TableCounters, TableCountersRel, TableLegacy, TableAttribution:
		if !b.opt.Analysis.KeepScanOps && t.hasRow(analysis.IsScan) {
			notes = append(notes, "scan steps: an operation is 1,000 rows read when the Record has a rows-read status")
		}
	}
	if repeats {
		notes = append(notes, "values are medians over repeats")
	}
	if ci {
		notes = append(notes, "±x%: half-width of the 95% confidence interval of the median, relative to the value")
	}
	if noCI {
		notes = append(notes, "no confidence interval is shown for cells with fewer than 6 repeats: too few for a 95% interval of the median")
	}
	if same {
		notes = append(notes, fmt.Sprintf("~: not significantly different from the base (Mann-Whitney U test, p >= %.2g)", b.alpha()))
	}
	if few {
		notes = append(notes, fmt.Sprintf("with fewer than 4 repeats per version no difference can be significant at α = %.2g", b.alpha()))
	}
	if n := float64(tested); n*b.alpha() >= 0.5 {
		notes = append(notes, fmt.Sprintf("%d comparisons to the base at α = %.2g: about %.1f of them are expected to look significant by chance alone", tested, b.alpha(), n*b.alpha()))
	}
	if mux {
		notes = append(notes, "(N%): the counters behind the value were multiplexed and counted N% of the window; the value is scaled by time enabled / time running")
	}
	if na {
		notes = append(notes, "n/a: event not supported on the machine that measured it")
	}
	if nc {
		notes = append(notes, "nc: event enabled but never scheduled (not counted)")
	}
	if missing && t.ID != TableInsertLine {
		notes = append(notes, "-: not recorded")
	}
	if inf {
		notes = append(notes, "inf: the base's value is 0")
	}
	if failed {
		notes = append(notes, "failed: the step failed; its reason is listed below")
	}
	if partial {
		notes = append(notes, "p: from a window cut short (partial step); see below")
	}
	t.Notes = append(t.Notes, notes...)
	perOp := false
	switch t.ID {
	case TableCPUIO, TableCPUIORel, TableCounters, TableCountersRel, TableLegacy, TableAttribution, TableCorrelation, TableInsertLine:
		perOp = true
	}
	t.Notes = append(t.Notes, b.c.Warnings(uniqueKeys(t.keys), perOp)...)
}

func (b *builder) alpha() float64 {
	if b.opt.Analysis.Alpha > 0 {
		return b.opt.Analysis.Alpha
	}
	return 0.05
}

// uniqueKeys returns the keys without duplicates, sorted by version order of
// first appearance, then step, then threads.
func uniqueKeys(keys []record.Key) []record.Key {
	seen := map[record.Key]bool{}
	var out []record.Key
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	pos := map[string]int{}
	for _, k := range out {
		if _, ok := pos[k.Version]; !ok {
			pos[k.Version] = len(pos)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Version != b.Version {
			return pos[a.Version] < pos[b.Version]
		}
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		return a.Threads < b.Threads
	})
	return out
}

// hasRow reports whether a value row's label satisfies f.
func (t *Table) hasRow(f func(string) bool) bool {
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			if r.Kind == RowValues && f(r.Label) {
				return true
			}
		}
	}
	return false
}
