package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

const autoPlan = `
[run]
repeats = "auto"
precision = 0.02
max_repeats = 8
threads = [1, 2]
[steps]
list = ["point-query", "update-index", "read-only_range=100"]
[[version]]
label = "a"
basedir = "installed"
[[version]]
label = "b"
basedir = "installed"
options = ["skip-log-bin"]
`

// qpsRecord is a Record of 10 s with qps × 10 operations.
func qpsRecord(version, step string, threads, repeat int, qps float64) *record.Record {
	r := record.New(record.KindStep)
	r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h", version, step, threads, repeat
	r.Window.Seconds = 10
	r.Ops = record.Ops{Source: "Questions", Count: qps * 10, Per: 1, Counted: true}
	return r
}

// TestSettled: the stopping rule on hand-made throughputs. b against a:
// point-query at 1 thread steady (b/a = 1.10 ± 0.2%), at 2 threads
// spread by ±10%; update-index steady but with 5 repeats only (no
// interval yet); read-only not measured at 2 threads.
func TestSettled(t *testing.T) {
	p := parsePlan(t, autoPlan)
	var recs []*record.Record
	add := func(step string, threads, n int, b func(i int) float64) {
		for i := range n {
			recs = append(recs, qpsRecord("a", step, threads, i+1, 1000+float64(i)), qpsRecord("b", step, threads, i+1, b(i)))
		}
	}
	pq, ui, ro := p.Steps[0].Label, p.Steps[1].Label, p.Steps[2].Label
	add(pq, 1, 6, func(i int) float64 { return 1100 + 1.1*float64(i) })
	add(pq, 2, 6, func(i int) float64 { return []float64{1000, 1200, 900, 1100, 1050, 950}[i] })
	add(ui, 1, 5, func(i int) float64 { return 500 })
	add(ro, 1, 7, func(i int) float64 { return 999 + float64(i) })
	got := settled(recs, p)
	want := map[cell]bool{{pq, 1}: true, {ro, 1}: true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("settled %v, want %v", got, want)
	}
	// A failed repeat of the version leaves 5 values: no interval.
	recs[1].Outcome = record.OutcomeFailed
	if got := settled(recs, p); got[cell{pq, 1}] {
		t.Errorf("5 ok repeats of b settled point-query: %v", got)
	}
	// c, the A/A twin of b: b and c against a have ±1% intervals, c
	// against b ±1.5% (0.9852–1.0101 around 1.00). At ±1.2% the cell is
	// settled when c is just another version, not when c is b's twin.
	a, b, c := []float64{1000, 1000, 1000, 1000, 1000, 1000, 1000}, []float64{985, 990, 1000, 1000, 1010, 1015, 1000},
		[]float64{1015, 1010, 1000, 1000, 990, 985, 1000}
	var three []*record.Record
	for i := range 7 {
		three = append(three, qpsRecord("a", ro, 1, i+1, a[i]), qpsRecord("b", ro, 1, i+1, b[i]), qpsRecord("c", ro, 1, i+1, c[i]))
	}
	p3 := *p
	p3.Auto = &plan.AutoRepeats{Precision: 0.012, Max: 8}
	p3.Versions = append(append([]plan.Version(nil), p.Versions...), plan.Version{Label: "c"})
	if got := settled(three, &p3); !got[cell{ro, 1}] {
		t.Errorf("b and c at ±1%% against a, not settled at ±1.2%%: %v", got)
	}
	p3.Versions[2].AAOf = "b"
	if got := settled(three, &p3); got[cell{ro, 1}] {
		t.Errorf("c's floor against b is ±1.5%%, yet settled at ±1.2%%: %v", got)
	}
	p.Auto = nil
	if got := settled(recs, p); len(got) > 0 {
		t.Errorf("a plan without repeats = auto settled %v", got)
	}
}

