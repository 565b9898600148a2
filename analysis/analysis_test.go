package analysis

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/record"
)

const tol = 1e-9

func near(a, b float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

func counted(event string, v float64) record.Counter {
	return record.Counter{Event: event, Raw: uint64(v), Enabled: 1e10, Running: 1e10, Value: v, Status: record.StatusCounted}
}

// stepRecord is a 10 s window with ops operations and the given counters.
func stepRecord(version, step string, repeat int, ops float64, counters ...record.Counter) *record.Record {
	r := record.New(record.KindStep)
	r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h", version, step, 1, repeat
	r.Window.Seconds = 10
	r.Ops = record.Ops{Source: "Questions", Count: ops, Per: 1, Counted: true}
	r.Counters = counters
	return r
}

func TestComputePerOp(t *testing.T) {
	r := stepRecord("v", "point-query_range=100", 1, 1000,
		counted("instructions", 2e7),
		counted("cycles", 4e7),
		counted("branch-misses", 1e5),
		// multiplexed: raw 6.2e4 over 62% of the window, scaled to 1e5
		record.Counter{Event: "cache-misses", Raw: 62000, Enabled: 1e10, Running: 6.2e9, Value: 1e5, Status: record.StatusScaled},
		record.Counter{Event: "L1-icache-loads", Status: record.StatusNotSupported},
		record.Counter{Event: "LLC-load-misses", Enabled: 1e10, Status: record.StatusNotCounted},
		counted("task-clock", 9e9), // ns
		counted("context-switches", 1500),
	)
	r.OS = &record.OS{UserSeconds: 5, SystemSeconds: 1, VoluntaryCS: 900, InvoluntaryCS: 100,
		ReadBytes: 4096000, WriteBytes: 2048000,
		Disk: &record.Disk{Reads: 250, ReadSectors: 8000, Writes: 100, WriteSectors: 4000}}
	p := compute(r, Options{})
	// Hand-computed: 1000 ops in 10 s.
	want := map[string]Cell{
		OpsPerSecond:            Val(100),   // 1000 / 10
		"instructions/o":        Val(20000), // 2e7 / 1000
		"cycles/o":              Val(40000), // 4e7 / 1000
		"cache-misses/o":        scaled(100, 0.62),
		"L1-icache-loads/o":     Stated(NotSupported),
		"LLC-load-misses/o":     Stated(NotCounted),
		IPC:                     Val(0.5), // 2e7 / 4e7
		CPI:                     Val(2),   // 4e7 / 2e7
		"MPKI(branch-misses)":   Val(5),   // 1e5 / 2e7 * 1000
		"MPKI(cache-misses)":    scaled(5, 0.62),
		"MPKI(LLC-load-misses)": Stated(NotCounted),
		CPUPerOp:                Val(9000), // 9e9 ns = 9e6 µs over 1000 ops
		CSPerOp:                 Val(1.5),  // counter, not /proc's 1000
		ReadsPerOp:              Val(0.25), // 250 / 1000
		WritesPerOp:             Val(0.1),  // 100 / 1000
		ReadKBPerOp:             Val(4),    // 4096000 / 1024 / 1000
		WriteKBPerOp:            Val(2),    // 2048000 / 1024 / 1000
	}
	for m, w := range want {
		got := p.Get(m)
		if got.State != w.State || (w.OK() && (!near(got.Value, w.Value) || !near(got.Running, w.Running))) {
			t.Errorf("%s = %+v, want %+v", m, got, w)
		}
	}
	if got := p.Get("no-such/o"); got.State != Missing {
		t.Errorf("unknown metric: state %v, want missing", got.State)
	}
}

func TestComputeFallbacks(t *testing.T) {
	// No task-clock: cpu/o from /proc user+sys; no context-switches
	// counter: cs/o from /proc; no disk: r/o missing.
	r := stepRecord("v", "point-query", 1, 2000, record.Counter{Event: "task-clock", Status: record.StatusNotSupported})
	r.OS = &record.OS{UserSeconds: 3, SystemSeconds: 1, VoluntaryCS: 3000, InvoluntaryCS: 1000}
	p := compute(r, Options{})
	if c := p.Get(CPUPerOp); !c.OK() || !near(c.Value, 2000) { // 4 s = 4e6 µs / 2000
		t.Errorf("cpu/o = %+v, want 2000 from /proc", c)
	}
	if c := p.Get(CSPerOp); !c.OK() || !near(c.Value, 2) { // 4000 / 2000
		t.Errorf("cs/o = %+v, want 2", c)
	}
	if c := p.Get(ReadsPerOp); c.State != Missing {
		t.Errorf("r/o without disk stats = %+v, want missing", c)
	}
	if len(p.Notes) == 0 {
		t.Error("no note says cpu/o came from /proc")
	}

	// Without /proc either, cpu/o keeps the counter's state.
	r.OS = nil
	if c := compute(r, Options{}).Get(CPUPerOp); c.State != NotSupported {
		t.Errorf("cpu/o without task-clock and /proc = %v, want not supported", c.State)
	}

	// No ops: per-op values are not computable, and say why, but an
	// unsupported event still says so.
	r2 := stepRecord("v", "x", 1, 0, counted("instructions", 5), record.Counter{Event: "cycles", Status: record.StatusNotSupported})
	r2.Ops = record.Ops{}
	p2 := compute(r2, Options{})
	if c := p2.Get("instructions/o"); c.State != NotComputable || c.Why != whyNoOps {
		t.Errorf("instructions/o without ops = %v (%s), want not computable (%s)", c.State, c.Why, whyNoOps)
	}
	if c := p2.Get(OpsPerSecond); c.State != NotComputable {
		t.Errorf("o/s without ops = %v, want not computable", c.State)
	}
	if c := p2.Get("cycles/o"); c.State != NotSupported {
		t.Errorf("cycles/o = %v, want not supported", c.State)
	}
}

// TestComputeKernelCPU: cpu/o is the kernel's CPU time of what was
// counted when the Record has it (9.5 s over 1000 ops: 9500 µs), while
// task-clock/o stays the counter's (9e9 ns: 9000 µs); a Record without it
// keeps task-clock's cpu/o; one whose kernel CPU time leaves out the
// children not waited for says so in a note; a partial Record's cpu/o is
// marked partial.
func TestComputeKernelCPU(t *testing.T) {
	r := stepRecord("v", "point-query", 1, 1000, counted("task-clock", 9e9), counted("context-switches", 1500))
	r.KernelCPU = &record.KernelCPU{Source: record.KernelCPUCgroup, Seconds: 9.5, Low: 9.49, High: 9.51}
	p := compute(r, Options{})
	if c := p.Get(CPUPerOp); !c.OK() || !near(c.Value, 9500) {
		t.Errorf("cpu/o = %+v, want 9500 from the kernel's 9.5 s", c)
	}
	if c := p.Get("task-clock/o"); !c.OK() || !near(c.Value, 9e6) {
		t.Errorf("task-clock/o = %+v, want 9e6 ns", c)
	}
	if len(p.Notes) != 0 {
		t.Errorf("notes %+v, want none", p.Notes)
	}
	r.KernelCPU = nil
	if c := compute(r, Options{}).Get(CPUPerOp); !near(c.Value, 9000) {
		t.Errorf("cpu/o without the kernel's CPU time = %+v, want 9000 from task-clock", c)
	}
	r.KernelCPU = &record.KernelCPU{Source: record.KernelCPUProcess, Seconds: 8, LeavesOut: record.KernelCPUNotWaited}
	r.Outcome = record.OutcomePartial
	p = compute(r, Options{})
	if c := p.Get(CPUPerOp); !c.OK() || !c.Partial || !near(c.Value, 8000) {
		t.Errorf("cpu/o = %+v, want 8000 marked partial", c)
	}
	if len(p.Notes) != 1 || p.Notes[0].Topic != TopicCPU || !strings.Contains(p.Notes[0].Text, "leaves out the children not waited for") {
		t.Errorf("notes %+v, want one saying what the kernel's CPU time leaves out", p.Notes)
	}
}

func TestComputeScanPerThousandRows(t *testing.T) {
	r := stepRecord("v", "scan_range=100", 1, 10, counted("instructions", 5e10))
	r.Status = map[string]float64{"Questions": 10, "Rows_read": 5e7}
	p := compute(r, Options{})
	// 5e7 rows = 50,000 ops of 1,000 rows; 5e10 / 5e4 = 1e6 per 1,000 rows.
	if p.Ops != 50000 || p.OpsPer != 1000 || p.OpsSource != "Rows_read" {
		t.Errorf("ops = %v per %v from %s, want 50000 per 1000 from Rows_read", p.Ops, p.OpsPer, p.OpsSource)
	}
	if c := p.Get("instructions/o"); !near(c.Value, 1e6) {
		t.Errorf("instructions per 1,000 rows = %v, want 1e6", c.Value)
	}
	if c := p.Get(OpsPerSecond); !near(c.Value, 5000) {
		t.Errorf("o/s = %v, want 5000 (thousand rows/s)", c.Value)
	}
	p = compute(r, Options{KeepScanOps: true})
	if c := p.Get("instructions/o"); !near(c.Value, 5e9) {
		t.Errorf("with KeepScanOps, instructions per query = %v, want 5e9", c.Value)
	}
}

func TestComputeOutcomes(t *testing.T) {
	f := stepRecord("v", "s", 1, 100, counted("instructions", 1e6))
	f.Outcome = record.OutcomeFailed
	if c := compute(f, Options{}).Get("instructions/o"); c.State != Failed {
		t.Errorf("failed record: %v, want failed", c.State)
	}
	p := stepRecord("v", "s", 1, 100, counted("instructions", 1e6))
	p.Outcome = record.OutcomePartial
	if c := compute(p, Options{}).Get("instructions/o"); !c.OK() || !c.Partial || c.Value != 1e4 {
		t.Errorf("partial record: %+v, want 1e4 marked partial", c)
	}
}

func TestComputeTableRecord(t *testing.T) {
	r := record.New(record.KindTable)
	r.Version, r.Step = "v", "point-query"
	r.Metrics = map[string]float64{"qps": 500, "seconds": 20, "instructions": 2e8, "cpu/o": 42}
	p := compute(r, Options{})
	// ops = 500 × 20 = 10000; instructions per op = 2e8 / 1e4.
	if c := p.Get("instructions/o"); !near(c.Value, 2e4) {
		t.Errorf("instructions/o = %+v, want 20000", c)
	}
	if c := p.Get(OpsPerSecond); !near(c.Value, 500) {
		t.Errorf("o/s = %+v, want 500", c)
	}
	if c := p.Get(CPUPerOp); !near(c.Value, 42) {
		t.Errorf("cpu/o = %+v, want 42 as given", c)
	}
}

func TestRatioRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		v, b Cell
		want Cell
	}{
		{"plain", Val(3), Val(2), Val(1.5)},
		{"base zero", Val(3), Val(0), Val(math.Inf(1))},
		{"both zero", Val(0), Val(0), Val(1)},
		{"version n/a", Stated(NotSupported), Val(2), Stated(NotSupported)},
		{"base nc", Val(2), Stated(NotCounted), Stated(NotCounted)},
		{"failed wins", Stated(Failed), Stated(NotSupported), Stated(Failed)},
		{"multiplexed", scaled(3, 0.5), scaled(1, 0.8), scaled(3, 0.5)},
	} {
		got := Ratio(tc.v, tc.b)
		if got.State != tc.want.State || (got.OK() && (!near(got.Value, tc.want.Value) || got.Running != tc.want.Running)) {
			t.Errorf("%s: Ratio = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestAttributeHandComputed(t *testing.T) {
	ln125 := math.Log(1.25)
	for _, tc := range []struct {
		name                     string
		rqps, rcpu, rins, rcpi   Cell
		code, memory, rest, wait float64
		verdict                  verdict
	}{
		// 25% more instructions per op at the same CPI and clock: CPU per op
		// grows 25% and throughput drops to 1/1.25 = 0.8. All of
		// ln(1/0.8) = ln 1.25 is the instruction term.
		{"instruction regression", Val(0.8), Val(1.25), Val(1.25), Val(1), 1, 0, 0, 0, VerdictCode},
		// Same instructions, 25% more cycles per instruction.
		{"CPI regression", Val(0.8), Val(1.25), Val(1), Val(1.25), 0, 1, 0, 0, VerdictMemory},
		// IO bound: CPU per op, instructions and CPI flat, throughput 0.8:
		// the whole drop is the non-CPU remainder.
		{"IO bound", Val(0.8), Val(1), Val(1), Val(1), 0, 0, 1, 1, verdictWait},
		// Half and half: 10% more instructions and 10% higher CPI,
		// rQPS = 1/1.21; each explains ln 1.1 / ln 1.21 = 0.5.
		{"mixed", Val(1 / 1.21), Val(1.21), Val(1.1), Val(1.1), 0.5, 0.5, 0, 0, verdictMixed},
		// No PMU: only cpu/o, which explains the whole drop.
		{"cpu without counters", Val(0.8), Val(1.25), Stated(NotSupported), Stated(NotSupported), math.NaN(), math.NaN(), math.NaN(), 0, verdictCPU},
		// rQPS 0.97 is inside the no-change band: no shares. Computed they
		// would be ln 1.03 / ln(1/0.97) = 0.970 for code and 0.03 for rest.
		{"no change", Val(0.97), Val(1.03), Val(1.03), Val(1), math.NaN(), math.NaN(), math.NaN(), math.NaN(), VerdictNone},
		// The user-trial case: rQPS 1.01 with cpu/o 0.98 would print wait
		// 1 − ln 0.98 / ln(1/1.01) = 1 − (−0.0202)/(−0.00995) = −103%:
		// a share of noise. No share is computed.
		{"rQPS 1.01", Val(1.01), Val(0.98), Val(1.02), Val(0.97), math.NaN(), math.NaN(), math.NaN(), math.NaN(), VerdictNone},
		// rQPS exactly 1 (both sides of the band's edge are checked below).
		{"rQPS 1", Val(1), Val(1.1), Val(1.1), Val(1), math.NaN(), math.NaN(), math.NaN(), math.NaN(), VerdictNone},
		// rQPS 0.8 tested over 3 repeats but not significant: the change is
		// outside the band, so its shares are kept: all of it is waiting.
		{"not significant", Cell{Value: 0.8, Running: 1, N: 3, Of: 3, Tested: true, P: 0.1, Same: true}, Val(1), Val(1), Val(1), 0, 0, 1, 1, VerdictNone},
		// rQPS 0.94, just outside the band: 10% more instructions explain
		// ln 1.1 / ln(1/0.94) = 0.09531/0.06188 = 1.540, CPI 0.97 explains
		// ln 0.97 / 0.06188 = −0.4922, rest 1 − 1.540 + 0.4922 = −0.0480;
		// cpu/o 1.06: wait 1 − ln 1.06 / 0.06188 = 1 − 0.94164 = 0.0584.
		{"just outside the band", Val(0.94), Val(1.06), Val(1.1), Val(0.97), math.Log(1.1) / -math.Log(0.94),
			math.Log(0.97) / -math.Log(0.94), 1 - (math.Log(1.1)+math.Log(0.97))/-math.Log(0.94), 1 - math.Log(1.06)/-math.Log(0.94), VerdictCode},
		{"no throughput", Stated(Failed), Val(1), Val(1), Val(1), math.NaN(), math.NaN(), math.NaN(), math.NaN(), VerdictNA},
	} {
		a := attribute(tc.rqps, tc.rcpu, tc.rins, tc.rcpi)
		check := func(what string, got, want float64) {
			if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && math.Abs(got-want) > 1e-12) {
				t.Errorf("%s: %s share = %v, want %v", tc.name, what, got, want)
			}
		}
		check("code", a.Code, tc.code)
		check("memory", a.Memory, tc.memory)
		check("rest", a.Rest, tc.rest)
		check("wait", a.Wait, tc.wait)
		if a.Verdict != tc.verdict {
			t.Errorf("%s: verdict %s, want %s", tc.name, a.Verdict, tc.verdict)
		}
		inBand := tc.rqps.OK() && math.IsNaN(tc.code) && math.IsNaN(tc.wait)
		if wantWhy := map[bool]string{true: whyNoChange}[inBand]; a.NoShares != wantWhy {
			t.Errorf("%s: NoShares %q, want %q", tc.name, a.NoShares, wantWhy)
		}
		if tc.name == "instruction regression" && math.Abs(a.Drop-ln125) > 1e-12 {
			t.Errorf("drop = %v, want ln 1.25 = %v", a.Drop, ln125)
		}
	}
}

// TestAttributeBandEdges checks the edges of the no-change band and that
// WhyNoChange prints the band the verdict note prints: exp(−NoChange) =
// 0.95 and exp(NoChange) = 1/0.95 = 1.0526.
func TestAttributeBandEdges(t *testing.T) {
	for _, tc := range []struct {
		rqps   float64
		shares bool
	}{
		// The band's edges belong to it (the note says "within
		// 0.95–1.053"): rQPS 0.95 exactly, as 9,500/10,000 gives it,
		// gets no shares.
		{0.9499, true}, {0.95, false}, {9500.0 / 10000, false}, {0.9501, false}, {1 / 0.95, false},
		{1.0526, false}, {1.0527, true}, {0.5, true}, {2, true},
	} {
		a := attribute(Val(tc.rqps), Val(1), Val(1), Val(1))
		if got := !math.IsNaN(a.Wait); got != tc.shares {
			t.Errorf("rQPS %v: wait share %v, want shares computed = %v", tc.rqps, a.Wait, tc.shares)
		}
	}
	band := fmt.Sprintf("%.2f–%.3f", math.Exp(-NoChange), math.Exp(NoChange))
	if band != "0.95–1.053" || !strings.Contains(whyNoChange, band) {
		t.Errorf("WhyNoChange %q does not name the band %s", whyNoChange, band)
	}
}

// TestAttributeFromRecords builds the three cases from raw counts: the base
// does 1000 ops in 10 s with 1e9 instructions, 2e9 cycles and 5e9 ns of
// task-clock; each version does 800 ops.
func TestAttributeFromRecords(t *testing.T) {
	base := func(step string) *record.Record {
		return stepRecord("base", step, 1, 1000, counted("instructions", 1e9), counted("cycles", 2e9), counted("task-clock", 5e9))
	}
	recs := []*record.Record{
		base("a"), base("b"), base("c"),
		// Same totals over fewer ops: instructions/op ×1.25, CPI same,
		// cpu/o ×1.25.
		stepRecord("new", "a", 1, 800, counted("instructions", 1e9), counted("cycles", 2e9), counted("task-clock", 5e9)),
		// Instructions/op same (8e8/800 = 1e6), CPI 2e9/8e8 = 2.5 (×1.25).
		stepRecord("new", "b", 1, 800, counted("instructions", 8e8), counted("cycles", 2e9), counted("task-clock", 5e9)),
		// Everything per op flat (8e8, 1.6e9, 4e9 over 800 ops), rQPS 0.8.
		stepRecord("new", "c", 1, 800, counted("instructions", 8e8), counted("cycles", 1.6e9), counted("task-clock", 4e9)),
	}
	c, err := New(recs, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := Scope{"h", 1}
	for step, want := range map[string]verdict{"a": VerdictCode, "b": VerdictMemory, "c": verdictWait} {
		a := c.Attribute(Key(sc, "new", step))
		if a.Verdict != want || !near(a.RQPS.Value, 0.8) {
			t.Errorf("step %s: verdict %s rQPS %v, want %s 0.8 (%+v)", step, a.Verdict, a.RQPS.Value, want, a)
		}
	}
}

func TestSpearman(t *testing.T) {
	// Ranks of y = [5 6 7 8 7] are [1 2 3.5 5 3.5]; with x ranks 1..5,
	// sum dx·dy = 8, sum dx² = 10, sum dy² = 9.5: rho = 8/sqrt(95).
	if got, want := spearman([]float64{1, 2, 3, 4, 5}, []float64{5, 6, 7, 8, 7}), 8/math.Sqrt(95); !near(got, want) {
		t.Errorf("rho = %v, want %v", got, want)
	}
	if got := spearman([]float64{1, 2, 3}, []float64{10, 200, 3000}); !near(got, 1) {
		t.Errorf("monotone: rho = %v, want 1", got)
	}
	if got := spearman([]float64{1, 2, 3}, []float64{3, 2, 1}); !near(got, -1) {
		t.Errorf("reversed: rho = %v, want -1", got)
	}
	if got := spearman([]float64{1, 2}, []float64{1, 2}); !math.IsNaN(got) {
		t.Errorf("two points: rho = %v, want NaN", got)
	}
	if got := spearman([]float64{1, 1, 1}, []float64{1, 2, 3}); !math.IsNaN(got) {
		t.Errorf("constant x: rho = %v, want NaN", got)
	}
}

func TestCorrelate(t *testing.T) {
	// Three steps with rQPS 0.5, 0.8, 1.0 (1/rQPS 2, 1.25, 1); cycles/op
	// ratios 2, 1.25, 1 track it exactly (rho 1); instructions/op ratios 1,
	// 1.1, 1.2 go the other way (rho -1).
	var recs []*record.Record
	for _, s := range []struct {
		step           string
		ops, ins, cycs float64
	}{{"a", 500, 5e8, 2e9}, {"b", 800, 1.1 * 800 * 1e6, 1.25 * 800 * 2e6}, {"c", 1000, 1.2e9, 2e9}} {
		recs = append(recs,
			stepRecord("base", s.step, 1, 1000, counted("instructions", 1e9), counted("cycles", 2e9)),
			stepRecord("new", s.step, 1, s.ops, counted("instructions", s.ins), counted("cycles", s.cycs)))
	}
	c, err := New(recs, "base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Correlate(Scope{"h", 1}, "new", []string{"instructions/o", "cycles/o"})
	if len(got) != 2 || got[0].Metric != "cycles/o" || !near(got[0].Rho, 1) || got[0].N != 3 ||
		got[1].Metric != "instructions/o" || !near(got[1].Rho, -1) {
		t.Errorf("Correlate = %+v", got)
	}
	// One repeat per version: none of the three steps' ratios was tested.
	if got[0].Untested != 3 {
		t.Errorf("untested steps %d, want 3", got[0].Untested)
	}
	// A metric that is 0 for both versions everywhere gives ratios of two
	// zeros (1 by convention): they do not enter the correlation.
	for _, r := range recs {
		r.Counters = append(r.Counters, counted("major-faults", 0))
	}
	c, _ = New(recs, "base", Options{})
	if z := c.Correlate(Scope{"h", 1}, "new", []string{"major-faults/o"}); len(z) != 1 || z[0].N != 0 {
		t.Errorf("both-zero metric: %+v, want no step", z)
	}
}

func TestRepeatsMedianCIAndSignificance(t *testing.T) {
	// Six repeats each; the base's ops are 1000..1005 per 10 s, the new
	// version's 900..905: every new sample is below every base sample.
	var recs []*record.Record
	for i := 0; i < 6; i++ {
		recs = append(recs, stepRecord("base", "s", i+1, float64(1000+i)), stepRecord("new", "s", i+1, float64(900+i)))
	}
	c, err := New(recs, "base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := Key(Scope{"h", 1}, "new", "s")
	v := c.Value(k, OpsPerSecond)
	// o/s are 90.0..90.5: median (90.2+90.3)/2 = 90.25. With 6 samples the
	// 95% interval of the median is [min, max]: P(min <= median <= max) =
	// 1 − 2·0.5^6 = 0.969, while [x(2), x(5)] only covers 0.78.
	if v.N != 6 || !near(v.Value, 90.25) || !near(v.Lo, 90) || !near(v.Hi, 90.5) {
		t.Errorf("median = %+v, want 90.25 in [90, 90.5] over 6", v)
	}
	r := c.ThroughputRatio(k)
	// Mann-Whitney U with complete separation of 6 and 6: p = 2/C(12,6) =
	// 2/924.
	if !r.Tested || r.Same || !near(r.P, 2.0/924) {
		t.Errorf("ratio test = tested %v same %v p %v, want p = 2/924 and a significant difference", r.Tested, r.Same, r.P)
	}
	if !near(r.Value, 90.25/100.25) {
		t.Errorf("rQPS = %v, want %v", r.Value, 90.25/100.25)
	}

	// Three repeats each can never be significant at 0.05 (smallest p is
	// 0.1): the ratio is marked "~".
	c3, _ := New(recs[:6], "base", Options{})
	r3 := c3.ThroughputRatio(k)
	if !r3.Tested || !r3.Same || !near(r3.P, 0.1) {
		t.Errorf("3 vs 3 repeats: tested %v same %v p %v, want p 0.1 and ~", r3.Tested, r3.Same, r3.P)
	}
}

func TestFailedRepeatLeftOut(t *testing.T) {
	f := stepRecord("v", "s", 2, 5000)
	f.Outcome = record.OutcomeFailed
	recs := []*record.Record{stepRecord("v", "s", 1, 1000), f, stepRecord("v", "s", 3, 1200)}
	c, _ := New(recs, "", Options{})
	v := c.Value(Key(Scope{"h", 1}, "v", "s"), OpsPerSecond)
	if v.N != 2 || v.Of != 3 || !near(v.Value, 110) {
		t.Errorf("value = %+v, want median 110 of 2 of 3 repeats", v)
	}
	all := []*record.Record{f}
	c2, _ := New(all, "", Options{})
	if v := c2.Value(Key(Scope{"h", 1}, "v", "s"), OpsPerSecond); v.State != Failed {
		t.Errorf("only a failed repeat: %v, want failed", v.State)
	}
}

func TestLegacyRatio(t *testing.T) {
	// Windows of 10 s; whole-step client QPS 120 vs 100 (rQPS 1.2); the
	// counter's window totals 3e9 vs 2e9 (rate ratio 1.5): legacy ratio
	// 1.5 / 1.2 = 1.25. The per-op ratio uses the window's own ops:
	// (3e9/1100) / (2e9/1000) = 1.3636...
	b := stepRecord("base", "s", 1, 1000, counted("instructions", 2e9))
	b.Client = &record.Client{Seconds: 60, Queries: 6000}
	n := stepRecord("new", "s", 1, 1100, counted("instructions", 3e9))
	n.Client = &record.Client{Seconds: 60, Queries: 7200}
	c, _ := New([]*record.Record{b, n}, "", Options{})
	k := Key(Scope{"h", 1}, "new", "s")
	if got := c.LegacyRatio(k, "instructions"); !near(got.Value, 1.25) {
		t.Errorf("legacy ratio = %v, want 1.25", got.Value)
	}
	if got := c.Ratio(k, "instructions/o"); !near(got.Value, (3e9/1100)/(2e9/1000.0)) {
		t.Errorf("per-op ratio = %v", got.Value)
	}
}

// Steps in table order: by the suite's groups (suite.GroupOf), then by
// label, largest range first.
func TestStepOrder(t *testing.T) {
	// The InnoDB block of the first seed post, rows typed in its order.
	published := []string{
		"hot-points_range=100", "point-query.pre_range=100", "point-query_range=100",
		"points-covered-pk.pre_range=100", "points-covered-pk_range=100",
		"points-covered-si.pre_range=100", "points-covered-si_range=100",
		"points-notcovered-pk.pre_range=100", "points-notcovered-pk_range=100",
		"points-notcovered-si.pre_range=100", "points-notcovered-si_range=100",
		"random-points.pre_range=1000", "random-points.pre_range=100", "random-points.pre_range=10",
		"random-points_range=1000", "random-points_range=100", "random-points_range=10",
		"range-covered-pk.pre_range=100", "range-covered-pk_range=100",
		"range-covered-si.pre_range=100", "range-covered-si_range=100",
		"range-notcovered-pk.pre_range=100", "range-notcovered-pk_range=100",
		"range-notcovered-si.pre_range=100", "range-notcovered-si_range=100",
		"read-only.pre_range=10000", "read-only.pre_range=100", "read-only.pre_range=10",
		"read-only_range=10000", "read-only_range=100", "read-only_range=10",
		"scan_range=100",
		"delete_range=100", "insert_range=100", "read-write_range=100", "read-write_range=10",
		"update-index_range=100", "update-inlist_range=100", "update-nonindex_range=100",
		"update-one_range=100", "update-zipf_range=100", "write-only_range=10000",
	}
	// Shuffle deterministically (reverse, then rotate) and add a warm-up.
	in := make([]string, 0, len(published)+1)
	for i := len(published) - 1; i >= 0; i-- {
		in = append(in, published[i])
	}
	in = append(in[7:], in[:7]...)
	in = append(in, "point-query.warm_range=100")
	if got := OrderSteps(in); !reflect.DeepEqual(got, published) {
		t.Errorf("OrderSteps:\n got %q\nwant %q", got, published)
	}
	// Insert-benchmark steps keep their run order, after the others.
	if got := OrderSteps([]string{"l.i0", "point-query", "l.x", "l.i1", "qr100"}); !reflect.DeepEqual(got,
		[]string{"point-query", "l.i0", "l.x", "l.i1", "qr100"}) {
		t.Errorf("insert order: %q", got)
	}
}

// TestRecordGroups: a step's group is the one its Records give (the
// first that gives one), else, for Records without one (schema 1), the
// insert benchmark's when they carry its data, else the suite's for its
// label; the name order sorts by those groups.
func TestRecordGroups(t *testing.T) {
	group := func(r *record.Record, g string) *record.Record { r.Group = g; return r }
	ins := stepRecord("a", "load", 1, 100)
	ins.Insert = &record.Insert{}
	recs := []*record.Record{
		group(stepRecord("a", "checkpoint", 1, 100), "writes"),
		stepRecord("b", "checkpoint", 1, 100), // no group: the first Record's stands
		stepRecord("a", "point-query_range=100", 1, 100),
		group(stepRecord("a", "scan_range=100", 1, 100), "range"),
		group(stepRecord("a", "flush", 1, 100), "maintenance"),
		ins,
		stepRecord("a", "l.i0", 1, 100),
		stepRecord("a", "update-index_range=100", 1, 100),
	}
	c, err := New(recs, "", Options{Order: orderName})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]suite.Group{
		"checkpoint": suite.GroupWrites, "point-query_range=100": suite.GroupPoint, "scan_range=100": suite.GroupRange,
		"flush": "maintenance", "load": suite.GroupInsert, "l.i0": suite.GroupInsert, "update-index_range=100": suite.GroupWrites,
	}
	for step, g := range want {
		if got := c.Group(step); got != g {
			t.Errorf("Group(%s) = %s, want %s", step, got, g)
		}
	}
	order := []string{"point-query_range=100", "scan_range=100", "checkpoint", "update-index_range=100", "flush", "load", "l.i0"}
	if !reflect.DeepEqual(c.Steps, order) {
		t.Errorf("steps %q, want %q", c.Steps, order)
	}
}

func TestNewBase(t *testing.T) {
	recs := []*record.Record{stepRecord("a", "s", 1, 1), stepRecord("b", "s", 1, 1)}
	c, err := New(recs, "", Options{})
	if err != nil || c.Base != "a" || !reflect.DeepEqual(c.Others(), []string{"b"}) {
		t.Errorf("default base: %v %v %v", c, err, c.Others())
	}
	if _, err := New(recs, "zz", Options{}); err == nil {
		t.Error("unknown base accepted")
	}
	if _, err := New(nil, "", Options{}); err != errNoRecords {
		t.Errorf("no records: %v", err)
	}
}

func TestInsertMetrics(t *testing.T) {
	r := stepRecord("v", "l.i0", 1, 6e6, counted("task-clock", 112.64e9), counted("context-switches", 821740))
	r.Provenance.CPUs = 16
	r.OS = &record.OS{RSSBytes: 1.5 * (1 << 30), Disk: &record.Disk{Reads: 0, Writes: 5099, WriteSectors: 2932736}}
	r.Insert = &record.Insert{Inserts: 6e6, DBGBLogical: 5.4, MaxOpSeconds: 0.267, P50: 80912, P99: 56738,
		Histogram: []record.Bucket{{UpToMs: 1, Count: 250}, {UpToMs: 4, Count: 749}, {UpToMs: 16, Count: 1}}}
	p := compute(r, Options{})
	want := map[string]float64{
		"ips":      600000,                           // 6e6 / 10
		"qps":      0,                                //
		"wps":      509.9,                            // 5099 / 10
		"wmbps":    2932736 * 512.0 / (1 << 20) / 10, // 143.2 MiB/s
		"wpi":      5099 / 6e6,                       //
		"wkbpi":    2932736 * 512.0 / 1024 / 6e6,     // 0.2503 KB per insert
		"csps":     82174,                            // 821740 / 10
		"cspq":     821740 / 6e6,                     // 0.137
		"cpups":    70.4,                             // 112.64 s / (10 s × 16 CPUs) = 70.4%
		"cpupq":    112.64e6 / 6e6,                   // 18.77 µs per insert
		"rss":      1.5,
		"dbgb1":    5.4,
		"maxop":    0.267,
		"p50":      80912,
		"hist:1ms": 25, "hist:4ms": 74.9, "hist:16ms": 0.1, "hist:256us": 0, "hist:gt": 0,
	}
	for m, w := range want {
		if c := p.Get(m); !c.OK() || !near(c.Value, w) {
			t.Errorf("%s = %+v, want %v", m, c, w)
		}
	}
	if c := p.Get("dbgb2"); c.State != Missing {
		t.Errorf("dbgb2 not recorded: %v, want missing", c.State)
	}
}

func TestRoleShares(t *testing.T) {
	r := stepRecord("v", "s", 1, 100, counted("instructions", 1000))
	r.Roles = []record.Role{
		{Name: "connection", Threads: 4, Counters: []record.Counter{counted("instructions", 750), counted("context-switches", 0)}},
		{Name: "innodb-io", Threads: 8, Counters: []record.Counter{counted("instructions", 250), counted("context-switches", 0)}},
	}
	p := compute(r, Options{})
	if c := p.Get(RoleMetric("connection", "instructions")); !near(c.Value, 0.75) {
		t.Errorf("connection share = %+v, want 0.75 (750 of 1000)", c)
	}
	if c := p.Get(RoleMetric("innodb-io", "threads")); c.Value != 8 {
		t.Errorf("innodb-io threads = %v", c.Value)
	}
	if c := p.Get(RoleMetric("connection", "context-switches")); c.State != NotComputable || c.Why != whyZeroTotal {
		t.Errorf("share of a total of 0 = %+v, want not computable", c)
	}
}

// A role's share keeps what its counters say: the smaller running
// fraction of a multiplexed counter and its total, the state of one not
// counted or not supported, the partial mark of a window cut short.
func TestRoleShareStates(t *testing.T) {
	r := stepRecord("v", "s", 1, 100, counted("cycles", 1000))
	r.Outcome = record.OutcomePartial
	scaled := record.Counter{Event: "cycles", Raw: 150, Enabled: 1000, Running: 500, Value: 300, Status: record.StatusScaled}
	r.Roles = []record.Role{
		{Name: "a", Threads: 1, Counters: []record.Counter{counted("cycles", 100), {Event: "branches",
			Status: record.StatusNotSupported}, {Event: "instructions", Status: record.StatusNotCounted}}},
		{Name: "b", Threads: 2, Counters: []record.Counter{scaled, {Event: "branches", Status: record.StatusNotSupported}, counted("instructions", 5)}},
	}
	p := compute(r, Options{})
	// cycles: total 100 + 300 = 400, running min(1, 0.5).
	for role, want := range map[string]float64{"a": 0.25, "b": 0.75} {
		c := p.Get(RoleMetric(role, "cycles"))
		if !c.OK() || !near(c.Value, want) || c.Running != 0.5 || !c.Partial {
			t.Errorf("%s cycles share = %+v, want %v of 400, running 0.5, partial", role, c, want)
		}
	}
	if c := p.Get(RoleMetric("a", "branches")); c.State != NotSupported || !c.Partial || c.Running != 1 {
		t.Errorf("share of a counter not supported = %+v", c)
	}
	// instructions: a not counted, b 5: the total is not counted.
	for _, role := range []string{"a", "b"} {
		if c := p.Get(RoleMetric(role, "instructions")); c.State != NotCounted || !c.Partial {
			t.Errorf("%s share of a total not counted = %+v", role, c)
		}
	}
}

// A warning every Record of a version carries is one line for the version;
// one that only some repeats carry names them.
func TestWarningsGrouped(t *testing.T) {
	var recs []*record.Record
	for _, step := range []string{"point-query_range=100", "update-index_range=100"} {
		for rep := 1; rep <= 2; rep++ {
			b := stepRecord("base", step, rep, 1000)
			b.Warnings = []record.Warning{{Code: record.WarnGeneral, Text: "performance_schema is off"}}
			v := stepRecord("new", step, rep, 900)
			if step == "update-index_range=100" && rep == 2 {
				v.Warnings = []record.Warning{{Code: record.WarnGeneral, Text: "3 threads exited"}}
			}
			recs = append(recs, b, v)
		}
	}
	c, err := New(recs, "base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []record.Key
	for _, r := range recs {
		keys = append(keys, r.Key())
	}
	got := c.Warnings(keys, TopicGeneral, nil)
	want := []string{
		"base (host h, 1 thread) every step: performance_schema is off",
		"new (host h, 1 thread) update-index_range=100 repeat 2: 3 threads exited",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings\n%q\nwant\n%q", got, want)
	}
	// Only one step's keys: the same warning names the step.
	got = c.Warnings([]record.Key{recs[0].Key()}, TopicGeneral, nil)
	if want := []string{"base (host h, 1 thread) point-query_range=100: performance_schema is off"}; !reflect.DeepEqual(got, want) {
		t.Errorf("one step: %q, want %q", got, want)
	}
}

// rKB/o and wKB/o come from the server's /proc io whenever the Record has
// it, a 0 included; the device's sectors only without it, with a note.
// r/o and w/o are the device's and say which device.
func TestComputeIOSources(t *testing.T) {
	// The server read nothing itself (read_bytes 0) while other processes
	// read 1000 requests, 16000 sectors on the device.
	r := stepRecord("v", "point-query", 1, 2000, counted("task-clock", 1e9))
	r.OS = &record.OS{ReadBytes: 0, WriteBytes: 409600,
		Disk: &record.Disk{Device: "sda", Reads: 1000, ReadSectors: 16000, Writes: 50, WriteSectors: 800}}
	p := compute(r, Options{})
	for m, want := range map[string]float64{
		ReadKBPerOp:  0,                      // a measured 0, not 16000×512/1024/2000 = 4
		WriteKBPerOp: 409600.0 / 1024 / 2000, // 0.2
		ReadsPerOp:   0.5,                    // 1000 / 2000, device-wide
		WritesPerOp:  0.025,                  // 50 / 2000
	} {
		if c := p.Get(m); !c.OK() || !near(c.Value, want) {
			t.Errorf("%s = %+v, want %v", m, c, want)
		}
	}
	if p.Device != "sda" || len(p.Notes) != 0 {
		t.Errorf("device %q, notes %+v; want sda and no note", p.Device, p.Notes)
	}

	// Without /proc io (osstat's warning): KB from the sectors, noted as
	// device-wide, under the IO topic.
	r.Warnings = []record.Warning{{Code: record.WarnIONotMeasured, Text: "IO of the process not measured: read_bytes, " +
		"write_bytes, rchar, wchar, syscr and syscw are not measurements"}}
	p = compute(r, Options{})
	if c := p.Get(ReadKBPerOp); !near(c.Value, 4) { // 16000 × 512 / 1024 / 2000
		t.Errorf("rKB/o from sectors = %+v, want 4", c)
	}
	if c := p.Get(WriteKBPerOp); !near(c.Value, 0.2) { // 800 × 512 / 1024 / 2000
		t.Errorf("wKB/o from sectors = %+v, want 0.2", c)
	}
	want := "rKB/o and wKB/o from the sectors of sda, device-wide: every process on sda (the Record has no /proc/PID/io of the server)"
	if len(p.Notes) != 1 || p.Notes[0].Text != want || p.Notes[0].Topic != TopicIO {
		t.Errorf("notes %+v, want one IO note %q", p.Notes, want)
	}
}

// An estimated op count marks everything divided by it, o/s included, and
// the ratios built on it; values that do not divide by ops stay unmarked.
func TestComputeEstimatedOps(t *testing.T) {
	mk := func(version string, ops float64) *record.Record {
		r := stepRecord(version, "point-query", 1, ops, counted("instructions", 2e7), counted("cycles", 4e7))
		r.Ops.Estimated = true
		return r
	}
	p := compute(mk("v", 1000), Options{})
	for _, m := range []string{OpsPerSecond, "instructions/o", "cycles/o"} {
		if c := p.Get(m); !c.OK() || !c.Estimated {
			t.Errorf("%s = %+v, want estimated", m, c)
		}
	}
	if c := p.Get(IPC); !c.OK() || c.Estimated {
		t.Errorf("IPC = %+v: instructions/cycles does not divide by ops", c)
	}
	c, err := New([]*record.Record{mk("base", 1000), mk("new", 800)}, "base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.ThroughputRatio(record.Key{Host: "h", Version: "new", Step: "point-query", Threads: 1}); !r.Estimated || !near(r.Value, 0.8) {
		t.Errorf("rQPS = %+v, want 0.8 estimated", r)
	}
}

func TestRatioFlags(t *testing.T) {
	zero := Ratio(Val(0), Val(0))
	if !zero.OK() || zero.Value != 1 || !zero.BothZero {
		t.Errorf("0/0 = %+v, want 1 flagged both-zero", zero)
	}
	if r := Ratio(Val(0), Val(2)); r.BothZero || r.Value != 0 {
		t.Errorf("0/2 = %+v", r)
	}
	three := Val(2)
	three.N, three.Of = 3, 3
	if r := Ratio(three, three); r.FewRepeats {
		t.Errorf("3 repeats against 3: %+v, want testable", r)
	}
	if r := Ratio(three, Val(2)); !r.FewRepeats {
		t.Errorf("3 repeats against 1: %+v, want few repeats", r)
	}
	// Reasons travel with not computable cells.
	if c := combine(NoValue(whyNoOps), Val(1), div); c.State != NotComputable || c.Why != whyNoOps {
		t.Errorf("combine keeps %+v", c)
	}
	if c := combine(NoValue(whyNoOps), Stated(NotSupported), div); c.State != NotSupported || c.Why != "" {
		t.Errorf("n/a is more serious than not computable: %+v", c)
	}
}

// A warning concerns the tables of its code's topic; multiplexed and
// not-counted ones those of their events.
func TestClassifyWarning(t *testing.T) {
	for _, tc := range []struct {
		w      record.Warning
		topic  Topic
		events []string
	}{
		{record.Warning{Code: record.WarnRoles}, TopicRoles, nil},
		{record.Warning{Code: record.WarnRoles, Roles: []string{"innodb-pool"}}, TopicRoles, nil},
		{record.Warning{Code: record.WarnIONotMeasured}, TopicIO, nil},
		{record.Warning{Code: record.WarnIO}, TopicIO, nil},
		{record.Warning{Code: record.WarnMultiplexed, Events: []string{"cache-misses"}}, TopicCounters, []string{"cache-misses"}},
		{record.Warning{Code: record.WarnNotCounted, Events: []string{"LLC-loads", "LLC-load-misses"}}, TopicCounters, []string{"LLC-loads", "LLC-load-misses"}},
		{record.Warning{Code: record.WarnCSSplit}, TopicCPU, nil},
		{record.Warning{Code: record.WarnHostCPUNotMeasured}, TopicCPU, nil},
		{record.Warning{Code: record.WarnGeneral}, TopicGeneral, nil},
		{record.Warning{Code: record.WarnOpsEstimated}, TopicGeneral, nil},
		{record.Warning{Code: record.WarnOpsNotCounted}, TopicGeneral, nil},
	} {
		tc.w.Text = "text of " + string(tc.w.Code)
		n := ClassifyWarning(tc.w)
		if n.Topic != tc.topic || !reflect.DeepEqual(n.Events, tc.events) || n.Text != tc.w.Text {
			t.Errorf("%+v: topic %b events %q text %q, want %b %q", tc.w, n.Topic, n.Events, n.Text, tc.topic, tc.events)
		}
	}
	// A counter note concerns tables of its events only; a general note
	// every table.
	mux := ClassifyWarning(record.Warning{Code: record.WarnMultiplexed, Events: []string{"cache-misses"},
		Text: "cache-misses was multiplexed: counted 62% of the window"})
	if mux.Concerns(TopicGeneral, []string{}) || mux.Concerns(TopicGeneral|TopicCounters, []string{"cycles"}) ||
		!mux.Concerns(TopicCounters, []string{"cache-misses"}) || !mux.Concerns(TopicCounters, nil) {
		t.Error("multiplexing note concerns the wrong tables")
	}
	if !ClassifyWarning(record.Warning{Code: record.WarnGeneral, Text: "anything"}).Concerns(TopicGeneral, []string{}) {
		t.Error("a general note is left out")
	}
}

// |rho| = 1 by chance: 2 of the n! orderings.
func TestChanceOfPerfect(t *testing.T) {
	for n, want := range map[int]float64{3: 1.0 / 3, 4: 1.0 / 12, 5: 1.0 / 60} {
		if got := ChanceOfPerfect(n); !near(got, want) {
			t.Errorf("n = %d: %v, want %v", n, got, want)
		}
	}
}

// Ranks come from the ratios as reports print them: IPC = 1/CPI ratios
// that differ from 1 only far below the printed precision (0.3000003
// against 0.3) tie, as the 1.00 on both sides says, instead of ranking by
// noise (CPI got rho 1.00 while IPC = 1/CPI got -0.87).
func TestCorrelateRanksPrintedValues(t *testing.T) {
	table := func(version, step string, qps, ipc float64) *record.Record {
		r := record.New(record.KindTable)
		r.Host, r.Version, r.Step, r.Threads = "h", version, step, 1
		r.Metrics = map[string]float64{TableQPS: qps, IPC: ipc, CPI: 1 / ipc}
		return r
	}
	noisy := 0.3000003
	var recs []*record.Record
	for _, s := range []struct {
		step       string
		qps, b, nv float64
	}{{"a", 80, 0.3, 0.3}, {"b", 90, 0.3, noisy}, {"c", 100, noisy, 0.3}, {"d", 125, 0.3, 0.3}} {
		recs = append(recs, table("base", s.step, 100, s.b), table("new", s.step, s.qps, s.nv))
	}
	c, err := New(recs, "base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range c.Correlate(Scope{"h", 1}, "new", []string{IPC, CPI}) {
		if !math.IsNaN(cr.Rho) || cr.N != 4 {
			t.Errorf("%s: rho %v over %d steps, want none (every ratio prints 1.00)", cr.Metric, cr.Rho, cr.N)
		}
	}
}

// rQPS of two zero throughputs is 1 by convention, not a measured
// equality: no verdict (it was "none").
func TestAttributeBothZero(t *testing.T) {
	rqps := Ratio(Val(0), Val(0))
	a := attribute(rqps, Val(1), Val(1), Val(1))
	if a.Verdict != VerdictNA || a.NoShares != whyBothZero || !math.IsNaN(a.Wait) {
		t.Errorf("Attribute(0/0) = %+v, want n/a with no shares", a)
	}
}

// Steps come in the order they were run (earliest window start), those
// without a start after them in input order; OrderInput and OrderName as
// named.
func TestStepOrders(t *testing.T) {
	at := func(r *record.Record, min int) *record.Record {
		r.Window.Start = time.Date(2026, 1, 1, 10, min, 0, 0, time.UTC)
		return r
	}
	recs := []*record.Record{
		at(stepRecord("a", "update-index", 1, 1), 5), at(stepRecord("a", "point-query", 1, 1), 9),
		at(stepRecord("b", "point-query", 1, 1), 1), stepRecord("b", "scan", 1, 1),
		at(stepRecord("b", "update-index", 1, 1), 2),
	}
	for order, want := range map[string]string{
		"": "point-query update-index scan", OrderRun: "point-query update-index scan",
		orderInput: "update-index point-query scan", orderName: "point-query scan update-index",
	} {
		c, err := New(recs, "", Options{Order: order})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(c.Steps, " "); got != want {
			t.Errorf("order %q: %q, want %q", order, got, want)
		}
	}
}

// The smallest p-value of the U test with n against m repeats: 4 against
// 3 cannot reach 0.05.
func TestSmallestP(t *testing.T) {
	for _, tc := range []struct {
		n, m int
		p    float64
	}{{3, 3, 0.1}, {4, 3, 2.0 / 35}, {3, 4, 2.0 / 35}, {4, 4, 2.0 / 70}, {6, 2, 2.0 / 28}, {1, 5, 2.0 / 6}, {0, 3, 1}} {
		if got := SmallestP(tc.n, tc.m); !near(got, tc.p) {
			t.Errorf("SmallestP(%d, %d) = %v, want %v", tc.n, tc.m, got, tc.p)
		}
	}
}

// The bootstrap interval of a ratio of medians: deterministic, around the
// ratio, as wide as the noisier sample makes it, none below 6 repeats.
func TestRatioInterval(t *testing.T) {
	v := []float64{150, 150.1, 150.2, 150.3, 150.4, 150.5}
	b := []float64{70, 85, 100, 100, 115, 130}
	lo, hi := ratioInterval(v, b, 0.95)
	lo2, hi2 := ratioInterval(v, b, 0.95)
	if lo != lo2 || hi != hi2 || !(lo < 1.5 && 1.5 < hi) || (hi-lo)/1.5 < 0.4 {
		t.Errorf("interval [%v, %v] then [%v, %v], want the same, around 1.5, at least 40%% wide", lo, hi, lo2, hi2)
	}
	if lo, hi := ratioInterval(v[:5], b, 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("5 repeats: [%v, %v], want none", lo, hi)
	}
	if lo, hi := ratioInterval(v, []float64{0, 0, 0, 0, 1, 1}, 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("base medians of 0: [%v, %v], want none", lo, hi)
	}
}

// Printed values round half away from zero on their decimal value, not on
// float64's nearest binary value.
func TestFormatFixed(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		prec int
		want string
	}{
		{1.2734999999999999, 3, "1.274"}, {0.4725, 3, "0.473"}, {0.945, 2, "0.95"}, {0.125, 2, "0.13"},
		{0.8004, 2, "0.80"}, {-0.001, 2, "0.00"}, {-1.005, 2, "-1.01"}, {606061, 0, "606061"}, {1e20, 0, "100000000000000000000"},
	} {
		if got := FormatFixed(tc.v, tc.prec); got != tc.want {
			t.Errorf("FormatFixed(%v, %d) = %q, want %q", tc.v, tc.prec, got, tc.want)
		}
		if got := string(AppendFixed([]byte("x"), tc.v, tc.prec)); got != "x"+tc.want {
			t.Errorf("AppendFixed(x, %v, %d) = %q, want x%q", tc.v, tc.prec, got, tc.want)
		}
	}
}

// FormatFixed's shortcut (strconv on the binary value) agrees with exact
// decimal rounding, and so does AppendFixed after what it appends to, of the 12-digit form wherever the printed digits are
// among those 12: exact halves, values a hair off them, random values of
// every magnitude.
func TestFormatFixedAgreesWithDecimalRounding(t *testing.T) {
	exact := func(v float64, prec int) string {
		r, _ := new(big.Rat).SetString(strconv.FormatFloat(v, 'e', 11, 64))
		s := r.FloatString(prec)
		if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
			s = s[1:]
		}
		return s
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var vals []float64
	for i := range 2000 {
		vals = append(vals, float64(i)/8, float64(i)/1000+0.0005, float64(i)*0.001+0.00049999999, -float64(i)/16)
		vals = append(vals, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(24)-12)))
	}
	for _, v := range vals {
		for prec := range 5 {
			// Digits past the 12th significant one come from the binary
			// value: nothing to compare with the 12-digit form there.
			if v != 0 && math.Floor(math.Log10(math.Abs(v)))+float64(prec)+1 >= 12 {
				continue
			}
			if got, want := FormatFixed(v, prec), exact(v, prec); got != want {
				t.Fatalf("FormatFixed(%v, %d) = %s, exact decimal rounding %s", v, prec, got, want)
			}
			if got, want := string(AppendFixed([]byte("%"), v, prec)), "%"+exact(v, prec); got != want {
				t.Fatalf("AppendFixed(%%, %v, %d) = %s, exact decimal rounding %s", v, prec, got, want)
			}
		}
	}
}

// FormatFixed's and roundFixed's shortcut for small values away from a
// half (roundFast) gives what they give without it: values on, next to
// and between halves, negative ones, random ones of every magnitude, and
// ones at the shortcut's limits.
func TestRoundFastAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var vals []float64
	for i := range 4000 {
		h := (float64(i) + 0.5) / 100
		vals = append(vals, h, -h, math.Nextafter(h, 0), math.Nextafter(h, 2*h), h+1.01e-6, h-0.99e-6, float64(i)/7, -float64(i)/3)
		vals = append(vals, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(20)-10)), rng.Float64()*2)
	}
	vals = append(vals, 0, math.Copysign(0, -1), -0.001, -0.004999, 9999.99, 1e4-0.004, 1e4+0.004, 999999.4, 1e6, 1e300, 5e-324)
	fast := 0
	for _, v := range vals {
		for prec := range 5 {
			if _, ok := roundFast(v, prec); ok {
				fast++
			}
			want := formatFixedExact(v, prec)
			if got := FormatFixed(v, prec); got != want {
				t.Fatalf("FormatFixed(%v, %d) = %s, without the shortcut %s", v, prec, got, want)
			}
			w, err := strconv.ParseFloat(want, 64)
			if err != nil {
				t.Fatal(err)
			}
			if got := roundFixed(v, prec); got != w || math.Signbit(got) != math.Signbit(w) {
				t.Fatalf("roundFixed(%v, %d) = %v, without the shortcut %v", v, prec, got, w)
			}
		}
	}
	if fast < len(vals)*5/2 {
		t.Errorf("the shortcut was taken %d times of %d", fast, len(vals)*5)
	}
}
