package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"golang.org/x/perf/benchmath"

	"github.com/perfbench/perfbench/record"
)

// TestDisagreeing: the CV and the bimodal rule on hand-computed values.
func TestDisagreeing(t *testing.T) {
	for _, c := range []struct {
		vals              []float64
		cv                float64 // NaN: none
		bimodal, disagree bool
	}{
		// mean 11, sd √2: CV 0.1286
		{[]float64{10, 12}, 0.128565, false, true},
		// mean 100, sd 1
		{[]float64{100, 101, 99}, 0.01, false, false},
		// two groups 12–13 and 40–41: mean 26.5, sd 15.34; gap 27 > 3 × 1 and
		// > 3% of the median 26.5
		{[]float64{40, 41, 40.5, 12, 12.5, 13}, 0.57897, true, true},
		// two tight groups 0.04 apart: the gap is 0.04% of the median
		{[]float64{100, 100.01, 100.05, 100.06}, 0.0003, false, false},
		// one low repeat is an outlier, not a group: CV (mean 33.375, sd
		// 14.26) flags it
		{[]float64{12, 40, 40.5, 41}, 0.42714, false, true},
		// mean 102.5, sd 2.38; gap 3 is not more than 3 × the groups' range 1
		{[]float64{100, 101, 104, 105}, 0.02322, false, false},
		// gap 4 > 3 × 1 and > 3% of 103 (3.09): bimodal with a CV of 2.9%
		{[]float64{100, 101, 105, 106}, 0.02858, true, true},
		// evenly spread
		{[]float64{100, 101, 102, 103, 104, 105}, 0.01835, false, false},
		{[]float64{100}, math.NaN(), false, false},
		{nil, math.NaN(), false, false},
	} {
		cv := cv(c.vals)
		if math.IsNaN(c.cv) != math.IsNaN(cv) || (!math.IsNaN(cv) && math.Abs(cv-c.cv) > 1e-4) {
			t.Errorf("CV(%v) = %.5f, want %.5f", c.vals, cv, c.cv)
		}
		if b := bimodal(c.vals); b != c.bimodal {
			t.Errorf("Bimodal(%v) = %v, want %v", c.vals, b, c.bimodal)
		}
		if d := disagreeing(c.vals); d != c.disagree {
			t.Errorf("Disagreeing(%v) = %v, want %v", c.vals, d, c.disagree)
		}
	}
}

// TestPrecise: the half-width is the larger side of the interval relative
// to the value, as reports print it; no interval is never precise.
func TestPrecise(t *testing.T) {
	c := Cell{Value: 1, Lo: 0.75, Hi: 1.125, N: 6, Of: 6, Running: 1}
	if w := c.HalfWidth(); w != 0.25 || !c.Precise(0.25) || c.Precise(0.2) {
		t.Errorf("half-width %v, precise at ±25%% %v, at ±20%% %v", w, c.Precise(0.25), c.Precise(0.2))
	}
	c.Lo, c.Hi = math.NaN(), math.NaN()
	if !math.IsNaN(c.HalfWidth()) || c.Precise(1) {
		t.Errorf("a cell without an interval: half-width %v, precise %v", c.HalfWidth(), c.Precise(1))
	}
}

// TestThroughputRepeatFlags: the ratio of a version whose repeats disagree
// is marked, and with repeats = "auto" a cell that ran the most repeats
// without reaching the precision is marked as such, one that reached it or
// could still run more is not.
func TestThroughputRepeatFlags(t *testing.T) {
	build := func(auto *record.AutoRepeats, version []float64) *Comparison {
		var recs []*record.Record
		for i, ops := range version {
			b := stepRecord("base", "s", i+1, 1000)
			v := stepRecord("new", "s", i+1, ops)
			b.AutoRepeats, v.AutoRepeats = auto, auto
			recs = append(recs, b, v)
		}
		c, err := New(recs, "base", Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	k := record.Key{Host: "h", Version: "new", Step: "s", Threads: 1}
	wide := []float64{1200, 1500, 1100, 1600, 1300, 1400} // CV 14%
	steady := []float64{1500, 1500, 1500, 1500, 1500, 1500}

	r := build(nil, wide).ThroughputRatio(k)
	if !r.Disagree || r.MaxReached {
		t.Errorf("wide repeats without auto: %+v", r)
	}
	r = build(&record.AutoRepeats{Precision: 0.02, Max: 6}, wide).ThroughputRatio(k)
	if !r.MaxReached || r.Precise(0.02) {
		t.Errorf("6 wide repeats of at most 6: %+v (±%.1f%%)", r, 100*r.HalfWidth())
	}
	if v := build(&record.AutoRepeats{Precision: 0.02, Max: 6}, wide).Value(k, OpsPerSecond); !v.MaxReached || !v.Disagree {
		t.Errorf("the version's own QPS: %+v", v)
	}
	if r = build(&record.AutoRepeats{Precision: 0.02, Max: 10}, wide).ThroughputRatio(k); r.MaxReached {
		t.Errorf("6 wide repeats of at most 10 (the run stopped early): %+v", r)
	}
	r = build(&record.AutoRepeats{Precision: 0.02, Max: 6}, steady).ThroughputRatio(k)
	if r.MaxReached || r.Disagree || !r.Precise(0.02) || r.Value != 1.5 {
		t.Errorf("steady repeats: %+v", r)
	}
}

// TestMedianCIAsBenchmath checks that medianCI gives the median and the
// interval benchmath.AssumeNothing.Summary gives, for samples of 2 to 40
// values (ties among them) at three levels.
func TestMedianCIAsBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 2; n <= 40; n++ {
		for _, conf := range []float64{0.9, 0.95, 0.99} {
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = float64(rng.IntN(7)) + rng.Float64()*float64(rng.IntN(2))
			}
			sort.Float64s(vals)
			want := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(vals), &benchmath.DefaultThresholds), conf)
			m, lo, hi := medianCI(vals, conf)
			if m != want.Center || lo != want.Lo || hi != want.Hi {
				t.Errorf("%d values at %v: %v [%v, %v], benchmath %v [%v, %v]", n, conf, m, lo, hi, want.Center, want.Lo, want.Hi)
			}
		}
	}
}