// TestDropDone: dropping the settled cells from the rest of the run takes
// their measurements, the flushes before them and the start and stop of a
// server with nothing left to measure out, and the rest stays in order.
func TestDropDone(t *testing.T) {
	// Versions in windows of their own, one block after the other: a
	// server's start and stop go with the block.
	p := parsePlan(t, strings.Replace(autoPlan, "[run]", "[run]\ncompare = \"windows\"", 1))
	items := p.Expand()
	// From round 7 on, everything of update-index and read-only at 1
	// thread, and all of version b's point-query, is done.
	var rest []plan.Item
	for _, it := range items {
		if it.Repeat >= 7 {
			rest = append(rest, it)
		}
	}
	done := func(it plan.Item) bool {
		return it.Step.Suite.Name == "update-index" || (it.Step.Label == "read-only_range=100" && it.Threads == 1) ||
			it.Step.Suite.Name == "point-query"
	}
	kept, dropped := dropDone(rest, done)
	var ids []string
	for _, it := range kept {
		ids = append(ids, it.ID)
	}
	want := "start/a/r7 a/read-only_range=100/t2/r7 stop/a/r7 start/b/r7 b/read-only_range=100/t2/r7 stop/b/r7 " +
		"start/a/r8 a/read-only_range=100/t2/r8 stop/a/r8 start/b/r8 b/read-only_range=100/t2/r8 stop/b/r8"
	if strings.Join(ids, " ") != want {
		t.Errorf("kept\n%s\nwant\n%s", strings.Join(ids, " "), want)
	}
	if len(dropped) != 2*2*5 {
		t.Errorf("%d measurements dropped, want 20 (2 rounds × 2 versions × 5)", len(dropped))
	}
	// Nothing left: no server starts.
	kept, _ = dropDone(rest, func(plan.Item) bool { return true })
	if len(kept) != 0 {
		t.Errorf("all done, yet kept %v", kept)
	}
	// The flush before a read step after update-index goes with it.
	flushes := 0
	for _, it := range rest {
		if it.Action == plan.ActionFlush {
			flushes++
		}
	}
	if flushes == 0 {
		t.Fatal("the plan has no flush to drop")
	}
	kept, _ = dropDone(rest, func(it plan.Item) bool { return it.Step.Label == "read-only_range=100" })
	for _, it := range kept {
		if it.Action == plan.ActionFlush {
			t.Errorf("kept %s before a dropped measurement", it.ID)
		}
	}
	kept, _ = dropDone(rest, func(plan.Item) bool { return false })
	if len(kept) != len(rest) {
		t.Errorf("nothing done: kept %d of %d items", len(kept), len(rest))
	}
}

// TestRetryBusy: a busy window is measured again up to retry_busy times;
// the Record kept says how many were measured before it; a quiet window,
// retry_busy = 0, a failed window and an interrupted run are not measured
// again.
func TestRetryBusy(t *testing.T) {
	mk := func(busyWindow bool, outcome record.Outcome) *record.Record {
		r := qpsRecord("a", "point-query", 1, 1, 1000)
		r.Outcome = outcome
		r.Interference = &record.Interference{OtherSeconds: 0.05, Seconds: 10, HostCPUs: 2}
		if busyWindow {
			r.Interference.OtherSeconds = 9
			r.AddWarning(record.Warning{Code: record.WarnBusy, Text: "busy host"})
		}
		return r
	}
	it := plan.Item{Action: plan.ActionMeasure, ID: "a/point-query/t1/r1"}
	for _, c := range []struct {
		name    string
		retry   int
		windows []bool // busy or not, first one included
		outcome record.Outcome
		cancel  bool
		calls   int
		last    bool // the Record returned is busy
		note    string
	}{
		{"busy then quiet", 2, []bool{true, false}, record.OutcomeOK, false, 1, false, "measured 1 more time(s) because the " +
			"window was busy (retry_busy = 2): other processes used 0.90 CPU"},
		{"busy thrice", 2, []bool{true, true, true}, record.OutcomeOK, false, 2, true, "measured 2 more time(s) because the " +
			"window was busy (retry_busy = 2): other processes used 0.90, 0.90 CPU"},
		{"quiet", 2, []bool{false}, record.OutcomeOK, false, 0, false, ""},
		{"no retries", 0, []bool{true}, record.OutcomeOK, false, 0, true, ""},
		{"failed", 2, []bool{true}, record.OutcomeFailed, false, 0, true, ""},
		{"interrupted", 2, []bool{true}, record.OutcomeOK, true, 0, true, ""},
	} {
		var progress bytes.Buffer
		r := &runner{plan: &plan.Plan{RetryBusy: c.retry}, prog: newProgress(&progress, false, 0, nil, 0)}
		ctx, cancel := context.WithCancel(context.Background())
		if c.cancel {
			cancel()
		}
		calls := 0
		rec := r.retryBusy(ctx, it, mk(c.windows[0], c.outcome), func() *record.Record {
			calls++
			return mk(c.windows[calls], c.outcome)
		})
		cancel()
		notes := strings.Join(rec.WarningTexts(), "\n")
		if calls != c.calls || busy(rec) != c.last || (c.note == "") != !strings.Contains(notes, "more time(s)") || !strings.Contains(notes, c.note) {
			t.Errorf("%s: %d measured again (want %d), last busy %v (want %v), warnings %q", c.name, calls, c.calls, busy(rec), c.last, notes)
		}
		if said := strings.Count(progress.String(), "measuring it again"); said != c.calls {
			t.Errorf("%s: said %d times: %s", c.name, said, progress.String())
		}
	}
}

