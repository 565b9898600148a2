package report

import (
	"fmt"
	"slices"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// topDownHeader is the attribution table's TopDown column: the level-1
// category whose slots per operation grew most, and its share of the
// growth of all slots per operation.
const topDownHeader = "topdown"

// topDownNote explains the TopDown column of the attribution table.
var topDownNote = fmt.Sprintf("topdown: when the throughput dropped, the TopDown level-1 category whose slots per "+
	"operation grew most (see the topdown.*/o tables) and its share of the growth of all slots per operation (n/a when they "+
	"did not grow in all); backend-bound slots point to the memory side (verdict %s), retiring slots to the code (verdict "+
	"%s); frontend, bad-speculation and smt-contention name themselves; none when no category grew or the throughput did not drop",
	analysis.VerdictMemory, analysis.VerdictCode)

// topDownCell is the TopDown column of an attribution row. Without a
// TopDown category measured on both sides it says why, as a value cell
// would: n/a when the version or the base recorded the events as not
// supported, nc when not counted, failed, else "-" (not recorded).
func topDownCell(t analysis.TopDownShift, k record.Key) tableCell {
	c := tableCell{Cell: analysis.Stated(analysis.Missing), Version: k.Version, Step: k.Step, Metric: topDownHeader}
	switch {
	case len(t.Growth) == 0:
		c.Cell = topDownState(t)
		c.Text = cellText(c.Cell, fmtShare, textNone)
		return c
	case t.Grew == "":
		c.Text = string(analysis.VerdictNone)
	default:
		c.Text = string(t.Grew) + " " + fmtShare(t.Share)
	}
	c.word = true
	return c
}

// topDownState is the most telling state of the TopDown cells of the
// version and the base that have no value: failed, then not supported,
// not counted, not computable (the reason first in order), missing.
func topDownState(t analysis.TopDownShift) analysis.Cell {
	rank := map[analysis.State]int{analysis.Missing: 0, analysis.NotComputable: 1, analysis.NotCounted: 2, analysis.NotSupported: 3, analysis.Failed: 4}
	out := analysis.Stated(analysis.Missing)
	consider := func(c analysis.Cell) {
		if c.OK() {
			return
		}
		if r := rank[c.State]; r > rank[out.State] || (r == rank[out.State] && c.Why != "" && (out.Why == "" || c.Why < out.Why)) {
			out = analysis.Stated(c.State)
			out.Why = c.Why
		}
	}
	for _, c := range t.Version {
		consider(c)
	}
	for _, c := range t.Base {
		consider(c)
	}
	return out
}

// dropTopDownColumn removes the TopDown column from an attribution table
// none of whose Records had TopDown metrics.
func dropTopDownColumn(t *table) {
	col := -1
	for i, h := range t.Header {
		if h == topDownHeader {
			col = i
		}
	}
	if col < 0 {
		return
	}
	t.Header = append(t.Header[:col:col], t.Header[col+1:]...)
	for si := range t.Sections {
		for ri := range t.Sections[si].Rows {
			r := &t.Sections[si].Rows[ri]
			if len(r.Cells) > col {
				// A row's cells are its own: they are cut in place.
				r.Cells = slices.Delete(r.Cells, col, col+1)
			}
		}
	}
}
