package metric

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseEval(t *testing.T) {
	events := map[string]float64{"a": 2, "b": 3, "c": 0, "topdown-fe-bound": 5, "cpu@UOPS_RETIRED.SLOTS,cmask=1@": 7, "INT_MISC.X": 11}
	env := &Env{
		Event:    func(n string) (float64, bool) { v, ok := events[n]; return v, ok },
		Literals: map[string]float64{"smt_on": 1, "slots": 6},
		CPUID:    "0x00000000410fd493",
	}
	cases := []struct {
		expr string
		want float64
	}{
		{"a + b * 2", 8},              // * before +
		{"a - b - 1", -2},             // left to right
		{"-a * b", -6},                // unary minus binds tightest
		{"a + b if c else 10", 10},    // the condition is 0: else
		{"a + b if a > 1 else 10", 5}, // if takes the whole sum
		{"1 if c else 2 if c else 3", 3},
		{"d_ratio(a, c)", 0},
		{"max(a, b) + min(a, b)", 5},
		{"topdown\\-fe\\-bound / #slots", 5.0 / 6},
		{"cpu@UOPS_RETIRED.SLOTS\\,cmask\\=1@ * #SMT_on", 7},
		{"INT_MISC.X / 1e3", 0.011},
		{"c | 0", 0},
		{"c | a", 1},
		{"a & c", 0},
		{"1 ^ 1", 0},
		{"strcmp_cpuid_str(0x410fd493) | strcmp_cpuid_str(0x410fd490) ^ 1", 1},
		{"a < b", 1},
		{"7 % 4", 3},
		{"(a + b) * 2", 10},
	}
	for _, c := range cases {
		e, err := Parse(c.expr, nil)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		got, err := e.Eval(env)
		if err != nil || got != c.want {
			t.Errorf("%q = %v, %v; want %v (tree %s)", c.expr, got, err, c.want, e)
		}
	}
	e, _ := Parse("a / c", nil)
	if v, err := e.Eval(env); err != nil || !math.IsNaN(v) {
		t.Errorf("a / 0 = %v, %v; want NaN as perf", v, err)
	}
	e, _ = Parse("a / nosuch", nil)
	if _, err := e.Eval(env); !errors.Is(err, errMissing) || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("missing event: %v", err)
	}
	for _, bad := range []string{"a +", "(a", "max(a)", "a if b", "#", "d_ratio(a, b"} {
		if _, err := Parse(bad, nil); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

func TestSetEval(t *testing.T) {
	s := setNamed("sapphirerapids")
	if s == nil {
		t.Fatal("no sapphirerapids set")
	}
	// tma_retiring = topdown-retiring / (fe + bad + retiring + be) + 0*SLOTS
	env := Env{Event: func(n string) (float64, bool) {
		v, ok := map[string]float64{"topdown-fe-bound": 10, "topdown-bad-spec": 20, "topdown-retiring": 30, "topdown-be-bound": 40, "TOPDOWN.SLOTS": 100}[n]
		return v, ok
	}}
	v, err := s.Eval("tma_retiring", env)
	if err != nil || v != 0.3 {
		t.Fatalf("tma_retiring = %v, %v; want 0.3", v, err)
	}
	if _, err := s.Eval("tma_frontend_bound", env); !errors.Is(err, errMissing) || !strings.Contains(err.Error(), "INT_MISC.UOP_DROPPING") {
		t.Errorf("tma_frontend_bound without INT_MISC.UOP_DROPPING: %v", err)
	}
	needs := strings.Join(s.Needs("tma_frontend_bound"), " ")
	if needs != "INT_MISC.UOP_DROPPING TOPDOWN.SLOTS topdown-bad-spec topdown-be-bound topdown-fe-bound topdown-retiring" {
		t.Errorf("Needs(tma_frontend_bound) = %s", needs)
	}
	if _, err := s.Eval("nosuch", env); err == nil {
		t.Error("unknown metric: no error")
	}
}

// Every set has what the issue asks for, and every event its metrics read
// has a spelling or a reason.
func TestSetsComplete(t *testing.T) {
	for _, s := range Sets() {
		levels := map[Level]int{}
		for _, m := range s.Metrics {
			levels[m.Level]++
			for _, n := range s.Needs(m.Name) {
				e := s.Event(n)
				if e == nil || e.Spelling == "" && e.Why == "" {
					t.Errorf("%s: %s reads %s, which has no encoding", s.Name, m.Name, n)
				}
			}
		}
		if levels[Architectural] == 0 {
			t.Errorf("%s: no architectural metric", s.Name)
		}
		if strings.HasPrefix(s.Name, "amdzen2") || strings.HasPrefix(s.Name, "amdzen3") {
			continue // perf's Zen 2 and Zen 3 tables have no pipeline utilization
		}
		if levels[TopdownL1] < 2 {
			t.Errorf("%s: %d level-1 metrics", s.Name, levels[TopdownL1])
		}
	}
}
