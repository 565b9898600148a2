package analysis

import (
	"math"

	"github.com/aclements/go-moremath/stats"

	"github.com/perfbench/perfbench/record"
)

// Versions measured together (record.Comparison: duet or slices) are
// compared pair by pair: in each turn of a comparison, the version's
// slices against the base's slices of the same turn (in duet, the same
// instants, every version on every set of CPUs once; in slices, one slice
// each, seconds apart). A round (one comparison) gives the geometric mean
// of its turns' ratios; a metric's ratio is the geometric mean of its
// rounds, with a Student t interval and test on their logarithms, the
// round being the unit (the turns of one comparison share the host's
// phase: they are not independent samples); one round gives a ratio
// without an interval. A turn with a slice that was busy (other processes
// used the host's CPU), failed or has no op count in it is left out, pair
// and all. A comparison is paired once, however many Records of it a
// version has (a re-run kept beside the original).

// Pairing describes the pairs behind a ratio of versions measured
// together.
type Pairing struct {
	// Mode is the comparisons' mode (record.ComparisonDuet or
	// ComparisonSlices; "mixed" when they differ).
	Mode string
	// Pairs is how many turns were paired; Dropped how many were left out
	// (Busy of them because a slice was busy).
	Pairs, Dropped, Busy int
	// Compared is how many comparisons (repeats) the two were measured in
	// together, failed ones left out.
	Compared int
	// Rounds is how many comparisons (repeats) gave pairs; RoundRatios
	// their ratios (the geometric mean of each one's pairs), in the
	// order of the version's repeats; RoundCV their coefficient of
	// variation (sample standard deviation over mean), 0 with fewer than
	// 2.
	Rounds      int
	RoundRatios []float64
	RoundCV     float64
}

// pairData is the paired view of a version against a base: the Records
// measured together, by comparison ID.
type pairData struct {
	v, b []*record.Record // parallel: the same comparison
}

// together returns the Records of k and bk that were measured in the same
// comparisons, in k's order, and whether there is any.
func (c *Comparison) together(k, bk record.Key) (pairData, bool) {
	vs, bs := c.samples[k], c.samples[bk]
	if vs == nil || bs == nil || k == bk {
		return pairData{}, false
	}
	byID := map[string]*record.Record{}
	for _, r := range bs.Records {
		if r.Comparison != nil && r.Outcome != record.OutcomeFailed {
			byID[r.Comparison.ID] = r
		}
	}
	var d pairData
	paired := map[string]bool{}
	for _, r := range vs.Records {
		if r.Comparison == nil || r.Outcome == record.OutcomeFailed || paired[r.Comparison.ID] {
			continue
		}
		if b, ok := byID[r.Comparison.ID]; ok && len(b.Comparison.Slices) == len(r.Comparison.Slices) {
			d.v, d.b = append(d.v, r), append(d.b, b)
			paired[r.Comparison.ID] = true
		}
	}
	return d, len(d.v) > 0
}

// side is one version's slices of a turn, added up as one window.
func side(r *record.Record, slices []record.Slice, turn int) (*record.Record, bool) {
	s := &record.Record{Schema: record.SchemaVersion, Kind: record.KindStep, Outcome: record.OutcomeOK,
		Version: r.Version, Step: r.Step, Threads: r.Threads, Group: r.Group,
		Ops: record.Ops{Source: r.Ops.Source, Per: r.Ops.Per, Counted: true}}
	counters := map[string]float64{}
	status := map[string]float64{}
	found := false
	for _, sl := range slices {
		if sl.Turn != turn || !sl.Ran {
			continue
		}
		found = true
		s.Ops.Count += sl.Ops
		s.Window.Seconds += sl.Seconds
		for k, v := range sl.Counters {
			counters[k] += v
		}
		for k, v := range sl.Status {
			status[k] += v
		}
	}
	for _, c := range r.Counters {
		if v, ok := counters[c.Event]; ok && c.Measured() {
			s.Counters = append(s.Counters, record.Counter{Event: c.Event, Group: c.Group, Value: v, Raw: uint64(max(v, 0)),
				Enabled: 1, Running: 1, Status: record.StatusCounted, Unit: c.Unit, Scale: c.Scale})
		}
	}
	s.Status = status
	return s, found
}

// turnUsable reports whether the slices of a turn in which either side
// ran can be paired, and whether one was busy.
func turnUsable(v, b []record.Slice, turn, versions int, duet bool) (ok, busy bool) {
	ran, ranB, n := 0, 0, 0
	ok = true
	for i := range v {
		if v[i].Turn != turn {
			continue
		}
		n++
		for _, sl := range []record.Slice{v[i], b[i]} {
			if sl.Ran {
				busy = busy || sl.Busy
				ok = ok && sl.Usable()
			}
		}
		if v[i].Ran {
			ran++
		}
		if b[i].Ran {
			ranB++
		}
	}
	if duet {
		// A turn is every version on every set of CPUs once.
		ok = ok && n == versions
	} else {
		ok = ok && ran == 1 && ranB == 1
	}
	return ok && !busy, busy
}

