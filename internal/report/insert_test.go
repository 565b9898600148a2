package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// insertRecord is a 10 s read+write step of the insert benchmark.
func insertRecord(version string, inserts, queries, target float64) *record.Record {
	r := record.New(record.KindStep)
	r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h", version, "q100.1", 1, 1
	r.Window.Seconds = 10
	r.Ops = record.Ops{Source: "client.queries", Count: queries, Per: 1, Counted: true}
	r.Insert = &record.Insert{Inserts: inserts, Queries: queries, TargetInsertsPerSecond: target}
	return r
}

// The 95% line, by hand: with a target of 100 inserts/s, 949 inserts in
// 10 s (94.9/s) fall below it and 950 (95.0/s) do not. The first is marked
// "!" in the target table (red in HTML) and its queries/s in the
// throughput table (grey); the second is not, though both print 95.
func TestInsertBelowTargetMarking(t *testing.T) {
	recs := []*record.Record{
		insertRecord("short", 949, 30000, 100),
		insertRecord("onthe", 950, 20000, 100),
		insertRecord("above", 1000, 10000, 100),
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, row, want string
		below         bool
		class         string
	}{
		{tableInsertTarget, "short", "95!", true, "red"}, // 94.9 < 95
		{tableInsertTarget, "onthe", "95", false, ""},    // 95.0 is not below 95
		{tableInsertTarget, "above", "100", false, ""},
		{tableInsertTarget, "target", "100", false, ""},
		{tableInsert, "short", "3000!", true, "grey"}, // 30000 queries / 10 s, can be ignored
		// short's 3000 is left out of the quartiles (with it, 2000 would
		// be in the middle, uncoloured): 2000 is the best of 2000 and
		// 1000, and 1000 < 80% of 2000, so the worst is red.
		{tableInsert, "onthe", "2000", false, "green"},
		{tableInsert, "above", "1000", false, "red"},
	} {
		c := cell(t, rep, tc.id, "", tc.row, "q100.1")
		if c.Text != tc.want || c.BelowTarget != tc.below || c.Class != tc.class {
			t.Errorf("%s %s = %q below %v class %q, want %q below %v class %q", tc.id, tc.row, c.Text, c.BelowTarget, c.Class, tc.want, tc.below, tc.class)
		}
	}

	var csv bytes.Buffer
	if err := Write(&csv, "csv", recs, nil, Options{Tables: []string{tableInsertTarget}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	want := []string{"short,true", "onthe,false", "above,false", "target,false"}
	if len(lines) != 1+len(want) {
		t.Fatalf("CSV has %d lines, want %d:\n%s", len(lines), 1+len(want), csv.String())
	}
	for i, w := range want {
		f := strings.Split(lines[i+1], ",")
		if got := f[6] + "," + f[len(f)-1]; got != w {
			t.Errorf("CSV line %d: row,below_target = %s, want %s", i+2, got, w)
		}
	}
}

// Versions with different targets: each is compared with its own, and the
// target row says why it has no single value.
func TestInsertTargetsDiffer(t *testing.T) {
	rep, err := build([]*record.Record{insertRecord("a", 790, 1000, 80), insertRecord("b", 790, 1000, 100)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := cell(t, rep, tableInsertTarget, "", "a", "q100.1"); c.Text != "79" || c.BelowTarget {
		t.Errorf("a: %q below %v, want 79 not below (79 of 80)", c.Text, c.BelowTarget)
	}
	if c := cell(t, rep, tableInsertTarget, "", "b", "q100.1"); c.Text != "79!" || !c.BelowTarget {
		t.Errorf("b: %q below %v, want 79! (79 of 100)", c.Text, c.BelowTarget)
	}
	c := cell(t, rep, tableInsertTarget, "", "target", "q100.1")
	if c.Text != "-" || !strings.Contains(c.Why, "a 80, b 100") {
		t.Errorf("target row %q (%s), want - naming both targets", c.Text, c.Why)
	}
}

// Steps without a target have no target table; a histogram kind no
// Record has has no table.
func TestInsertNoTargetNoKind(t *testing.T) {
	r := insertRecord("a", 1000, 0, 0)
	r.Step = "l.i0"
	r.Insert.Histogram = []record.Bucket{{UpToMs: 1, Count: 3}, {UpToMs: 4, Count: 1}}
	rep, err := build([]*record.Record{r}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var hists []string
	for _, tb := range rep.Tables {
		if tb.ID == tableInsertTarget {
			t.Errorf("target table %q without a target", tb.Title)
		}
		if tb.ID == tableInsertHist {
			hists = append(hists, tb.Title)
		}
	}
	if len(hists) != 1 || !strings.HasPrefix(hists[0], "Insert response time histogram: l.i0") {
		t.Errorf("histogram tables %q, want the insert one only", hists)
	}
	// 3 of 4 inserts ≤ 1 ms, 1 ≤ 4 ms.
	if c := cell(t, rep, tableInsertHist, "Insert", "a", "1ms"); c.Text != "75.000" {
		t.Errorf("1ms = %q, want 75.000", c.Text)
	}
}

// The long CSV gives insert-benchmark metrics directly: ips, qps (queries/s
// when ips is given), target_ips, hist:<kind>:<bucket>, max:<kind>.
func TestInsertCSVInput(t *testing.T) {
	in := `version,step,threads,metric,value
old,q100.1,8,ips,797
old,q100.1,8,qps,34172
old,q100.1,8,target_ips,800
old,q100.1,8,hist:delete:1ms,12.181
old,q100.1,8,hist:delete:4ms,87.785
old,q100.1,8,max:delete,0.011
new,q100.1,8,ips,740
new,q100.1,8,qps,41559
new,q100.1,8,target_ips,800
new,q100.1,8,hist:delete:1ms,27.502
new,q100.1,8,max:delete,0.014
`
	recs, err := readCSV(strings.NewReader(in), "ib.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, title, row, col, want string }{
		{tableInsert, "", "old", "q100.1", "34172"},
		{tableInsert, "", "new", "q100.1", "41559!"}, // 740 < 760 = 95% of 800
		{tableInsertTarget, "", "old", "q100.1", "797"},
		{tableInsertTarget, "", "new", "q100.1", "740!"},
		{tableInsertTarget, "", "target", "q100.1", "800"},
		{tableInsertHist, "Delete", "old", "1ms", "12.181"},
		{tableInsertHist, "Delete", "new", "1ms", "27.502"},
		{tableInsertHist, "Delete", "new", "4ms", "-"},
		{tableInsertHist, "Delete", "new", "max", "0.014"},
	} {
		if got := cell(t, rep, tc.id, tc.title, tc.row, tc.col).Text; got != tc.want {
			t.Errorf("%s %s %s %s = %q, want %q", tc.id, tc.title, tc.row, tc.col, got, tc.want)
		}
	}
	for _, tb := range rep.Tables {
		if tb.ID == tableCounters || tb.ID == tableCountersRel {
			t.Errorf("insert metrics taken for counters: table %q", tb.Title)
		}
	}
}
