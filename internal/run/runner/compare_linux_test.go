package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/record"
)

// comparePlan is an A/A plan: one build under two labels, one point-query
// step at 1 client thread, measured together as compare says, in slices of
// 500 ms.
func comparePlan(compare string) string {
	return fmt.Sprintf(`
[run]
compare = %q
slice = "500ms"
warmup = "1s"
duration = "3s"
events = ["task-clock", "context-switches"]
[data]
table_size = 1000
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
[[version]]
label = "b"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`, compare)
}

// checkComparison checks what the Records of one comparison of versions a
// and b must say whatever the machine does: the same comparison, the same
// slices, in turns; and returns them.
func checkComparison(t *testing.T, recs map[string]*record.Record, mode string, slices int) (a, b *record.Record) {
	t.Helper()
	a, b = recs["a/point-query_range=100/t1/r1"], recs["b/point-query_range=100/t1/r1"]
	if a == nil || b == nil {
		t.Fatalf("Records %v, want a's and b's", recs)
	}
	for _, r := range []*record.Record{a, b} {
		checkMeasured(t, r.Version, r)
		c := r.Comparison
		if c == nil {
			t.Fatalf("%s has no comparison", r.Version)
		}
		if c.Mode != mode || c.ID != "point-query_range=100/t1/r1" || c.SliceSeconds != 0.5 ||
			strings.Join(c.Versions, ",") != "a,b" || len(c.Slices) != slices {
			t.Errorf("%s: comparison %s %s %v %v with %d slices, want %s of a,b with %d slices of 0.5 s", r.Version, c.Mode,
				c.ID, c.Versions, c.SliceSeconds, len(c.Slices), mode, slices)
		}
		for i, s := range c.Slices {
			if s.Turn != i/2 || s.Seconds < 0.45 || len(s.Counters) == 0 {
				t.Errorf("%s slice %d: %+v", r.Version, i, s)
			}
			// A slice has its op count and status, or says why not (a
			// loaded machine delays a status read).
			if s.Error == "" && (!s.OpsCounted || len(s.Status) == 0) || s.Error != "" && s.OpsCounted {
				t.Errorf("%s slice %d: ops counted %v, status %d variables, error %q", r.Version, i, s.OpsCounted, len(s.Status), s.Error)
			}
		}
	}
	if len(a.Comparison.Slices) != len(b.Comparison.Slices) {
		t.Fatal("a and b have different slices")
	}
	for i := range a.Comparison.Slices {
		sa, sb := a.Comparison.Slices[i], b.Comparison.Slices[i]
		// Read at the same instants: the slices start and last alike.
		if d := sa.Start - sb.Start; d > 0.05 || d < -0.05 {
			t.Errorf("slice %d starts at %.3f s in a and %.3f s in b", i, sa.Start, sb.Start)
		}
	}
	return a, b
}

// TestCompareSlices: one version's load runs at a time, a slice each, in
// a random order every turn; a stopped load's server counts no queries.
func TestCompareSlices(t *testing.T) {
	needTools(t)
	_, _, sum, recs := runOK(t, parsePlan(t, comparePlan("slices")))
	if sum.OK != 2 {
		t.Errorf("summary %+v", sum)
	}
	// 3 s of slices of 500 ms for each of the two versions.
	a, b := checkComparison(t, recs, record.ComparisonSlices, 12)
	for turn := range 6 {
		sa, sb := a.Comparison.Slices[2*turn:2*turn+2], b.Comparison.Slices[2*turn:2*turn+2]
		for i := range 2 {
			if sa[i].Ran == sb[i].Ran {
				t.Errorf("turn %d slice %d: a ran %v, b ran %v: one at a time", turn, i, sa[i].Ran, sb[i].Ran)
			}
		}
		if sa[0].Ran == sa[1].Ran {
			t.Errorf("turn %d: a ran in %v of its slices, want one", turn, []bool{sa[0].Ran, sa[1].Ran})
		}
	}
	for _, r := range []*record.Record{a, b} {
		ran, idle := 0.0, 0.0
		for _, s := range r.Comparison.Slices {
			if s.Ran {
				ran += s.Ops
			} else {
				idle = max(idle, s.Ops)
			}
		}
		// A stopped client may finish the query it had sent: at most a
		// few queries in a slice it did not run.
		if ran < 1000 || idle > 5 {
			t.Errorf("%s: %v queries in its slices, up to %v in a slice of the other's", r.Version, ran, idle)
		}
		if act := r.ActiveSeconds(); act < 2.8 || act > 3.5 {
			t.Errorf("%s ran for %.2f s of slices, want about 3", r.Version, act)
		}
		// Its per-interval lines jump where it was stopped, which the
		// Record says once, rather than as a stall.
		texts := strings.Join(r.WarningTexts(), "\n")
		if strings.Contains(texts, "the client or the machine stalled") || !strings.Contains(texts, "stopped (SIGSTOP) outside its slices") {
			t.Errorf("%s: warnings %s", r.Version, texts)
		}
	}
	checkPaired(t, recs, analysis.PairedSlices, 6)
}

