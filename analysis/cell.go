// Package analysis turns Records into the numbers reports print: per-op
// metrics, ratios to a base version, statistics over repeats, the
// attribution of a throughput change to code, memory and waiting, and rank
// correlations of counter ratios with throughput drops.
//
// Everything here is a pure function of Records: no I/O. Every number is a
// Cell that carries how it was measured (measured, multiplexed with its
// running fraction, not supported, not counted, not recorded, failed, from a
// partial window), so a renderer never has to print a number that was not
// measured.
//
// Conventions:
//
//   - A per-op metric is delta(counter) / ops over the same window. Ops come
//     from Record.Ops (the server's Questions delta unless the user chose
//     another source). Scan steps are normalized per 1,000 rows read when the
//     Record has a rows-read status delta (Options.KeepScanOps turns that off).
//   - cpu/o is microseconds of CPU per op: the CPU time the kernel charged
//     to what was counted (record.KernelCPU) when the Record has it; else
//     task-clock (ns), or the server's /proc user+system time when
//     task-clock was not measured. task-clock/o stays a counter metric.
//   - rKB/o and wKB/o come from /proc/PID/io read_bytes and write_bytes (KB is
//     1,024 bytes) whenever the Record has them, 0 included: a 0 there is a
//     measured 0 (the server read nothing from storage). Only a Record without
//     /proc io takes them from the data directory's disk sectors, and a note
//     says they are device-wide. r/o and w/o are disk reads and writes per op
//     from /proc/diskstats: device-wide by nature (every process on that
//     device), which reports say wherever they show them.
//   - An op count the Record marks as estimated (record.Ops.Estimated: an
//     import's whole-run client rate × the perf window) marks every value
//     that divides by it (Cell.Estimated), o/s included.
//   - A ratio is version ÷ base: "inf" when the base is 0 and the version is
//     not, 1 when both are 0 (metrics reference); the latter is flagged
//     (Cell.BothZero) so that it does not read as measured equality.
//   - With repeats, a cell is the median of the repeats, with a 95%
//     confidence interval and a Mann-Whitney U test against the base
//     (golang.org/x/perf/benchmath, AssumeNothing); a ratio's interval is a
//     bootstrap of the ratio of medians over both samples (ratioInterval).
//   - A quotient inside one window with a zero denominator (IPC with
//     cycles 0) and any result that overflows float64 have no value, and
//     say why: no cell holds NaN or an infinity but a ratio to a base of 0.
package analysis

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"github.com/aclements/go-moremath/stats"

	"github.com/perfbench/perfbench/record"
)

// State says whether a cell has a value and, if not, why.
type State uint8

// States of a cell. Only Measured cells have a Value.
const (
	// Measured: the value was counted, or scaled when Running < 1.
	Measured State = iota
	// NotSupported: the event could not be opened on that machine ("n/a").
	NotSupported
	// NotCounted: the event was enabled but never scheduled ("nc").
	NotCounted
	// Missing: the Record has no source for this metric (no disk stats, no
	// Record for this version and step, no ops to divide by).
	Missing
	// Failed: the step failed; its numbers are not used.
	Failed
	// NotComputable: the inputs were recorded but give no value (a role's
	// share of an event whose total is 0, per-op values of a Record with no
	// op count, a rank correlation over fewer than 3 steps); Cell.Why says
	// which.
	NotComputable
)

func (s State) String() string {
	switch s {
	case Measured:
		return "measured"
	case NotSupported:
		return "not supported"
	case NotCounted:
		return "not counted"
	case Missing:
		return "missing"
	case Failed:
		return "failed"
	case NotComputable:
		return "not computable"
	}
	return "unknown"
}

