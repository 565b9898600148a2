package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// cell finds the text of a cell: the first table with that ID whose title
// contains title, the row with that label, the column with that header.
func cell(t *testing.T, rep *report, id, title, row, col string) tableCell {
	t.Helper()
	for _, tb := range rep.Tables {
		if tb.ID != id || !strings.Contains(tb.Title, title) {
			continue
		}
		ci := -1
		for i, h := range tb.Header {
			if h == col {
				ci = i
			}
		}
		if ci < 0 {
			t.Fatalf("table %s %q has no column %q (%q)", id, tb.Title, col, tb.Header)
		}
		for _, s := range tb.Sections {
			for _, r := range s.Rows {
				if r.Label == row {
					return r.Cells[ci]
				}
			}
		}
		t.Fatalf("table %s %q has no row %q", id, tb.Title, row)
	}
	t.Fatalf("no table %s with %q in its title", id, title)
	return tableCell{}
}

// TestReportHandComputedCells checks cells of the fixture report against
// values worked out by hand from the fixture Records.
func TestReportHandComputedCells(t *testing.T) {
	rep, err := build(fixtures(t), Options{Legacy: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, title, row, col, want, why string
	}{
		{TableRQPS, "", "point-query_range=100", "col-1", "0.80~",
			"11.4 ops/s over 3 repeats 8000, 8100, 7900 (median 8000) / base 10000, 10100, 9900 (median 10000); 3 vs 3 repeats: U-test p = 0.1, not significant"},
		{TableRQPS, "", "scan_range=100", "col-1", "0.90?p",
			"11.4 read 1.8e7 rows in its 4 s partial window: 4500 thousand-rows/s; base 5e7 rows in 10 s: 5000; one repeat each while point-query was tested: ?"},
		{tableCPUIORel, "mariadb-11.4.3", "point-query_range=100", "rKB/o", "1~",
			"read_bytes 0 for both versions in every repeat: a ratio of two zeros prints 1, not 1.00"},
		{TableRQPS, "", "update-index_range=100", "col-2", "failed", "the -ps update-index Record failed"},
		{tableCountersRel, "cache-misses per operation", "point-query_range=100", "col-2", "1.67(62%)~",
			"-ps: 3.0e6/90000, 3.1e6/91000, 2.9e6/89000 -> median 33.33; base 2.0e6/100000, 2.1e6/101000, 1.9e6/99000 -> median " +
				"20; 33.33/20 = 1.67, counted 6.2 of 10 s"},
		{tableCountersRel, "cache-misses per operation", "range-covered-pk_range=100", "col-1", "nc", "cache-misses never scheduled on that step"},
		{tableAttribution, "mariadb-11.4.3", "update-index_range=100", "wait", "100%",
			"same CPU per op (4e9 ns / 20000 = 3.2e9 ns / 16000 = 200 µs), rQPS 0.8: all of ln(1/0.8) is waiting"},
		{tableAttribution, "mariadb-11.4.3", "update-index_range=100", "verdict", "wait", ""},
		{tableAttribution, "mariadb-11.4.3", "range-covered-pk_range=100", "code", "46%",
			"instructions/op 2.3625e9/45000 = 52500 vs 50000: ln 1.05 / ln(1/0.9) = 0.04879/0.10536 = 0.463"},
		{tableAttribution, "mariadb-11.4.3", "range-covered-pk_range=100", "memory", "54%",
			"CPI 5e9/2.3625e9 = 2.1164 vs 2: ln 1.0582 / 0.10536 = 0.537"},
		{tableAttribution, "mariadb-11.4.3", "range-covered-pk_range=100", "verdict", "mixed", "neither share reaches 60%"},
		{tableAttribution, "mariadb-10.11.6-ps", "range-covered-pk_range=100", "verdict", "memory",
			"instructions/op 2e9/40000 = 50000 (same), CPI 2.5 vs 2, cpu/o 225 vs 180 µs: all of ln 1.25 is CPI"},
		{tableCPUIO, "mariadb-10.11.6 (", "update-index_range=100", "cpu/o", "200.0", "task-clock 4e9 ns / 20000 ops = 200 µs"},
		{tableCPUIO, "mariadb-10.11.6 (", "update-index_range=100", "r/o", "0.0500", "1000 disk reads / 20000 ops"},
		{tableCPUIO, "mariadb-10.11.6 (", "update-index_range=100", "rKB/o", "0.400", "read_bytes 16000×512 = 8192000 / 1024 / 20000"},
		{tableCPUIO, "mariadb-10.11.6 (", "update-index_range=100", "wKB/o", "1.60", "write_bytes 64000×512 / 1024 / 20000"},
		{tableInsertLine, "l.i0", "mariadb-10.11.6", "cpups", "70.4", "task-clock 112.64 s / (10 s × 16 CPUs)"},
		{tableInsertLine, "l.i0", "mariadb-10.11.6", "wmbps", "143.2", "2932736 sectors × 512 B / 2^20 / 10 s"},
		{tableInsertLine, "l.i0", "mariadb-10.11.6", "cspq", "0.137", "821740 context switches / 6e6 inserts"},
		{tableInsertLine, "l.i0", "mariadb-10.11.6", "cpupq", "19", "112.64e6 µs / 6e6 inserts = 18.77"},
		{tableInsertLine, "l.i0", "mariadb-10.11.6", "dbgb2", "6.9", "as recorded"},
		{tableInsertHist, "l.i0", "mariadb-10.11.6", "1s", "nonzero", "20 of 6e6 inserts = 0.00033%"},
		{tableInsertHist, "l.i0", "mariadb-10.11.6", "1ms", "23.026", "1381560 / 6e6"},
		// 11.4.3 inserted 750/s of qr100's 800 target (below 95%): the
		// ratio of its queries/s can be ignored, as its absolute cell says.
		{tableInsertRel, "", "mariadb-11.4.3", "qr100", "1.18?!", "404620 / 341720 queries; one repeat each; below target"},
		{tableInsert, "", "mariadb-11.4.3", "qr100", "40462!", "404620 queries / 10 s while inserting 750/s of a target of 800 (< 760): can be ignored"},
		{tableInsertTarget, "", "mariadb-10.11.6", "qr100", "797", "7970 inserts / 10 s = 797 >= 760"},
		{tableInsertTarget, "", "mariadb-11.4.3", "qr100", "750!", "7500 inserts / 10 s = 750 < 95% of 800"},
		{tableInsertTarget, "", "target", "qr100", "800", "both Records' target_inserts_per_second"},
		{tableInsertHist, "Query response time histogram: qr100", "mariadb-10.11.6", "1ms", "14.773", "legacy histogram: 50481 / 341720 queries"},
		{tableInsertHist, "Query response time histogram: qr100", "mariadb-10.11.6", "max", "0.020", "max_op_seconds, no max_seconds entry for queries"},
		{tableInsertHist, "Insert response time histogram: qr100", "mariadb-10.11.6", "4ms", "72.886", "5809 / 7970 inserts"},
		{tableInsertHist, "Delete response time histogram: qr100", "mariadb-10.11.6", "16ms", "0.038", "3 / 7970 deletes = 0.0376%"},
		{tableInsertHist, "Delete response time histogram: qr100", "mariadb-11.4.3", "4ms", "69.960", "5247 / 7500 deletes"},
		{tableInsertHist, "Delete response time histogram: qr100", "mariadb-11.4.3", "max", "0.018", "max_seconds.delete"},
		{tableInsertLine, "qr100", "mariadb-11.4.3", "wpi", "0.019", "141 writes / 7500 inserts = 0.0188"},
		// Only repeat 1 of the 3 has thread roles: the share rests on it.
		{tableRoles, "mariadb-10.11.6 point-query", "connection", "instructions", "75.0%[1/3]", "0.75 of 2e9 instructions in repeat 1, the only one of 3 with roles"},
	} {
		got := cell(t, rep, tc.id, tc.title, tc.row, tc.col)
		if got.Text != tc.want {
			t.Errorf("%s %q, row %s, column %s = %q, want %q (%s)", tc.id, tc.title, tc.row, tc.col, got.Text, tc.want, tc.why)
		}
	}
	// Absolute QPS: medians 10000, 8000, 9000 with 3 repeats, no ratio test.
	for col, want := range map[string]string{"col-1": "10000", "col-2": "8000", "col-3": "9000"} {
		if got := cell(t, rep, tableQPS, "", "point-query_range=100", col).Text; got != want {
			t.Errorf("QPS %s = %q, want %q", col, got, want)
		}
	}
	// Average of 11.4's ratios: (0.8 + 0.9 + 0.9 + 0.8 + 530000/600000) /
	// 5 = 4.2833 / 5 = 0.857; the scan ratio is partial; qr100's
	// 40462/34172 is left out: 11.4 inserted 750/s of a target of 800
	// there (marked "!").
	if got := cell(t, rep, tableAverage, "", "average", "col-1").Text; got != "0.857p" {
		t.Errorf("average = %q, want 0.857p", got)
	}
	// L1-icache-loads is not supported wherever a step did not fail: its
	// tables are left out, and said so once at the top.
	for _, tb := range rep.Tables {
		if strings.Contains(tb.Title, "L1-icache-loads") {
			t.Errorf("table %q is printed: every cell is n/a", tb.Title)
		}
	}
	if want := "not supported where measured, tables left out: L1-icache-loads, L1-icache-loads (legacy normalization) " +
		"(n/a in every cell but those of failed steps)"; len(rep.Notes) != 1 || rep.Notes[0] != want {
		t.Errorf("report notes %q, want %q", rep.Notes, want)
	}
	// The warm-up step is left out and said so.
	if len(rep.Warnings) == 0 || !strings.Contains(rep.Warnings[0], "point-query.warm_range=100") {
		t.Errorf("warnings %q do not name the warm-up step left out", rep.Warnings)
	}
}

func TestReportNotesCarryRecordWarnings(t *testing.T) {
	rep, err := build(fixtures(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := func(id, title string) string {
		for _, tb := range rep.Tables {
			if tb.ID == id && strings.Contains(tb.Title, title) {
				return strings.Join(tb.Notes, "\n")
			}
		}
		t.Fatalf("no table %s %q", id, title)
		return ""
	}
	rqps := notes(TableRQPS, "")
	for _, want := range []string{
		"error 2013 (Lost connection",                  // the failed step's reason
		"interrupted by SIGINT",                        // the partial step's reason
		"no difference can be significant at α = 0.05", // three repeats only
	} {
		if !strings.Contains(rqps, want) {
			t.Errorf("rQPS notes lack %q:\n%s", want, rqps)
		}
	}
	// The multiplexing of cache-misses concerns the tables computed from
	// cache-misses, once each, and not throughput or other counters.
	const mux = "mariadb-10.11.6-ps (host bench1, 1 thread) point-query_range=100: cache-misses was multiplexed"
	for _, tc := range []struct {
		id, title string
		want      bool
	}{
		{tableCountersRel, "cache-misses per operation", true},
		{tableCountersRel, "cache-misses per 1,000 instructions", true},
		{tableCorrelation, "mariadb-10.11.6-ps", true},
		{TableRQPS, "", false},
		{tableQPS, "", false},
		{tableCountersRel, "cycles per operation", false},
		{tableCPUIO, "mariadb-10.11.6-ps", false},
	} {
		n := strings.Count(notes(tc.id, tc.title), mux)
		if tc.want && n != 1 || !tc.want && n != 0 {
			t.Errorf("%s %q: the multiplexing warning is in the notes %d times", tc.id, tc.title, n)
		}
	}
}

func TestReportHTMLSelfContainedAndColoured(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "html", fixtures(t), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	for _, bad := range []string{"<script", "<link", "src=", "http://", "https://", "@import", "url("} {
		if strings.Contains(h, bad) {
			t.Errorf("HTML contains %q: it must not load anything", bad)
		}
	}
	for _, want := range []string{
		`<td style="background:#ffff99">0.80~</td>`, // rQPS 0.80 < 0.95: yellow
		// rQPS 1.18 > 1.05 on qr100, where 11.4 did not sustain the
		// target insert rate: marked, grey, never blue (issue 29 item 6).
		`<td style="background:#d9d9d9">1.18?!</td>`,
		// cpu/o relative, lower is better: 1.25 (point-query, 11.4) is
		// worse: yellow; 0.84 (qr100, 11.4: 210.8 / 249.6 µs) is better:
		// blue.
		`<td class="l">point-query_range=100</td><td style="background:#ffff99">0.80~</td><td style="background:#ffff99">1.25~</td>`,
		`<td class="l">qr100</td><td style="background:#d9d9d9">1.18?!</td><td style="background:#99ccff">0.84?</td>`,
		// qr100 max response time 0.020 s vs 0.006 s (lower is better):
		// 0.006 < 80% of 0.020, so the worst gets red, the best green.
		`<td style="background:#ff9999">0.020</td>`,
		`<td style="background:#99ee99">0.006</td>`,
		// l.i0 max 0.267 vs 0.333: 0.267 >= 0.8 × 0.333, no red.
		`<td>0.333</td>`,
		// qr100: 11.4 inserted 750/s of a target of 800: red in the
		// target table, its queries/s grey in the throughput table.
		`<td style="background:#ff9999">750!</td>`,
		`<td style="background:#d9d9d9">40462!</td>`,
		// qr100 delete max 0.011 vs 0.018 s: green and red.
		`<td style="background:#99ee99">0.011</td></tr>`,
		`<td style="background:#ff9999">0.018</td></tr>`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
}

func TestReportJSONAndCSVParse(t *testing.T) {
	recs := fixtures(t)
	var j bytes.Buffer
	if err := Write(&j, "json", recs, []string{"a load warning"}, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Base     string
		Tables   []json.RawMessage
		Warnings []string
	}
	if err := json.Unmarshal(j.Bytes(), &doc); err != nil {
		t.Fatalf("JSON output does not parse: %v", err)
	}
	if doc.Base != "mariadb-10.11.6" || len(doc.Tables) == 0 || doc.Warnings[0] != "a load warning" {
		t.Errorf("JSON: base %q, %d tables, warnings %q", doc.Base, len(doc.Tables), doc.Warnings)
	}
	var c bytes.Buffer
	if err := Write(&c, "csv", recs, nil, Options{Tables: []string{TableRQPS}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(c.String()), "\n")
	if lines[0] != strings.Join(csvHeader, ",") {
		t.Errorf("CSV header %q", lines[0])
	}
	// 6 steps × 2 versions in the rQPS table.
	if len(lines) != 1+12 {
		t.Errorf("CSV has %d lines, want 13", len(lines))
	}
}

func TestReportUnknownTableAndFormat(t *testing.T) {
	if _, err := build(fixtures(t), Options{Tables: []string{"rqps", "bogus"}}); !errors.Is(err, ErrUnknownTable) {
		t.Errorf("unknown table: %v", err)
	}
	if err := Write(&bytes.Buffer{}, "pdf", fixtures(t), nil, Options{}); !errors.Is(err, errUnknownFormat) {
		t.Errorf("unknown format: %v", err)
	}
}

func TestReadCSV(t *testing.T) {
	recs, err := readCSV(strings.NewReader("version,step,threads,metric,value\nv1,s,2,qps,100\nv1,s,2,instructions,n/a\nv2,s,2,qps,80\n"), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Version != "v1" || recs[0].Threads != 2 || recs[0].Repeat != 1 ||
		recs[0].Metrics["qps"] != 100 || len(recs[0].Counters) != 1 || recs[0].Counters[0].Status != "not supported" {
		t.Fatalf("parsed %+v", recs[0])
	}
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"version,step,metric,value\n", `no "threads" column`},
		{"version,step,threads,metric,value,colour\n", `unknown column "colour"`},
		{"version,step,threads,metric,value\nv,s,1,qps,abc\n", `line 2: value "abc"`},
		{"version,step,threads,metric,value\nv,s,x,qps,1\n", `threads "x"`},
		{"version,step,threads,metric,value\nv,s,1,qps,1\nv,s,1,qps,2\n", "already given on line 2"},
		{"version,step,threads,metric,value\nv,s,1,cpu/o,n/a\n", "only a perf event"},
		{"version,step,threads,metric,value\nv,s,1\n", "3 fields"},
		{"version,step,threads,metric,value\n", "no rows"},
	} {
		_, err := readCSV(strings.NewReader(tc.in), "t.csv")
		if !errors.Is(err, errCSV) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadCSV(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

// TestReportRepeatsIntervalsAndManyComparisons: 10 steps, 6 repeats per
// version. Base ops 1000..1005 per 10 s (o/s 100..100.5, median 100.25),
// the new version 800..805 (80..80.5, median 80.25). The new version's 95%
// interval of the median with 6 repeats is [min, max] = [80, 80.5]: half-width
// 0.25/80.25 = 0.31%. The ratio's interval comes from a bootstrap of both
// samples: [0.7980, 0.8030] around 0.8005, ±0.31%. Every step is
// significant (U test p = 2/924 = 0.002), and 10 comparisons at α = 0.05
// earn the multiple-comparison note.
func TestReportRepeatsIntervalsAndManyComparisons(t *testing.T) {
	var recs []*record.Record
	for s := 0; s < 10; s++ {
		for i := 0; i < 6; i++ {
			for _, v := range []struct {
				name string
				ops  float64
			}{{"base", 1000}, {"new", 800}} {
				r := record.New(record.KindStep)
				r.Version, r.Step, r.Threads, r.Repeat = v.name, fmt.Sprintf("point-query-%02d", s), 1, i+1
				r.Window.Seconds = 10
				r.Ops = record.Ops{Source: "Questions", Count: v.ops + float64(i), Per: 1, Counted: true}
				recs = append(recs, r)
			}
		}
	}
	rep, err := build(recs, Options{Tables: []string{TableRQPS, tableQPS}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cell(t, rep, TableRQPS, "", "point-query-03", "col-1").Text; got != "0.80±0.3%" {
		t.Errorf("rQPS cell %q, want 0.80±0.3%%", got)
	}
	// Absolute: median 100.25 printed as 100, interval [100, 100.5]:
	// 0.25/100.25 = 0.25%.
	if got := cell(t, rep, tableQPS, "", "point-query-03", "col-1").Text; got != "100±0.2%" {
		t.Errorf("QPS cell %q, want 100±0.2%%", got)
	}
	notes := strings.Join(rep.Tables[0].Notes, "\n")
	for _, want := range []string{
		"±x%: half-width of the 95% confidence interval of the median",
		"10 comparisons to the base at α = 0.05: about 0.5 of them are expected to look significant by chance alone",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "~") {
		t.Errorf("a significant difference is marked ~:\n%s", notes)
	}
}