// pairedRatio is the ratio of metric of k to bk's from the turns of the
// comparisons they were measured in together; ok is false when they share
// none (the caller compares medians of windows).
func (c *Comparison) pairedRatio(k, bk record.Key, metric string) (Cell, Pairing, bool) {
	d, ok := c.together(k, bk)
	if !ok {
		return Cell{}, Pairing{}, false
	}
	var logs []float64
	var rounds []float64
	var p Pairing
	running, partial, estimated := 1.0, false, false
	var firstBad Cell
	bad := false
	for i, vr := range d.v {
		br := d.b[i]
		vc, bc := vr.Comparison, br.Comparison
		switch {
		case p.Mode == "":
			p.Mode = vc.Mode
		case p.Mode != vc.Mode:
			p.Mode = "mixed"
		}
		duet := vc.Mode == record.ComparisonDuet
		turns := 0
		for _, sl := range vc.Slices {
			turns = max(turns, sl.Turn+1)
		}
		var round []float64
		for t := 0; t < turns; t++ {
			usable, busy := turnUsable(vc.Slices, bc.Slices, t, len(vc.Versions), duet)
			if !usable {
				p.Dropped++
				if busy {
					p.Busy++
				}
				continue
			}
			vs, ok1 := side(vr, vc.Slices, t)
			bs, ok2 := side(br, bc.Slices, t)
			if !ok1 || !ok2 {
				p.Dropped++
				continue
			}
			vm := compute(vs, c.Opt).Get(metric)
			bm := compute(bs, c.Opt).Get(metric)
			r := Ratio(vm, bm)
			if !r.OK() || r.BothZero || r.Value <= 0 || math.IsInf(r.Value, 0) {
				if !bad {
					firstBad, bad = r, true
				}
				p.Dropped++
				continue
			}
			running = math.Min(running, r.Running)
			partial = partial || vr.Outcome == record.OutcomePartial || br.Outcome == record.OutcomePartial
			estimated = estimated || r.Estimated
			round = append(round, math.Log(r.Value))
		}
		if len(round) > 0 {
			logs = append(logs, round...)
			rounds = append(rounds, math.Exp(stats.Mean(round)))
		}
	}
	p.Pairs, p.Rounds, p.RoundRatios, p.Compared = len(logs), len(rounds), rounds, len(d.v)
	if len(rounds) >= 2 {
		p.RoundCV = stats.StdDev(rounds) / stats.Mean(rounds)
	}
	if len(logs) == 0 {
		if bad {
			return firstBad, p, true
		}
		out := Stated(Missing)
		return out, p, true
	}
	// The unit of the interval and the test is the round: the turns of
	// one comparison follow each other within seconds and share the
	// host's phase, so they are not independent samples (their interval
	// excluded 1 in 8 of 20 A/A cells of one build against itself).
	roundLogs := make([]float64, len(rounds))
	for i, r := range rounds {
		roundLogs[i] = math.Log(r)
	}
	m := stats.Mean(roundLogs)
	out := Cell{Value: math.Exp(m), Running: running, Partial: partial, Estimated: estimated,
		N: len(rounds), Of: len(rounds), BaseN: len(rounds), BaseOf: len(rounds), Paired: pairMode(p.Mode)}
	out.Lo, out.Hi = math.NaN(), math.NaN()
	if len(rounds) >= 2 {
		_, lo, hi := stats.MeanCI(roundLogs, c.Opt.confidence())
		out.Lo, out.Hi = math.Exp(lo), math.Exp(hi)
		out.Tested = true
		if hi == lo {
			out.P = 1
			if m != 0 {
				out.P = 0
			}
		} else if res, err := stats.OneSampleTTest(stats.Sample{Xs: roundLogs}, 0, stats.LocationDiffers); err == nil {
			out.P = res.P
		} else {
			out.P = 1
		}
		out.Same = out.P >= c.Opt.alpha()
	} else {
		out.FewRepeats = true
	}
	if metric == OpsPerSecond {
		out.Disagree = p.RoundCV > DisagreeCV
	}
	return out, p, true
}

func pairMode(mode string) PairMode {
	switch mode {
	case record.ComparisonDuet:
		return PairedDuet
	case record.ComparisonSlices:
		return PairedSlices
	}
	return PairedMixed
}

// Pairing returns how the rQPS of key k was paired with the base's, and
// whether it was (the versions were measured together).
func (c *Comparison) Pairing(k record.Key) (Pairing, bool) {
	_, p, ok := c.pairedRatio(k, c.BaseKey(k), OpsPerSecond)
	return p, ok
}

// PairingTo is Pairing with another version as the base, as RatioTo is
// Ratio (an A/A pair's second label against its first).
func (c *Comparison) PairingTo(k record.Key, base string) (Pairing, bool) {
	bk := k
	bk.Version = base
	_, p, ok := c.pairedRatio(k, bk, OpsPerSecond)
	return p, ok
}