// Cell is one number of a report with how it was measured.
type Cell struct {
	Value float64
	// Running is the smallest running fraction (time_running /
	// time_enabled) of the counters the value was computed from: 1 when
	// none was multiplexed. Only meaningful when State is Measured.
	Running float64

	// N is the number of repeats that gave a value; Of the number of
	// repeats in total, failed ones included. On a ratio they are the
	// version's, and BaseN, BaseOf the base's.
	N, Of         int
	BaseN, BaseOf int
	// Lo and Hi bound the 95% confidence interval of the median when
	// N >= 2; they are infinite or NaN when there are too few repeats for
	// one. A ratio has an interval only when Comparison.Ratio computed one
	// from both samples (a bootstrap of the ratio of medians): the
	// version's interval divided by the base's median would leave out the
	// base's own uncertainty.
	Lo, Hi float64

	// P is the p-value of the Mann-Whitney U test of a Tested ratio.
	P float64
	// Why says why a NotComputable cell has no value.
	Why string

	// The State and the flags come last, side by side: a report holds
	// many cells, and fields of a byte each between the numbers would
	// each take eight.
	State State
	// Partial is set when a Record behind the value covers a window cut
	// short (Ctrl-C, SIGTERM).
	Partial bool
	// Tested is set on a ratio whose version and base both have at least
	// two repeats: P is then the p-value of the Mann-Whitney U test, and
	// Same is set when P >= alpha (the difference is not significant: "~").
	Tested bool
	Same   bool

	// Estimated is set when the value divides by (or is) an op count that
	// was estimated, not counted in the window (record.Ops.Estimated).
	Estimated bool
	// BothZero is set on a ratio whose version and base values are both 0:
	// its Value is 1 by convention, not a measured equality.
	BothZero bool
	// FewRepeats is set on a ratio (and on what is computed from one)
	// whose version or base has fewer than 2 repeats with a value: such a
	// ratio cannot be tested for significance.
	FewRepeats bool
	// Disagree is set on a throughput cell whose repeats disagree (a CV
	// above DisagreeCV, or bimodal; see DisagreeCV), on a ratio when the
	// version's or the base's do.
	Disagree bool
	// MaxReached is set on a throughput cell of a plan with repeats =
	// "auto" whose step ran the most repeats allowed without its interval
	// reaching the precision asked for.
	MaxReached bool
	// Paired is set on a ratio of versions measured together (duet or
	// slices, or both over its repeats): it is the geometric mean of its
	// rounds' ratios (each the geometric mean of a comparison's paired
	// turns), N counts rounds, and Lo, Hi, P come from a Student t
	// interval and test on the rounds' logarithms (see
	// Comparison.Pairing).
	Paired PairMode
}

// PairMode says how the versions of a paired ratio were measured together.
type PairMode uint8

// Pair modes (Cell.Paired).
const (
	NotPaired PairMode = iota
	PairedDuet
	PairedSlices
	PairedMixed
)

func (m PairMode) String() string {
	switch m {
	case PairedDuet:
		return record.ComparisonDuet
	case PairedSlices:
		return record.ComparisonSlices
	case PairedMixed:
		return "mixed"
	}
	return ""
}

// OK reports whether the cell has a value.
func (c Cell) OK() bool { return c.State == Measured }

// Short reports whether the value rests on fewer repeats than were run (a
// counter missing from some of them), on either side of a ratio.
func (c Cell) Short() bool {
	return c.State == Measured && (c.N < c.Of || c.BaseN < c.BaseOf)
}

// Multiplexed reports whether the value was scaled from counters that did
// not run for the whole window.
func (c Cell) Multiplexed() bool { return c.State == Measured && c.Running < 1 }

// HasCI reports whether the cell carries a finite confidence interval.
func (c Cell) HasCI() bool {
	return c.State == Measured && c.N >= 2 && !math.IsInf(c.Lo, 0) && !math.IsInf(c.Hi, 0) &&
		!math.IsNaN(c.Lo) && !math.IsNaN(c.Hi)
}

// Val returns a measured cell with one repeat.
func Val(v float64) Cell { return Cell{Value: v, Running: 1, N: 1, Of: 1} }

// scaled returns a measured cell whose counters ran for the fraction running
// of the window.
func scaled(v, running float64) Cell {
	c := Val(v)
	c.Running = running
	return c
}

// Stated returns a cell without a value.
func Stated(s State) Cell { return Cell{State: s, Running: 1} }

// Reasons of NotComputable cells. whyNoChange spells out the band
// exp(±NoChange) of the attribution (a test checks the digits).
const (
	whyNoOps = "the Record has no op count"
	// whyOpsNotCounted: the Record says its op count was not counted
	// (Ops.Counted unset); whyZeroOps: it counted 0 operations.
	whyOpsNotCounted = "the Record's op count was not counted over the window"
	whyZeroOps       = "the window counted 0 operations"
	whyZeroTotal     = "a role's share of an event whose total over all roles is 0"
	WhyFewSteps      = "fewer than 3 steps, or a constant ratio"
	whyNoChange      = "rQPS is within 0.95–1.053: a share of a change that small is noise"
	WhyInfRatio      = "a ratio is 0 or infinite"
	whyNoDuration    = "the window has no length"
	// WhyNotFinite: a value or a result overflows float64 (inputs near
	// 1e308): no number is printed rather than a wrong one.
	WhyNotFinite = "the value is too large to compute with"
	// whyOverflow: the base is not 0 but so close to it (a subnormal
	// value) that the ratio is beyond float64; printing inf would say
	// the base is 0.
	whyOverflow = "the base's value is not 0 but too close to 0 to divide by (the ratio is beyond float64's range)"
	// whyBothZero: a throughput ratio of two zeros has no direction to
	// attribute.
	whyBothZero = "both throughputs are 0"
)

