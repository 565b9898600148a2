package analysis

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/record"
)

// errNoRecords is returned by New when there is nothing to compare.
var errNoRecords = errors.New("no records to compare")

// ErrUnknownBase is returned by New when the base version is not among the
// Records' versions.
var ErrUnknownBase = errors.New("base version not found")

// Scope is a host and a thread count: the versions are compared inside one
// scope.
type Scope struct {
	Host    string
	Threads int
}

// Sample is the repeats of one (host, version, step, threads).
type Sample struct {
	Key     record.Key
	Records []*record.Record
	PerOp   []*PerOp // parallel to Records

	// ratios caches Comparison.Ratio of the sample's key, and medians
	// Comparison.values when the sample is the base's, by metric, guarded
	// by mu: a lock of each Sample's own, so that the tables built on
	// every CPU seldom wait for one another.
	mu      sync.Mutex
	ratios  map[metricID]Cell
	medians map[metricID]sorted
	// auto is the AutoRepeats of the first of Records that has one.
	auto *record.AutoRepeats
	// remarks is set when a repeat failed, has a partial window, carries
	// warnings or notes: something for WarningsExcept to say.
	remarks bool
}

// Failed returns the failed repeats' Records.
func (s *Sample) Failed() []*record.Record {
	var out []*record.Record
	for _, r := range s.Records {
		if r.Outcome == record.OutcomeFailed {
			out = append(out, r)
		}
	}
	return out
}

// Comparison is a set of Records compared to a base version.
type Comparison struct {
	Base string
	// Versions, Hosts and Threads are in the order of first appearance in
	// the input; Versions includes Base.
	Versions []string
	Hosts    []string
	Threads  []int
	// Scopes are the (host, threads) pairs that have Records, in input
	// order.
	Scopes []Scope
	// Steps are the steps of the tables in table order (OrderSteps), warm-up
	// steps left out; LeftOut lists those.
	Steps   []string
	LeftOut []string
	Opt     Options

	samples map[record.Key]*Sample
	// groups are the steps' groups their Records give (the first Record
	// that gives one, in input order).
	groups map[string]suite.Group
	// insertSteps are steps whose Records carry insert-benchmark data.
	insertSteps map[string]bool
	events      []string
	roles       []string
	// Each Sample caches its Ratio when both sides have repeats, and the
	// base's Samples their values, which every other version's ratio
	// reads: a report's tables ask for the same ratios several times (a
	// report goes through its tables twice), and each is a median with
	// its interval, a rank test or a bootstrap over the repeats. Other medians take more memory to keep
	// than time to compute again. mu guards the caches of the Comparison
	// (those of a Sample have its own): reports build tables on several
	// goroutines.
	mu sync.Mutex
	// uTests caches uTest's p-values by rankOrder.
	uTests map[string]float64
	// remarks is set when a Sample has remarks (Sample.remarks).
	remarks bool
	// counterMetrics caches CounterMetrics.
	counterMetrics      []string
	counterMetricsFound bool
}

// sorted is what values returns: the measured values, sorted, and their
// summary.
type sorted struct {
	vals []float64
	cell Cell
}

