package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// Tests of reports that cannot mislead: every input gives the honest
// answer or a clear refusal.

// renderInputs writes the report of the inputs (paths, through Load) as text.
func renderInputs(t *testing.T, format string, opt Options, paths ...string) (string, []string) {
	t.Helper()
	recs, warnings, err := Load(paths)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, format, recs, warnings, opt); err != nil {
		t.Fatal(err)
	}
	return b.String(), warnings
}

// extraLines returns the lines of long that short does not have, checking
// that long is short with lines inserted.
func extraLines(t *testing.T, short, long string) []string {
	t.Helper()
	s, l := strings.Split(short, "\n"), strings.Split(long, "\n")
	var extra []string
	i := 0
	for _, line := range l {
		if i < len(s) && s[i] == line {
			i++
			continue
		}
		extra = append(extra, line)
	}
	if i != len(s) {
		t.Fatalf("the longer output lacks line %d of the shorter: %q", i+1, s[i])
	}
	return extra
}

// The same Records given twice are one observation each: the report of
// DIR DIR is the report of DIR plus one note, not a report with twice the
// repeats (which turned 0.80~ into a significant 0.80±1%).
func TestReportSameRecordsTwice(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "records")
	for _, format := range []string{"text", "markdown"} {
		once, _ := renderInputs(t, format, Options{}, dir)
		twice, _ := renderInputs(t, format, Options{}, dir, dir)
		extra := extraLines(t, once, twice)
		if len(extra) != 1 || !strings.Contains(extra[0], "23 Records in ../../testdata/records repeat those read from ../../testdata/records") {
			t.Errorf("%s: DIR DIR adds %q, want one note on the 23 Records read twice", format, extra)
		}
	}
	// A Record copied into another folder is the same window.
	other := t.TempDir()
	b, err := os.ReadFile(filepath.Join(dir, "mariadb-11.4.3__point-query_range=100__t1__r1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "copy.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	recs, warnings, err := Load([]string{dir, other})
	if err != nil || len(recs) != 23 || len(warnings) != 1 || !strings.Contains(warnings[0], "1 Record in "+other) {
		t.Errorf("a copied Record: %d Records, warnings %q, err %v; want 23 and one note", len(recs), warnings, err)
	}
	// Without a window start, the identity is the same only with the
	// same numbers: other numbers are another measurement, kept and named.
	r, err := record.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	r.Window.Start = time.Time{}
	noStart := t.TempDir()
	for i, ops := range []float64{r.Ops.Count, r.Ops.Count, r.Ops.Count + 1} {
		r.Ops.Count = ops
		if err := record.Write(filepath.Join(noStart, fmt.Sprintf("r%d.json", i)), r); err != nil {
			t.Fatal(err)
		}
	}
	recs, warnings, err = Load([]string{noStart})
	if err != nil || len(recs) != 2 || len(warnings) != 2 || !strings.Contains(warnings[0], "1 Record in "+noStart) ||
		!strings.HasPrefix(warnings[1], "counted as further repeats: "+filepath.Join(noStart, "r2.json")+", which lack a window start") {
		t.Errorf("Records without a start: %d Records, warnings %q, err %v", len(recs), warnings, err)
	}
}

// The same CSV rows in two files count once; rows of one Record may come
// from two files; the same Record with another value is refused, naming
// both places.
func TestReportSameCSVRowsTwice(t *testing.T) {
	table := filepath.Join("..", "..", "testdata", "csv", "table.csv")
	dir := t.TempDir()
	copyPath := filepath.Join(dir, "copy.csv")
	b, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	once, _ := renderInputs(t, "text", Options{}, table)
	twice, _ := renderInputs(t, "text", Options{}, table, copyPath)
	// The table's report has no warnings: the note comes with the
	// heading of the warnings and the blank line before it.
	if extra := extraLines(t, once, twice); len(extra) != 3 || extra[0] != "Warnings:" || extra[2] != "" ||
		!strings.Contains(extra[1], "50 rows of "+copyPath+" repeat rows of earlier CSV files") {
		t.Errorf("the table twice adds %q, want one note on its 50 rows", extra)
	}

	qps := filepath.Join(dir, "qps.csv")
	cpu := filepath.Join(dir, "cpu.csv")
	conflict := filepath.Join(dir, "conflict.csv")
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(qps, "version,step,threads,metric,value\nb,s,1,qps,100\nv,s,1,qps,80\n")
	write(cpu, "version,step,threads,metric,value\nb,s,1,cpu/o,10\nv,s,1,cpu/o,12.5\n")
	write(conflict, "version,step,threads,metric,value\nv,s,1,qps,90\n")
	recs, warnings, err := Load([]string{qps, cpu})
	if err != nil || len(recs) != 2 || len(warnings) != 0 || recs[1].Metrics["qps"] != 80 || recs[1].Metrics["cpu/o"] != 12.5 {
		t.Errorf("qps and cpu/o of one Record from two files: %d Records %+v, warnings %q, err %v", len(recs), recs, warnings, err)
	}
	_, _, err = Load([]string{qps, conflict})
	if !errors.Is(err, errCSV) || !strings.Contains(err.Error(), conflict+" line 2") || !strings.Contains(err.Error(), "was given as 80 on "+qps+" line 3") {
		t.Errorf("the same Record with another value: %v", err)
	}
}

// A ratio's interval comes from both samples: a base that varies ±30% makes
// the ratio uncertain by about as much, however steady the version. The
// version's interval divided by the base's median gave 1.50±0.2%.
func TestReportRatioIntervalFromBothSamples(t *testing.T) {
	base := []float64{70, 85, 100, 100, 115, 130}
	var recs []*record.Record
	for i := range 6 {
		recs = append(recs,
			stepRec("base", "point-query_range=100", i+1, 10*base[i]),
			stepRec("new", "point-query_range=100", i+1, 1500+float64(i)))
	}
	rep, err := build(recs, Options{Tables: []string{TableRQPS}})
	if err != nil {
		t.Fatal(err)
	}
	c := cell(t, rep, TableRQPS, "", "point-query_range=100", "col-1")
	// The base's repeats have a CV of 21%: the cell says they disagree.
	text, ok := strings.CutSuffix(c.Text, textDisagree)
	if !ok {
		t.Errorf("rQPS %q: no %q mark for the base's repeats (CV 21%%)", c.Text, textDisagree)
	}
	pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(text[strings.Index(text, "±"):], "±"), "%"), 64)
	if err != nil || !strings.HasPrefix(text, "1.50±") || pct < 20 {
		t.Errorf("rQPS %q, want 1.50 with an interval of at least ±20%% (the base's spread)", text)
	}
	// The same samples give the same interval (the bootstrap's seed is
	// fixed).
	rep2, _ := build(recs, Options{Tables: []string{TableRQPS}})
	if c2 := cell(t, rep2, TableRQPS, "", "point-query_range=100", "col-1"); c2.Lo != c.Lo || c2.Hi != c.Hi {
		t.Errorf("interval [%v, %v] then [%v, %v]", c.Lo, c.Hi, c2.Lo, c2.Hi)
	}
}