// FormatFixed prints v with prec decimals as strconv does, except that a
// value whose 12-significant-digit decimal form is an exact half at the
// printed precision rounds away from zero: the rounding a reader does by
// hand, whatever binary representation error the value carries (the mean
// of 1.587, 0.843, ... that is 1.2735 prints 1.274 even when float64
// arithmetic gives 1.27349999999999997; 0.125 prints 0.13). v must be
// finite.
func FormatFixed(v float64, prec int) string {
	if _, ok := roundFast(v, prec); ok {
		s := strconv.FormatFloat(v, 'f', prec, 64)
		if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
			s = s[1:] // no "-0.00"
		}
		return s
	}
	return formatFixedExact(v, prec)
}

// AppendFixed appends v as FormatFixed prints it to dst: a number with a
// unit after it is made in one piece.
func AppendFixed(dst []byte, v float64, prec int) []byte {
	if _, ok := roundFast(v, prec); !ok {
		return append(dst, formatFixedExact(v, prec)...)
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, v, 'f', prec, 64)
	if num := dst[n:]; num[0] == '-' && strings.Trim(string(num), "-0.") == "" {
		dst = append(dst[:n], num[1:]...) // no "-0.00"
	}
	return dst
}

// roundFast rounds v to prec decimals where v × 10^prec is small (below
// 1e6) and not near a half (more than 1e-4 from one): there, rounding v ×
// 10^prec in float64 rounds as strconv does on the exact binary value (its
// error is below 1e-9), the 12-digit form cannot end on an exact half
// (that puts v × 10^prec within 1e-5 of one), and the rounded integer
// divided by 10^prec is the float64 nearest the printed decimal, as
// ParseFloat reads it. ok is false elsewhere.
func roundFast(v float64, prec int) (r float64, ok bool) {
	if prec < 0 || prec >= len(pow10) {
		return 0, false
	}
	x := v * pow10[prec]
	if !(math.Abs(x) < 1e6) {
		return 0, false
	}
	if math.Abs(x-math.Floor(x)-0.5) <= 1e-4 {
		return 0, false
	}
	r = math.Round(x) / pow10[prec]
	if r == 0 {
		r = 0 // 0, not -0: FormatFixed prints no "-0.00"
	}
	return r, true
}

// pow10 are the powers of 10 roundFast rounds to.
var pow10 = [...]float64{1, 10, 100, 1e3, 1e4, 1e5, 1e6}

// formatFixedExact is FormatFixed without roundFast's shortcut.
func formatFixedExact(v float64, prec int) string {
	// Rounding the 12-digit decimal form and rounding the exact binary
	// value differ only when the 12-digit form has a 5 and then zeros
	// where the first dropped digit goes: the exact half that binary
	// cannot hold. That case alone needs exact decimal arithmetic.
	e := strconv.FormatFloat(v, 'e', 11, 64) // [-]d.ddddddddddde±XX
	s := ""
	if mant, exp, ok := strings.Cut(e, "e"); ok {
		digits := strings.Replace(strings.TrimPrefix(mant, "-"), ".", "", 1)
		x, err := strconv.Atoi(exp)
		if k := x + prec + 1; err == nil && k >= 0 && k < len(digits) && digits[k] == '5' && strings.Trim(digits[k+1:], "0") == "" {
			if r, ok := new(big.Rat).SetString(e); ok {
				s = r.FloatString(prec)
			}
		}
	}
	if s == "" {
		s = strconv.FormatFloat(v, 'f', prec, 64)
	}
	if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
		s = s[1:] // no "-0.00"
	}
	return s
}

