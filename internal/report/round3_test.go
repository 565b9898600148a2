package report

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/font"

	"github.com/perfbench/perfbench/record"
)

// Tests of issue 29, items 6 to 9: reports that cannot mislead, round 3.

// A base whose throughput is subnormal (1e-321/s) is not 0: the ratio
// overflows float64, and the report says so rather than printing inf with
// the note that the base's value is 0.
func TestReportSubnormalBaseIsNotZero(t *testing.T) {
	recs := []*record.Record{stepRec("base", "s", 1, 1e-320), stepRec("v", "s", 1, 10000), stepRec("base", "t", 1, 1000), stepRec("v", "t", 1, 1000)}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := cell(t, rep, TableRQPS, "", "s", "col-1")
	notes := tableNotes(t, rep, TableRQPS, "")
	if c.Text == "inf" || strings.Contains(notes, "the base's value is 0") {
		t.Errorf("rqps of 1000/s over 1e-321/s = %q with notes %q: the base is not 0", c.Text, notes)
	}
	if c.Text != "-" || !strings.Contains(notes, "too close to 0") {
		t.Errorf("rqps = %q with notes %q, want - and a note that the base is too close to 0 to divide by", c.Text, notes)
	}
}

// Any finite value prints short and true: 1e300 operations per second is
// not 300 digits (of which all but the first 16 are float noise).
func TestFormatHugeValuesShort(t *testing.T) {
	for _, f := range []struct {
		name string
		f    numFormat
	}{{"ratio", fmtRatio}, {"ratio3", fmtRatio3}, {"int", fmtInt}, {"abs", fmtAbs}, {"qps", fmtQPS}, {"pct", fmtPct}, {"hist", fmtHist}, {"share", func(v float64) string { return fmtShare(v / 100) }}} {
		for _, v := range []float64{1e300, -2.5e300, 1.7e308, 1e16, 123456789012345678} {
			s := f.f(v)
			if len(s) > 12 {
				t.Errorf("%s(%g) = %q: %d characters", f.name, v, s, len(s))
			}
			got, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
			if err != nil || got/v < 0.99 || got/v > 1.01 {
				t.Errorf("%s(%g) = %q, which does not read back as the value", f.name, v, s)
			}
		}
		// Below the cut, the published forms stay.
		if s := f.f(123456); strings.ContainsAny(s, "e") {
			t.Errorf("%s(123456) = %q, want no exponent", f.name, s)
		}
	}
	rep, err := build([]*record.Record{stepRec("base", "s", 1, 1e301), stepRec("v", "s", 1, 2e301)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := cell(t, rep, tableQPS, "", "s", "col-1"); c.Text != "1.00e+300" {
		t.Errorf("qps of 1e301 ops in 10 s = %q, want 1.00e+300", c.Text)
	}
}

// A below-target insert step (b inserted 90/s of a target of 100) shows
// its "!" in every table that shows its throughput, grey and never
// "better", and stays out of the average, the summary and the
// attribution: the rqps table printed 1.50, blue in HTML, and it entered
// both.
func TestBelowTargetMarkedEverywhere(t *testing.T) {
	recs := []*record.Record{
		insertRecord("a", 1000, 10000, 100), insertRecord("b", 900, 15000, 100),
		stepRec("a", "point", 1, 10000), stepRec("b", "point", 1, 8000),
	}
	for _, r := range recs {
		r.Host = "h"
	}
	opt := Options{Groups: map[string]string{"q100.1": "point", "point": "point"}}
	rep, err := build(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, title, row, col, want string }{
		{TableRQPS, "", "q100.1", "col-1", "1.50!"},
		{tableQPS, "", "q100.1", "col-2", "1500!"},
		{tableAttribution, ": b", "q100.1", "rQPS", "1.50!"},
		{tableAverage, "", "q100.1", "col-1", "1.500!"},
	} {
		c := cell(t, rep, tc.id, tc.title, tc.row, tc.col)
		if c.Text != tc.want || !c.BelowTarget || c.Class != "grey" {
			t.Errorf("%s %s %s = %q below %v class %q, want %q below target, grey", tc.id, tc.row, tc.col, c.Text, c.BelowTarget, c.Class, tc.want)
		}
	}
	// The base's own queries/s is no ratio: a sustained its target.
	if c := cell(t, rep, tableQPS, "", "q100.1", "col-1"); c.BelowTarget {
		t.Errorf("qps of a (1000/s at a target of 100 per 10 s) = %q marked below target", c.Text)
	}
	if c := cell(t, rep, tableAttribution, ": b", "q100.1", "verdict"); c.Text != "n/a" {
		t.Errorf("attribution verdict of a below-target step = %q, want n/a", c.Text)
	}
	// The average and the summary's mean are point's 0.80 alone.
	if c := cell(t, rep, tableAverage, "", "average", "col-1"); c.Text != "0.800" {
		t.Errorf("average = %q, want 0.800 (q100.1's 1.50 left out)", c.Text)
	}
	if c := cell(t, rep, tableSummary, "Summary", "b", "point"); c.Text != "0.80" {
		t.Errorf("summary mean = %q, want 0.80 (q100.1's 1.50 left out)", c.Text)
	}
	for _, id := range []string{TableRQPS, tableAverage, tableAttribution, tableSummary} {
		if n := tableNotes(t, rep, id, ""); !strings.Contains(n, "target insert rate") {
			t.Errorf("%s notes say nothing of the target insert rate:\n%s", id, n)
		}
	}
	var h strings.Builder
	if err := Write(&h, "html", recs, nil, opt); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.String(), `#99ccff">1.50`) {
		t.Error("HTML paints the below-target 1.50 blue (better)")
	}
}

// Labels in letters the charts' font lacks (CJK, emoji) are written so
// that the PNG draws every character of them and no two differ only in
// what it cannot draw: "数据库-8.0" and "数据仓-8.0" both printed "-8.0".
func TestChartLabelsTheFontCannotDraw(t *testing.T) {
	v1, v2, v3 := "数据库-8.0", "数据仓-8.0", "db🚀"
	charts, err := Charts(qpsRecs(map[string]float64{v1: 0.9, v2: 1.1, v3: 1}, v1, v2, v3), Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var buf sfnt.Buffer
	face := font.DefaultCache.Lookup(sans, 10)
	for _, c := range charts {
		texts := svgTexts(c.SVG)
		for _, s := range texts {
			for _, r := range s {
				if i, err := face.Face.GlyphIndex(&buf, r); err != nil || i == 0 {
					t.Errorf("%s: text %q has %q, which Liberation Sans cannot draw: the PNG shows nothing for it", c.Name, s, r)
				}
			}
		}
		if !strings.HasPrefix(c.Name, "rqps_") {
			continue
		}
		legend := map[string]bool{}
		for _, s := range texts {
			if strings.HasSuffix(s, "-8.0") {
				legend[s] = true
			}
		}
		if len(legend) != 2 || !legend["‹U+6570›‹U+636E›‹U+5E93›-8.0"] {
			t.Errorf("%s: legend texts of %s and %s are %v, want two different ones, each character written", c.Name, v1, v2, legend)
		}
		all := strings.Join(c.Warnings, "\n")
		for _, w := range []string{"数 U+6570", "仓 U+4ED3", "🚀 U+1F680"} {
			if !strings.Contains(all, w) {
				t.Errorf("%s: warnings %q do not name %s", c.Name, c.Warnings, w)
			}
		}
		if !strings.Contains(strings.Join(texts, "|"), "cannot draw") {
			t.Errorf("%s: the chart does not say what ‹U+...› is: %q", c.Name, texts)
		}
	}
	// A label that writes a code point itself is not taken for one.
	if a, b := drawable("‹U+6570›"), drawable("数"); a == b {
		t.Errorf("drawable(%q) = drawable(%q) = %q", "‹U+6570›", "数", a)
	}
}

// The summary's range mean takes a scan step's rQPS, a ratio of rows read
// per second: its notes say so as the rqps table's do.
func TestSummaryScanStepNote(t *testing.T) {
	rep, err := build(fixtures(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := tableNotes(t, rep, TableRQPS, ""); !strings.Contains(n, "scan_range=100: o/s is thousands of rows read") {
		t.Fatalf("the rqps table does not note the scan step (the fixtures changed?):\n%s", n)
	}
	if n := tableNotes(t, rep, tableSummary, "Summary"); !strings.Contains(n, "scan_range=100: the rQPS that enters the means") || !strings.Contains(n, "rows read per second") {
		t.Errorf("the summary's notes do not say that scan_range=100's rQPS in the range mean is of rows read:\n%s", n)
	}
}

// The CPU and IO table's units note names the columns it shows, each of
// them, and no other: without disk statistics it listed r/o, rKB/o and
// wKB/o (and never w/o, which it shows when there are).
func TestCPUIOUnitsOfShownColumns(t *testing.T) {
	for _, disk := range []bool{false, true} {
		var recs []*record.Record
		for _, v := range []string{"a", "b"} {
			r := stepRec(v, "s", 1, 1000, cnt("task-clock", 1e9), cnt("context-switches", 500))
			if disk {
				r.OS = &record.OS{Disk: &record.Disk{Reads: 10, Writes: 20, ReadSectors: 80, WriteSectors: 160}}
			}
			recs = append(recs, r)
		}
		rep, err := build(recs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range rep.Tables {
			if tb.ID != tableCPUIO {
				continue
			}
			units := tb.Notes[0]
			named := map[string]bool{}
			for _, part := range strings.Split(units, "; ") {
				cols, _, ok := strings.Cut(part, ": ")
				if !ok {
					t.Fatalf("%s: units note %q is not 'cols: what; ...'", tb.Title, units)
				}
				for _, c := range strings.Split(cols, ", ") {
					named[c] = true
				}
			}
			for c := range named {
				if !slices.Contains(tb.Header, c) {
					t.Errorf("disk %v, %s: the units note names %s, a column not shown (%q): %q", disk, tb.Title, c, tb.Header, units)
				}
			}
			for _, h := range tb.Header {
				if !named[h] {
					t.Errorf("disk %v, %s: column %s has no unit in %q", disk, tb.Title, h, units)
				}
			}
		}
	}
}

// Markdown passes HTML through: a version named <script>...</script> in a
// legend ran as a script in a Markdown viewer. Every text is escaped.
func TestMarkdownEscapesHTML(t *testing.T) {
	v := `<script>alert("x")</script>&amp;\`
	recs := []*record.Record{stepRec("base", "s", 1, 1000), stepRec(v, "s", 1, 900)}
	var md strings.Builder
	if err := Write(&md, "markdown", recs, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if strings.Contains(out, "<script") || strings.Contains(out, "</script") {
		t.Errorf("Markdown passes <script> through:\n%s", out)
	}
	// The legend line, as a Markdown viewer shows it: the name as typed.
	if want := `- col-1 : &lt;script>alert("x")&lt;/script>&amp;amp;\\`; !strings.Contains(out, want+"\n") {
		t.Errorf("Markdown legend lacks %q:\n%s", want, out)
	}
}

// An insert-benchmark load step's o/s is inserts per second: the QPS and
// rqps tables say so (and that a read+write step's is queries), as they
// do of scan steps' rows read.
func TestInsertStepsUnitNote(t *testing.T) {
	rep, err := build(fixtures(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{tableQPS, TableRQPS, tableAverage} {
		n := tableNotes(t, rep, id, "")
		if !strings.Contains(n, "l.i0: insert benchmark: an operation is an insert") || !strings.Contains(n, "o/s is inserts per second") {
			t.Errorf("%s: the notes do not say that l.i0's o/s is inserts per second:\n%s", id, n)
		}
		if !strings.Contains(n, "qr100: insert benchmark: an operation is a query") {
			t.Errorf("%s: the notes do not say that qr100's o/s is queries per second:\n%s", id, n)
		}
	}
	// Steps of other benchmarks get no such note.
	rep, err = build([]*record.Record{stepRec("a", "point", 1, 1000), stepRec("b", "point", 1, 900)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := tableNotes(t, rep, tableQPS, ""); strings.Contains(n, "insert") {
		t.Errorf("a sysbench step's QPS notes speak of inserts:\n%s", n)
	}
}

// A TopDown cell whose events the base recorded as not supported is n/a
// (and the notes say what n/a is), not "-", which reads "not recorded".
func TestTopDownCellNotSupported(t *testing.T) {
	td := map[string]float64{"cpu/slots/": 12.6e6, "cpu/topdown-retiring/": 4.2e6, "cpu/topdown-bad-spec/": 1e6,
		"cpu/topdown-fe-bound/": 1.9e6, "cpu/topdown-be-bound/": 5.5e6, "cpu/event=0xad,umask=0x10/": 1e6,
		"instructions": 5.25e6, "cycles": 3.15e6}
	base := tdStep("base", 10, map[string]float64{"instructions": 5e6, "cycles": 2.5e6})
	for e := range td {
		if e != "instructions" && e != "cycles" {
			base.Counters = append(base.Counters, unsupported(e))
		}
	}
	rep, err := build([]*record.Record{base, tdStep("v", 12.5, td)}, Options{Base: "base"})
	if err != nil {
		t.Fatal(err)
	}
	c := cell(t, rep, tableAttribution, "v", "point-query", "topdown")
	if c.Text != "n/a" {
		t.Errorf("topdown with the base's TopDown events not supported = %q, want n/a", c.Text)
	}
	if n := tableNotes(t, rep, tableAttribution, "v"); !strings.Contains(n, "n/a: event not supported") {
		t.Errorf("the attribution notes do not say what n/a is:\n%s", n)
	}
}

// Two repeats of a rotation of three groups: group 3's events were counted
// in no repeat. The report asked for the counters tables says so (it
// dropped them without a word) and names no "repeat 3", which never ran.
func TestRotationTooFewRepeats(t *testing.T) {
	groups := [][]string{{"cache-misses"}, {"branch-misses"}, {"page-faults"}}
	var recs []*record.Record
	for _, v := range []string{"a", "b"} {
		for r := 1; r <= 2; r++ {
			rec := stepRec(v, "s", r, 1000, cnt("task-clock", 1e9), cnt(groups[r-1][0], 5000))
			rec.Rotation = &record.Rotation{Budget: 1, Source: "--pmu-budget", Anchors: []string{"task-clock"}, Groups: groups, Group: r}
			recs = append(recs, rec)
		}
	}
	for _, tables := range [][]string{{"counters"}, nil} {
		var b strings.Builder
		if err := Write(&b, "text", recs, nil, Options{Tables: tables}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "counted in no repeat, too few repeats for the event rotation (3 groups, one a repeat): page-faults, in a s (host h, 1 thread, 2 repeats ran); b s (host h, 1 thread, 2 repeats ran)") ||
			!strings.Contains(out, "run at least 3 repeats") {
			t.Errorf("--tables %v: the report does not say that page-faults was counted in no repeat:\n%s", tables, out)
		}
		if strings.Contains(out, "repeat 3") {
			t.Errorf("--tables %v: the report names repeat 3, which never ran:\n%s", tables, out)
		}
	}
}

// Repeats over 1 s and 100 s windows make one median without a word;
// the report now names the cell and the lengths.
func TestRepeatsOfDifferentWindows(t *testing.T) {
	recs := []*record.Record{stepRec("a", "s", 1, 1000), stepRec("a", "s", 2, 1000), stepRec("b", "s", 1, 1000), stepRec("b", "s", 2, 1000)}
	recs[1].Window.Seconds = 100
	recs[1].Ops.Count = 10000 // 100/s, as the others
	for _, tables := range [][]string{{"rqps"}, nil} {
		var b strings.Builder
		if err := Write(&b, "text", recs, nil, Options{Tables: tables}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "repeats with windows of very different lengths") || !strings.Contains(b.String(), "a s (host h, 1 thread): 2 repeats, windows of 10 s to 100 s") {
			t.Errorf("--tables %v: no note on a's windows of 10 s and 100 s:\n%s", tables, b.String())
		}
		if strings.Contains(b.String(), "b s (host h") {
			t.Errorf("--tables %v: b's repeats, both 10 s, are named:\n%s", tables, b.String())
		}
	}
}

// The base at 8 threads and the version at 16: no rQPS can be computed,
// and the report says why, whichever tables are asked for (it printed no
// rqps table and no word).
func TestBaseAtOtherThreadCount(t *testing.T) {
	a, b := stepRec("a", "s", 1, 1000), stepRec("b", "s", 1, 900)
	a.Threads, b.Threads = 8, 16
	for _, tables := range [][]string{{"rqps"}, nil} {
		var out strings.Builder
		if err := Write(&out, "text", []*record.Record{a, b}, nil, Options{Tables: tables}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "no rQPS where the base (a) did not run the step at the same thread count") ||
			!strings.Contains(out.String(), "b s at 16 threads on host h (the base ran it at 8)") {
			t.Errorf("--tables %v: no note on why b has no rQPS:\n%s", tables, out.String())
		}
	}
	// At the same thread count, no such note.
	b.Threads = 8
	var out strings.Builder
	if err := Write(&out, "text", []*record.Record{a, b}, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "no rQPS where") {
		t.Errorf("a note on thread counts where they match:\n%s", out.String())
	}
}
