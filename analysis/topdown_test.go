package analysis

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/perfevent/metric"
	"github.com/perfbench/perfbench/record"
)

// tdCounters are counters named as perfbench opens a set's events (their
// perfevent spelling), with the given values.
func tdCounters(t *testing.T, s *metric.Set, vals map[string]float64) []record.Counter {
	t.Helper()
	var out []record.Counter
	for name, v := range vals {
		e := s.Event(name)
		if e == nil || e.Spelling == "" {
			t.Fatalf("set %s has no event %s to open", s.Name, name)
		}
		out = append(out, counted(e.Spelling, v))
	}
	return out
}

// randomTopDownValues gives every event the set's level-1 metrics and
// slot helper read a random count between 1e6 and 1e9.
func randomTopDownValues(s *metric.Set, rng *rand.Rand) map[string]float64 {
	vals := map[string]float64{}
	for _, m := range append([]string{"SLOTS", "total_dispatch_slots"}, "tma_retiring", "tma_bad_speculation", "tma_frontend_bound", "tma_backend_bound",
		"retiring", "bad_speculation", "frontend_bound", "backend_bound", "smt_contention") {
		for _, e := range s.Needs(m) {
			vals[e] = float64(1e6 + rng.IntN(1e9))
		}
	}
	return vals
}

// TestTopDownPerOpMatchesMetricEval computes the TopDown metrics of
// Records counted with each set's events and checks them against
// perfevent/metric's evaluation of the same definitions: a category's
// slots per op is its level-1 fraction × the set's slots ÷ ops.
func TestTopDownPerOpMatchesMetricEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	cases := []struct {
		set, slots string
		metrics    map[topDownCategory]string
		// wantSet is the set named in the result: the first of those
		// whose events the Record holds (icelakex before icelake and
		// tigerlake, which define level 1 the same way).
		wantSet string
	}{
		{"sapphirerapids", "SLOTS", map[topDownCategory]string{tdRetiring: "tma_retiring", tdBadSpec: "tma_bad_speculation",
			tdFrontend: "tma_frontend_bound", tdBackend: "tma_backend_bound"}, "sapphirerapids"},
		{"icelake", "SLOTS", map[topDownCategory]string{tdRetiring: "tma_retiring", tdBadSpec: "tma_bad_speculation",
			tdFrontend: "tma_frontend_bound", tdBackend: "tma_backend_bound"}, "icelakex"},
		{"amdzen4", "total_dispatch_slots", map[topDownCategory]string{tdRetiring: "retiring", tdBadSpec: "bad_speculation",
			tdFrontend: "frontend_bound", tdBackend: "backend_bound", tdsmtContention: "smt_contention"}, "amdzen4"},
		{"amdzen5", "total_dispatch_slots", map[topDownCategory]string{tdRetiring: "retiring", tdBadSpec: "bad_speculation",
			tdFrontend: "frontend_bound", tdBackend: "backend_bound", tdsmtContention: "smt_contention"}, "amdzen4"},
	}
	for _, tc := range cases {
		s := metricSet(tc.set)
		for trial := range 20 {
			vals := randomTopDownValues(s, rng)
			ops := float64(1 + rng.IntN(1e6))
			r := stepRecord("v", "point-query", 1, ops, tdCounters(t, s, vals)...)
			p := compute(r, Options{})
			if p.TopDownSet != tc.wantSet {
				t.Fatalf("%s: TopDown set %q, want %s", tc.set, p.TopDownSet, tc.wantSet)
			}
			env := metric.Env{Event: func(n string) (float64, bool) { v, ok := vals[n]; return v, ok }}
			slots, err := s.Eval(tc.slots, env)
			if err != nil {
				t.Fatal(err)
			}
			for cat, m := range tc.metrics {
				frac, err := s.Eval(m, env)
				if err != nil {
					t.Fatal(err)
				}
				want := frac * slots / ops
				if got := p.Get(topDownName(cat)); !got.OK() || !near(got.Value, want) {
					t.Errorf("%s trial %d: %s = %+v, want %s × %s ÷ ops = %v", tc.set, trial, topDownName(cat), got, m, tc.slots, want)
				}
			}
		}
	}
}

