package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// pairTally adds up the pairings behind the ratios of a table whose
// versions were measured together, each version and base once however
// many of its metrics the table shows: the turns of their comparisons,
// those left out and why (analysis.Pairing of the rQPS).
type pairTally struct {
	seen []pairRef
	// turns counts the turns, dropped those left out, busy those of
	// them left out for a busy slice; none counts the pairings that kept
	// no turn (their ratios are of medians over repeats).
	turns, dropped, busy, none int
}

// pairRef is a version's key and the version it is compared with.
type pairRef struct {
	k    record.Key
	base string
}

// tallyPairs adds the pairing of k with version base to t's, once.
// Reports without Records measured together skip it.
func (b *builder) tallyPairs(t *table, k record.Key, base string) {
	if !b.compared {
		return
	}
	if t.pairs == nil {
		t.pairs = &pairTally{}
	}
	ref := pairRef{k, base}
	if slices.Contains(t.pairs.seen, ref) {
		return
	}
	t.pairs.seen = append(t.pairs.seen, ref)
	p, ok := b.c.PairingTo(k, base)
	if !ok {
		return
	}
	t.pairs.turns += p.Pairs + p.Dropped
	t.pairs.dropped += p.Dropped
	t.pairs.busy += p.Busy
	if p.Pairs == 0 {
		t.pairs.none++
	}
}

// note says how many turns were left out and why, nothing when none was.
func (p *pairTally) note() []string {
	if p.dropped == 0 {
		return nil
	}
	s := fmt.Sprintf("left out: %d of %d turns", p.dropped, p.turns)
	var why []string
	if p.busy > 0 {
		why = append(why, fmt.Sprintf("%d with a busy slice", p.busy))
	}
	if o := p.dropped - p.busy; o > 0 {
		why = append(why, fmt.Sprintf("%d with a failed read, no ops counted or cut short", o))
	}
	s += ": " + strings.Join(why, ", ")
	switch {
	case p.none == 1:
		s += "; 1 ratio had no turn: medians of repeats"
	case p.none > 1:
		s += fmt.Sprintf("; %d ratios had no turn: medians of repeats", p.none)
	}
	return []string{s}
}

// pairs is, for each scope, a row per step and version compared with the
// base (and A/A pair) that were measured together: the comparisons'
// mode, how many turns were paired and left out, each round's ratio and
// their spread, and the paired rQPS.
func (b *builder) pairs(scopes []analysis.Scope, emit func(*table)) {
	if !b.compared {
		return
	}
	floors := b.floors()
	others := slices.DeleteFunc(b.others(), func(v string) bool { return slices.Contains(floors, v) })
	for _, sc := range scopes {
		t := b.newTable(tablePairs, "Pairs behind each rQPS of versions measured together", sc)
		t.Header = []string{"version", "vs", "mode", "pairs", "busy", "other", "rounds", "per-round", "CV", "rQPS"}
		t.LabelHeader = "step"
		sec := section{}
		for _, step := range b.stepsIn(sc, false) {
			for _, v := range others {
				if r, ok := b.pairRow(t, analysis.Key(sc, v, step), b.c.Base); ok {
					sec.Rows = append(sec.Rows, r)
				}
			}
			for _, v := range floors {
				if r, ok := b.pairRow(t, analysis.Key(sc, v, step), b.aa[v]); ok {
					sec.Rows = append(sec.Rows, r)
				}
			}
		}
		if len(sec.Rows) == 0 {
			continue
		}
		t.Sections = []section{sec}
		t.Notes = []string{
			"pairs: turns paired; busy, other: turns left out for a busy slice, or a failed read, no ops counted or a turn cut short",
			"rounds: repeats with a pair; per-round: each one's ratio (geometric mean of its turns); CV: their coefficient of variation",
		}
		emit(t)
	}
}

// pairRow is the row of k compared with version base, if they were
// measured together.
func (b *builder) pairRow(t *table, k record.Key, base string) (row, bool) {
	p, ok := b.c.PairingTo(k, base)
	if !ok {
		return row{}, false
	}
	word := func(metric, text string) tableCell {
		return tableCell{Cell: analysis.Stated(analysis.Missing), Text: text, Version: k.Version, Step: k.Step, Metric: metric, word: true}
	}
	count := func(metric string, n int) tableCell {
		c := analysis.Val(float64(n))
		return tableCell{Cell: c, Text: cellText(c, fmtInt, textNone), Version: k.Version, Step: k.Step, Metric: metric, format: fmtInt}
	}
	ratios := make([]string, len(p.RoundRatios))
	for i, r := range p.RoundRatios {
		ratios[i] = fmtRatio(r)
	}
	perRound := word("per-round", strings.Join(ratios, " "))
	if len(ratios) == 0 {
		perRound = tableCell{Cell: analysis.NoValue("no turn could be paired"), Text: textNone, Version: k.Version, Step: k.Step, Metric: "per-round"}
	}
	cv := analysis.NoValue("fewer than 2 rounds")
	if p.Rounds >= 2 {
		cv = analysis.Val(p.RoundCV)
	}
	var q tableCell
	if base == b.c.Base {
		q = b.ratio(t, k, analysis.OpsPerSecond, fmtRatio)
	} else {
		q = b.floorCell(t, k)
	}
	if q.Paired == analysis.NotPaired && q.State != analysis.Failed {
		// No turn kept: the rqps table's ratio is of medians over
		// repeats, which is not this table's.
		q.Cell = analysis.NoValue("no turn could be paired")
		q.Text = textNone
	}
	r := row{Label: k.Step, Cells: newCells(len(t.Header))}
	r.Cells = append(r.Cells, word("version", k.Version), word("vs", base), word("mode", p.Mode),
		count("pairs", p.Pairs), count("busy", p.Busy), count("other", p.Dropped-p.Busy), count("rounds", p.Rounds),
		perRound,
		tableCell{Cell: cv, Text: cellText(cv, fmtCV, textNone), Version: k.Version, Step: k.Step, Metric: "round-cv", format: fmtCV},
		q)
	return r, true
}

// fmtCV prints a coefficient of variation (a fraction) as a percentage
// with one decimal.
func fmtCV(x float64) string { return fmtPct(100 * x) }