// roundFixed is v rounded as FormatFixed prints it.
func roundFixed(v float64, prec int) float64 {
	if !finite(v) {
		return v
	}
	if r, ok := roundFast(v, prec); ok {
		return r
	}
	r, err := strconv.ParseFloat(formatFixedExact(v, prec), 64)
	if err != nil {
		return v
	}
	return r
}

// finite reports whether v is a number other than ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// zeroDenominator is why a per-Record quotient (IPC, CPI, MPKI) has no
// value: its denominator, the named event, counted 0.
func zeroDenominator(event string) string {
	return event + " counted 0 in the window: nothing to divide by"
}

// NoValue returns a NotComputable cell with its reason.
func NoValue(why string) Cell {
	c := Stated(NotComputable)
	c.Why = why
	return c
}

// worse orders the states without a value: when two inputs lack a value,
// the result takes the more serious reason.
func worse(a, b State) State {
	rank := func(s State) int {
		switch s {
		case Failed:
			return 4
		case NotSupported:
			return 3
		case NotCounted:
			return 2
		case NotComputable:
			return 1
		case Missing:
			return 0
		}
		return -1
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// combine computes f(a, b) for two cells: the result has a value only when
// both have one, runs for the smaller running fraction, and is partial
// (estimated) when either is. Without a value it takes the more serious
// state of the two, with its reason. Repeat counts are not carried: Combine
// is for one window.
func combine(a, b Cell, f func(x, y float64) float64) Cell {
	if !a.OK() || !b.OK() {
		from := a
		if stateFromB(a.State, b.State) {
			from = b
		}
		c := Stated(from.State)
		c.Why = from.Why
		c.Partial = a.Partial || b.Partial
		return c
	}
	c := Val(f(a.Value, b.Value))
	c.Running = math.Min(a.Running, b.Running)
	c.Partial = a.Partial || b.Partial
	c.Estimated = a.Estimated || b.Estimated
	c.FewRepeats = a.FewRepeats || b.FewRepeats
	return c
}

// stateFromB reports whether a result of inputs in states a and b, not
// both measured, takes b's state (and reason): the one without a value, or
// the more serious when neither has one.
func stateFromB(a, b State) bool {
	switch {
	case a == Measured:
		return true
	case b == Measured:
		return false
	}
	return worse(a, b) != a
}

// div is x / y for the ratio of two measured quantities: 1 when both are 0,
// +Inf when only y is 0 (and when x / y overflows: Ratio tells the two
// apart).
func div(x, y float64) float64 {
	switch {
	case x == 0 && y == 0:
		return 1
	case y == 0:
		return math.Inf(1)
	}
	return x / y
}

// Ratio is the cell v divided by the base cell b (see Div). The result has
// the version's repeat counts in N, Of and the base's in BaseN, BaseOf, no
// confidence interval (Comparison.Ratio adds one computed from both
// samples), BothZero when both values are 0, and no value when either
// value is not finite.
func Ratio(v, b Cell) Cell {
	c := combine(v, b, div)
	c.N, c.Of = v.N, v.Of
	c.BaseN, c.BaseOf = b.N, b.Of
	if c.OK() {
		if !finite(v.Value) || !finite(b.Value) {
			out := NoValue(WhyNotFinite)
			out.Partial = c.Partial
			return out
		}
		if math.IsInf(c.Value, 0) && b.Value != 0 {
			out := NoValue(whyOverflow)
			out.Partial = c.Partial
			return out
		}
		c.BothZero = v.Value == 0 && b.Value == 0
		c.FewRepeats = c.FewRepeats || v.N < 2 || b.N < 2
		c.Lo, c.Hi = math.NaN(), math.NaN()
	}
	return c
}

// medianCI returns the median of sorted values and its confidence
// interval at the given level, as benchmath.AssumeNothing.Summary does
// (the same order statistics), without the warning it builds, with
// fmt.Errorf, whenever the values are too few for a finite interval (a
// report asks for one per cell of every sample of five repeats).
func medianCI(sorted []float64, confidence float64) (median, lo, hi float64) {
	type key struct {
		n          int
		confidence float64
	}
	k := key{len(sorted), confidence}
	ci, ok := medianCIs.Load(k)
	if !ok {
		ci, _ = medianCIs.LoadOrStore(k, stats.QuantileCI(len(sorted), 0.5, confidence))
	}
	return ci.(stats.QuantileCIResult).SampleCI(stats.Sample{Xs: sorted, Sorted: true})
}

// medianCIs caches the order statistics of medianCI by sample size and
// level.
var medianCIs sync.Map