// TestTopDownZen4ByHand: on Zen 4 each level-1 metric is its events ÷ 6 ×
// ls_not_halted_cyc, so slots per op are the events per op themselves.
func TestTopDownZen4ByHand(t *testing.T) {
	s := metricSet("amdzen4")
	r := stepRecord("v", "point-query", 1, 1000, tdCounters(t, s, map[string]float64{
		"ls_not_halted_cyc":  1e6, // 6e6 dispatch slots
		"ex_ret_ops":         2e6,
		"de_src_op_disp.all": 2.5e6,
		"de_no_dispatch_per_slot.no_ops_from_frontend": 1e6,
		"de_no_dispatch_per_slot.backend_stalls":       2.2e6,
		"de_no_dispatch_per_slot.smt_contention":       0.3e6,
	})...)
	p := compute(r, Options{})
	want := map[topDownCategory]float64{
		tdRetiring:      2000, // 2e6 / 1000
		tdBadSpec:       500,  // (2.5e6 − 2e6) / 1000
		tdFrontend:      1000,
		tdBackend:       2200,
		tdsmtContention: 300,
	}
	for cat, w := range want {
		if got := p.Get(topDownName(cat)); !got.OK() || !near(got.Value, w) {
			t.Errorf("%s = %+v, want %v", topDownName(cat), got, w)
		}
	}
}

// TestTopDownSkylakeNeedsSMT: Skylake's backend and bad speculation read
// #smt_on, which Records do not hold; retiring and frontend do not (with
// #core_wide 0, as perfbench counts one process).
func TestTopDownSkylakeNeedsSMT(t *testing.T) {
	s := metricSet("skylakex")
	vals := map[string]float64{
		"CPU_CLK_UNHALTED.THREAD":            2e6,
		"CPU_CLK_UNHALTED.THREAD_ANY":        3e6,
		"CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE": 1e5,
		"CPU_CLK_UNHALTED.REF_XCLK":          4e5,
		"IDQ_UOPS_NOT_DELIVERED.CORE":        1e6,
		"INT_MISC.RECOVERY_CYCLES":           1e4,
		"INT_MISC.RECOVERY_CYCLES_ANY":       2e4,
		"UOPS_ISSUED.ANY":                    3e6,
		"UOPS_RETIRED.RETIRE_SLOTS":          2.5e6,
	}
	p := compute(stepRecord("v", "point-query", 1, 1000, tdCounters(t, s, vals)...), Options{})
	// SLOTS = 4 × CORE_CLKS, CORE_CLKS = THREAD / 2 × (1 + ONE_THREAD_ACTIVE
	// / REF_XCLK) = 1e6 × 1.25 = 1.25e6 (#core_wide 0): 5e6 slots.
	// retiring = RETIRE_SLOTS / SLOTS: 2.5e6 slots, 2500 per op;
	// frontend = IDQ_UOPS_NOT_DELIVERED.CORE / SLOTS: 1000 per op.
	for cat, w := range map[topDownCategory]float64{tdRetiring: 2500, tdFrontend: 1000} {
		if got := p.Get(topDownName(cat)); !got.OK() || !near(got.Value, w) {
			t.Errorf("%s = %+v, want %v", topDownName(cat), got, w)
		}
	}
	for _, cat := range []topDownCategory{tdBackend, tdBadSpec} {
		got := p.Get(topDownName(cat))
		if want := fmt.Sprintf(whyTopDownLiteral, "smt_on"); got.OK() || got.Why != want {
			t.Errorf("%s = %+v, want no value: %s", topDownName(cat), got, want)
		}
	}
}

// TestTopDownAmbiguous: counters named by perf's JSON names fit both
// Sapphire Rapids and Ice Lake server, whose backend differs (Ice Lake
// adds 5 × INT_MISC.RECOVERY_CYCLES edges ÷ SLOTS): no value, and why.
func TestTopDownAmbiguous(t *testing.T) {
	var cs []record.Counter
	for name, v := range map[string]float64{"TOPDOWN.SLOTS": 1e7, "topdown-retiring": 4e6, "topdown-bad-spec": 1e6,
		"topdown-fe-bound": 2e6, "topdown-be-bound": 3e6, "INT_MISC.UOP_DROPPING": 1e5,
		"cpu@INT_MISC.RECOVERY_CYCLES,cmask=1,edge@": 1e5} {
		cs = append(cs, counted(name, v))
	}
	p := compute(stepRecord("v", "point-query", 1, 1000, cs...), Options{})
	got := p.Get(topDownName(tdBackend))
	if got.OK() || !strings.Contains(got.Why, "sapphirerapids, icelakex") {
		t.Errorf("backend = %+v, want no value naming sapphirerapids and icelakex", got)
	}
}

