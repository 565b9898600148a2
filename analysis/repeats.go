package analysis

import (
	"math"
	"slices"

	"github.com/perfbench/perfbench/record"
)

// Repeats that disagree: the throughput of a (version, step, threads) over
// its repeats is flagged (Cell.Disagree) when its coefficient of variation
// is above DisagreeCV, or when it is bimodal: sorted, the repeats split at
// their largest gap into two groups of at least two repeats each, and that
// gap is wider than BimodalGap times the range inside either group and
// than DisagreeCV of the median. Two groups of repeats that each agree but
// not with each other are what a scheduler that places the load on the
// server's CPU in some runs and not in others gives; the median of such
// repeats describes neither.
const (
	DisagreeCV = 0.03
	BimodalGap = 3.0
)

// cv is the coefficient of variation of vals: the sample standard deviation
// (n-1) over the mean; NaN for fewer than 2 values or a mean of 0.
func cv(vals []float64) float64 {
	n := float64(len(vals))
	if len(vals) < 2 {
		return math.NaN()
	}
	mean := 0.0
	for _, v := range vals {
		mean += v
	}
	mean /= n
	if mean == 0 {
		return math.NaN()
	}
	ss := 0.0
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	return math.Sqrt(ss/(n-1)) / math.Abs(mean)
}

// bimodal reports whether vals split into two groups as the package's
// rule says (see DisagreeCV).
func bimodal(vals []float64) bool {
	if len(vals) < 4 {
		return false
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	at, gap := 0, -1.0
	for i := 1; i < len(s); i++ {
		if d := s[i] - s[i-1]; d > gap {
			at, gap = i, d
		}
	}
	if at < 2 || len(s)-at < 2 {
		return false
	}
	spread := math.Max(s[at-1]-s[0], s[len(s)-1]-s[at])
	return gap > BimodalGap*spread && gap > DisagreeCV*math.Abs(median(s))
}

// disagreeing reports whether the repeats' values disagree: a CV above
// DisagreeCV, or bimodal.
func disagreeing(vals []float64) bool {
	cv := cv(vals)
	return (!math.IsNaN(cv) && cv > DisagreeCV) || bimodal(vals)
}

// HalfWidth is the larger distance from the value to an end of its 95%
// interval, relative to the value: what reports print as ±; NaN when the
// cell has no interval or a value of 0.
func (c Cell) HalfWidth() float64 {
	if !c.HasCI() || c.Value == 0 || math.IsInf(c.Value, 0) {
		return math.NaN()
	}
	return math.Max(c.Hi-c.Value, c.Value-c.Lo) / math.Abs(c.Value)
}

// Precise reports whether the cell has an interval no wider than ±precision
// of its value: the rule by which perfbench run stops adding repeats to a
// step (repeats = "auto").
func (c Cell) Precise(precision float64) bool {
	w := c.HalfWidth()
	return !math.IsNaN(w) && w <= precision
}

// autoRepeats is the AutoRepeats of the first Record of the samples that
// has one.
func (c *Comparison) autoRepeats(keys ...record.Key) *record.AutoRepeats {
	for _, k := range keys {
		if s := c.samples[k]; s != nil && s.auto != nil {
			return s.auto
		}
	}
	return nil
}

// markRepeats sets the repeat flags of a throughput cell of keys (the
// version's, and the base's for a ratio): MaxReached when the plan chose
// the repeats (repeats = "auto"), a side ran the most repeats allowed, and
// the cell is still not precise.
func (c *Comparison) markRepeats(cell *Cell, keys ...record.Key) {
	if !cell.OK() {
		return
	}
	a := c.autoRepeats(keys...)
	if a == nil {
		return
	}
	cell.MaxReached = max(cell.Of, cell.BaseOf) >= a.Max && !cell.Precise(a.Precision)
}
