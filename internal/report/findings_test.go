package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// stepRec is a 10 s window of ops Questions with the given counters.
func stepRec(version, step string, repeat int, ops float64, counters ...record.Counter) *record.Record {
	r := record.New(record.KindStep)
	r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h", version, step, 1, repeat
	r.Window.Seconds = 10
	r.Ops = record.Ops{Source: "Questions", Count: ops, Per: 1, Counted: true}
	r.Counters = counters
	return r
}

func cnt(event string, v float64) record.Counter {
	return record.Counter{Event: event, Raw: uint64(v), Enabled: 1e10, Running: 1e10, Value: v, Status: record.StatusCounted}
}

func unsupported(event string) record.Counter {
	return record.Counter{Event: event, Status: record.StatusNotSupported}
}

func tableNotes(t *testing.T, rep *report, id, title string) string {
	t.Helper()
	for _, tb := range rep.Tables {
		if tb.ID == id && strings.Contains(tb.Title, title) {
			return strings.Join(tb.Notes, "\n")
		}
	}
	t.Fatalf("no table %s %q", id, title)
	return ""
}

// IO per operation: KB from the server's /proc io (its 0 is a 0), reads
// from the device and said to be device-wide; a Record without /proc io
// takes KB from the device with a note under the IO tables only.
func TestReportIOPerOperation(t *testing.T) {
	base := stepRec("a", "point-query", 1, 10000, cnt("task-clock", 1e9))
	base.OS = &record.OS{ReadBytes: 0, WriteBytes: 0, Disk: &record.Disk{Device: "vda", Reads: 20, ReadSectors: 160}}
	v := stepRec("b", "point-query", 1, 5000, cnt("task-clock", 1e9))
	v.OS = &record.OS{ReadBytes: 0, WriteBytes: 0, Disk: &record.Disk{Device: "vda", Reads: 500, ReadSectors: 40000}}
	rep, err := build([]*record.Record{base, v}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, title, row, col, want, why string }{
		// Before: 40000×512/1024/5000 = 4.00 against 160×512/1024/10000
		// = 0.008, a ratio of 500 that was other processes' IO.
		{tableCPUIO, ": b", "point-query", "rKB/o", "0", "read_bytes 0 / 5000"},
		{tableCPUIORel, ": b", "point-query", "rKB/o", "1", "0 / 0: both zero"},
		{tableCPUIO, ": b", "point-query", "r/o", "0.100", "500 device reads / 5000"},
		{tableCPUIORel, ": b", "point-query", "r/o", "50.00", "0.1 / 0.002 (20 / 10000)"},
	} {
		if got := cell(t, rep, tc.id, tc.title, tc.row, tc.col).Text; got != tc.want {
			t.Errorf("%s %s %s = %q, want %q (%s)", tc.id, tc.title, tc.col, got, tc.want, tc.why)
		}
	}
	for _, title := range []string{": a", ": b"} {
		if n := tableNotes(t, rep, tableCPUIO, title); !strings.Contains(n, "r/o: reads of the data directory's device per "+
			"operation, device-wide: every process on vda, not only the server") {
			t.Errorf("CPU/IO %s notes do not say r/o is device-wide:\n%s", title, n)
		}
	}
	if n := tableNotes(t, rep, tableCPUIORel, ": b"); !strings.Contains(n, "1: both values are 0") {
		t.Errorf("no note explains the 1:\n%s", n)
	}

	// Without /proc io: KB from the device, said under the CPU/IO tables,
	// not under the task-clock or QPS tables.
	v.Warnings = []record.Warning{{Code: record.WarnIONotMeasured, Text: "IO of the process not measured: read_bytes, " +
		"write_bytes, rchar, wchar, syscr and syscw are not measurements"}}
	rep, err = build([]*record.Record{base, v}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cell(t, rep, tableCPUIO, ": b", "point-query", "rKB/o").Text; got != "4.00" { // 40000 × 512 / 1024 / 5000
		t.Errorf("rKB/o from the device = %q, want 4.00", got)
	}
	const note = "b (host h, 1 thread) point-query: rKB/o and wKB/o from the sectors of vda, device-wide: every process on " +
		"vda (the Record has no /proc/PID/io of the server)"
	for _, tc := range []struct {
		id, title string
		want      bool
	}{
		{tableCPUIO, ": b", true},
		{tableCPUIORel, ": b", true},
		{tableCounters, "task-clock", false},
		{tableQPS, "", false},
		{TableRQPS, "", false},
	} {
		n := tableNotes(t, rep, tc.id, tc.title)
		if got := strings.Contains(n, note); got != tc.want {
			t.Errorf("%s %q: device note present %v, want %v:\n%s", tc.id, tc.title, got, tc.want, n)
		}
		if got := strings.Contains(n, "IO of the process not measured"); got != tc.want {
			t.Errorf("%s %q: the /proc io warning present %v, want %v", tc.id, tc.title, got, tc.want)
		}
	}
}

// Ops estimated from sysbench's whole-run rate mark every value divided by
// them with "e", and the notes, CSV and JSON say so.
func TestReportEstimatedOps(t *testing.T) {
	mk := func(version string, ops float64) *record.Record {
		r := stepRec(version, "point-query", 1, ops, cnt("instructions", 2e8), cnt("cycles", 4e8))
		r.Kind = record.KindImported
		r.Ops = record.Ops{Source: "client.queries", Count: ops, Counted: true, Estimated: true}
		return r
	}
	rep, err := build([]*record.Record{mk("a", 10000), mk("b", 8000)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, title, row, col, want string }{
		{TableRQPS, "", "point-query", "col-1", "0.80e"},                          // 800 / 1000 per s
		{tableQPS, "", "point-query", "col-2", "800e"},                            // 8000 / 10 s
		{tableCounters, "instructions", "point-query", "col-2", "25000e"},         // 2e8 / 8000
		{tableCountersRel, "instructions", "point-query", "col-1", "1.25e"},       // 25000 / 20000
		{tableCountersRel, "IPC", "point-query", "col-1", "1.00"},                 // 0.5 / 0.5: no ops in it
		{tableAttribution, "b", "point-query", "code", "100%e"},                   // ln 1.25 / ln 1.25
		{tableAttribution, "b", "point-query", "r(CPI)", "1.00"},                  // no ops in it
		{tableCounters, "cycles per operation", "point-query", "col-1", "40000e"}, // 4e8 / 10000
	} {
		if got := cell(t, rep, tc.id, tc.title, tc.row, tc.col).Text; got != tc.want {
			t.Errorf("%s %q %s = %q, want %q", tc.id, tc.title, tc.col, got, tc.want)
		}
	}
	const note = "e: operations estimated from the client's whole-run rate, not counted in the window"
	if n := tableNotes(t, rep, TableRQPS, ""); !strings.Contains(n, note) {
		t.Errorf("rQPS notes lack %q:\n%s", note, n)
	}
	if n := tableNotes(t, rep, tableCountersRel, "IPC"); strings.Contains(n, note) {
		t.Errorf("IPC notes explain an e no cell has:\n%s", n)
	}
	var c, j bytes.Buffer
	if err := writeCSV(&c, rep); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	est := -1
	for i, h := range rows[0] {
		if h == "estimated" {
			est = i
		}
	}
	first := 1
	for first < len(rows)-1 && rows[first][0] != TableRQPS {
		first++
	}
	if est < 0 || rows[first][0] != TableRQPS || rows[first][est] != "true" {
		t.Errorf("CSV: estimated column %d, first rQPS row %q", est, rows[first])
	}
	if err := writeJSON(&j, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tables []struct {
			ID       string
			Sections []struct {
				Rows []struct {
					Cells []struct {
						Text, State string
						Estimated   bool
					}
				}
			}
		}
	}
	if err := json.Unmarshal(j.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	rq := 0
	for rq < len(doc.Tables)-1 && doc.Tables[rq].ID != TableRQPS {
		rq++
	}
	if got := doc.Tables[rq].Sections[0].Rows[0].Cells[0]; doc.Tables[rq].ID != TableRQPS || got.Text != "0.80e" || got.State != "measured" || !got.Estimated {
		t.Errorf("JSON rQPS cell %+v, want 0.80e measured and estimated", got)
	}
}

// On a machine without a PMU the hardware tables have n/a in every cell:
// they are left out and named once at the top; a table with some measured
// cells stays.
func TestReportUnsupportedTablesLeftOut(t *testing.T) {
	var recs []*record.Record
	for _, v := range []struct {
		name string
		ops  float64
	}{{"a", 10000}, {"b", 9000}} {
		for _, step := range []string{"point-query", "update-index"} {
			cm := unsupported("cache-misses")
			if v.name == "b" && step == "update-index" {
				cm = cnt("cache-misses", 9000)
			}
			recs = append(recs, stepRec(v.name, step, 1, v.ops, unsupported("cycles"), unsupported("instructions"), cnt("task-clock", 1e9), cm))
		}
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "not supported where measured, tables left out: cycles, instructions, IPC, CPI, MPKI(cache-misses), " +
		"cache-misses relative to the base (n/a in every cell)"
	if len(rep.Notes) != 1 || rep.Notes[0] != want {
		t.Errorf("report notes %q, want %q", rep.Notes, want)
	}
	for _, tb := range rep.Tables {
		for _, bad := range []string{"cycles", "instructions", "IPC", "CPI"} {
			if strings.HasPrefix(tb.Title, bad) {
				t.Errorf("table %q is printed", tb.Title)
			}
		}
	}
	// cache-misses has one measured cell: its table stays, n/a and all.
	if got := cell(t, rep, tableCounters, "cache-misses per operation", "update-index", "col-2").Text; got != "1.00" { // 9000 / 9000
		t.Errorf("cache-misses b update-index = %q, want 1.00", got)
	}
	if got := cell(t, rep, tableCounters, "cache-misses per operation", "point-query", "col-1").Text; got != "n/a" {
		t.Errorf("cache-misses a point-query = %q, want n/a", got)
	}
	var b bytes.Buffer
	if err := writeText(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "Notes:\n- "+want+"\n\nSummary: rQPS, geometric mean over each group of steps (host h, 1 thread)\n") {
		t.Errorf("text does not open with the note:\n%s", b.String()[:200])
	}
}

// "-" is explained by why it has no value: not recorded, or not computable
// and why.
func TestReportDashReasons(t *testing.T) {
	a := stepRec("a", "point-query", 1, 10000, cnt("instructions", 1e8))
	a.Roles = []record.Role{
		{Name: "connection", Threads: 2, Counters: []record.Counter{cnt("instructions", 9e7), cnt("major-faults", 0)}},
		{Name: "innodb-io", Threads: 4, Counters: []record.Counter{cnt("instructions", 1e7), cnt("major-faults", 0)}},
	}
	b := stepRec("b", "point-query", 1, 0, cnt("instructions", 1e8))
	b.Ops = record.Ops{}
	rep, err := build([]*record.Record{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cell(t, rep, tableCounters, "instructions", "point-query", "col-2"); got.Text != "-" || got.State != analysis.NotComputable {
		t.Errorf("b instructions/o = %q (%v), want - not computable", got.Text, got.State)
	}
	if n := tableNotes(t, rep, tableCounters, "instructions"); !strings.Contains(n, "-: not computable: the Record has no op count") {
		t.Errorf("counters notes:\n%s", n)
	}
	if n := tableNotes(t, rep, tableRoles, "a point-query"); !strings.Contains(n, "-: not computable: a role's share of an "+
		"event whose total over all roles is 0") || strings.Contains(n, "not recorded") {
		t.Errorf("roles notes:\n%s", n)
	}
	// b has no op count: it is not a unit of its own in the warning.
	for _, w := range rep.Warnings {
		if strings.Contains(w, "count operations differently") {
			t.Errorf("warning %q", w)
		}
	}
}

// Versions that count ops differently are named with their units.
func TestReportOpsSourceWarning(t *testing.T) {
	a := stepRec("a", "point-query", 1, 10000)
	b := stepRec("b", "point-query", 1, 9000)
	b.Ops.Source = "client.queries"
	rep, err := build([]*record.Record{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "point-query (host h, 1 thread): versions count operations differently: Questions (a); client.queries (b): ratios compare different units"
	found := false
	for _, w := range rep.Warnings {
		found = found || w == want
	}
	if !found {
		t.Errorf("warnings %q lack %q", rep.Warnings, want)
	}
}

// HTML colours follow the metric's direction: yellow is worse, blue better.
func TestColourDirection(t *testing.T) {
	mk := func(v float64, metric string) tableCell {
		return tableCell{Cell: analysis.Val(v), Metric: metric, better: int8(better(metric)), rel: true}
	}
	cells := []tableCell{
		mk(1.2, analysis.OpsPerSecond), mk(0.9, analysis.OpsPerSecond), // faster, slower
		mk(1.2, analysis.CPUPerOp), mk(0.9, analysis.CPUPerOp), // more CPU, less
		mk(1.2, "instructions/o"), mk(0.9, analysis.ReadsPerOp),
		mk(1.2, analysis.IPC), mk(1.04, analysis.CPUPerOp),
	}
	tb := &table{Sections: []section{{Rows: []row{{Cells: cells}}}}}
	colourRanges{}.colour(tb)
	want := []string{"blue", "yellow", "yellow", "blue", "yellow", "blue", "blue", ""}
	for i, c := range tb.Sections[0].Rows[0].Cells {
		if c.Class != want[i] {
			t.Errorf("%s %.2f: %q, want %q", c.Metric, c.Value, c.Class, want[i])
		}
	}
}

func TestReportCSVAndJSONBothZero(t *testing.T) {
	a := stepRec("a", "point-query", 1, 10000, cnt("major-faults", 0))
	b := stepRec("b", "point-query", 1, 9000, cnt("major-faults", 0))
	rep, err := build([]*record.Record{a, b}, Options{Tables: []string{tableCountersRel}})
	if err != nil {
		t.Fatal(err)
	}
	var c, j bytes.Buffer
	writeCSV(&c, rep)
	if !strings.Contains(c.String(), ",major-faults/o,1,both-zero,") {
		t.Errorf("CSV:\n%s", c.String())
	}
	writeJSON(&j, rep)
	var doc struct {
		Tables []struct {
			Sections []struct {
				Rows []struct {
					Cells []struct {
						Text, State string
						Value       float64
					}
				}
			}
		}
	}
	if err := json.Unmarshal(j.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Tables[0].Sections[0].Rows[0].Cells[0]
	if got.Text != "1" || got.State != "both-zero" || got.Value != 1 {
		t.Errorf("JSON cell %+v, want text 1, state both-zero, value 1", got)
	}
}

// A throughput change inside the no-change band (rQPS 1.01) has no shares:
// computed, wait would be 1 − ln 0.98 / ln(1/1.01) = −103%, a share of
// noise. Every format prints or carries "-" with the reason; a change
// outside the band (rQPS 0.8) keeps its shares.
func TestReportAttributionSmallChange(t *testing.T) {
	recs := []*record.Record{
		// Base: 20000 instructions, CPI 2 and 100 µs of CPU per op.
		stepRec("a", "pq", 1, 10000, cnt("instructions", 2e8), cnt("cycles", 4e8), cnt("task-clock", 1e9)),
		stepRec("a", "up", 1, 10000, cnt("instructions", 2e8), cnt("cycles", 4e8), cnt("task-clock", 1e9)),
		// pq: 10100 ops (rQPS 1.01), 20400 instructions per op (1.02),
		// CPI 1.94 (0.97), 98 µs of CPU per op (0.98).
		stepRec("b", "pq", 1, 10100, cnt("instructions", 20400*10100), cnt("cycles", 1.94*20400*10100), cnt("task-clock", 98000*10100)),
		// up: 8000 ops (rQPS 0.8), 25000 instructions per op (1.25), CPI
		// 2, 125 µs per op: all of ln 1.25 is code.
		stepRec("b", "up", 1, 8000, cnt("instructions", 2e8), cnt("cycles", 4e8), cnt("task-clock", 1e9)),
	}
	opt := Options{Tables: []string{TableRQPS, tableAttribution}}
	rep, err := build(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ row, col, want string }{
		{"pq", "rQPS", "1.01"},
		{"pq", "r(cpu/o)", "0.98"},
		{"pq", "r(instr/o)", "1.02"},
		{"pq", "r(CPI)", "0.97"},
		{"pq", "code", "-"},
		{"pq", "memory", "-"},
		{"pq", "rest", "-"},
		{"pq", "wait", "-"},
		{"pq", "verdict", "none"},
		{"up", "rQPS", "0.80"},
		{"up", "code", "100%"},
		{"up", "memory", "0%"},
		{"up", "rest", "0%"},
		{"up", "wait", "0%"},
		{"up", "verdict", "code"},
	} {
		if got := cell(t, rep, tableAttribution, "b", tc.row, tc.col).Text; got != tc.want {
			t.Errorf("%s %s = %q, want %q", tc.row, tc.col, got, tc.want)
		}
	}
	const note = "-: not computable: rQPS is within 0.95–1.053: a share of a change that small is noise"
	notes := tableNotes(t, rep, tableAttribution, "b")
	if strings.Count(notes, note) != 1 {
		t.Errorf("attribution notes do not say once why the shares are -:\n%s", notes)
	}
	// Its verdicts rest on one window each, which its own note says: the
	// general single-repeat note is not repeated under it.
	if !strings.Contains(notes, "every verdict rests on a single window") || strings.Contains(notes, "every ratio rests") {
		t.Errorf("attribution notes on single windows:\n%s", notes)
	}
	if n := tableNotes(t, rep, TableRQPS, ""); !strings.Contains(n, "every ratio rests on a single repeat (one window) of the version or the base") {
		t.Errorf("rQPS notes do not say the ratios are from one window:\n%s", n)
	}
	for _, format := range []string{"text", "markdown", "html"} {
		var b bytes.Buffer
		if err := Write(&b, format, recs, nil, opt); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "rQPS is within 0.95–1.053: a share of a change that small is noise") {
			t.Errorf("%s output lacks the note on the - shares", format)
		}
		if format == "text" && !strings.Contains(b.String(), "\n1.01 0.98     1.02       0.97   -    -      -    -    none    pq\n") {
			t.Errorf("text row of pq:\n%s", b.String())
		}
	}
	var c bytes.Buffer
	if err := writeCSV(&c, rep); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	shares := 0
	for _, r := range rows[1:] {
		if r[0] != tableAttribution || r[col["step"]] != "pq" || !strings.HasPrefix(r[col["metric"]], "share:") {
			continue
		}
		shares++
		if r[col["value"]] != "" || r[col["text"]] != "-" || r[col["state"]] != "not computable" || r[col["why"]] != whyNoChange {
			t.Errorf("CSV share row %q: want empty value, text -, not computable, why %q", r, whyNoChange)
		}
	}
	if shares != 4 {
		t.Errorf("CSV has %d share rows of pq, want 4", shares)
	}
	var j bytes.Buffer
	if err := writeJSON(&j, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tables []struct {
			ID       string
			Sections []struct {
				Rows []struct {
					Label string
					Cells []struct {
						Text, State, Why, Metric string
						Value                    *float64
					}
				}
			}
		}
	}
	if err := json.Unmarshal(j.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	shares = 0
	for _, tb := range doc.Tables {
		if tb.ID != tableAttribution {
			continue
		}
		for _, s := range tb.Sections {
			for _, r := range s.Rows {
				for _, ce := range r.Cells {
					if r.Label != "pq" || !strings.HasPrefix(ce.Metric, "share:") {
						continue
					}
					shares++
					if ce.Value != nil || ce.Text != "-" || ce.State != "not computable" || ce.Why != whyNoChange {
						t.Errorf("JSON share cell %+v: want no value, -, not computable, why %q", ce, whyNoChange)
					}
				}
			}
		}
	}
	if shares != 4 {
		t.Errorf("JSON has %d share cells of pq, want 4", shares)
	}
}

// A multiplexing warning written under another spelling of the event
// ("cpu-cycles", as the user typed it) concerns the tables of its canonical
// name: it is printed under the cycles and CPI tables, not under
// instructions or task-clock. The Records are schema 1, as perfbench wrote
// them before warnings had codes.
func TestReportMultiplexedAlias(t *testing.T) {
	var recs []*record.Record
	for _, v := range []string{"a", "b"} {
		js := `{"schema":1,"kind":"stat","outcome":"ok","host":"h","version":"` + v + `","step":"point-query","threads":1,"repeat":1,
			"window":{"seconds":10},"ops":{"source":"Questions","count":10000,"per":1},
			"counters":[{"event":"task-clock","raw":1000000000,"time_enabled_ns":10,"time_running_ns":10,"value":1000000000,"status":"counted"},
				{"event":"cycles","raw":1000000000,"time_enabled_ns":10,"time_running_ns":5,"value":2000000000,"status":"scaled"},
				{"event":"instructions","raw":3000000000,"time_enabled_ns":10,"time_running_ns":10,"value":3000000000,"status":"counted"}],
			"warnings":["cpu-cycles was multiplexed: counted 50.0% of the time, value scaled"]}`
		r, err := record.Parse([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, title string
		want      bool
	}{
		{tableCounters, "cycles per operation", true},
		{tableCountersRel, "cycles per operation", true},
		{tableCounters, "CPI", true},
		{tableCounters, "instructions per operation", false},
		{tableCounters, "task-clock", false},
	} {
		n := tableNotes(t, rep, tc.id, tc.title)
		if got := strings.Contains(n, "cpu-cycles was multiplexed"); got != tc.want {
			t.Errorf("%s %q: multiplexing warning present %v, want %v:\n%s", tc.id, tc.title, got, tc.want, n)
		}
	}
}

// whyNoChange is why a share of a change within the noise band is not
// computed, as the report prints it.
const whyNoChange = "rQPS is within 0.95–1.053: a share of a change that small is noise"
