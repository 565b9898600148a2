package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/perfbench/perfbench/perfevent/metric"
	"github.com/perfbench/perfbench/record"
)

// topDownCategory is a TopDown level-1 category: where the pipeline's
// issue slots went.
type topDownCategory string

// The level-1 categories. SMTContention exists only in AMD's pipeline
// utilization (slots lost to the sibling thread).
const (
	tdRetiring      topDownCategory = "retiring"
	tdBadSpec       topDownCategory = "bad-speculation"
	tdFrontend      topDownCategory = "frontend"
	tdBackend       topDownCategory = "backend"
	tdsmtContention topDownCategory = "smt-contention"
)

// topDownCategories are the categories in table order.
var topDownCategories = []topDownCategory{tdRetiring, tdBadSpec, tdFrontend, tdBackend, tdsmtContention}

// topDownName is the per-op metric of a category: slots of that category
// per operation ("topdown.backend/o").
func topDownName(c topDownCategory) string { return "topdown." + string(c) + "/o" }

// topDownMetrics names each category's level-1 metric in perf's tables:
// Intel's TMA names, then AMD's pipeline utilization names.
var topDownMetrics = map[topDownCategory][]string{
	tdRetiring:      {"tma_retiring", "retiring"},
	tdBadSpec:       {"tma_bad_speculation", "bad_speculation"},
	tdFrontend:      {"tma_frontend_bound", "frontend_bound"},
	tdBackend:       {"tma_backend_bound", "backend_bound"},
	tdsmtContention: {"smt_contention"},
}

// topDownSlots are the helper metrics that count a set's slots: Intel's
// SLOTS (TOPDOWN.SLOTS from Ice Lake on, 4 × core clocks before),
// AMD's total_dispatch_slots (6 or 8 × ls_not_halted_cyc). Sets without
// one (Arm's, whose slot count is the #slots literal of the PMU's
// PMMIR_EL1) get no TopDown per op.
var topDownSlots = []string{"SLOTS", "total_dispatch_slots"}

// topDownLiterals are the #literal values perfbench's counting fixes:
// #core_wide is 0 because perfbench counts the threads of one process,
// never whole cores (perf sets it to 1 only when counting system-wide).
// #smt_on and #slots are not here: Records do not hold the machine's SMT
// state nor an Arm PMU's slot count, so the metrics that read them are not
// computed (whyTopDownLiteral).
var topDownLiterals = map[string]float64{"core_wide": 0}

// whyTopDownLiteral is the reason of a category the Record cannot give
// because its definition reads a literal Records do not hold.
const whyTopDownLiteral = "its TopDown definition reads #%s, which the Record does not hold"

// topDown is the TopDown level 1 of one Record, per operation.
type topDown struct {
	// Set is the metric set whose definitions were used ("icelakex"); see
	// computeTopDown for how it is chosen.
	Set string
	// PerOp is each category's slots per operation: its level-1 fraction
	// × slots ÷ ops.
	PerOp map[topDownCategory]Cell
}

// topDownEvents maps a set's event names to the Record's counters. A
// counter is found under any of the event's names (topDownNames). found
// is false when the Record has no such counter; a counter it has without
// a value (not counted, not supported) is found, with that state.
func topDownEvents(byName map[string]record.Counter) func(s *metric.Set) func(string) (c Cell, found bool) {
	return func(s *metric.Set) func(string) (Cell, bool) {
		return func(name string) (Cell, bool) {
			for _, n := range topDownNames(s, name) {
				if c, ok := byName[n]; ok {
					return counterCell(c), true
				}
			}
			return Cell{}, false
		}
	}
}

// topDownNames are the names a Record's counter of set s's event may
// have: the event's name, its perfevent spelling, the name on the core
// PMU ("cpu/topdown-retiring/"); TOPDOWN.SLOTS also perf's "slots".
func topDownNames(s *metric.Set, name string) []string {
	names := []string{name, "cpu/" + name + "/"}
	if e := s.Event(name); e != nil && e.Spelling != "" {
		names = append(names, e.Spelling)
	}
	if name == "TOPDOWN.SLOTS" {
		names = append(names, "slots", "cpu/slots/")
	}
	return names
}

// topDownSetFits reports whether the Record has a counter for every event
// the set's level-1 metrics and slot helper read.
func topDownSetFits(s *metric.Set, event func(string) (Cell, bool)) (slots string, ok bool) {
	r := topDownReads(s)
	if !r.ok {
		return "", false
	}
	for _, e := range r.need {
		if _, found := event(e); !found {
			return "", false
		}
	}
	return r.slots, true
}

// setReads is what topDownSetFits needs of a set: its slot helper, the
// events its level-1 metrics and slot helper read, and whether it has a
// slot helper and a level-1 metric at all.
type setReads struct {
	slots string
	need  []string
	ok    bool
	// names are the names of each event of need (topDownNames).
	names [][]string
}

