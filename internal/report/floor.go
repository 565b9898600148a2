package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// aaPairs are the A/A pairs of the Records (record.Record.AAOf): the
// second label of a version measured twice, mapped to the first, when both
// have Records.
func aaPairs(recs []*record.Record, versions []string) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		if r.AAOf != "" && r.AAOf != r.Version && slices.Contains(versions, r.AAOf) {
			out[r.Version] = r.AAOf
		}
	}
	return out
}

// floors are the versions whose rQPS tables print as the noise floor (the
// second labels of A/A pairs), in version order.
func (b *builder) floors() []string {
	var out []string
	for _, v := range b.c.Versions {
		if _, ok := b.aa[v]; ok {
			out = append(out, v)
		}
	}
	return out
}

// floorHeader heads the floor column of the i-th of n floors.
func floorHeader(i, n int) string {
	if n == 1 {
		return "floor"
	}
	return fmt.Sprintf("floor-%d", i+1)
}

// floorCell is the rQPS of the A/A twin at key k against its first label.
func (b *builder) floorCell(t *table, k record.Key) tableCell {
	of := b.aa[k.Version]
	bk := k
	bk.Version = of
	t.addRatioKeys(k, bk)
	b.tallyPairs(t, k, of)
	return ratioCell(b.c.RatioTo(k, of, analysis.OpsPerSecond), fmtRatio, k, analysis.OpsPerSecond)
}

// floorNotes say what the floor columns of an rQPS table are.
func (b *builder) floorNotes(floors []string) (legend, notes []string) {
	for i, v := range floors {
		legend = append(legend, fmt.Sprintf("%s : %s against %s (A/A)", floorHeader(i, len(floors)), v, b.aa[v]))
	}
	if len(floors) > 0 {
		notes = append(notes, "floor: the rQPS of one server measured under two labels in the same interleaved run (an A/A "+
			"pair: aa_of in the plan, or two versions that start the same server): it would be 1.00 without noise; a version "+
			"whose rQPS differs from 1 by no more than the floor does is within the noise of this run")
	}
	return legend, notes
}

// autoNotes is the report's note on plans with repeats = "auto": the
// precision asked for, and the repeats each step and thread count ran.
func autoNotes(recs []*record.Record) []string {
	type cell struct {
		step    string
		threads int
	}
	var a *record.AutoRepeats
	n := map[cell]int{}
	var order []cell
	for _, r := range recs {
		if r.AutoRepeats == nil || r.Kind == record.KindTable {
			continue
		}
		a = r.AutoRepeats
		c := cell{r.Step, r.Threads}
		if _, ok := n[c]; !ok {
			order = append(order, c)
		}
		n[c] = max(n[c], r.Repeat)
	}
	if a == nil {
		return nil
	}
	var parts []string
	for _, c := range order {
		s := fmt.Sprintf("%s at %s: %d", c.step, plural(c.threads, "thread"), n[c])
		if n[c] >= a.Max {
			s += " (the maximum)"
		}
		parts = append(parts, s)
	}
	return []string{fmt.Sprintf("repeats = \"auto\": each step ran until every rQPS against %s had a 95%% interval within "+
		"±%g%%, or %d repeats (cells marked m stopped there, wider); repeats run: %s",
		a.Base, 100*a.Precision, a.Max, strings.Join(parts, "; "))}
}
