package report

import (
	"fmt"
	"slices"
	"strings"

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
		s += "; 1 ratio with no turn left is of medians over repeats"
	case p.none > 1:
		s += fmt.Sprintf("; %d ratios with no turn left are of medians over repeats", p.none)
	}
	return []string{s}
}
