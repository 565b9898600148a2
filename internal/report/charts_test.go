package report

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/perfbench/perfbench/record"
)

var svgText = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)

// svgTexts are the texts an SVG chart prints, in order.
func svgTexts(svg []byte) []string {
	var out []string
	for _, m := range svgText.FindAllSubmatch(svg, -1) {
		out = append(out, html.UnescapeString(string(m[1])))
	}
	return out
}

func decodePNG(t *testing.T, name string, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s.png: %v", name, err)
	}
	return img
}

// spans are, for each bar of colour c in img (rows where the pixels of
// colour c span more than minLen pixels), top to bottom, the width it
// spans: from its first to its last pixel of that colour (the line at 1.0
// crosses the longer bars).
func spans(img image.Image, c color.RGBA, minLen int) []int {
	var out []int
	b := img.Bounds()
	prev := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		first, last := -1, -1
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B {
				if first < 0 {
					first = x
				}
				last = x
			}
		}
		span := last - first + 1
		if span > minLen && prev <= minLen {
			out = append(out, span)
		}
		prev = span
	}
	return out
}

// TestReportCharts draws the fixtures' charts: the texts of each SVG (read
// by hand against the tables), and in the rQPS PNG the bars' lengths
// measured side by side.
func TestReportCharts(t *testing.T) {
	charts, err := Charts(fixtures(t), Options{}, "task-clock")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"rqps_bench1_t1": {"Relative QPS vs mariadb-10.11.6 (host bench1, 1 thread)", "QPS relative to mariadb-10.11.6",
			"0.0", "0.5", "1.0", "qr100", "l.i0", "scan_range=100", "update-index_range=100", "range-covered-pk_range=100", "point-query_range=100",
			"0.80~", "0.90~", "0.90?", "0.80?", "0.80?", "failed", "0.90?p", "0.90?", "0.88?", "-", "1.18?", "-",
			"mariadb-11.4.3", "mariadb-10.11.6-ps",
			"~: not significantly different from the base", "?: from a single repeat, not tested for significance",
			"p: from a window cut short", "failed: the step failed", "-: not recorded or not computable"},
		"heatmap_mariadb-11.4.3_bench1_t1": {"mariadb-11.4.3: ratio to mariadb-10.11.6 per operation " +
			"(host bench1, 1 thread)", "cycles/o", "1.25~", "nc", "0.84?", "r/o: device-wide, every process on nvme0n1, not only the server"},
		"heatmap_mariadb-10.11.6-ps_bench1_t1": {"mariadb-10.11.6-ps: ratio to mariadb-10.11.6 per operation (host bench1, 1 thread)"},
		"series_mariadb-10.11.6_point-query_range=100_bench1_t1": {"mariadb-10.11.6 point-query_range=100, repeat 1: each " +
			"second of the window (host bench1, 1 thread)", "operations per second", "task-clock per operation", "seconds into the window", "10000"},
	}
	order := []string{"rqps_bench1_t1", "heatmap_mariadb-11.4.3_bench1_t1", "heatmap_mariadb-10.11.6-ps_bench1_t1",
		"series_mariadb-10.11.6_point-query_range=100_bench1_t1"}
	if len(charts) != len(order) {
		t.Fatalf("%d charts, want %d", len(charts), len(order))
	}
	for i, c := range charts {
		if c.Name != order[i] {
			t.Errorf("chart %d is %s, want %s", i, c.Name, order[i])
		}
		texts := svgTexts(c.SVG)
		if c.Name == "rqps_bench1_t1" {
			if got := strings.Join(texts, "|"); got != strings.Join(want[c.Name], "|") {
				t.Errorf("%s prints\n%q\nwant\n%q", c.Name, texts, want[c.Name])
			}
		} else {
			all := "|" + strings.Join(texts, "|") + "|"
			for _, w := range want[c.Name] {
				if !strings.Contains(all, "|"+w+"|") {
					t.Errorf("%s lacks %q: %q", c.Name, w, texts)
				}
			}
		}
		if !bytes.Contains(c.SVG, []byte("font-family:'Liberation Sans',Arial,")) || bytes.Contains(c.SVG, []byte("font-family:Liberation Sans;")) {
			t.Errorf("%s.svg names Liberation Sans without a fallback", c.Name)
		}
		img := decodePNG(t, c.Name, c.PNG)
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 100 {
			t.Errorf("%s.png is %v", c.Name, b)
		}
		if c.Name == "rqps_bench1_t1" {
			// mariadb-11.4.3's bars, top to bottom in run order: 0.80,
			// 0.90, 0.80 (scan), 0.90 (update-index), 0.88, 1.184; the
			// legend's swatch is shorter than 50 px.
			bars := spans(img, palette[0], 50)
			if len(bars) != 6 {
				t.Fatalf("%d bars of the first version, want 6: %v", len(bars), bars)
			}
			for i, v := range []float64{0.80, 0.90, 0.80, 0.90, 0.88, 1.184} {
				if got := float64(bars[i]) / float64(bars[0]); math.Abs(got-v/0.80) > 0.01 {
					t.Errorf("bar %d is %.3f of the first, want %.3f (%v)", i, got, v/0.80, bars)
				}
			}
		}
	}
}