// counted reports whether byName has a counter for every event of need,
// as topDownSetFits does, without making the names again.
func (r setReads) counted(byName map[string]record.Counter) bool {
	if !r.ok {
		return false
	}
next:
	for _, names := range r.names {
		for _, n := range names {
			if _, ok := byName[n]; ok {
				continue next
			}
		}
		return false
	}
	return true
}

// topDownAnyNames returns every name an event of a set's TopDown may
// have (setReads.names), and whether some set's TopDown reads no event
// at all: unless it does, a Record with no counter of those names fits no
// set, as computeTopDown finds without a map of its counters.
var topDownAnyNames = sync.OnceValues(func() (map[string]bool, bool) {
	names := map[string]bool{}
	always := false
	for _, s := range metric.Sets() {
		r := topDownReads(s)
		if !r.ok {
			continue
		}
		always = always || len(r.names) == 0
		for _, ns := range r.names {
			for _, n := range ns {
				names[n] = true
			}
		}
	}
	return names, always
})

// topDownReadsOf caches setReads by set: the sets are fixed tables, and
// walking their expressions again for every Record was most of the time
// of a report over thousands of Records.
var topDownReadsOf sync.Map // *metric.Set → setReads

func topDownReads(s *metric.Set) setReads {
	if r, ok := topDownReadsOf.Load(s); ok {
		return r.(setReads)
	}
	var r setReads
	for _, h := range topDownSlots {
		if s.Metric(h) != nil {
			r.slots = h
		}
	}
	if r.slots != "" {
		r.need = s.Needs(r.slots)
		for _, c := range topDownCategories {
			for _, m := range topDownMetrics[c] {
				if s.Metric(m) != nil {
					r.need = append(r.need, s.Needs(m)...)
					r.ok = true
				}
			}
		}
	}
	for _, e := range r.need {
		r.names = append(r.names, topDownNames(s, e))
	}
	topDownReadsOf.Store(s, r)
	return r
}

// whyTopDownAmbiguous is the reason of every category when the Record's
// events fit several sets whose definitions give different values.
const whyTopDownAmbiguous = "the counted events fit the TopDown definitions of %s, which disagree here; the Record " +
	"holds the CPU's model name, not perf's cpuid, so perfbench cannot tell which applies"

// computeTopDown returns the TopDown level 1 per operation of a Record
// whose op count is ops, and false when the Record did not count the
// events of any set perfbench knows. Records hold the CPU's model name,
// not the perf cpuid metric.Lookup takes, so the set is recognised from
// the events: every set for whose level-1 and slot events the Record has
// counters is evaluated (a counter without a value gives its state to
// the categories that read it); when they agree the first (in perfevent/metric's order)
// names the result, when they differ every category has no value and
// says why (whyTopDownAmbiguous).
func computeTopDown(r *record.Record, ops Cell) (topDown, bool) {
	if names, always := topDownAnyNames(); !always && !slices.ContainsFunc(eventCounters(r), func(c record.Counter) bool { return names[c.Event] }) {
		return topDown{}, false // no set's events counted
	}
	byName := map[string]record.Counter{}
	for _, c := range eventCounters(r) {
		byName[c.Event] = c
	}
	events := topDownEvents(byName)
	var fits []topDown
	for _, s := range metric.Sets() {
		if !topDownReads(s).counted(byName) {
			continue
		}
		if td, ok := topDownOfSet(s, events(s), ops); ok {
			fits = append(fits, td)
		}
	}
	if len(fits) == 0 {
		return topDown{}, false
	}
	td := fits[0]
	var names []string
	agree := true
	for _, o := range fits {
		names = append(names, o.Set)
		agree = agree && sameTopDown(td, o)
	}
	if !agree {
		why := NoValue(fmt.Sprintf(whyTopDownAmbiguous, strings.Join(names, ", ")))
		for c := range td.PerOp {
			td.PerOp[c] = why
		}
	}
	return td, true
}

// sameTopDown reports whether two sets gave the same categories, with the
// same values (to 1e-9) or the same states.
func sameTopDown(a, b topDown) bool {
	if len(a.PerOp) != len(b.PerOp) {
		return false
	}
	for c, x := range a.PerOp {
		y, ok := b.PerOp[c]
		if !ok || x.State != y.State || x.OK() && math.Abs(x.Value-y.Value) > 1e-9*math.Max(1, math.Abs(x.Value)) {
			return false
		}
	}
	return true
}

