package analysis

import (
	"math"

	"github.com/perfbench/perfbench/record"
)

// verdict is the one-word explanation of a throughput change.
type verdict string

// Verdicts. Code, Memory and Wait name the term that explains most of the
// change; CPU is used when instructions and cycles were not measured (no
// hardware PMU) and CPU per op explains the change but cannot be split;
// NA (not available) when rQPS or every explaining ratio is unmeasured.
const (
	VerdictNone   verdict = "none"   // the change is below NoChange
	VerdictCode   verdict = "code"   // more instructions per op
	VerdictMemory verdict = "memory" // more cycles per instruction
	verdictWait   verdict = "wait"   // CPU per op does not explain it: IO, locks
	verdictCPU    verdict = "cpu"    // CPU per op explains it; no counters to split it
	verdictMixed  verdict = "mixed"  // no term explains Dominant of the change
	VerdictNA     verdict = "n/a"
)

// Thresholds of the verdict.
const (
	// NoChange is the smallest |ln(1/rQPS)| that gets a verdict other than
	// none: -ln(0.95), so rQPS between 0.95 and about 1.053 is "none".
	NoChange = 0.05129329438755058
	// Dominant is the share of the change a term must explain to name the
	// verdict.
	Dominant = 0.6
)

// Attribution splits a throughput change of a version against the base on
// one step, in log space:
//
//	ln(1/rQPS) = ln r(instructions/op) + ln r(CPI) + ln r(rest)
//
// where the rest is time per cycle and utilization. The rest splits again
// with CPU per op: ln r(cpu/op) − ln r(instructions/op) − ln r(CPI) is the
// change of CPU time per cycle (clock rate, accounting), and
// ln(1/rQPS) − ln r(cpu/op) is the non-CPU remainder: time per op not spent
// on CPU (IO, locks, waiting). Shares are fractions of ln(1/rQPS); they add
// up to 1 and may be negative or above 1 when terms pull in opposite
// directions. A share is NaN when its ratio was not measured, and every
// share is NaN when |ln(1/rQPS)| <= NoChange: a fraction of a change that
// small divides noise by almost nothing (rQPS 1.01 gave shares of ±200%),
// and NoShares says so.
type Attribution struct {
	RQPS, RCPU, RInstructions, RCPI Cell
	// Drop is ln(1/rQPS): positive for a slowdown.
	Drop float64
	// Code is ln r(instructions/op) / Drop, Memory ln r(CPI) / Drop, Rest
	// 1 − Code − Memory, Wait (Drop − ln r(cpu/op)) / Drop.
	Code, Memory, Rest, Wait float64
	// NoShares is why the shares are NaN although rQPS was measured
	// (whyNoChange when |Drop| <= NoChange, whyBothZero for a ratio of two
	// zero throughputs); empty otherwise.
	NoShares string
	Verdict  verdict
	// TopDown is the change of each TopDown category's slots per op, and
	// the category that grew most when the throughput dropped (filled by
	// Comparison.Attribute).
	TopDown TopDownShift
}

