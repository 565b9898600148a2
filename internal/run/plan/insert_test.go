package plan

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/load/insertbench"
	"github.com/perfbench/perfbench/internal/load/suite"
)

const insertPlan = `
[insert]
tables = 3
rows = 5000
insert_rows = 2000
duration = "4s"

[insert.step."l.i2"]
rows = 700

[insert.step."qp500"]
rate = 50

[steps]
list = ["l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp500", "point-query"]

[[version]]
label = "a"
socket = "/run/mysqld.sock"
`

// The insert-benchmark steps take their settings from [insert] and
// [insert.step."NAME"], run at their clients (one per table) as the
// thread count, the l steps until their rows are in and the q steps for
// their duration, and mix with sysbench steps.
func TestInsertSteps(t *testing.T) {
	p := mustParse(t, insertPlan)
	if len(p.Steps) != 7 {
		t.Fatalf("%d steps, want 7", len(p.Steps))
	}
	want := []struct {
		label          string
		rows           int64
		rowsPerCommit  int
		rate           int
		duration       time.Duration
		kind           any // an insertbench kind
		point          bool
		rowsPerQueryOK bool
	}{
		{"l.i0", 5000, 100, 0, 0, insertbench.Load, false, false},
		{"l.x", 0, 0, 0, 0, insertbench.Index, false, false},
		{"l.i1", 2000, 50, 0, 0, insertbench.Insert, false, false},
		{"l.i2", 700, 5, 0, 0, insertbench.Insert, false, false},
		{"qr100", 0, 100, 100, 4 * time.Second, insertbench.Query, false, true},
		{"qp500", 0, 50, 50, 4 * time.Second, insertbench.Query, true, true},
	}
	for i, w := range want {
		st := p.Steps[i]
		o := st.Insert
		if st.Label != w.label || o == nil {
			t.Fatalf("step %d: %s, insert %v; want %s", i, st.Label, o, w.label)
		}
		if o.Rows != w.rows || o.RowsPerCommit != w.rowsPerCommit || o.Rate != w.rate || o.Duration != w.duration ||
			o.Step.Kind != w.kind || o.Step.Point != w.point || o.Tables != 3 || (o.RowsPerQuery > 0) != w.rowsPerQueryOK {
			t.Errorf("%s: options %+v", w.label, *o)
		}
		if st.Group != suite.GroupInsert || !st.Write || st.Suite != nil || st.Command != nil ||
			len(st.Threads) != 1 || st.Threads[0] != 3 || st.Warmup != 0 || st.Duration != w.duration || st.Ops != "client.events" {
			t.Errorf("%s: step %+v", w.label, st)
		}
	}
	if st := p.Steps[6]; st.Insert != nil || st.Suite == nil {
		t.Errorf("point-query: %+v", st)
	}
}