// Every repeat with a series is drawn, one line each, in one chart per
// version and step; the rQPS chart explains the markers it prints.
func TestChartsSeriesRepeatsAndLegend(t *testing.T) {
	var recs []*record.Record
	for rep := 1; rep <= 3; rep++ {
		for _, v := range []struct {
			name string
			ops  float64
		}{{"a", 1000}, {"b", 990}} {
			r := record.New(record.KindStep)
			r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h", v.name, "point-query", 1, rep
			r.Window.Seconds = 3
			r.Ops = record.Ops{Source: "Questions", Count: 3 * (v.ops + float64(rep)), Per: 1, Counted: true}
			for s := 1; s <= 3; s++ {
				r.Series = append(r.Series, record.Point{T: float64(s), Seconds: 1, Ops: v.ops + float64(rep)})
			}
			recs = append(recs, r)
		}
	}
	charts, err := Charts(recs, Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range charts {
		names = append(names, c.Name)
	}
	want := "rqps_h_t1 series_a_point-query_h_t1 series_b_point-query_h_t1"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("charts %s, want %s", got, want)
	}
	series := "|" + strings.Join(svgTexts(charts[1].SVG), "|") + "|"
	for _, s := range []string{"a point-query, repeats 1, 2, 3: each second of the windows (host h, 1 thread)", "repeat 1",
		"repeat 2", "repeat 3", "0", "3", "1000"} {
		if !strings.Contains(series, "|"+s+"|") {
			t.Errorf("series chart lacks %q: %s", s, series)
		}
	}
	// One line per repeat, in its own style, and its swatch in the legend:
	// ops per second 1001, 1002, 1003.
	for j := range 3 {
		col := fmt.Sprintf("stroke:#%02X%02X%02X", palette[j].R, palette[j].G, palette[j].B)
		if n := bytes.Count(charts[1].SVG, []byte(col)); n != 2 {
			t.Errorf("repeat %d: %d paths in %s, want 2 (line and swatch)", j+1, n, col)
		}
	}
	// rQPS 0.99 with 3 repeats each is not significant: "~", explained.
	rq := "|" + strings.Join(svgTexts(charts[0].SVG), "|") + "|"
	if !strings.Contains(rq, "|0.99~|") || !strings.Contains(rq, "|~: not significantly different from the base|") {
		t.Errorf("rQPS chart lacks the ~ cell or its legend: %s", rq)
	}
}

// qpsRecs is one step, "point", at which each version after the base ran
// at the given rQPS (the base runs 10 queries in 10 s).
func qpsRecs(rqps map[string]float64, order ...string) []*record.Record {
	recs := []*record.Record{stepRec("base", "point", 1, 10, cnt("task-clock", 1e6))}
	for _, v := range order {
		recs = append(recs, stepRec(v, "point", 1, 10*rqps[v], cnt("task-clock", 1e6)))
	}
	return recs
}