// New groups Records by (host, version, step, threads) and compares every
// version to base (the first version in input order when base is "").
func New(recs []*record.Record, base string, opt Options) (*Comparison, error) {
	if len(recs) == 0 {
		return nil, errNoRecords
	}
	switch opt.Order {
	case "", OrderRun, orderInput, orderName:
	default:
		return nil, fmt.Errorf("%w %q: choose from %s", errUnknownOrder, opt.Order, strings.Join(StepOrders, ", "))
	}
	c := &Comparison{Opt: opt, samples: map[record.Key]*Sample{}, insertSteps: map[string]bool{},
		groups: map[string]suite.Group{}}
	firstStart := map[string]time.Time{}
	seenV, seenH, seenT, seenS := map[string]bool{}, map[string]bool{}, map[int]bool{}, map[Scope]bool{}
	seenE, seenR := map[string]bool{}, map[string]bool{}
	var steps []string
	var keys []record.Key
	seenStep := map[string]bool{}
	perOps := computeAll(recs, opt)
	for i, r := range recs {
		k := r.Key()
		if !seenV[k.Version] {
			seenV[k.Version] = true
			c.Versions = append(c.Versions, k.Version)
		}
		if !seenH[k.Host] {
			seenH[k.Host] = true
			c.Hosts = append(c.Hosts, k.Host)
		}
		if !seenT[k.Threads] {
			seenT[k.Threads] = true
			c.Threads = append(c.Threads, k.Threads)
		}
		sc := Scope{k.Host, k.Threads}
		if !seenS[sc] {
			seenS[sc] = true
			c.Scopes = append(c.Scopes, sc)
		}
		if !seenStep[k.Step] {
			seenStep[k.Step] = true
			steps = append(steps, k.Step)
			if isWarm(k.Step) {
				c.LeftOut = append(c.LeftOut, k.Step)
			}
		}
		if r.Insert != nil {
			c.insertSteps[k.Step] = true
		}
		if _, ok := c.groups[k.Step]; !ok && r.Group != "" {
			c.groups[k.Step] = suite.Group(r.Group)
		}
		if st := r.Window.Start; !st.IsZero() {
			if f, ok := firstStart[k.Step]; !ok || st.Before(f) {
				firstStart[k.Step] = st
			}
		}
		s := c.samples[k]
		if s == nil {
			s = &Sample{Key: k}
			c.samples[k] = s
			keys = append(keys, k)
		}
		p := perOps[i]
		s.Records = append(s.Records, r)
		s.PerOp = append(s.PerOp, p)
		if s.auto == nil {
			s.auto = r.AutoRepeats
		}
		s.remarks = s.remarks || r.Outcome == record.OutcomeFailed || r.Outcome == record.OutcomePartial ||
			len(r.Warnings) > 0 || len(p.Notes) > 0
		c.remarks = c.remarks || s.remarks
		for _, e := range p.Events {
			if !seenE[e] {
				seenE[e] = true
				c.events = append(c.events, e)
			}
		}
		for _, role := range r.Roles {
			if !seenR[role.Name] {
				seenR[role.Name] = true
				c.roles = append(c.roles, role.Name)
			}
		}
	}
	c.Steps = orderSteps(steps, opt.Order, firstStart, c.Group)
	// Insert-benchmark steps come after the others; each part keeps its
	// order.
	var sys, ins []string
	for _, s := range c.Steps {
		if c.Group(s) == suite.GroupInsert {
			ins = append(ins, s)
		} else {
			sys = append(sys, s)
		}
	}
	c.Steps = append(sys, ins...)
	if base == "" {
		base = c.Versions[0]
	} else if !seenV[base] {
		return nil, fmt.Errorf("%w: %q is not one of %s", ErrUnknownBase, base, strings.Join(c.Versions, ", "))
	}
	c.Base = base
	if err := c.checkMixed(keys); err != nil {
		return nil, err
	}
	return c, nil
}

// computeAll computes the metrics of every Record (Compute), on every
// CPU: each Record's are its own.
func computeAll(recs []*record.Record, opt Options) []*PerOp {
	out := make([]*PerOp, len(recs))
	workers := min(runtime.GOMAXPROCS(0), len(recs))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := newNamer()
			for i := w; i < len(recs); i += workers {
				out[i] = computeWith(recs[i], opt, n)
			}
		}()
	}
	wg.Wait()
	return out
}

// errUnknownOrder is returned by New for an Options.Order it does not know.
var errUnknownOrder = errors.New("unknown step order")

// orderSteps puts the steps, in input order, in the table order named by
// order (see OrderRun), warm-up steps left out; group gives their groups.
func orderSteps(steps []string, order string, start map[string]time.Time, group func(string) suite.Group) []string {
	switch order {
	case orderName:
		return orderByGroup(steps, group)
	case orderInput:
	default:
		steps = slices.Clone(steps)
		sort.SliceStable(steps, func(i, j int) bool {
			a, aok := start[steps[i]]
			b, bok := start[steps[j]]
			if aok != bok {
				return aok
			}
			return aok && a.Before(b)
		})
	}
	var out []string
	for _, s := range steps {
		if !isWarm(s) {
			out = append(out, s)
		}
	}
	return out
}