// attribute computes the attribution from the four ratios (median ratios of
// version to base). Verdict rules, with D = ln(1/rQPS):
//
//   - n/a when rQPS is not measured, zero, infinite or a ratio of two
//     zero throughputs (NoShares says so);
//   - none when |D| <= NoChange (no share is computed then), or when rQPS
//     was tested over repeats and is not significantly different from 1
//     ("~"): the shares are kept in that case, since a change of at least
//     NoChange is large enough to split even when it is not significant;
//   - code, memory or wait when that term's share is the largest and at
//     least Dominant (the rest term is not a verdict of its own);
//   - cpu when instructions or CPI are not measured, wait's share is below
//     Dominant and ln r(cpu/op) / D is at least Dominant;
//   - n/a when no measured split covers the change: neither both
//     instructions and CPI (code, memory and rest) nor CPU per op (wait);
//   - mixed otherwise.
func attribute(rqps, rcpu, rinstr, rcpi Cell) Attribution {
	nan := math.NaN()
	a := Attribution{RQPS: rqps, RCPU: rcpu, RInstructions: rinstr, RCPI: rcpi,
		Drop: nan, Code: nan, Memory: nan, Rest: nan, Wait: nan, Verdict: VerdictNA}
	if !rqps.OK() || rqps.Value <= 0 || math.IsInf(rqps.Value, 0) {
		return a
	}
	if rqps.BothZero {
		// 1 by convention: no throughput on either side, no change.
		a.NoShares = whyBothZero
		return a
	}
	d := -math.Log(rqps.Value)
	a.Drop = d
	usable := func(c Cell) bool { return c.OK() && c.Value > 0 && !math.IsInf(c.Value, 0) }
	share := func(c Cell) float64 { return math.Log(c.Value) / d }
	// The band's edges belong to it: rQPS 0.95 (exactly, as a ratio
	// 9,500/10,000 gives it in float64) is "none".
	if math.Abs(d) <= NoChange*(1+1e-9) {
		a.NoShares = whyNoChange
		a.Verdict = VerdictNone
		return a
	}
	if usable(rinstr) {
		a.Code = share(rinstr)
	}
	if usable(rcpi) {
		a.Memory = share(rcpi)
	}
	if usable(rinstr) && usable(rcpi) {
		a.Rest = 1 - a.Code - a.Memory
	}
	if usable(rcpu) {
		a.Wait = 1 - share(rcpu)
	}
	if rqps.Tested && rqps.Same {
		a.Verdict = VerdictNone
		return a
	}
	best, bestShare := verdictMixed, math.Inf(-1)
	for _, t := range []struct {
		v verdict
		s float64
	}{{VerdictCode, a.Code}, {VerdictMemory, a.Memory}, {verdictWait, a.Wait}} {
		if !math.IsNaN(t.s) && t.s > bestShare {
			best, bestShare = t.v, t.s
		}
	}
	switch {
	case bestShare >= Dominant:
		a.Verdict = best
	case (math.IsNaN(a.Code) || math.IsNaN(a.Memory)) && usable(rcpu) && share(rcpu) >= Dominant:
		a.Verdict = verdictCPU
	case math.IsNaN(a.Rest) && math.IsNaN(a.Wait):
		// No split covers the change (instructions or CPI alone, no CPU
		// per op): what the measured term leaves is unaccounted for, not
		// shared out.
		a.Verdict = VerdictNA
	default:
		a.Verdict = verdictMixed
	}
	return a
}

// whyBelowTarget: an insert-benchmark step whose version or base did not
// sustain its target insert rate has a throughput that can be ignored,
// and no change to explain.
const whyBelowTarget = "the version or the base did not sustain the step's target insert rate: its throughput can be ignored"

// Attribute is the attribution of key k's version against the base. A
// step where the version or the base fell below its target insert rate
// (BelowTarget) is left out: no shares, verdict n/a, NoShares says why.
func (c *Comparison) Attribute(k record.Key) Attribution {
	a := attribute(c.ThroughputRatio(k), c.Ratio(k, CPUPerOp), c.Ratio(k, PerOpName("instructions")), c.Ratio(k, CPI))
	if a.RQPS.OK() && (c.BelowTarget(k) || c.BelowTarget(c.BaseKey(k))) {
		nan := math.NaN()
		a.Drop, a.Code, a.Memory, a.Rest, a.Wait = nan, nan, nan, nan, nan
		a.NoShares, a.Verdict = whyBelowTarget, VerdictNA
		a.TopDown = c.topDownShift(k, false)
		return a
	}
	// A drop: rQPS below the none band and not tested equal to 1.
	drop := a.Drop > NoChange*(1+1e-9) && !(a.RQPS.Tested && a.RQPS.Same)
	a.TopDown = c.topDownShift(k, drop)
	return a
}

// BelowTarget reports whether the version of k fell below
// record.TargetFraction of its step's target insert rate (medians over
// repeats): its queries/s, and any ratio to or from it, can be ignored.
func (c *Comparison) BelowTarget(k record.Key) bool {
	ips, target := c.Value(k, "ips"), c.Value(k, TargetIPS)
	return ips.OK() && target.OK() && record.BelowTarget(ips.Value, target.Value)
}
