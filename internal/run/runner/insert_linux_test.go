package runner

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/report"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

// tinyInsertPlan runs every step of the insert benchmark at a size that
// takes seconds: 2 tables of 3,000 rows, q steps of 2-3 s, and a q step
// whose target (100,000 inserts/s per client) this machine cannot reach.
const tinyInsertPlan = `
name = "insert-tiny"

[run]
events = ["task-clock", "context-switches"]

[data]
load = false

[insert]
tables = 2
rows = 3000
insert_rows = 2000
duration = "2s"

[insert.step."l.i2"]
rows = 500

[insert.step."qr100"]
duration = "3s"

[steps]
list = ["l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr100000"]

[[version]]
label = "installed"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M", "max_connections=50"]
`

// TestInsertBenchmarkPlan runs every insert-benchmark step through
// perfbench run on a real server and checks its Records and the report's
// seed-004 tables made from them.
func TestInsertBenchmarkPlan(t *testing.T) {
	testenv.SkipIfShort(t, "starts a server")
	testdb.NeedServer(t)
	p, err := loadPlanText(t, tinyInsertPlan)
	if err != nil {
		t.Fatal(err)
	}
	out, _, sum, recs := runOK(t, p)
	steps := []string{"l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr100000"}
	if len(recs) != len(steps) || sum.OK != len(steps) {
		t.Fatalf("%d Records, summary %+v; want %d ok", len(recs), sum, len(steps))
	}
	get := func(step string) *record.Record {
		r := recs["installed/"+step+"/t2/r1"] // the measurement ID: version/step/threads/repeat
		if r == nil || r.Insert == nil || r.Client == nil {
			t.Fatalf("%s: Record %+v", step, r)
		}
		return r
	}
	// The server and the driver are placed as sysbench and its server
	// would be at these threads (the default placement: both on the
	// same CPUs): the driver is a process of its own, pinned there, its
	// CPU time its own.
	for _, step := range steps {
		r := get(step)
		pl := r.Provenance.Placement
		if pl == nil || pl.Client == "" || pl.ClientAllowed != pl.Client || pl.Server != pl.Client || pl.ServerAllowed != pl.Server {
			t.Errorf("%s: placement %+v; want the server and the driver pinned to the same CPUs", step, pl)
		}
		if r.Interference == nil || !r.Interference.ClientKnown {
			t.Errorf("%s: interference %+v: the driver is not known as the load client", step, r.Interference)
		}
		if in := r.Insert; in.DriverCPUSeconds <= 0 || in.DriverPeakRSSBytes <= 0 {
			t.Errorf("%s: the driver's CPU %v s, peak RSS %v bytes", step, in.DriverCPUSeconds, in.DriverPeakRSSBytes)
		}
	}
	sumHist := func(h []record.Bucket) float64 {
		n := 0.0
		for _, b := range h {
			n += b.Count
		}
		return n
	}
	for _, step := range steps {
		r := get(step)
		if r.Outcome != record.OutcomeOK || r.Group != "insert" || r.Threads != 2 {
			t.Errorf("%s: outcome %s (%s), group %q, threads %d", step, r.Outcome, r.Error, r.Group, r.Threads)
		}
		// Measured like a sysbench step: counters, /proc, series, and the
		// op count is the driver's main operations inside the window.
		if len(r.Counters) == 0 || r.OS == nil || r.OS.RSSBytes <= 0 || len(r.Series) == 0 {
			t.Errorf("%s: counters %d, os %+v, %d series points", step, len(r.Counters), r.OS, len(r.Series))
		}
		if !r.Ops.Counted || r.Ops.Source != "client.events" || r.Ops.Count != r.Client.Events || r.Client.Events <= 0 {
			t.Errorf("%s: ops %+v, client events %v", step, r.Ops, r.Client.Events)
		}
		if r.Client.Started.Before(r.Window.Start) || r.Client.Started.Add(secs(r.Client.Seconds)).After(r.Window.End) {
			t.Errorf("%s: the load (%s, %.3f s) is not inside the window %s-%s", step, r.Client.Started, r.Client.Seconds, r.Window.Start, r.Window.End)
		}
		if r.Insert.DBGBLogical <= 0 || r.Insert.DBGBDir <= r.Insert.DBGBLogical {
			t.Errorf("%s: database %v GB, data directory %v GB", step, r.Insert.DBGBLogical, r.Insert.DBGBDir)
		}
		for _, w := range r.Warnings {
			// The load is perfbench's own: never "not started by perfbench".
			if strings.Contains(w.Text, "after the step") || strings.Contains(w.Text, "holes") || strings.Contains(w.Text, "not started by perfbench") {
				t.Errorf("%s: %s", step, w.Text)
			}
		}
		// The histograms count every statement: rows / rows per commit
		// for inserts and deletes, every query.
		o := p.Steps[slices.IndexFunc(p.Steps, func(s plan.Step) bool { return s.Label == step })].Insert
		in := r.Insert
		want := map[string]float64{}
		switch step {
		case "l.i0":
			want["insert"] = 2 * 3000 / 100
		case "l.i1":
			want["insert"], want["delete"] = 2*2000/50, 2*2000/50
		case "l.i2":
			want["insert"], want["delete"] = 2*500/5, 2*500/5
		case "l.x":
		default:
			want["query"] = in.Queries
		}
		for kind, n := range want {
			if got := sumHist(in.Histograms[kind]); got != n || n <= 0 {
				t.Errorf("%s: %s histogram counts %v operations, want %v", step, kind, got, n)
			}
		}
		if o.Step.Main() == "" {
			continue
		}
		if got, n := sumHist(in.Histogram), sumHist(in.Histograms[o.Step.Main()]); got != n {
			t.Errorf("%s: main histogram %v operations, its kind's %v", step, got, n)
		}
	}

	// Rows: l.i0 loads, l.x indexes them, l.i1 and l.i2 keep the size.
	if r := get("l.i0"); r.Insert.Inserts != 6000 || r.Insert.RowsAfter != 6000 {
		t.Errorf("l.i0: %v inserted, %v rows after", r.Insert.Inserts, r.Insert.RowsAfter)
	}
	if r := get("l.x"); r.Insert.Inserts != 6000 || r.Insert.Queries != 0 {
		t.Errorf("l.x: %v rows indexed", r.Insert.Inserts)
	}
	li1, li2 := get("l.i1"), get("l.i2")
	if li1.Insert.Inserts != 4000 || li1.Insert.RowsBefore != 6000 || li1.Insert.RowsAfter != 6000 || li2.Insert.RowsBefore != li1.Insert.RowsAfter {
		t.Errorf("queue: l.i1 inserted %v, rows %v before and %v after; l.i2 found %v", li1.Insert.Inserts,
			li1.Insert.RowsBefore, li1.Insert.RowsAfter, li2.Insert.RowsBefore)
	}
	for _, step := range []string{"qr100", "qp100", "qr100000"} {
		if r := get(step); r.Insert.RowsBefore != 6000 || r.Insert.RowsAfter != 6000 {
			t.Errorf("%s: rows %v before, %v after", step, r.Insert.RowsBefore, r.Insert.RowsAfter)
		}
	}

	// Rates: in qr100 the writers insert 100 rows/s each, every second.
	qr := get("qr100")
	if qr.Insert.TargetInsertsPerSecond != 200 {
		t.Errorf("qr100: target %v, want 200", qr.Insert.TargetInsertsPerSecond)
	}
	ivs := qr.Client.Intervals
	if len(ivs) < 3 {
		t.Fatalf("qr100: %d per-second lines", len(ivs))
	}
	var totals []float64
	queries := 0.0
	prev := 0.0
	for i, iv := range ivs {
		queries += iv.QPS * (iv.At - prev)
		prev = iv.At
		if i == len(ivs)-1 {
			continue // the last, partial second
		}
		totals = append(totals, iv.QPS)
		if per := iv.Writes / 2; math.Abs(per-100) > 2 {
			t.Errorf("qr100: second %d: %.1f inserts/s per client, want 100 within 2%%", i+1, per)
		}
	}
	if math.Abs(queries-qr.Insert.Queries) > 0.01*qr.Insert.Queries {
		t.Errorf("qr100: the per-second lines hold %.0f queries, the step %v", queries, qr.Insert.Queries)
	}
	// p50 and p99 are of the per-client rates: below the busiest
	// second's total, and p50 near half the median total (two clients on
	// two tables alike).
	sort.Float64s(totals)
	med := totals[len(totals)/2]
	if in := qr.Insert; in.P99 > in.P50 || in.P50 > totals[len(totals)-1] || math.Abs(2*in.P50-med) > 0.5*med {
		t.Errorf("qr100: p50 %v, p99 %v, per-second totals %v", in.P50, in.P99, totals)
	}

	// The report: every seed-004 table, laid out as the seed's.
	loaded, problems, err := record.Load([]string{filepath.Join(out, "records")}, false)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	var recsOut []*record.Record
	for _, l := range loaded {
		recsOut = append(recsOut, l.Record)
	}
	render := func(format string, tables ...string) string {
		var b bytes.Buffer
		if err := report.Write(&b, format, recsOut, nil, report.Options{Tables: tables, Bare: true}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	checkInsertLayout(t, render("markdown", "insert", "insert-rel", "insert-target"),
		render("text", "insert-line"), render("text", "insert-hist"), steps)
}

func secs(s float64) time.Duration { return time.Duration(s * 1e9) }

// checkInsertLayout checks the seed-004 tables of a report against the
// seed's layout (report/testdata/seeds/004-*: its text, checked by hand):
// the summary tables' header, rows and target row; a metrics line per
// step with the seed's columns; a histogram per step and kind with the
// seed's buckets. The unreachable target is marked "!" in the target
// table and in both throughput tables.
func checkInsertLayout(t *testing.T, summary, lines, hists string, steps []string) {
	t.Helper()
	seed := func(name string) []string {
		b, err := os.ReadFile(filepath.Join("..", "..", "report", "testdata", "seeds", name))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b))
		return f[:slices.Index(f, "tag")+1]
	}
	blocks := strings.Split(strings.TrimSpace(summary), "\n\n")
	if len(blocks) != 3 {
		t.Fatalf("%d summary tables, want 3:\n%s", len(blocks), summary)
	}
	qSteps := steps[4:]
	for i, want := range [][]string{steps, steps, qSteps} {
		rows := strings.Split(blocks[i], "\n")
		header := "| dbms | " + strings.Join(want, " | ") + " |"
		sep := "|" + strings.Repeat("---|", len(want)+1)
		nrows := 3
		if i == 2 {
			nrows = 4
		}
		if len(rows) != nrows || rows[0] != header || rows[1] != sep || !strings.HasPrefix(rows[2], "| installed | ") {
			t.Errorf("summary table %d:\n%s\nwant %s / %s / | installed | ...", i+1, blocks[i], header, sep)
			continue
		}
		cells := strings.Split(strings.Trim(rows[2], "| "), " | ")
		if len(cells) != len(want)+1 {
			t.Errorf("summary table %d: %d cells in %q", i+1, len(cells), rows[2])
			continue
		}
		for j, c := range cells[1:] {
			unreachable := want[j] == "qr100000"
			if strings.HasSuffix(c, "!") != unreachable || !regexp.MustCompile(`^[0-9.]+!?$`).MatchString(c) {
				t.Errorf("summary table %d, %s: cell %q (marked: %v)", i+1, want[j], c, unreachable)
			}
		}
		if i == 2 && rows[3] != "| target | 200 | 200 | 200000 |" {
			t.Errorf("target row %q", rows[3])
		}
	}

	lineHead := seed("004-lines.txt")
	lb := strings.Split(strings.TrimSpace(lines), "\n\n")
	if len(lb) != len(steps) {
		t.Errorf("%d metrics lines, want one per step (%d):\n%s", len(lb), len(steps), lines)
	}
	for i, b := range lb {
		f := strings.Fields(b)
		if len(f) != 2*len(lineHead) || !slices.Equal(f[:len(lineHead)], lineHead) || f[len(f)-1] != "installed" {
			t.Errorf("metrics line %d: %q, want the seed's columns %q and one row", i+1, f, lineHead)
			continue
		}
		for j, v := range f[len(lineHead) : 2*len(lineHead)-1] {
			col := lineHead[j]
			rate := col == "p50" || col == "p99"
			switch {
			case steps[i] == "l.x" && (col == "maxop" || rate):
				// l.x is one statement per table: no per-second rate, no
				// operation time.
				if v != "NA" {
					t.Errorf("metrics line l.x: %s = %s, want NA", col, v)
				}
			case rate && strings.HasPrefix(steps[i], "l."):
				// A load shorter than a second has no p50/p99.
			case v == "NA":
				t.Errorf("metrics line %s: %s not recorded", steps[i], col)
			}
		}
	}

	histHead := seed("004-hist.txt")
	hb := strings.Split(strings.TrimSpace(hists), "\n\n")
	// l.i0: insert; l.i1, l.i2: insert, delete; q steps: query, insert,
	// delete; l.x: none.
	if want := 1 + 2 + 2 + 3*3; len(hb) != want {
		t.Errorf("%d histograms, want %d:\n%s", len(hb), want, hists)
	}
	for i, b := range hb {
		f := strings.Fields(b)
		if len(f) != 2*len(histHead) || !slices.Equal(f[:len(histHead)], histHead) {
			t.Errorf("histogram %d: %q, want the seed's buckets %q and one row", i+1, f, histHead)
			continue
		}
		total := 0.0
		for _, v := range f[len(histHead) : 2*len(histHead)-2] {
			var x float64
			if v != "nonzero" {
				if _, err := fmt.Sscan(v, &x); err != nil {
					t.Errorf("histogram %d: cell %q", i+1, v)
				}
			}
			total += x
		}
		if math.Abs(total-100) > 0.02 {
			t.Errorf("histogram %d: percentages add up to %.3f", i+1, total)
		}
	}
}