// The rQPS axis has a handful of ticks whatever the range; a bar far
// beyond the others is cut and said so; inf, NaN and 0 draw no garbage.
// (The hand-drawn axis ticked every 0.2: 1e5 gave 500,000 labels, 1e300
// never finished, so 1e5 comes first.)
func TestChartRQPSAnyRange(t *testing.T) {
	for _, tc := range []struct {
		v      float64
		label  string
		cut    bool
		others []string // further texts the chart prints
	}{
		{1e5, "100000.00", true, nil},
		{1e300, "1e+300", true, nil},
		{1e307, "1e+307", true, nil},
		// An infinite QPS is not a measurement: no bar, and "-".
		{math.Inf(1), "-", false, []string{"-: not recorded or not computable"}},
		{math.NaN(), "-", false, []string{"-: not recorded or not computable"}},
		// A window that counted 0 operations has a QPS of 0.
		{0, "0.00", false, nil},
		{5, "5.00", false, []string{"2.50"}},
	} {
		ok := t.Run(tc.label, func(t *testing.T) {
			charts, err := Charts(qpsRecs(map[string]float64{"v": tc.v, "w": 1.1}, "v", "w"), Options{}, "")
			if err != nil {
				t.Fatal(err)
			}
			c := charts[0]
			texts := svgTexts(c.SVG)
			if len(texts) > 25 || len(c.SVG) > 30000 {
				t.Fatalf("%s: %d texts, %d bytes of SVG: %q", c.Name, len(texts), len(c.SVG), texts)
			}
			if bytes.Contains(c.SVG, []byte("NaN")) || bytes.Contains(c.SVG, []byte("Inf")) {
				t.Errorf("SVG has NaN or Inf:\n%s", c.SVG)
			}
			all := "|" + strings.Join(texts, "|") + "|"
			for _, s := range append([]string{tc.label}, tc.others...) {
				if !strings.Contains(all, "|"+s+"|") {
					t.Errorf("chart lacks %q: %q", s, texts)
				}
			}
			ticks := 0
			for _, s := range texts {
				if _, err := fmt.Sscanf(s, "%g", new(float64)); err == nil && s != tc.label && s != "1.10" {
					ticks++
				}
			}
			if ticks < 2 || ticks > 8 {
				t.Errorf("%d tick labels: %q", ticks, texts)
			}
			note := strings.Contains(all, "|//: a bar cut at the end of the axis, its value printed: more than 10 times the "+
				"median of the chart's bars and more than 10 (or more than 1e15)|")
			if note != tc.cut || (len(c.Warnings) == 1) != tc.cut {
				t.Errorf("cut note %v, warnings %q; want cut %v", note, c.Warnings, tc.cut)
			}
		})
		if !ok {
			break // an axis that fails on 1e5 may never finish on 1e300
		}
	}
}

// Versions whose names differ only in letters a file name cannot keep get
// a file each; the count written is the count on disk.
func TestChartFileNamesUnique(t *testing.T) {
	versions := []string{"mariadb-é", "mariadb-è", "mariadb-e", "MariaDB-E", "mariadb-ß", "mariadb-ø"}
	rq := map[string]float64{}
	for i, v := range versions {
		rq[v] = 0.9 + 0.01*float64(i)
	}
	recs := qpsRecs(rq, versions...)
	recs = append(recs, stepRec(strings.Repeat("long-version-", 30), "point", 1, 10, cnt("task-clock", 1e6)))
	charts, err := Charts(recs, Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	// rQPS and one heat map per version but the base.
	if len(charts) != 1+len(versions)+1 {
		t.Fatalf("%d charts", len(charts))
	}
	dir := t.TempDir()
	paths, err := WriteCharts(dir, charts)
	if err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2*len(charts) || len(files) != len(paths) {
		t.Errorf("%d charts, %d paths reported, %d files written", len(charts), len(paths), len(files))
	}
	lower := map[string]bool{}
	var names []string
	for _, c := range charts {
		if lower[strings.ToLower(c.Name)] {
			t.Errorf("two charts named %s (ignoring case)", c.Name)
		}
		lower[strings.ToLower(c.Name)] = true
		names = append(names, c.Name)
		if len(c.Name)+4 > 255 {
			t.Errorf("file name of %d bytes", len(c.Name)+4)
		}
	}
	// Accents are dropped; a name only one chart has is kept as it is;
	// the others get 8 hex digits of a hash.
	got := strings.Join(names, " ")
	for _, re := range []string{`^rqps_h_t1 `, ` heatmap_mariadb-e_h_t1_[0-9a-f]{8} `, ` ` +
		`heatmap_MariaDB-E_h_t1_[0-9a-f]{8} `, ` heatmap_mariadb-__h_t1_[0-9a-f]{8} `, ` heatmap_(long-version-)+long-v[a-z-]*_[0-9a-f]{8}$`} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("names %s do not match %s", got, re)
		}
	}
	if n := strings.Count(got, "heatmap_mariadb-e_h_t1_"); n != 3 {
		t.Errorf("%d charts named heatmap_mariadb-e_h_t1_HASH, want 3 (é, è, e): %s", n, got)
	}
}

// renderBlock draws one block alone as a PNG.
func renderBlock(t *testing.T, b block) []byte {
	t.Helper()
	ch, err := figure{b}.render("test")
	if err != nil {
		t.Fatal(err)
	}
	return ch.PNG
}

