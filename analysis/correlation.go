package analysis

import (
	"math"
	"sort"

	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/record"
)

// spearman is the rank correlation of x and y (Pearson correlation of their
// ranks, ties given their average rank, which is the usual correction for
// ties). It is NaN when the lengths differ,
// there are fewer than 3 pairs, or either side is constant.
func spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 3 {
		return math.NaN()
	}
	rx, ry := ranks(x), ranks(y)
	n := float64(len(x))
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks returns the 1-based ranks of v, ties sharing their average rank.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// Correlation is how well one metric's ratio to the base tracks 1/rQPS
// across the steps of a version.
type Correlation struct {
	Metric string
	// Rho is Spearman's rank correlation of the metric's ratio with
	// 1/rQPS: near 1 when the metric grows where throughput drops. NaN
	// when fewer than 3 steps have both ratios or either is constant.
	Rho float64
	// N is the number of steps used: those where both ratios are measured
	// and finite, and the metric's ratio is not one of two zeros.
	N int
	// Multiplexed is set when a ratio used was scaled from multiplexed
	// counters.
	Multiplexed bool
	// Untested counts the steps whose metric ratio or rQPS was not tested
	// for significance (fewer than 2 repeats of the version or the base):
	// single windows.
	Untested int
	// Estimated is set when a ratio used rests on estimated op counts.
	Estimated bool
}

// Correlate ranks the metrics by the rank correlation of their ratio with
// 1/rQPS across the steps of one version in one scope (insert-benchmark
// steps left out): highest Rho first, metrics without a Rho last, ties by
// name. Both ratios are ranked as reports print them, rounded to two
// decimals, so that values that print the same tie.
//
// Few steps say little: with n steps and no relation at all, |Rho| = 1
// comes out in 2 of the n! orderings (1 in 3 with 3 steps, 1 in 12 with 4);
// ChanceOfPerfect gives that chance.
func (c *Comparison) Correlate(sc Scope, version string, metrics []string) []Correlation {
	// The steps with an rQPS to rank, the same for every metric.
	type stepRatio struct {
		k record.Key
		q Cell
		y float64 // the rank value of 1/rQPS
	}
	var steps []stepRatio
	for _, step := range c.Steps {
		if c.Group(step) == suite.GroupInsert {
			continue
		}
		k := Key(sc, version, step)
		q := c.ThroughputRatio(k)
		if !q.OK() || q.Value <= 0 || math.IsInf(q.Value, 0) {
			continue
		}
		// Rank the values reports print (%.2f): ratios that print the
		// same are ties, not an order set by rounding noise (IPC = 1/CPI
		// would otherwise rank apart from CPI). Ranks of 1/rQPS are those
		// of -rQPS.
		steps = append(steps, stepRatio{k, q, -roundFixed(q.Value, 2)})
	}
	var out []Correlation
	for _, m := range metrics {
		xs, ys := make([]float64, 0, len(steps)), make([]float64, 0, len(steps))
		mux, est, untested := false, false, 0
		for _, st := range steps {
			r := c.Ratio(st.k, m)
			// A ratio of two zeros is 1 by convention, not a measured
			// equality: it does not enter the correlation.
			if !r.OK() || math.IsInf(r.Value, 0) || r.BothZero {
				continue
			}
			xs = append(xs, roundFixed(r.Value, 2))
			ys = append(ys, st.y)
			mux = mux || r.Multiplexed()
			est = est || r.Estimated || st.q.Estimated
			if !r.Tested || !st.q.Tested {
				untested++
			}
		}
		out = append(out, Correlation{Metric: m, Rho: spearman(xs, ys), N: len(xs), Multiplexed: mux, Untested: untested, Estimated: est})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		an, bn := math.IsNaN(a.Rho), math.IsNaN(b.Rho)
		if an != bn {
			return !an
		}
		if !an && a.Rho != b.Rho {
			return a.Rho > b.Rho
		}
		return a.Metric < b.Metric
	})
	return out
}

// ChanceOfPerfect is the probability that n pairs with no relation at all
// (every ordering equally likely, no ties) have |rho| = 1: 2 / n!.
func ChanceOfPerfect(n int) float64 {
	if n < 2 {
		return 1
	}
	f := 1.0
	for i := 2; i <= n; i++ {
		f *= float64(i)
	}
	return 2 / f
}
