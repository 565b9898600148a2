package analysis

import (
	"math"
	"testing"
)

// "mixed" says the measured terms share the change with none dominant: it
// needs a split that covers the change. With instructions/op alone
// explaining 22% (no CPI, no CPU per op), 78% is unaccounted for, and the
// verdict is n/a, not mixed (issue 29 item 9).
func TestVerdictNeedsACompleteSplit(t *testing.T) {
	na := Stated(NotSupported)
	drop := math.Log(1.25) // rQPS 0.8
	for _, tc := range []struct {
		name                   string
		rcpu, rins, rcpi       Cell
		want                   verdict
		code, memory, rest, wt float64
	}{
		// ln r(instr/o) = 0.22 × ln 1.25: code 22%, nothing else measured.
		{"instructions alone at 22%", na, Val(math.Exp(0.22 * drop)), na, VerdictNA, 0.22, math.NaN(), math.NaN(), math.NaN()},
		// CPI alone at 30%.
		{"CPI alone at 30%", na, na, Val(math.Exp(0.3 * drop)), VerdictNA, math.NaN(), 0.3, math.NaN(), math.NaN()},
		// Instructions alone at 70%: it names the verdict whatever the rest.
		{"instructions alone at 70%", na, Val(math.Exp(0.7 * drop)), na, VerdictCode, 0.7, math.NaN(), math.NaN(), math.NaN()},
		// Code 22%, memory 30%: rest 48%, a complete split: mixed.
		{"code and memory", na, Val(math.Exp(0.22 * drop)), Val(math.Exp(0.3 * drop)), verdictMixed, 0.22, 0.3, 0.48, math.NaN()},
		// Code 22% and CPU per op 50% (wait 50%): CPU and waiting split it.
		{"code and cpu", Val(math.Exp(0.5 * drop)), Val(math.Exp(0.22 * drop)), na, verdictMixed, 0.22, math.NaN(), math.NaN(), 0.5},
	} {
		a := attribute(Val(0.8), tc.rcpu, tc.rins, tc.rcpi)
		for _, s := range []struct {
			what      string
			got, want float64
		}{{"code", a.Code, tc.code}, {"memory", a.Memory, tc.memory}, {"rest", a.Rest, tc.rest}, {"wait", a.Wait, tc.wt}} {
			if math.IsNaN(s.want) != math.IsNaN(s.got) || (!math.IsNaN(s.want) && math.Abs(s.got-s.want) > 1e-9) {
				t.Errorf("%s: %s share = %v, want %v", tc.name, s.what, s.got, s.want)
			}
		}
		if a.Verdict != tc.want {
			t.Errorf("%s: verdict %s, want %s", tc.name, a.Verdict, tc.want)
		}
	}
}