// Letters of Latin alphabets print as themselves in the PNG, not as the
// font's box for a missing glyph (U+E000, a private-use code point no font
// maps, draws that box).
func TestChartPNGGlyphs(t *testing.T) {
	sty := textStyle(sans, 12, black)
	// The font itself, without the charts' code points for what it
	// cannot draw (glyphHandler).
	sty.Handler = plot.DefaultTextHandler
	notdef := renderBlock(t, textBlock(sty, "x\uE000"))
	if !bytes.Equal(notdef, renderBlock(t, textBlock(sty, "x\uE001"))) {
		t.Fatal("two unmapped code points render differently: the box cannot be recognized")
	}
	for _, r := range "éèêëàâäåæçñöøœüßÿłżźćńśšžčřďťňěůőűğşıİăâîșțđ" + "αβγδЖЯ" {
		if bytes.Equal(notdef, renderBlock(t, textBlock(sty, "x"+string(r)))) {
			t.Errorf("%c (U+%04X) prints as the missing-glyph box", r, r)
		}
	}
	// The same through the charts: a version named with accents and one
	// named with unmapped code points give different PNGs.
	png := func(v string) []byte {
		charts, err := Charts(qpsRecs(map[string]float64{v: 0.9}, v), Options{}, "")
		if err != nil {
			t.Fatal(err)
		}
		return charts[0].PNG
	}
	if bytes.Equal(png("mariadb-ščř"), png("mariadb-\uE000\uE001\uE002")) {
		t.Error("mariadb-ščř prints as three missing-glyph boxes")
	}
	// Two names the font cannot draw are told apart (code points).
	if bytes.Equal(png("mariadb-\uE000"), png("mariadb-\uE001")) {
		t.Error("mariadb-\\uE000 and mariadb-\\uE001 print the same")
	}
}

// Bars and lines have 60 styles: 49 versions (or repeats) are told apart,
// and with more versions than colours each bar names its version.
func TestChartStyles49(t *testing.T) {
	r := vg.Rectangle{Max: vg.Point{X: 40, Y: 10}}
	for kind, swatch := range map[string]func(int) func(draw.Canvas, vg.Rectangle){"bar": barSwatch, "line": lineSwatch} {
		seen := map[string]int{}
		for j := range 60 {
			img := renderBlock(t, block{w: r.Max.X, h: r.Max.Y, draw: func(c draw.Canvas) {
				swatch(j)(c, vg.Rectangle{Min: c.Min, Max: c.Min.Add(r.Max)})
			}})
			if k, dup := seen[string(img)]; dup {
				t.Errorf("%s styles %d and %d look the same", kind, k, j)
			}
			seen[string(img)] = j
		}
	}
	rq := map[string]float64{}
	var versions []string
	for i := range 49 {
		v := fmt.Sprintf("v%02d", i)
		versions = append(versions, v)
		rq[v] = 1
	}
	charts, err := Charts(qpsRecs(rq, versions...), Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(charts[0].SVG)
	for _, v := range versions {
		n := 0
		for _, s := range texts {
			if s == v || s == "1.00  "+v {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%s is printed %d times, want 2 (legend and bar)", v, n)
		}
	}
}

// A series point without a finite value breaks its line; huge values get
// a handful of ticks.
func TestChartSeriesNonFinite(t *testing.T) {
	r := stepRec("a", "point", 1, 40)
	for i, ops := range []float64{10, math.NaN(), math.Inf(1), 10, 1e300, 10} {
		r.Series = append(r.Series, record.Point{T: float64(i + 1), Seconds: 1, Ops: ops})
	}
	r.Series = append(r.Series, record.Point{T: math.NaN(), Seconds: 1, Ops: 10})
	charts, err := Charts([]*record.Record{r}, Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	svg := charts[0].SVG
	if bytes.Contains(svg, []byte("NaN")) || bytes.Contains(svg, []byte("Inf")) {
		t.Errorf("SVG has NaN or Inf:\n%s", svg)
	}
	if n := len(svgTexts(svg)); n > 20 {
		t.Errorf("%d texts: %q", n, svgTexts(svg))
	}
	// A dot at t=1, a line over t=4..6: the NaN and inf at t=2, 3 and the
	// NaN time break the line.
	col := fmt.Sprintf("#%02X%02X%02X", palette[0].R, palette[0].G, palette[0].B)
	if n, m := bytes.Count(svg, []byte("stroke:"+col)), bytes.Count(svg, []byte("fill:"+col)); n != 1 || m != 1 {
		t.Errorf("%d lines and %d dots, want 1 and 1", n, m)
	}
}
