package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

// budgetPlan counts six software events over three repeats of one short
// step.
const budgetPlan = `
name = "budget"
[run]
repeats = 3
warmup = "1s"
duration = "1s"
events = ["cpu-clock", "context-switches", "cpu-migrations", "page-faults", "minor-faults", "major-faults"]
[data]
table_size = 1000
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`

// TestRunPMUBudgetRotation runs a plan of 6 software events with
// --pmu-budget 2 and 3 repeats on a real server and sysbench: each repeat
// counts 2 of them and task-clock, all counted the whole window; the report
// has a per-op value for each of the 6, none marked multiplexed, and a note
// on which repeat counted what.
func TestRunPMUBudgetRotation(t *testing.T) {
	testenv.SkipIfShort(t, "starts a server and runs sysbench")
	testdb.NeedServer(t)
	testdb.NeedSysbench(t)
	path := writeRunPlan(t, budgetPlan)
	out := t.TempDir()
	code, _, errs := runCLI(t, "run", path, "--out", out, "--pmu-budget", "2")
	t.Logf("run:\n%s", errs)
	if code != 0 {
		t.Fatalf("run: exit %d", code)
	}
	groups := [][]string{{"cpu-clock", "context-switches"}, {"cpu-migrations", "page-faults"}, {"minor-faults", "major-faults"}}
	if !strings.Contains(errs, "counted in rotation, one group a repeat, none multiplexed: repeat 1: cpu-clock, "+
		"context-switches; repeat 2: cpu-migrations, page-faults; repeat 3: minor-faults, major-faults") {
		t.Errorf("the run did not say how the events rotate")
	}
	loaded, problems, err := record.Load([]string{filepath.Join(out, "records")}, false)
	if err != nil || len(problems) > 0 || len(loaded) != 3 {
		t.Fatalf("records: %d, %v %v", len(loaded), err, problems)
	}
	for _, l := range loaded {
		r := l.Record
		if r.Outcome != record.OutcomeOK {
			t.Fatalf("repeat %d: %s %s", r.Repeat, r.Outcome, r.Error)
		}
		g := r.Repeat - 1
		if r.Rotation == nil || r.Rotation.Group != g+1 || r.Rotation.Budget != 2 || r.Rotation.Source != "--pmu-budget" ||
			!slices.Equal(r.Rotation.Anchors, []string{"task-clock"}) || !slices.EqualFunc(r.Rotation.Groups, groups, slices.Equal) {
			t.Errorf("repeat %d: rotation %+v", r.Repeat, r.Rotation)
		}
		var got []string
		for _, c := range r.Counters {
			got = append(got, c.Event)
			// Counted the whole window: no multiplexing.
			if c.Status != record.StatusCounted || c.Running != c.Enabled || c.Enabled == 0 {
				t.Errorf("repeat %d: %s %s running %d of %d ns", r.Repeat, c.Event, c.Status, c.Running, c.Enabled)
			}
		}
		want := append([]string{"task-clock"}, groups[g]...)
		if !slices.Equal(got, want) {
			t.Errorf("repeat %d counted %v, want %v", r.Repeat, got, want)
		}
		for _, w := range r.Warnings {
			if w.Code == record.WarnMultiplexed || w.Code == record.WarnNotCounted {
				t.Errorf("repeat %d: warning %s: %s", r.Repeat, w.Code, w.Text)
			}
		}
	}

	code, report, errs := runCLI(t, "report", filepath.Join(out, "records"), "--tables", "counters")
	t.Logf("report:\n%s%s", report, errs)
	if code != 0 {
		t.Fatalf("report: exit %d", code)
	}
	for _, g := range groups {
		for _, e := range g {
			// A value from 1 of the 3 repeats: "[1/3]", never "(N%)".
			line := rowOf(report, e, "point-query_range=100")
			if line == "" || !strings.Contains(line, "[1/3]") || strings.Contains(line, "%)") || strings.Contains(line, " - ") {
				t.Errorf("report row of %s: %q", e, line)
			}
		}
	}
	if !strings.Contains(report, "events counted in rotation so that none multiplexed, 2 a repeat besides task-clock (--pmu-budget): group 1: cpu-clock, context-switches; group 2: cpu-migrations, page-faults; group 3: minor-faults, major-faults") {
		t.Errorf("the report has no note on which repeat counted what")
	}
	if strings.Contains(report, "multiplexed and counted") {
		t.Errorf("the report explains a multiplexed mark")
	}
}

// rowOf is the row of step in the table of event's values per operation
// ("EVENT per operation (host ...)" or "EVENT ns per operation ...").
func rowOf(text, event, step string) string {
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, event+" ") && strings.Contains(line, "per operation") {
			in = true
		}
		if in && strings.HasSuffix(line, " "+step) {
			return line
		}
	}
	return ""
}