// checkPaired checks the report's rQPS of b against a: paired, from the
// turns no busy slice left out.
func checkPaired(t *testing.T, recs map[string]*record.Record, mode analysis.PairMode, turns int) {
	t.Helper()
	var list []*record.Record
	for _, r := range recs {
		list = append(list, r)
	}
	c, err := analysis.New(list, "a", analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := analysis.Key(analysis.Scope{Host: list[0].Host, Threads: 1}, "b", "point-query_range=100")
	cell := c.ThroughputRatio(k)
	p, ok := c.Pairing(k)
	if !ok || p.Pairs+p.Dropped != turns {
		t.Fatalf("pairing %+v (%v), want %d turns", p, ok, turns)
	}
	if p.Pairs == 0 {
		t.Logf("every turn left out (busy machine: %d busy): %+v", p.Busy, p)
		return
	}
	// The round (one comparison) is the unit of the ratio's interval:
	// one repeat is one round, without an interval.
	if cell.Paired != mode || cell.N != p.Rounds || p.Rounds != 1 || !cell.FewRepeats {
		t.Errorf("rQPS %+v, pairing %+v; want paired (%v) from 1 round of %d pairs, untested", cell, p, mode, p.Pairs)
	}
	// One build under two labels: unless the host's work fell on one
	// side (then the turns are marked busy and left out), the servers
	// ran within a factor of two of each other in every turn.
	if cell.Value < 0.5 || cell.Value > 2 {
		t.Errorf("A/A rQPS %.3f from %d pairs", cell.Value, p.Pairs)
	}
}

// TestCompareDuet: both versions at once, each on a CPU of its own, the
// CPUs passed on every slice; where perfbench has one CPU only, the plan is
// refused before anything starts.
func TestCompareDuet(t *testing.T) {
	needTools(t)
	p := parsePlan(t, comparePlan("duet"))
	own, err := cpuset.Own()
	if err != nil {
		t.Fatal(err)
	}
	if len(own) < 2 {
		out := t.TempDir()
		var progress syncBuffer
		_, err := Run(context.Background(), p, testOptions(out, &progress))
		if err == nil || !strings.Contains(err.Error(), `compare = "duet"`) || strings.Contains(progress.String(), "started") {
			t.Errorf("duet on one CPU: %v; said:\n%s", err, progress.String())
		}
		return
	}
	_, _, _, recs := runOK(t, p)
	// 3 s of slices, in turns of two: 6 slices for both at once.
	a, b := checkComparison(t, recs, record.ComparisonDuet, 6)
	for i := range a.Comparison.Slices {
		sa, sb := a.Comparison.Slices[i], b.Comparison.Slices[i]
		if !sa.Ran || !sb.Ran || sa.CPUs == sb.CPUs || sa.CPUs == "" {
			t.Errorf("slice %d: a ran %v on %q, b ran %v on %q: both at once, on CPUs of their own", i, sa.Ran, sa.CPUs, sb.Ran, sb.CPUs)
		}
		// In a turn, each version runs once on each set: the second
		// slice swaps the first's CPUs.
		if i%2 == 1 && (sa.CPUs != b.Comparison.Slices[i-1].CPUs || sb.CPUs != a.Comparison.Slices[i-1].CPUs) {
			t.Errorf("turn %d: a on %q then %q, b on %q then %q: every version on every set once",
				i/2, a.Comparison.Slices[i-1].CPUs, sa.CPUs, b.Comparison.Slices[i-1].CPUs, sb.CPUs)
		}
	}
	checkPaired(t, recs, analysis.PairedDuet, 3)
}

// TestCompareServerKilled kills a's server in the middle of a comparison:
// a's Record fails with the end of its error log, b's window goes on to its
// end, nothing hangs; --resume measures the comparison again, both
// versions.
func TestCompareServerKilled(t *testing.T) {
	needTools(t)
	p := parsePlan(t, comparePlan("slices"))
	out := t.TempDir()
	killed := make(chan int, 1)
	// The window opens 1 s after sysbench's threads start and lasts 6 s
	// of slices.
	whenWindowOpen(t, out, "a", "point-query_range=100", 1500*time.Millisecond, func(pid int) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill server %d: %v", pid, err)
		}
		killed <- pid
	})
	var progress syncBuffer
	sum, err := Run(context.Background(), p, testOptions(out, &progress))
	t.Logf("progress:\n%s", progress.String())
	if !errors.Is(err, ErrStepsFailed) {
		t.Errorf("run: %v, want ErrStepsFailed", err)
	}
	select {
	case <-killed:
	default:
		t.Fatal("the server was not killed")
	}
	recs := records(t, out)
	a, b := recs["a/point-query_range=100/t1/r1"], recs["b/point-query_range=100/t1/r1"]
	if a == nil || b == nil || sum.Failed != 1 || sum.OK != 1 {
		t.Fatalf("Records %v, summary %+v; want a failed and b ok", recs, sum)
	}
	if a.Outcome != record.OutcomeFailed || !strings.Contains(a.Error, "exited during the step") {
		t.Errorf("a: %s %q", a.Outcome, a.Error)
	}
	checkMeasured(t, "b", b)
	if b.Comparison == nil || len(b.Comparison.Slices) != 12 {
		t.Errorf("b's window did not go on to its end: %+v", b.Comparison)
	}
	noServerLeft(t, serverPids(recs)...)

	var again syncBuffer
	sum, err = Run(context.Background(), p, withResume(testOptions(out, &again)))
	t.Logf("resume:\n%s", again.String())
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	// Versions measured together pair only with each other: both again.
	if sum.Ran != 2 || sum.OK != 2 {
		t.Errorf("resume: %+v, want both measured again", sum)
	}
	recs = records(t, out)
	checkComparison(t, recs, record.ComparisonSlices, 12)
	noServerLeft(t, serverPids(recs)...)
}

// TestCompareInterrupted cancels the run in the middle of a comparison:
// both windows are written partial, and every server is stopped.
func TestCompareInterrupted(t *testing.T) {
	needTools(t)
	p := parsePlan(t, comparePlan("slices"))
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	whenWindowOpen(t, out, "a", "point-query_range=100", 1500*time.Millisecond, func(int) { cancel() })
	var progress syncBuffer
	sum, err := Run(ctx, p, testOptions(out, &progress))
	t.Logf("progress:\n%s", progress.String())
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("run: %v, want ErrInterrupted", err)
	}
	recs := records(t, out)
	for _, v := range []string{"a", "b"} {
		r := recs[v+"/point-query_range=100/t1/r1"]
		if r == nil {
			t.Errorf("no Record of %s", v)
			continue
		}
		if r.Outcome != record.OutcomePartial || !strings.Contains(r.Error, "interrupted") || r.Ops.Count <= 0 {
			t.Errorf("%s: %s %q ops %v, want partial with what was measured", v, r.Outcome, r.Error, r.Ops.Count)
		}
	}
	if sum.Partial != 2 {
		t.Errorf("summary %+v", sum)
	}
	noServerLeft(t, serverPids(recs)...)
}