// Bad insert-benchmark settings are plan errors at their lines, before
// anything runs.
func TestInsertStepErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // "line: fragment"
	}{
		{"unknown step", `
[steps]
list = ["l.i0", "l.i3"]
`, []string{"3: unknown insert-benchmark step"}},
		{"a label of imported runs", `
[steps]
list = ["l.i0", "q100.1"]
`, []string{"3: unknown insert-benchmark step"}},
		{"custom step with an insert-benchmark name", `
[steps]
list = ["qr100"]

[[steps.custom]]
name = "qr100"
command = ["true"]
`, []string{`6: custom step "qr100" has the name of an insert-benchmark step`}},
		{"rate 0 in the name", `
[steps]
list = ["l.i0", "l.x", "qr0"]
`, []string{"3: the insert rate in the name must be a whole number above 0"}},
		{"rate and rows per commit", `
[insert]
rows = 100

[insert.step."qr100"]
rate = -5
rows_per_commit = 0

[steps]
list = ["l.i0", "l.x", "qr100"]
`, []string{"6: insert-benchmark step qr100: rate = -5", "7: insert-benchmark step qr100: rows_per_commit = 0"}},
		{"rows", `
[insert]
rows = 0

[steps]
list = ["l.i0"]
`, []string{"3: insert-benchmark step l.i0: rows = 0: must be 1 or more"}},
		{"tables", `
[insert]
tables = 0

[steps]
list = ["l.i0"]
`, []string{"3: insert-benchmark step l.i0: tables = 0"}},
		{"q step before the tables", `
[steps]
list = ["qp100", "l.i0"]
`, []string{"3: step qp100: the tables do not exist yet: run l.i0 first"}},
		{"l.i1 before l.x", `
[steps]
list = ["l.i0", "l.i1"]
`, []string{"3: step l.i1: the secondary indexes do not exist yet: run l.x first"}},
		{"override", `
[steps]
list = ["l.i0"]

[steps.override."l.i0"]
duration = "5s"
`, []string{`5: steps.override.l.i0: l.i0 is an insert-benchmark step: set it in [insert.step."l.i0"]`}},
		{"a step no insert benchmark has", `
[insert.step."l.i3"]
rows = 10

[steps]
list = ["l.i0"]
`, []string{`2: insert-benchmark step l.i3: step = l.i3: unknown insert-benchmark step; the steps are l.i0, l.x, l.i1, l.i2, qr100`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src + `
[[version]]
label = "a"
socket = "/run/mysqld.sock"
`
			got := parseErrors(t, src)
			for _, w := range tc.want {
				line, frag, _ := strings.Cut(w, ": ")
				found := false
				for _, g := range got {
					found = found || strings.HasPrefix(g, line+": ") && strings.Contains(g, frag)
				}
				if !found {
					t.Errorf("no error %q in %q", w, got)
				}
			}
		})
	}
}

// One rule says which steps are the insert benchmark's: every step its
// driver runs is one (and in its group), a sysbench or other name is not.
func TestInsertStepOneRule(t *testing.T) {
	for _, name := range []string{"l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr1000", "qp7"} {
		if _, err := insertbench.ParseStep(name); err != nil {
			t.Errorf("insertbench does not run %s: %v", name, err)
		}
		if !suite.IsInsertStep(name) || suite.GroupOf(name) != suite.GroupInsert {
			t.Errorf("%s: IsInsertStep %v, group %s", name, suite.IsInsertStep(name), suite.GroupOf(name))
		}
	}
	for _, name := range []string{"point-query", "read-only_range=100", "l", "qr", "qr100x", "my.step"} {
		if _, err := insertbench.ParseStep(name); err == nil || suite.IsInsertStep(name) {
			t.Errorf("%s: taken for an insert-benchmark step", name)
		}
	}
}

// A step of the benchmark set in [insert.step] but left out of steps.list
// is a warning, as in steps.override: a user who shortens the list of the
// example plan keeps its settings for the steps left out.
func TestInsertStepNotSelected(t *testing.T) {
	src := `
[insert.step."l.i2"]
rows = 10

[steps]
list = ["l.i0"]

[[version]]
label = "a"
socket = "/run/mysqld.sock"
`
	p, err := parse("plan.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if want := `insert.step."l.i2": l.i2 is not among the selected steps`; !slices.Contains(p.Warnings, want) {
		t.Errorf("warnings %q, want %q", p.Warnings, want)
	}
	if len(p.Steps) != 1 || p.Steps[0].Label != "l.i0" {
		t.Errorf("steps %+v, want l.i0 alone", p.Steps)
	}
}

// The example plan parses: every step of the benchmark, in its order.
func TestInsertExamplePlan(t *testing.T) {
	t.Setenv("PERFBENCH_SECOND_BASEDIR", "")
	b, err := os.ReadFile("../../../examples/plans/insert.toml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := parse("../../../examples/plans/insert.toml", b)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, st := range p.Steps {
		labels = append(labels, st.Label)
		if st.Insert == nil || st.Insert.Tables != 2 {
			t.Errorf("%s: %+v", st.Label, st.Insert)
		}
	}
	if got := strings.Join(labels, " "); got != "l.i0 l.x l.i1 l.i2 qr100 qp100 qr500 qp500 qr1000 qp1000" {
		t.Errorf("steps %s", got)
	}
	if p.Data.Load {
		t.Errorf("the example loads sysbench tables it does not use")
	}
}
