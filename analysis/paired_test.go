package analysis

import (
	"fmt"
	"math"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// slice is a slice of a comparison: ops operations and task-clock ns in
// seconds, in turn, ran or not.
func slice(turn int, ran bool, seconds, ops, taskClock float64) record.Slice {
	return record.Slice{Turn: turn, Seconds: seconds, Ran: ran, Ops: ops, OpsCounted: true,
		Counters: map[string]float64{"task-clock": taskClock}}
}

// compared is a Record of version measured in comparison id with these
// slices (its window's totals are theirs).
func compared(version, id, mode string, repeat int, slices ...record.Slice) *record.Record {
	r := stepRecord(version, "point-query_range=100", repeat, 0, counted("task-clock", 0))
	r.Comparison = &record.Comparison{Mode: mode, ID: id, Versions: []string{"b", "v"}, SliceSeconds: 1, Slices: slices}
	t := 0.0
	for i := range slices {
		slices[i].Start = t
		t += slices[i].Seconds
		if slices[i].Ran {
			r.Ops.Count += slices[i].Ops
			r.Counters[0].Value += slices[i].Counters["task-clock"]
		}
	}
	r.Window.Seconds = t
	return r
}

func TestPairedDuetHandComputed(t *testing.T) {
	// Two turns of two slices. Turn 0: v did 100 and 200 ops in its two
	// seconds (one on each set of CPUs), b 200 and 100: 300 each, ratio
	// 1. Turn 1: v 110 + 220 = 330 against 300: 1.1. One second of each
	// slice, so ops per second are the ops.
	b := compared("b", "c1", record.ComparisonDuet, 1,
		slice(0, true, 1, 200, 2e6), slice(0, true, 1, 100, 1e6),
		slice(1, true, 1, 200, 2e6), slice(1, true, 1, 100, 1e6))
	v := compared("v", "c1", record.ComparisonDuet, 1,
		slice(0, true, 1, 100, 1e6), slice(0, true, 1, 200, 2e6),
		slice(1, true, 1, 110, 1.1e6), slice(1, true, 1, 220, 3.3e6))
	c, err := New([]*record.Record{b, v}, "b", Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := Key(Scope{"h", 1}, "v", "point-query_range=100")
	got := c.ThroughputRatio(k)
	// Geometric mean of 1 and 1.1; the interval is mean ± t(0.975, 1
	// df) × s/√2 of the logarithms 0 and ln 1.1: s = ln 1.1/√2, so the
	// half-width is 12.7062 × ln 1.1 / 2.
	l := math.Log(1.1)
	wantLo, wantHi := math.Exp(l/2-12.7062*l/2), math.Exp(l/2+12.7062*l/2)
	if !near(got.Value, math.Sqrt(1.1)) || got.N != 2 || got.Paired != PairedDuet || !got.Tested {
		t.Fatalf("rQPS %+v, want %v from 2 duet pairs", got, math.Sqrt(1.1))
	}
	if math.Abs(got.Lo-wantLo) > 1e-4 || math.Abs(got.Hi-wantHi) > 1e-4 {
		t.Errorf("interval %v–%v, want %v–%v", got.Lo, got.Hi, wantLo, wantHi)
	}
	// cpu/o: turn 0: v 3e6 ns / 300 ops = 10 µs, b the same: 1. Turn 1: v
	// 4.4e6/330 = 13.33 µs, b 10 µs: 1.3333. Geometric mean √(4/3).
	if cpu := c.Ratio(k, "cpu/o"); !near(cpu.Value, math.Sqrt(4.0/3)) || cpu.Paired != PairedDuet {
		t.Errorf("cpu/o ratio %+v, want %v", cpu, math.Sqrt(4.0/3))
	}
	p, ok := c.Pairing(k)
	if !ok || p.Pairs != 2 || p.Dropped != 0 || p.Rounds != 1 || p.Mode != record.ComparisonDuet ||
		len(p.RoundRatios) != 1 || !near(p.RoundRatios[0], math.Sqrt(1.1)) {
		t.Errorf("pairing %+v", p)
	}
	// The base against v (PairingTo): the same turns, each ratio
	// inverted: 1 and 1/1.1.
	bp, ok := c.PairingTo(Key(Scope{"h", 1}, "b", "point-query_range=100"), "v")
	if !ok || bp.Pairs != 2 || bp.Rounds != 1 || !near(bp.RoundRatios[0], 1/math.Sqrt(1.1)) {
		t.Errorf("pairing of b to v %+v, want 2 pairs, a round of %v", bp, 1/math.Sqrt(1.1))
	}
}

func TestPairedSlicesAndBusy(t *testing.T) {
	// Slices: one version a slice. Turn 0 b then v, turn 1 v then b,
	// turn 2 b then v with v's slice busy (left out). v runs at 90 ops/s
	// against b's 100 in turn 0, 99 against 110 in turn 1: 0.9 both.
	mk := func(version string, ranFirst []bool, ops []float64, busy int) *record.Record {
		var sl []record.Slice
		for turn := range 3 {
			a := slice(turn, ranFirst[turn], 1, 0, 0)
			z := slice(turn, !ranFirst[turn], 1, 0, 0)
			if a.Ran {
				a.Ops, a.Counters["task-clock"] = ops[turn], ops[turn]*1e4
			} else {
				z.Ops, z.Counters["task-clock"] = ops[turn], ops[turn]*1e4
			}
			sl = append(sl, a, z)
		}
		if busy >= 0 {
			sl[busy].Busy = true
		}
		return compared(version, "c1", record.ComparisonSlices, 1, sl...)
	}
	b := mk("b", []bool{true, false, true}, []float64{100, 110, 100}, -1)
	v := mk("v", []bool{false, true, false}, []float64{90, 99, 500}, 5)
	c, err := New([]*record.Record{b, v}, "b", Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := Key(Scope{"h", 1}, "v", "point-query_range=100")
	got := c.ThroughputRatio(k)
	if !near(got.Value, 0.9) || got.N != 2 || got.Paired != PairedSlices {
		t.Errorf("rQPS %+v, want 0.9 from 2 pairs (the busy turn left out)", got)
	}
	// Two equal ratios: no spread, a difference the test calls certain.
	if !got.Tested || got.Same || got.P != 0 {
		t.Errorf("test: tested %v same %v p %v", got.Tested, got.Same, got.P)
	}
	p, _ := c.Pairing(k)
	if p.Pairs != 2 || p.Dropped != 1 || p.Busy != 1 {
		t.Errorf("pairing %+v, want 2 pairs, 1 dropped for a busy slice", p)
	}
	// Absolute QPS is over the slices v ran: (90 + 99 + 500) ops in 3 s.
	if q := c.Value(k, OpsPerSecond); !near(q.Value, 689.0/3) {
		t.Errorf("QPS %v, want %v (ops over the seconds its load ran)", q.Value, 689.0/3)
	}
}

func TestPairedNeedsSameComparison(t *testing.T) {
	// Records of separate comparisons (or windows) are not paired: the
	// medians of repeats are compared as before.
	b := compared("b", "c1", record.ComparisonDuet, 1, slice(0, true, 1, 100, 1e6), slice(0, true, 1, 100, 1e6))
	v := compared("v", "c2", record.ComparisonDuet, 1, slice(0, true, 1, 50, 1e6), slice(0, true, 1, 50, 1e6))
	c, err := New([]*record.Record{b, v}, "b", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := c.ThroughputRatio(Key(Scope{"h", 1}, "v", "point-query_range=100"))
	if got.Paired != NotPaired || !near(got.Value, 0.5) {
		t.Errorf("rQPS %+v, want 0.5 unpaired", got)
	}
}

func TestPairedMaxReachedCountsRounds(t *testing.T) {
	// repeats = "auto" with max 2: two comparisons whose turns disagree
	// (1.0 and 1.3) reached the maximum, still imprecise: m. One
	// comparison with the same many turns has not.
	mk := func(version string, repeat int, ops ...float64) *record.Record {
		var sl []record.Slice
		for turn, o := range ops {
			sl = append(sl, slice(turn, true, 1, o, 1e6), slice(turn, true, 1, o, 1e6))
		}
		r := compared(version, fmt.Sprintf("c%d", repeat), record.ComparisonDuet, repeat, sl...)
		r.AutoRepeats = &record.AutoRepeats{Precision: 0.02, Max: 2, Base: "b"}
		return r
	}
	recs := []*record.Record{mk("b", 1, 100, 100, 100), mk("v", 1, 100, 130, 100), mk("b", 2, 100, 100, 100), mk("v", 2, 130, 100, 130)}
	k := Key(Scope{"h", 1}, "v", "point-query_range=100")
	c, err := New(recs, "b", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ThroughputRatio(k); got.N != 6 || !got.MaxReached {
		t.Errorf("two rounds of max 2: %+v, want 6 pairs and m", got)
	}
	c, err = New(recs[:2], "b", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ThroughputRatio(k); got.N != 3 || got.MaxReached {
		t.Errorf("one round of max 2: %+v, want 3 pairs and no m (its pairs are not repeats)", got)
	}
}