// Group returns the step's row group: the one its Records give, else
// (Records of schema 1, tables from a CSV) the insert benchmark's when
// they carry insert-benchmark data, else the one the suite gives its
// label (suite.GroupOf).
func (c *Comparison) Group(step string) suite.Group {
	if g, ok := c.groups[step]; ok {
		return g
	}
	if c.insertSteps[step] {
		return suite.GroupInsert
	}
	return suite.GroupOf(step)
}

// Others returns the versions other than the base, in input order.
func (c *Comparison) Others() []string {
	var out []string
	for _, v := range c.Versions {
		if v != c.Base {
			out = append(out, v)
		}
	}
	return out
}

// Events returns the events of all Records in order of first appearance.
func (c *Comparison) Events() []string { return c.events }

// Roles returns the thread roles of all Records in order of first appearance.
func (c *Comparison) Roles() []string { return c.roles }

// CounterMetrics are the per-op counter metrics in table order: each event
// per op, then IPC and CPI, then the MPKI of each miss event. The caller
// must not change the list.
func (c *Comparison) CounterMetrics() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.counterMetricsFound {
		c.counterMetrics, c.counterMetricsFound = c.findCounterMetrics(), true
	}
	return c.counterMetrics
}

func (c *Comparison) findCounterMetrics() []string {
	var out []string
	has := map[string]bool{}
	for _, e := range c.events {
		out = append(out, PerOpName(e))
		has[e] = true
	}
	if has["instructions"] && has["cycles"] {
		out = append(out, IPC, CPI)
	}
	if has["instructions"] {
		for _, e := range c.events {
			if isMissEvent(e) {
				out = append(out, MPKIName(e))
			}
		}
	}
	// Per-op metrics given directly by table Records.
	seen := map[string]bool{}
	for _, m := range out {
		seen[m] = true
	}
	var extra []string
	seenLayout := map[*layout]bool{}
	for _, s := range c.samples {
		for _, p := range s.PerOp {
			if p.layout == nil || seenLayout[p.layout] {
				continue
			}
			seenLayout[p.layout] = true
			for _, k := range p.layout.names {
				if seen[k] || isCPUIO(k) || k == OpsPerSecond || strings.HasPrefix(k, "role:") || strings.HasPrefix(k, "hist:") || isInsertColumn(k) {
					continue
				}
				if EventOf(k) != "" || k == IPC || k == CPI || strings.HasPrefix(k, "MPKI(") {
					seen[k] = true
					extra = append(extra, k)
				}
			}
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// Sample returns the repeats of a key, or nil.
func (c *Comparison) Sample(k record.Key) *Sample { return c.samples[k] }

// Has reports whether any Record exists for the key.
func (c *Comparison) Has(k record.Key) bool { return c.samples[k] != nil }

// HasMetric reports whether any Record in the scope has a value or a status
// for the metric.
func (c *Comparison) HasMetric(sc Scope, metric string) bool {
	for k, s := range c.samples {
		if k.Host != sc.Host || k.Threads != sc.Threads {
			continue
		}
		for _, p := range s.PerOp {
			if p.Has(metric) {
				return true
			}
		}
	}
	return false
}

// Key builds a key.
func Key(sc Scope, version, step string) record.Key {
	return record.Key{Host: sc.Host, Version: version, Step: step, Threads: sc.Threads}
}

// values returns the measured values of the metric over the repeats of k,
// sorted, and the cell summarizing them.
func (c *Comparison) values(k record.Key, metric string) ([]float64, Cell) {
	return c.sampleValues(k, c.samples[k], metricIDOf(metric), metric, nil)
}

// sampleValues is values with k's sample s (nil when k has none) and the
// metric's id; the values go into buf when it has room for them (Value,
// which keeps only the cell, gives one on its stack).
func (c *Comparison) sampleValues(k record.Key, s *Sample, id metricID, metric string, buf []float64) ([]float64, Cell) {
	if s == nil {
		return nil, Stated(Missing)
	}
	vals := buf[:0]
	if cap(vals) < len(s.PerOp) {
		vals = make([]float64, 0, len(s.PerOp))
	}
	var first Cell
	found := false
	running, partial, estimated := 1.0, false, false
	for _, p := range s.PerOp {
		if p.Failed {
			continue
		}
		i := p.layout.cell(id)
		if i < 0 || p.cells[i].state != Measured {
			if !found {
				first, found = p.get(id), true
			}
			continue
		}
		cell := &p.cells[i] // as p.get(id) would give it
		vals = append(vals, cell.value)
		running = math.Min(running, cell.running)
		partial = partial || cell.partial
		estimated = estimated || cell.estimated
	}
	if len(vals) == 0 {
		st := Failed
		if found {
			st = first.State
		}
		out := Stated(st)
		out.Of = len(s.PerOp)
		if found {
			out.Partial, out.Why = first.Partial, first.Why
		}
		return nil, out
	}
	slices.Sort(vals) // NaNs first, as sort.Float64s puts them
	out := Cell{Value: median(vals), Running: running, Partial: partial, Estimated: estimated, N: len(vals), Of: len(s.PerOp)}
	out.Lo, out.Hi = math.NaN(), math.NaN()
	if len(vals) >= 2 {
		out.Value, out.Lo, out.Hi = medianCI(vals, c.Opt.confidence())
	}
	if metric == OpsPerSecond {
		out.Disagree = disagreeing(vals)
		c.markRepeats(&out, k)
	}
	return vals, out
}

// Value is the metric for key k: the median over its repeats (failed
// repeats left out), with its confidence interval when there are two or
// more.
func (c *Comparison) Value(k record.Key, metric string) Cell {
	var buf [8]float64
	_, cell := c.sampleValues(k, c.samples[k], metricIDOf(metric), metric, buf[:])
	return cell
}

// BaseKey is k with the version set to the base.
func (c *Comparison) BaseKey(k record.Key) record.Key {
	k.Version = c.Base
	return k
}

// Ratio is the metric of k divided by the base's at the same host, step and
// threads. With two or more repeats on both sides it carries a Mann-Whitney
// U test of the two samples; with minIntervalRepeats or more on both sides,
// the confidence interval of the ratio of medians from a bootstrap of both
// samples (ratioInterval).
func (c *Comparison) Ratio(k record.Key, metric string) Cell {
	id := metricIDOf(metric)
	// A metric no Record has is Missing everywhere: not worth a place in
	// the caches.
	s := c.samples[k]
	cache := s != nil && id != noMetric
	hint := 0
	if cache {
		s.mu.Lock()
		r, ok := s.ratios[id]
		second := len(s.ratios) == 1
		s.mu.Unlock()
		if ok {
			return r
		}
		if second {
			// The tables that ask a Sample for a second ratio ask for
			// that of each counter metric and of CPU and IO: a map
			// made that large does not grow (and copy its cells) on
			// the way. One that holds only the rQPS (the summary
			// alone) stays small.
			hint = len(c.CounterMetrics()) + len(CPUIOMetrics)
		}
	}
	var buf [8]float64 // the version's values: read only here
	vv, v := c.sampleValues(k, s, id, metric, buf[:])
	bk := c.BaseKey(k)
	bs := c.samples[bk]
	baseCache := bs != nil && id != noMetric
	var base sorted
	ok := false
	if baseCache {
		bs.mu.Lock()
		base, ok = bs.medians[id]
		bs.mu.Unlock()
	}
	if !ok {
		// Two goroutines may both compute it: the same values.
		base.vals, base.cell = c.sampleValues(bk, bs, id, metric, nil)
		if baseCache {
			storeLocked(&bs.mu, &bs.medians, id, base)
		}
	}
	r := c.ratioOf(k, bk, metric, vv, v, base.vals, base.cell)
	// Only a ratio with a rank test or a bootstrap behind it (repeats
	// on both sides) is worth its place: one of single values is a
	// division, and a CSV table of 100 versions × 1,825 steps × 10
	// metrics asks for 1.8 million of them.
	if cache && len(vv) >= 2 && len(base.vals) >= 2 {
		s.mu.Lock()
		if s.ratios == nil {
			s.ratios = make(map[metricID]Cell, 1)
		} else if hint > 0 && len(s.ratios) == 1 {
			m := make(map[metricID]Cell, hint)
			maps.Copy(m, s.ratios)
			s.ratios = m
		}
		s.ratios[id] = r
		s.mu.Unlock()
	}
	return r
}

// storeLocked sets (*m)[k] to v holding mu, making the map when nil.
func storeLocked[K comparable, V any](mu *sync.Mutex, m *map[K]V, k K, v V) {
	mu.Lock()
	defer mu.Unlock()
	if *m == nil {
		*m = make(map[K]V)
	}
	(*m)[k] = v
}

// RatioTo is Ratio with another version as the base: the metric of k
// divided by version base's at the same host, step and threads (the
// noise floor of an A/A pair against its first label, for example).
func (c *Comparison) RatioTo(k record.Key, base, metric string) Cell {
	if base == c.Base {
		return c.Ratio(k, metric)
	}
	bk := k
	bk.Version = base
	vv, v := c.values(k, metric)
	bv, b := c.values(bk, metric)
	return c.ratioOf(k, bk, metric, vv, v, bv, b)
}

// ratioOf is the ratio of k's values vv (summarized in v) to bk's bv (b),
// with its test, interval and flags.
func (c *Comparison) ratioOf(k, bk record.Key, metric string, vv []float64, v Cell, bv []float64, b Cell) Cell {
	if r, p, ok := c.pairedRatio(k, bk, metric); ok && r.State != Missing {
		if a := c.autoRepeats(k, bk); a != nil && metric == OpsPerSecond && r.OK() {
			// Its rounds are the repeats run (N counts turns).
			r.MaxReached = p.Compared >= a.Max && !r.Precise(a.Precision)
		}
		return r
	}
	r := Ratio(v, b)
	if r.OK() && len(vv) >= 2 && len(bv) >= 2 {
		r.Tested, r.P = true, c.uTest(vv, bv)
		r.Same = r.P >= c.Opt.alpha()
	}
	if r.OK() && !r.BothZero && !math.IsInf(r.Value, 0) && len(vv) >= minIntervalRepeats && len(bv) >= minIntervalRepeats {
		r.Lo, r.Hi = ratioInterval(vv, bv, c.Opt.confidence())
	}
	if metric == OpsPerSecond {
		r.Disagree = v.Disagree || b.Disagree
		c.markRepeats(&r, k, bk)
	}
	return r
}

// uTest is the p-value of the Mann-Whitney U test of the sorted samples v
// and b (benchmath.AssumeNothing). The test reads only the order of the
// values of both samples, with their ties, and a report's samples of five
// repeats mostly come in a few hundred orders: uTest keeps each order's
// p-value.
func (c *Comparison) uTest(v, b []float64) float64 {
	key := rankOrder(make([]byte, 0, 64), v, b)
	if key == nil {
		return uTestP(v, b, c.Opt.alpha())
	}
	c.mu.Lock()
	p, ok := c.uTests[string(key)]
	c.mu.Unlock()
	if ok {
		return p
	}
	p = uTestP(v, b, c.Opt.alpha())
	storeLocked(&c.mu, &c.uTests, string(key), p)
	return p
}

// uTestP is the p-value of benchmath.AssumeNothing's comparison of v and b.
func uTestP(v, b []float64, alpha float64) float64 {
	th := benchmath.DefaultThresholds
	th.CompareAlpha = alpha
	// (Clones: the callers' values may be on their stacks.)
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(v), &th), benchmath.NewSample(slices.Clone(b), &th)).P
}

// rankOrder appends to buf the order of the values of the sorted samples v
// and b, merged: a byte for each value, 'v' or 'b' for the sample it comes
// from, upper case when it ties the value before it. Tied values of v come
// before those of b, so that samples whose ranks and ties are the same have
// the same order. It returns nil when a value is NaN, which has no order.
func rankOrder(buf []byte, v, b []float64) []byte {
	i, j := 0, 0
	last := math.NaN()
	for i < len(v) || j < len(b) {
		var x float64
		var from byte
		if j == len(b) || i < len(v) && v[i] <= b[j] {
			x, from = v[i], 'v'
			i++
		} else {
			x, from = b[j], 'b'
			j++
		}
		if math.IsNaN(x) {
			return nil
		}
		if x == last {
			from -= 'a' - 'A'
		}
		buf = append(buf, from)
		last = x
	}
	return buf
}

// SmallestP is the smallest two-sided p-value the Mann-Whitney U test can
// give with n and m repeats: every value of one sample below every value
// of the other, 2 / C(n+m, n). When it is not below alpha, no difference
// can be significant (4 repeats against 3: 0.057).
func SmallestP(n, m int) float64 {
	if n < 1 || m < 1 {
		return 1
	}
	// C(n+m, n) as a product, in floating point: it only needs to be
	// compared with 1/alpha.
	c := 1.0
	for i := 1; i <= min(n, m); i++ {
		c = c * float64(max(n, m)+i) / float64(i)
	}
	return min(1, 2/c)
}

// minIntervalRepeats is the fewest repeats a median (or each side of a
// ratio) needs for a confidence interval: with fewer, the 95% interval of
// a median reaches the smallest or largest value.
const minIntervalRepeats = 6

// bootstrapResamples is how many resamples ratioInterval draws.
const bootstrapResamples = 2000

// ratioInterval is the percentile bootstrap confidence interval, at level
// conf, of the ratio of the median of v to the median of b: each resample
// draws len(v) values of v and len(b) values of b with replacement. The
// generator has a fixed seed, so the same samples always give the same
// interval. NaN, NaN when either sample has fewer than minIntervalRepeats
// values or a resampled base median is 0.
func ratioInterval(v, b []float64, conf float64) (lo, hi float64) {
	nan := math.NaN()
	if len(v) < minIntervalRepeats || len(b) < minIntervalRepeats {
		return nan, nan
	}
	rng := rand.New(rand.NewPCG(1, 2))
	vs, bs := slices.Clone(v), slices.Clone(b)
	slices.Sort(vs)
	slices.Sort(bs)
	cv, cb := make([]int, len(vs)), make([]int, len(bs))
	ratios := make([]float64, bootstrapResamples)
	for i := range ratios {
		mb := resampledMedian(bs, cb, rng)
		if mb == 0 {
			return nan, nan
		}
		ratios[i] = resampledMedian(vs, cv, rng) / mb
	}
	slices.Sort(ratios)
	tail := (1 - conf) / 2
	lo = ratios[int(math.Floor(tail*float64(len(ratios))))]
	hi = ratios[min(len(ratios)-1, int(math.Ceil((1-tail)*float64(len(ratios))))-1)]
	if !finite(lo) || !finite(hi) {
		return nan, nan
	}
	return lo, hi
}

// resampledMedian draws len(sorted) values of sorted with replacement and
// returns their median, counting draws per value instead of sorting them;
// counts is scratch space of the same length.
func resampledMedian(sorted []float64, counts []int, rng *rand.Rand) float64 {
	n := len(sorted)
	clear(counts)
	for range n {
		counts[rng.IntN(n)]++
	}
	// The median of n values is the value at rank (n-1)/2, or the mean of
	// the values at ranks n/2-1 and n/2 when n is even.
	at := func(rank int) float64 {
		seen := 0
		for i, k := range counts {
			seen += k
			if seen > rank {
				return sorted[i]
			}
		}
		return sorted[n-1]
	}
	if n%2 == 1 {
		return at(n / 2)
	}
	return (at(n/2-1) + at(n/2)) / 2
}

// ThroughputRatio is the ratio of ops per second: the rQPS.
func (c *Comparison) ThroughputRatio(k record.Key) Cell { return c.Ratio(k, OpsPerSecond) }

// LegacyRatio is a counter's ratio in the form of the older posts: the
// ratio of the counter's rates over the counter window, divided by the
// ratio of whole-step QPS as the load generator reports it (client queries
// ÷ client seconds; the window's ops per second when the Record has no
// client numbers). When windows have equal lengths this is
// (count_v / count_base) / (QPS_v / QPS_base).
func (c *Comparison) LegacyRatio(k record.Key, event string) Cell {
	get := func(k record.Key) (rate, qps Cell) {
		s := c.samples[k]
		if s == nil {
			return Stated(Missing), Stated(Missing)
		}
		var rates, qpss []Cell
		for i, r := range s.Records {
			p := s.PerOp[i]
			if p.Failed {
				rates, qpss = append(rates, Stated(Failed)), append(qpss, Stated(Failed))
				continue
			}
			var cnt Cell = Stated(Missing)
			for _, ec := range eventCounters(r) {
				if ec.Event == event {
					cnt = counterCell(ec)
					break
				}
			}
			if p.Seconds > 0 {
				rates = append(rates, combine(cnt, Val(p.Seconds), func(x, y float64) float64 { return x / y }))
			} else {
				rates = append(rates, Stated(Missing))
			}
			q := p.Get(OpsPerSecond)
			if r.Client != nil && r.Client.Seconds > 0 && r.Client.Queries > 0 {
				q = Val(r.Client.Queries / r.Client.Seconds)
			}
			qpss = append(qpss, q)
		}
		return summarize(rates, c.Opt), summarize(qpss, c.Opt)
	}
	vr, vq := get(k)
	br, bq := get(c.BaseKey(k))
	return combine(Ratio(vr, br), Ratio(vq, bq), div)
}

// summarize is the median of the measured cells with its confidence
// interval; when none is measured, the state of the first cell.
func summarize(cells []Cell, opt Options) Cell {
	var vals []float64
	running, partial, estimated := 1.0, false, false
	for _, c := range cells {
		if c.OK() {
			vals = append(vals, c.Value)
			running = math.Min(running, c.Running)
			partial = partial || c.Partial
			estimated = estimated || c.Estimated
		}
	}
	if len(vals) == 0 {
		if len(cells) == 0 {
			return Stated(Missing)
		}
		out := Stated(cells[0].State)
		out.Of, out.Why = len(cells), cells[0].Why
		return out
	}
	slices.Sort(vals) // NaNs first, as sort.Float64s puts them
	out := Cell{Value: median(vals), Running: running, Partial: partial, Estimated: estimated, N: len(vals), Of: len(cells), Lo: math.NaN(), Hi: math.NaN()}
	if len(vals) >= 2 {
		out.Value, out.Lo, out.Hi = medianCI(vals, opt.confidence())
	}
	return out
}

// Remarks reports whether any Record compared has something for Warnings
// to say: a failed or partial window, a warning, or a note on how its
// per-op metrics were computed. Without, Warnings says nothing of any keys.
func (c *Comparison) Remarks() bool { return c.remarks }

// Warnings returns the warnings and errors of the Records behind the keys,
// and the notes on how their per-op metrics were computed, that concern
// a table showing the topics and events (see Note.Concerns; the Records'
// warnings are classified with ClassifyWarning), one line each, prefixed
// with version, step and scope; the same text from several repeats is one
// line naming the repeats.
func (c *Comparison) Warnings(keys []record.Key, topics Topic, events []string) []string {
	return c.WarningsExcept(keys, topics, events, nil)
}

// WarningsExcept is Warnings leaving out the Records' warnings for which
// skip (when not nil) is true: a report that says those in a note of its
// own.
func (c *Comparison) WarningsExcept(keys []record.Key, topics Topic, events []string, skip func(record.Warning) bool) []string {
	// One line per distinct text, naming where it applies: a warning
	// that every Record of a version carries is said once for the
	// version, not once per step.
	type line struct {
		text   string
		places []record.Key
		reps   map[record.Key][]int
	}
	if !c.remarks {
		return []string{} // (what the loop below finds then)
	}
	var lines []*line
	index := map[string]*line{}
	add := func(k record.Key, repeat int, text string) {
		l := index[text]
		if l == nil {
			l = &line{text: text, reps: map[record.Key][]int{}}
			index[text] = l
			lines = append(lines, l)
		}
		if _, ok := l.reps[k]; !ok {
			l.places = append(l.places, k)
		}
		if !slices.Contains(l.reps[k], repeat) {
			l.reps[k] = append(l.reps[k], repeat)
		}
	}
	for _, k := range keys {
		s := c.samples[k]
		if s == nil || !s.remarks {
			continue
		}
		for i, r := range s.Records {
			switch r.Outcome {
			case record.OutcomeFailed:
				add(k, r.Repeat, "failed: "+orDefault(r.Error, "no reason recorded"))
			case record.OutcomePartial:
				add(k, r.Repeat, fmt.Sprintf("partial window (%.0f s): %s", s.PerOp[i].Seconds, orDefault(r.Error, "interrupted")))
			}
			for _, w := range r.Warnings {
				if ClassifyWarning(w).Concerns(topics, events) && (skip == nil || !skip(w)) {
					add(k, r.Repeat, w.Text)
				}
			}
			for _, n := range s.PerOp[i].Notes {
				if n.Concerns(topics, events) {
					add(k, r.Repeat, n.Text)
				}
			}
		}
	}
	if len(lines) == 0 {
		return []string{}
	}
	// scope groups keys that print under one heading: same version, host
	// and threads.
	type scope struct {
		version, host string
		threads       int
	}
	scopeOf := func(k record.Key) scope { return scope{k.Version, k.Host, k.Threads} }
	inScope := map[scope]int{}
	for _, k := range uniqueKeys(keys) {
		if c.samples[k] != nil {
			inScope[scopeOf(k)]++
		}
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		var order []scope
		byScope := map[scope][]record.Key{}
		for _, k := range l.places {
			sc := scopeOf(k)
			if byScope[sc] == nil {
				order = append(order, sc)
			}
			byScope[sc] = append(byScope[sc], k)
		}
		var where []string
		for _, sc := range order {
			ks := byScope[sc]
			every := len(ks) == inScope[sc] && len(ks) > 1
			var steps []string
			for _, k := range ks {
				reps := l.reps[k]
				all := len(reps) == len(c.samples[k].Records)
				every = every && all
				steps = append(steps, k.Step+repeatList(reps, all))
			}
			head := describeKey(record.Key{Host: sc.host, Version: sc.version, Threads: sc.threads})
			if every {
				where = append(where, head+" every step")
			} else {
				where = append(where, head+" "+strings.Join(steps, ", "))
			}
		}
		out = append(out, fmt.Sprintf("%s: %s", strings.Join(where, "; "), l.text))
	}
	return out
}

// repeatList is " repeat 2" or " repeats 1, 3", or "" when every repeat of
// the step is meant (all set).
func repeatList(reps []int, all bool) string {
	if all {
		return ""
	}
	sorted := slices.Clone(reps)
	slices.Sort(sorted)
	var rs []string
	for _, r := range sorted {
		rs = append(rs, fmt.Sprint(r))
	}
	if len(rs) == 1 {
		return " repeat " + rs[0]
	}
	return " repeats " + strings.Join(rs, ", ")
}

// uniqueKeys returns keys without duplicates, in their order.
func uniqueKeys(keys []record.Key) []record.Key {
	if len(keys) == 0 {
		return nil
	}
	out := make([]record.Key, 0, len(keys))
	if len(keys) <= 16 {
		// A few keys (a table of one step) are compared, not hashed.
		for _, k := range keys {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		return out
	}
	seen := make(map[record.Key]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// describeKey names a version, step and scope in notes:
// "8.0.39 point-query_range=100 (host h, 1 thread)".
func describeKey(k record.Key) string {
	var parts []string
	if k.Host != "" {
		parts = append(parts, "host "+k.Host)
	}
	if k.Threads == 1 {
		parts = append(parts, "1 thread")
	} else if k.Threads > 1 {
		parts = append(parts, fmt.Sprintf("%d threads", k.Threads))
	}
	name := k.Version
	if k.Step != "" {
		name += " " + k.Step
	}
	if len(parts) == 0 {
		return name
	}
	return fmt.Sprintf("%s (%s)", name, strings.Join(parts, ", "))
}
