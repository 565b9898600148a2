package runner

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// parsePlan parses a plan written to a file in a temporary folder.
func parsePlan(t *testing.T, text string) *plan.Plan {
	t.Helper()
	p, err := loadPlanText(t, text)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}

// loadPlanText writes text to plan.toml in a temporary folder and loads it
// as perfbench run does.
func loadPlanText(t *testing.T, text string) (*plan.Plan, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return plan.Load(path)
}

const twoStepPlan = `
name = "unit"
[run]
warmup = "1s"
duration = "3s"
[data]
table_size = 1000
[steps]
list = ["point-query", "random-points", "my-step"]
[[steps.custom]]
name = "my-step"
command = ["sleep", "{time}"]
[[version]]
label = "a"
basedir = "installed"
[[version]]
label = "b"
basedir = "installed"
`

func TestSelectSteps(t *testing.T) {
	p := parsePlan(t, twoStepPlan)
	sel, err := selectSteps(p, []string{"random-points", "my-step"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range plan.Pending(p.Expand(), nil, sel) {
		if it.Action == plan.ActionMeasure {
			got = append(got, it.ID)
		}
	}
	// random-points has three ranges in the suite; every one is selected,
	// for both versions (measured together, step by step), with the
	// custom step.
	want := []string{
		"a/random-points_range=10/t1/r1", "b/random-points_range=10/t1/r1", "a/random-points_range=100/t1/r1", "b/random-points_range=100/t1/r1",
		"a/random-points_range=1000/t1/r1", "b/random-points_range=1000/t1/r1", "a/my-step/t1/r1", "b/my-step/t1/r1",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("selected\n%v\nwant\n%v", got, want)
	}

	sel, err = selectSteps(p, []string{"random-points_range=100"})
	if err != nil {
		t.Fatal(err)
	}
	if n := plan.Measurements(plan.Pending(p.Expand(), nil, sel)); n != 2 {
		t.Errorf("a label selects %d measurements, want 2 (one per version)", n)
	}

	_, err = selectSteps(p, []string{"point-qeury"})
	if !errors.Is(err, ErrUnknownStep) || !strings.Contains(err.Error(), `"point-query"`) {
		t.Errorf("misspelt step: %v, want ErrUnknownStep suggesting point-query", err)
	}
	// A step of the suite that the plan does not run is not selectable.
	if _, err := selectSteps(p, []string{"scan"}); !errors.Is(err, ErrUnknownStep) {
		t.Errorf("step outside the plan: %v, want ErrUnknownStep", err)
	}
	if sel, err := selectSteps(p, nil); sel != nil || err != nil {
		t.Errorf("no --only: %v, %v; want no filter", sel != nil, err)
	}
}

func TestOpSpec(t *testing.T) {
	for _, c := range []struct {
		ops  string
		per  float64
		want string
	}{
		{"Questions", 1, "Questions"},
		{"Rows_read", 1000, "Rows_read/1000"},
		{"Com_insert", 0, "Com_insert"},
		// Client counts say their per too: measure.ApplyClient divides.
		{"client.queries", 2, "client.queries/2"},
		{"client.events", 1, "client.events"},
	} {
		if got := opSpec(&plan.Step{Ops: c.ops, OpsPer: c.per}); got != c.want {
			t.Errorf("opSpec(%s, %v) = %q, want %q", c.ops, c.per, got, c.want)
		}
	}
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		4200 * time.Millisecond: "4.2s",
		0:                       "0.0s",
		187 * time.Second:       "3:07",
		3723 * time.Second:      "1:02:03",
	} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }

func TestProgressLinesAndETA(t *testing.T) {
	p := parsePlan(t, `
[run]
warmup = "2s"
duration = "5s"
[steps]
list = ["point-query", "read-only_range=100"]
[[version]]
label = "a"
basedir = "installed"
`)
	items := p.Expand()
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	pr := newProgress(&buf, false, 0, items, 2*time.Second)
	pr.now = clock.now
	pr.began = clock.t
	// Each measurement is planned at 2 + 5 + 2 (tail) + 1 (overhead) = 10 s.
	if pr.total != 2 || pr.plannedTotal != 20*time.Second {
		t.Fatalf("total %d, planned %v; want 2 and 20s", pr.total, pr.plannedTotal)
	}
	var ms []plan.Item
	for _, it := range items {
		if it.Action == plan.ActionMeasure {
			ms = append(ms, it)
		}
	}
	clock.add(4 * time.Second) // starting the server, loading
	pr.begin(1, ms[0])
	clock.add(10 * time.Second)
	rec := record.New(record.KindStep)
	rec.Ops = record.Ops{Source: "Questions", Count: 50000, Per: 1, Counted: true}
	rec.Window.Seconds = 5
	rec.Warnings = []record.Warning{{Code: record.WarnRoles, Text: "performance_schema is off: roles from thread names"}}
	pr.end(ms[0], rec, nil)
	// Half the planned time done in 14 s: the other half is expected to
	// take as long.
	pr.begin(2, ms[1])
	rec2 := record.New(record.KindStep)
	rec2.Outcome = record.OutcomeFailed
	rec2.Error = "sysbench ended with exit status 1\nmore"
	pr.end(ms[1], rec2, nil)

	want := "perfbench run: [1/2] a point-query_range=100 threads=1 repeat=1 (elapsed 4.0s, ETA 20.0s)\n" +
		"perfbench run: [1/2] a point-query_range=100 ok, 10000 Questions/s (warning: performance_schema is off: roles from thread names)\n" +
		"perfbench run: [2/2] a read-only_range=100 threads=1 repeat=1 (elapsed 14.0s, ETA 14.0s)\n" +
		"perfbench run: [2/2] a read-only_range=100 failed: sysbench ended with exit status 1\n"
	if got := buf.String(); got != want {
		t.Errorf("progress lines:\n%s\nwant:\n%s", got, want)
	}
}

func TestProgressBarOnTerminal(t *testing.T) {
	p := parsePlan(t, `
[run]
warmup = "2s"
duration = "5s"
[steps]
list = ["point-query", "read-only_range=100"]
[[version]]
label = "a"
basedir = "installed"
`)
	items := p.Expand()
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	pr := &progress{w: &buf, term: true, width: 200, now: clock.now, tail: 2 * time.Second, began: clock.t}
	for _, it := range items {
		if it.Action == plan.ActionMeasure {
			pr.total++
			pr.plannedTotal += pr.planned(it)
		}
	}
	pr.begin(1, items[2])
	clock.add(5 * time.Second)
	// A quarter of the planned 20 s is done: 5 of 20 bar cells.
	if got, want := pr.line(), "[#####...............] 1/2  elapsed 5.0s  ETA 15.0s  a point-query_range=100 threads=1 repeat=1"; got != want {
		t.Errorf("bar:\n%q\nwant\n%q", got, want)
	}
	buf.Reset()
	pr.printf("a message")
	// The bar is cleared, the message printed, the bar drawn again.
	if got := buf.String(); !strings.HasPrefix(got, "\r\x1b[Ka message\n\r\x1b[K[#####") {
		t.Errorf("message over the bar: %q", got)
	}
	pr.width = 52
	if got, want := pr.line(), "[#####...............] 1/2  elapsed 5.0s  ETA 15.0s"; got != want {
		t.Errorf("bar on a 52-column terminal: %q, want %q", got, want)
	}
}

// TestProfileOfStep: a step that samples gets a profile next to its Record's
// name, a step that does not gets none, and an event the machine lacks is
// an error naming the step.
func TestProfileOfStep(t *testing.T) {
	p := parsePlan(t, `
[run]
profile = 999
[steps]
list = ["point-query", "read-only_range=100"]
[steps.override."read-only_range=100"]
profile = 0
[[version]]
label = "a"
socket = "/s"
`)
	r := &runner{plan: p, recDir: "/out/records", profDir: "/out/profiles"}
	items := p.Expand()
	var sampled, plain plan.Item
	for _, it := range items {
		if it.Action != plan.ActionMeasure {
			continue
		}
		if it.Step.Label == "point-query_range=100" {
			sampled = it
		} else {
			plain = it
		}
	}
	prof, err := r.profile(sampled)
	if err != nil || prof == nil {
		t.Fatalf("profile of a sampled step: %+v, %v", prof, err)
	}
	if prof.Path != "/out/profiles/a__point-query_range=100__t1__r1.pb.gz" || prof.RecordFile != "/out/records/a__point-query_range=100__t1__r1.json" ||
		prof.Sample.Freq != 999 || prof.Version != "a" || prof.Step != "point-query_range=100" {
		t.Errorf("profile %+v", prof)
	}
	if prof, err := r.profile(plain); prof != nil || err != nil {
		t.Errorf("a step with profile = 0 samples: %+v, %v", prof, err)
	}

	sampled.Step.ProfileEvent = "no-such-event-anywhere"
	r.sys = &perfevent.System{}
	if _, err := r.profile(sampled); err == nil || !strings.Contains(err.Error(), "profile_event of step point-query_range=100: ") {
		t.Errorf("an unknown event: %v", err)
	}
}

// TestSetAsideProfile: a measurement run again with --resume moves its
// earlier Record, load log and profile aside, none overwritten.
func TestSetAsideProfile(t *testing.T) {
	p := parsePlan(t, twoStepPlan)
	out := t.TempDir()
	r := &runner{plan: p, recDir: filepath.Join(out, "records"), logDir: filepath.Join(out, "logs"), profDir: filepath.Join(out, "profiles")}
	var it plan.Item
	for _, x := range p.Expand() {
		if x.Action == plan.ActionMeasure && x.Step.Label == "point-query_range=100" {
			it = x
			break
		}
	}
	written := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rec := &record.Record{Version: "a", Step: "point-query_range=100", Threads: 1, Repeat: 1}
	rec.Provenance.Written = written
	recPath := filepath.Join(r.recDir, record.FileName(rec))
	for _, f := range []string{recPath, r.logPath(it), r.profilePath(it)} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("earlier"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.existing = map[string]record.Loaded{it.ID: {Path: recPath, Record: rec}}
	r.setAside(it)
	for _, want := range []string{
		filepath.Join(out, "records", ".replaced", "a__point-query_range=100__t1__r1.20260304T050607Z.json"),
		filepath.Join(out, "logs", ".replaced", "a__point-query_range=100__t1__r1.sysbench.20260304T050607Z.txt"),
		filepath.Join(out, "profiles", ".replaced", "a__point-query_range=100__t1__r1.20260304T050607Z.pb.gz"),
	} {
		if b, err := os.ReadFile(want); err != nil || string(b) != "earlier" {
			t.Errorf("%s: %q, %v", want, b, err)
		}
	}
	if _, err := os.Stat(r.profilePath(it)); !os.IsNotExist(err) {
		t.Errorf("the earlier profile is still in place: %v", err)
	}
}

// TestSummaryDataDirectories: the summary offers the managed servers' data
// for --resume, except when the caller removes it after a run where every
// measurement succeeded.
func TestSummaryDataDirectories(t *testing.T) {
	for _, tc := range []struct {
		removed     bool
		failed      int
		interrupted bool
		offered     bool
	}{
		{false, 0, false, true},
		{true, 0, false, false},
		{true, 1, false, true},
		{true, 0, true, true},
	} {
		var b bytes.Buffer
		r := &runner{
			plan:    &plan.Plan{Base: "a", File: "p.toml"},
			opts:    Options{Progress: &b, DataRemovedWhenOK: tc.removed},
			out:     "/o",
			servers: map[string]*server{"a": {v: &plan.Version{Label: "a", Managed: &plan.Managed{}}}},
			sum:     &Summary{Ran: 2, OK: 2 - tc.failed, Failed: tc.failed},
		}
		r.summary(tc.interrupted)
		if got := strings.Contains(b.String(), "data directories stay in /o/servers for --resume"); got != tc.offered {
			t.Errorf("%+v: data offered for --resume: %v, want %v\n%s", tc, got, tc.offered, b.String())
		}
	}
}

func TestProgressWarnings(t *testing.T) {
	items := parsePlan(t, "[steps]\nlist = [\"point-query\"]\n[[version]]\nlabel = \"a\"\nbasedir = \"installed\"\n").Expand()
	var buf bytes.Buffer
	pr := newProgress(&buf, false, 0, items, time.Second)
	rec := record.New(record.KindStep)
	rec.Warnings = []record.Warning{{Code: record.WarnGeneral, Text: strings.Repeat("x", 120) + "\nsecond line"}, {Code: record.WarnGeneral, Text: "another"}}
	var m plan.Item
	for _, it := range items {
		if it.Action == plan.ActionMeasure {
			m = it
		}
	}
	pr.end(m, rec, nil)
	want := " ok (2 warnings in the Record; the first: " + strings.Repeat("x", 97) + "...)\n"
	if !strings.HasSuffix(buf.String(), want) {
		t.Errorf("got %q, want it to end with %q", buf.String(), want)
	}
}