// A CSV table's metric names: the posts' notation maps to the report's
// metrics (cpu/q is cpu/o, QPS is qps), perf's event names and aliases are
// events, anything else is refused with the line and the nearest names.
// Taken as an event total divided by ops, cpu/q gave 1.39 where the table
// says 1.25, and QPS a "QPS per operation" table.
func TestReadCSVMetricNames(t *testing.T) {
	in := "version,step,threads,metric,value\n" +
		"b,point-query,1,QPS,1000\nb,point-query,1,seconds,10\nb,point-query,1,cpu/q,100\nb,point-query,1,cs,5000\n" +
		"v,point-query,1,QPS,900\nv,point-query,1,seconds,10\nv,point-query,1,cpu/q,125\nv,point-query,1,cs,4500\n"
	recs, err := readCSV(strings.NewReader(in), "posts.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cell(t, rep, tableCPUIORel, "", "point-query", analysis.CPUPerOp).Text; got != "1.25" {
		t.Errorf("cpu/o ratio %q, want 1.25 (125/100)", got)
	}
	if got := cell(t, rep, TableRQPS, "", "point-query", "col-1").Text; got != "0.90" {
		t.Errorf("rQPS %q, want 0.90", got)
	}
	// cs is context-switches: 5000 over 10,000 queries.
	if got := cell(t, rep, tableCPUIO, "b", "point-query", analysis.CSPerOp).Text; got != "0.500" {
		t.Errorf("cs/o %q, want 0.500", got)
	}
	for _, tb := range rep.Tables {
		if strings.Contains(tb.Title, "QPS per") || strings.Contains(tb.Title, "cpu/q") {
			t.Errorf("table %q from a metric name taken for an event", tb.Title)
		}
	}
	for _, tc := range []struct{ metric, want string }{
		{"qsp", `line 2: unknown metric "qsp"; nearest: qps`},
		{"cpu/query-time", `unknown metric "cpu/query-time"`},
		{"cylces", "nearest: cycles"},
		{"MPKI(foo)", `"foo" is not a perf event name`},
		{"hist:write:1ms", "use hist:<kind>:<bucket>"},
	} {
		_, err := readCSV(strings.NewReader("version,step,threads,metric,value\nb,s,1,"+tc.metric+",1\n"), "t.csv")
		if !errors.Is(err, errCSV) || !strings.Contains(err.Error(), "t.csv line 2") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("metric %q: %v, want an error with %q", tc.metric, err, tc.want)
		}
	}
	for name, want := range map[string]string{
		"cycles": "cycles", "cs": "context-switches", "L1-dcache-load-misses": "L1-dcache-load-misses",
		"cpu_core/cycles/": "cpu_core/cycles/", "r003c": "r003c", "cpupq": "cpupq", "wkbpi": "wkbpi",
		"IPC": analysis.IPC, "mpki(cache-misses)": "MPKI(cache-misses)", "instructions/o": "instructions/o",
		"hist:query:1ms": "hist:query:1ms", "max:delete": "max:delete", "rKB/q": analysis.ReadKBPerOp,
		// Spellings with modifiers and cache events' other spellings get
		// the name perfbench's Records key them by (internal/eventname),
		// so a table's numbers compare with theirs.
		"cs:u": "context-switches:u", "cpu-cycles:k": "cycles:k", "l1d-load-miss": "L1-dcache-load-misses",
		"faults/o": "page-faults/o",
	} {
		if got, _, err := canonicalMetric(name); err != nil || got != want {
			t.Errorf("CanonicalMetric(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

// Values a table cannot hold are refused with the file and line: NaN, inf
// and negative values made tables print NaN, JSON fail and benchfmt write
// NaN.
func TestReadCSVRefusesNonFiniteAndNegative(t *testing.T) {
	for _, v := range []string{"NaN", "nan", "inf", "-Inf", "+Infinity", "-5", "1e400"} {
		_, err := readCSV(strings.NewReader("version,step,threads,metric,value\nb,s,1,qps,1\nv,s,1,qps,"+v+"\n"), "bad.csv")
		if !errors.Is(err, errCSV) || !strings.Contains(err.Error(), "bad.csv line 3") {
			t.Errorf("value %q: %v, want a refusal naming bad.csv line 3", v, err)
		}
	}
	// A stray quote inside a field panicked (FieldPos after a parse error).
	_, err := readCSV(strings.NewReader("version,step,threads,metric,value\na\"b,s,1,qps,5\n"), "q.csv")
	if !errors.Is(err, errCSV) || !strings.Contains(err.Error(), "q.csv line 2") || !strings.Contains(err.Error(), `"a""b"`) {
		t.Errorf("stray quote: %v", err)
	}
}

// Derived 0/0 and x/0 are marked cells in every format: IPC with cycles 0
// on both sides gave NaN (Inf/Inf), which JSON could not encode.
func TestReportZeroDenominators(t *testing.T) {
	recs := []*record.Record{
		stepRec("b", "point-query", 1, 1000, cnt("instructions", 1e6), cnt("cycles", 0)),
		stepRec("v", "point-query", 1, 1000, cnt("instructions", 2e6), cnt("cycles", 0)),
	}
	table, err := readCSV(strings.NewReader("version,step,threads,metric,value\n"+
		"b,update-index,1,qps,0\nb,update-index,1,cpu/o,5\nv,update-index,1,qps,0\nv,update-index,1,cpu/o,6\n"), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range table {
		r.Host, r.Threads = "h", 1
	}
	recs = append(recs, table...)
	for _, format := range Formats {
		var b bytes.Buffer
		if err := Write(&b, format, recs, nil, Options{}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := b.String()
		if strings.Contains(strings.ToLower(out), "nan") {
			t.Errorf("%s prints NaN:\n%s", format, out)
		}
		if format == "json" && !json.Valid(b.Bytes()) {
			t.Errorf("JSON is not valid")
		}
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Every IPC cell is "-" for that one reason: the table is left out
	// and the report says why.
	if n := strings.Join(rep.Notes, "\n"); !strings.Contains(n, "tables left out: IPC (") || !strings.Contains(n, "cycles "+
		"counted 0 in the window: nothing to divide by") {
		t.Errorf("report notes do not say why IPC has no value:\n%s", n)
	}
	// Both throughputs 0 (no queries in either window): rQPS is the
	// marked 1 of two zeros, and the attribution has no verdict.
	if got := cell(t, rep, TableRQPS, "", "update-index", "col-1").Text; got != "1" {
		t.Errorf("rQPS of two zeros %q, want 1", got)
	}
	if got := cell(t, rep, tableAttribution, "", "update-index", "verdict").Text; got != "n/a" {
		t.Errorf("verdict for rQPS 0/0: %q, want n/a", got)
	}
}

// Load steps of the insert benchmark compare inserts/s (qps is 0 on both
// sides: rQPS printed 1), and a ratio of two zeros stays out of averages.
func TestReportLoadStepsAndAverage(t *testing.T) {
	in := "version,step,threads,metric,value\n" +
		"b,l.i0,1,ips,600000\nb,l.i0,1,qps,0\nv,l.i0,1,ips,530000\nv,l.i0,1,qps,0\n" +
		"b,point-query,1,qps,100\nv,point-query,1,qps,80\n" +
		"b,idle,1,qps,0\nv,idle,1,qps,0\n"
	recs, err := readCSV(strings.NewReader(in), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cell(t, rep, TableRQPS, "", "l.i0", "col-1").Text; got != "0.88" {
		t.Errorf("l.i0 rQPS %q, want 0.88 (530000/600000 inserts/s)", got)
	}
	// Average of 0.883 (l.i0) and 0.800: the idle step's 1 stays out.
	if got := cell(t, rep, tableAverage, "", "average", "col-1").Text; got != "0.842" {
		t.Errorf("average %q, want 0.842 ((0.8833+0.8)/2)", got)
	}
	if n := tableNotes(t, rep, tableAverage, ""); !strings.Contains(n, "leaves out 1 step without a finite measured ratio") {
		t.Errorf("average notes:\n%s", n)
	}
}

// A scan step's throughput is thousands of rows read per second: the QPS
// tables say so (5,000 for a step that ran 1 query/s).
func TestReportScanThroughputSaid(t *testing.T) {
	rep, err := build(fixtures(t), Options{Tables: []string{tableQPS, TableRQPS}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{tableQPS, TableRQPS} {
		if n := tableNotes(t, rep, id, ""); !strings.Contains(n, "scan_range=100: o/s is thousands of rows read per second") {
			t.Errorf("%s notes do not say what a scan's o/s is:\n%s", id, n)
		}
	}
}

// A step the base did not run has no ratio; the relative tables say so
// instead of dropping it silently.
func TestReportBaseDidNotRun(t *testing.T) {
	recs := []*record.Record{
		stepRec("b", "point-query", 1, 1000), stepRec("v", "point-query", 1, 900),
		stepRec("v", "update-index", 1, 500),
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{TableRQPS, tableAverage} {
		if n := tableNotes(t, rep, id, ""); !strings.Contains(n, "the base (b) did not run update-index: no ratio to it there") {
			t.Errorf("%s notes:\n%s", id, n)
		}
	}
}

// With 50 versions the text columns stay under their headings: col-10 and
// later are wider than col-1, and one space between values made col-49's
// value print 87 characters left of its header.
func TestReportManyVersionsAligned(t *testing.T) {
	var recs []*record.Record
	for i := range 51 {
		recs = append(recs, stepRec(fmt.Sprintf("v%02d", i), "point-query", 1, 1000+float64(i)))
	}
	var b bytes.Buffer
	if err := Write(&b, "text", recs, nil, Options{Tables: []string{TableRQPS}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	var header, row string
	for i, l := range lines {
		if strings.HasPrefix(l, "col-1 ") {
			header, row = l, lines[i+1]
		}
	}
	for _, col := range []string{"col-9", "col-10", "col-49", "col-50"} {
		at := strings.Index(header, col+" ")
		if col == "col-50" {
			at = strings.LastIndex(header, col)
		}
		if at < 0 || at >= len(row) || row[at] == ' ' || (at > 0 && row[at-1] != ' ') {
			t.Errorf("%s's value does not start under its header:\n%s\n%s", col, header, row)
		}
	}
}

// A counter missing from some repeats is marked with how many it rests on;
// 4 repeats against 3 cannot reach significance, and the notes say so.
func TestReportRepeatsMissingAndTooFew(t *testing.T) {
	var recs []*record.Record
	for i := range 4 {
		c := []record.Counter{cnt("instructions", 1e6)}
		if i > 0 {
			c[0] = record.Counter{Event: "instructions", Status: record.StatusNotCounted}
		}
		recs = append(recs, stepRec("new", "point-query", i+1, 800+float64(i), c...))
		if i < 3 {
			recs = append(recs, stepRec("base", "point-query", i+1, 1000+float64(i), cnt("instructions", 1e6)))
		}
	}
	// Version first in input: name the base.
	rep, err := build(recs, Options{Base: "base"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cell(t, rep, tableCounters, "instructions", "point-query", "col-1").Text; got != "1250[1/4]" {
		t.Errorf("instructions/o of new %q, want 1250[1/4] (one of 4 repeats counted it)", got)
	}
	if n := tableNotes(t, rep, tableCounters, "instructions"); !strings.Contains(n, "[n/m]: from n of the m repeats") {
		t.Errorf("notes do not explain [n/m]:\n%s", n)
	}
	// Every new sample is below every base sample, yet p = 2/35 = 0.057.
	if got := cell(t, rep, TableRQPS, "", "point-query", "col-1").Text; got != "0.80~" {
		t.Errorf("rQPS %q, want 0.80~", got)
	}
	if n := tableNotes(t, rep, TableRQPS, ""); !strings.Contains(n, "with 4 against 3 repeats (version against base) no "+
		"difference can be significant at α = 0.05: the smallest p-value the test can give is 0.057") {
		t.Errorf("rQPS notes:\n%s", n)
	}
}

// Tables of a report from a CSV list steps in the order of the file, the
// order the posts list them (run order); --order name sorts them.
func TestReportStepOrder(t *testing.T) {
	in := "version,step,threads,metric,value\nb,update-index,1,qps,1\nv,update-index,1,qps,2\nb,point-query,1,qps,1\nv,point-query,1,qps,2\n"
	recs, err := readCSV(strings.NewReader(in), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows := func(opt Options) []string {
		rep, err := build(recs, opt)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range firstTable(rep, TableRQPS).Sections {
			for _, r := range s.Rows {
				out = append(out, r.Label)
			}
		}
		return out
	}
	if got := strings.Join(rows(Options{}), " "); got != "update-index point-query" {
		t.Errorf("default order %q", got)
	}
	if got := strings.Join(rows(Options{Analysis: analysis.Options{Order: "name"}}), " "); got != "point-query update-index" {
		t.Errorf("name order %q", got)
	}
	if _, err := build(recs, Options{Analysis: analysis.Options{Order: "time"}}); err == nil || !strings.Contains(err.Error(), `unknown step order "time"`) {
		t.Errorf("order time: %v", err)
	}
}

// --label heads a version's columns with a short name and names the base
// in the per-thread-count table; a label for no version is refused.
func TestReportLabels(t *testing.T) {
	recs := []*record.Record{stepRec("8.0.28", "point-query", 1, 1000), stepRec("8.0.39", "point-query", 1, 900)}
	recs[1].Threads = 1
	rep, err := build(recs, Options{Labels: map[string]string{"8.0.39": "my8039"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cell(t, rep, TableRQPS, "", "point-query", "my8039").Text; got != "0.90" {
		t.Errorf("labelled column: %q", got)
	}
	if p := strings.Join(firstTable(rep, TableRQPS).Preamble, "\n"); p != "Relative to: 8.0.28\nmy8039 : 8.0.39" {
		t.Errorf("preamble %q", p)
	}
	for _, labels := range []map[string]string{{"9.9": "x"}, {"8.0.28": "a", "8.0.39": "a"}} {
		if _, err := build(recs, Options{Labels: labels}); !errors.Is(err, ErrBadLabel) {
			t.Errorf("labels %v: %v", labels, err)
		}
	}
}

// --bare prints the tables alone; the notes go elsewhere.
func TestReportBare(t *testing.T) {
	var out, notes bytes.Buffer
	if err := Write(&out, "text", fixtures(t), []string{"a warning"}, Options{Tables: []string{TableRQPS}, Bare: true, Notes: &notes}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "Relative to: mariadb-10.11.6\n") || strings.Contains(out.String(), "Notes") ||
		strings.Contains(out.String(), "Relative QPS") {
		t.Errorf("bare output:\n%s", out.String())
	}
	n := notes.String()
	if !strings.HasPrefix(n, "Relative QPS (host bench1, 1 thread):\n- ") || !strings.Contains(n, "\nWarnings:\n- a warning\n") {
		t.Errorf("notes:\n%s", n)
	}
}

// Values near the float64 limit never print NaN or inf where nothing was
// divided by 0, and JSON stays valid.
func TestReportHugeValues(t *testing.T) {
	in := "version,step,threads,metric,value\n" +
		"b,s,1,qps,1e308\nb,s,1,seconds,1e308\nb,s,1,instructions,1.7e308\nb,s,1,cycles,1e-308\n" +
		"v,s,1,qps,1e-300\nv,s,1,seconds,1e300\nv,s,1,instructions,1e308\nv,s,1,cycles,1e300\nv,s,1,wKB/o,1.7e308\n"
	recs, err := readCSV(strings.NewReader(in), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats {
		var b bytes.Buffer
		if err := Write(&b, format, recs, nil, Options{}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if strings.Contains(strings.ToLower(b.String()), "nan") {
			t.Errorf("%s prints NaN:\n%s", format, b.String())
		}
		if format == "json" && !json.Valid(b.Bytes()) {
			t.Errorf("JSON not valid")
		}
		// 1.7e308 KB/op is no finite number of bytes per op.
		if format == "benchfmt" && strings.Contains(b.String(), "Inf") {
			t.Errorf("benchfmt writes an infinity:\n%s", b.String())
		}
	}
	rep, _ := build(recs, Options{})
	// The base's operations, 1e308/s over 1e308 s, overflow: its per-op
	// values have nothing finite to divide by (they printed 0).
	if c := cell(t, rep, tableCounters, "instructions", "s", "col-1"); c.Text != "-" || c.Why != analysis.WhyNotFinite {
		t.Errorf("instructions/o over an overflowing op count: %q (%s), want -", c.Text, c.Why)
	}
	for _, tb := range rep.Tables {
		for _, s := range tb.Sections {
			for _, r := range s.Rows {
				for _, c := range r.Cells {
					if c.OK() && math.IsNaN(c.Value) {
						t.Errorf("%s %s: NaN value", tb.Title, r.Label)
					}
				}
			}
		}
	}
}

// A version that missed its target insert rate has its queries/s marked
// in the relative table too: 40462! was grey in the absolute table while
// its ratio 1.18 was painted blue, better than the base.
func TestReportInsertRelBelowTarget(t *testing.T) {
	rep, err := build(fixtures(t), Options{Tables: []string{tableInsert, tableInsertRel}})
	if err != nil {
		t.Fatal(err)
	}
	abs := cell(t, rep, tableInsert, "", "mariadb-11.4.3", "qr100")
	rel := cell(t, rep, tableInsertRel, "", "mariadb-11.4.3", "qr100")
	if abs.Text != "40462!" || abs.Class != "grey" || rel.Text != "1.18!" || rel.Class != "grey" || !rel.BelowTarget {
		t.Errorf("absolute %q %s, relative %q %s: want both marked ! and grey", abs.Text, abs.Class, rel.Text, rel.Class)
	}
	if n := tableNotes(t, rep, tableInsertRel, ""); !strings.Contains(n, "!: the version or the base did not sustain the step's target insert rate") {
		t.Errorf("notes:\n%s", n)
	}
}