// TestTopDownMultiplexed: a scaled counter makes the categories it enters
// scaled, for its running fraction, and only those; a counter without a
// value gives its state to the categories that read it.
func TestTopDownMultiplexed(t *testing.T) {
	s := metricSet("sapphirerapids")
	cs := tdCounters(t, s, map[string]float64{"TOPDOWN.SLOTS": 1e7, "topdown-retiring": 4e6, "topdown-bad-spec": 1e6,
		"topdown-fe-bound": 2e6, "topdown-be-bound": 3e6, "INT_MISC.UOP_DROPPING": 1e6})
	for i := range cs {
		if cs[i].Event == "cpu/event=0xad,umask=0x10/" {
			cs[i].Status, cs[i].Running = record.StatusScaled, cs[i].Enabled/2
		}
	}
	p := compute(stepRecord("v", "point-query", 1, 1000, cs...), Options{})
	// frontend = 2e6/1e7 − 1e6/1e7 = 0.1: 1000 slots per op, from a
	// counter that ran half the window.
	if got := p.Get(topDownName(tdFrontend)); !got.OK() || !near(got.Value, 1000) || !near(got.Running, 0.5) {
		t.Errorf("frontend = %+v, want 1000 scaled from 50%%", got)
	}
	if got := p.Get(topDownName(tdRetiring)); !got.OK() || !near(got.Value, 4000) || got.Running != 1 {
		t.Errorf("retiring = %+v, want 4000 counted the whole window", got)
	}
	for i := range cs {
		if cs[i].Event == "cpu/topdown-be-bound/" {
			cs[i] = record.Counter{Event: cs[i].Event, Status: record.StatusNotSupported, Reason: "no such event"}
		}
	}
	p = compute(stepRecord("v", "point-query", 1, 1000, cs...), Options{})
	// Every level-1 fraction divides by the sum of the four topdown events.
	for _, cat := range []topDownCategory{tdRetiring, tdBackend, tdFrontend, tdBadSpec} {
		if got := p.Get(topDownName(cat)); got.State != NotSupported {
			t.Errorf("%s = %+v, want not supported", topDownName(cat), got)
		}
	}
}

// TestTopDownShiftVerdicts: the category whose slots per op grew most
// names the verdict (frontend, bad speculation here), and none is named
// without a drop.
func TestTopDownShiftVerdicts(t *testing.T) {
	s := metricSet("amdzen4")
	rec := func(version string, ops float64, retOps, disp, fe, be float64) *record.Record {
		return stepRecord(version, "point-query", 1, ops, tdCounters(t, s, map[string]float64{
			"ls_not_halted_cyc": 1e7, "ex_ret_ops": retOps, "de_src_op_disp.all": disp,
			"de_no_dispatch_per_slot.no_ops_from_frontend": fe, "de_no_dispatch_per_slot.backend_stalls": be,
			"de_no_dispatch_per_slot.smt_contention": 0})...)
	}
	// Per op, base: retiring 2000, bad spec 500, frontend 1000, backend 2000.
	recs := []*record.Record{
		rec("base", 1000, 2e6, 2.5e6, 1e6, 2e6),
		// 800 ops (rQPS 0.8): retiring 2000, bad spec 500, frontend
		// 2000 (+1000), backend 2100 (+100).
		rec("fe", 800, 1.6e6, 2e6, 1.6e6, 1.68e6),
		// 800 ops: retiring 2000, bad spec 1500 (+1000), frontend
		// 1000, backend 2000.
		rec("bs", 800, 1.6e6, 2.8e6, 0.8e6, 1.6e6),
		// 980 ops (rQPS 0.98, no drop): backend 3000 (+1000).
		rec("small", 980, 1.96e6, 2.45e6, 0.98e6, 2.94e6),
	}
	c, err := New(recs, "base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := c.Scopes[0]
	for _, tc := range []struct {
		version string
		grew    topDownCategory
		verdict verdict
		share   float64
	}{
		{"fe", tdFrontend, verdictFrontend, 1000.0 / 1100},
		{"bs", tdBadSpec, verdictBadSpec, 1},
		{"small", "", VerdictNA, 0},
	} {
		a := c.Attribute(Key(sc, tc.version, "point-query"))
		td := a.TopDown
		if td.Grew != tc.grew || td.Verdict != tc.verdict || (tc.grew != "" && !near(td.Share, tc.share)) {
			t.Errorf("%s: grew %q (%v), verdict %s; want %q (%v), %s", tc.version, td.Grew, td.Share, td.Verdict, tc.grew, tc.share, tc.verdict)
		}
	}
	if g := c.Attribute(Key(sc, "small", "point-query")).TopDown.Growth[tdBackend]; !near(g, 1000) {
		t.Errorf("small: backend growth %v, want 1000 (growth is kept without a drop)", g)
	}
}

// metricSet is perfbench's metric set of that name (nil when none).
func metricSet(name string) *metric.Set {
	for _, s := range metric.Sets() {
		if s.Name == name {
			return s
		}
	}
	return nil
}