// topDownOfSet evaluates set s's level 1 on the Record's counters (event),
// or returns false when the Record did not count its events.
func topDownOfSet(s *metric.Set, event func(string) (Cell, bool), ops Cell) (topDown, bool) {
	slotsName, ok := topDownSetFits(s, event)
	if !ok {
		return topDown{}, false
	}
	var running float64
	env := metric.Env{
		Event: func(n string) (float64, bool) {
			c, _ := event(n)
			running = math.Min(running, c.Running)
			return c.Value, c.OK()
		},
		Literals: topDownLiterals,
	}
	eval := func(name string) Cell {
		// A counter the Record has without a value gives its state.
		for _, e := range s.Needs(name) {
			if c, _ := event(e); !c.OK() {
				return c
			}
		}
		running = 1
		v, err := s.Eval(name, env)
		if err != nil {
			for _, lit := range s.Literals(name) {
				if _, ok := topDownLiterals[lit]; !ok && strings.Contains(err.Error(), "#"+lit+":") {
					return NoValue(fmt.Sprintf(whyTopDownLiteral, lit))
				}
			}
			return NoValue(err.Error())
		}
		if running < 1 {
			return scaled(v, running)
		}
		return Val(v)
	}
	perOp := func(x, y float64) float64 { return x / y }
	td := topDown{Set: s.Name, PerOp: map[topDownCategory]Cell{}}
	slots := eval(slotsName)
	for _, c := range topDownCategories {
		for _, m := range topDownMetrics[c] {
			if s.Metric(m) != nil {
				frac := eval(m)
				td.PerOp[c] = combine(combine(frac, slots, func(x, y float64) float64 { return x * y }), ops, perOp)
			}
		}
	}
	return td, true
}

// topDown sets the TopDown per-op metrics of the Record, when it counted
// the events of a set.
func (k *computation) topDown() {
	td, ok := computeTopDown(k.r, k.ops)
	if !ok {
		return
	}
	k.p.TopDownSet = td.Set
	for _, c := range topDownCategories {
		if cell, ok := td.PerOp[c]; ok {
			k.set(topDownName(c), cell)
		}
	}
}

// Verdicts of a TopDown category that has no term of its own in the
// three-term split of Attribution.
const (
	verdictFrontend verdict = "frontend"        // more frontend-bound slots per op
	verdictBadSpec  verdict = "bad-speculation" // more slots per op thrown away
	verdictSMT      verdict = "smt-contention"  // more slots per op taken by the sibling thread (AMD)
)

// topDownVerdicts is the verdict each category's growth gives: backend-
// bound slots are the memory side (stalls on data, and core resources),
// retiring slots are more work done: code.
var topDownVerdicts = map[topDownCategory]verdict{
	tdRetiring: VerdictCode, tdBackend: VerdictMemory, tdFrontend: verdictFrontend,
	tdBadSpec: verdictBadSpec, tdsmtContention: verdictSMT,
}

// TopDownShift says which TopDown category's slots per op grew most from
// the base to the version.
type TopDownShift struct {
	// Set is the metric set of the version's Records ("" when they have
	// no TopDown metrics).
	Set string
	// Base and Version are each category's slots per op: the median over
	// the repeats.
	Base, Version map[topDownCategory]Cell
	// Growth is Version − Base, slots per op, of each category measured
	// on both sides.
	Growth map[topDownCategory]float64
	// Grew is the category whose slots per op grew most, "" when no
	// category grew or the throughput did not drop.
	Grew topDownCategory
	// Share is Grew's growth as a fraction of the growth of all slots per
	// op (the sum of every category's growth); NaN without Grew.
	Share float64
	// Verdict is Grew's verdict: memory for backend, code for retiring,
	// frontend, bad-speculation, smt-contention; n/a without Grew.
	Verdict verdict
}

// topDownShift compares the TopDown per-op metrics of k and its base; the
// category that grew is named only when drop says the throughput fell.
func (c *Comparison) topDownShift(k record.Key, drop bool) TopDownShift {
	t := TopDownShift{Base: map[topDownCategory]Cell{}, Version: map[topDownCategory]Cell{},
		Growth: map[topDownCategory]float64{}, Share: math.NaN(), Verdict: VerdictNA}
	if s := c.samples[k]; s != nil {
		for _, p := range s.PerOp {
			if p.TopDownSet != "" {
				t.Set = p.TopDownSet
				break
			}
		}
	}
	total := 0.0
	for _, cat := range topDownCategories {
		v, b := c.Value(k, topDownName(cat)), c.Value(c.BaseKey(k), topDownName(cat))
		if v.State == Missing && b.State == Missing {
			continue
		}
		t.Version[cat], t.Base[cat] = v, b
		if v.OK() && b.OK() {
			g := v.Value - b.Value
			t.Growth[cat] = g
			total += g
		}
	}
	if !drop {
		return t
	}
	best := 0.0
	for _, cat := range topDownCategories {
		if g, ok := t.Growth[cat]; ok && g > best {
			t.Grew, best = cat, g
		}
	}
	if t.Grew != "" {
		t.Verdict = topDownVerdicts[t.Grew]
		if total > 0 {
			t.Share = best / total
		}
	}
	return t
}