// TestAutoRoundsDropped: a run of repeats = "auto" resumed after 6 rounds
// measures in round 7 only the step whose rQPS are not yet precise (its
// measurements fail: no server answers), says which steps are, and none
// at all when every step is.
func TestAutoRoundsDropped(t *testing.T) {
	p := parsePlan(t, `
[run]
repeats = "auto"
max_repeats = 7
warmup = "1s"
duration = "1s"
[data]
load = false
[steps]
list = ["steady", "noisy"]
[[steps.custom]]
name = "steady"
command = ["true"]
[[steps.custom]]
name = "noisy"
command = ["true"]
[[version]]
label = "a"
socket = "/nonexistent/perfbench-test.sock"
[[version]]
label = "b"
socket = "/nonexistent/perfbench-test.sock"
`)
	for _, noisy := range []bool{true, false} {
		out := t.TempDir()
		recDir := filepath.Join(out, "records")
		if err := os.MkdirAll(recDir, 0o755); err != nil {
			t.Fatal(err)
		}
		spread := []float64{1000, 1200, 900, 1100, 1050, 950}
		for i := range 6 {
			for _, rec := range []*record.Record{
				qpsRecord("a", "steady", 1, i+1, 1000+float64(i)), qpsRecord("b", "steady", 1, i+1, 1100+float64(i)),
				qpsRecord("a", "noisy", 1, i+1, 1000+float64(i)), qpsRecord("b", "noisy", 1, i+1, 1000+float64(i)),
			} {
				if noisy && rec.Version == "b" && rec.Step == "noisy" {
					rec.Ops.Count = 10 * spread[i]
				}
				if err := record.Write(filepath.Join(recDir, record.FileName(rec)), rec); err != nil {
					t.Fatal(err)
				}
			}
		}
		var progress syncBuffer
		sum, err := Run(context.Background(), p, Options{Out: out, Resume: true, Progress: &progress})
		said := progress.String()
		if !noisy {
			if err != nil || sum.Ran != 0 || !strings.Contains(said, "perfbench run: repeats = auto: rQPS within ±2% after 6 "+
				"repeats, no more rounds of steady at 1 thread, noisy at 1 thread\n") {
				t.Errorf("every step precise: ran %d, %v:\n%s", sum.Ran, err, said)
			}
			continue
		}
		if sum == nil || sum.Ran != 2 || sum.Failed != 2 || !strings.Contains(said, "no more rounds of steady at 1 thread\n") {
			t.Fatalf("noisy b: %+v, %v:\n%s", sum, err, said)
		}
		for _, f := range sum.Files {
			if !strings.Contains(f, "__noisy__t1__r7.json") {
				t.Errorf("measured %s", f)
			}
		}
		rec, rerr := record.Read(sum.Files[0])
		if rerr != nil || rec.AutoRepeats == nil || *rec.AutoRepeats != (record.AutoRepeats{Precision: 0.02, Max: 7, Base: "a"}) {
			t.Errorf("round 7's Record: auto_repeats %+v, %v", rec.AutoRepeats, rerr)
		}
	}
}
