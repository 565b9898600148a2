package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// TestReportCharts draws the fixtures' charts: SVG compared with golden
// files, PNG decoded and probed where the hand-computed layout puts a bar.
func TestReportCharts(t *testing.T) {
	charts, err := Charts(fixtures(t), Options{}, "task-clock")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"rqps_bench1_t1",
		"heatmap_mariadb-11.4.3_bench1_t1",
		"heatmap_mariadb-10.11.6-ps_bench1_t1",
		"series_mariadb-10.11.6_point-query_range=100_bench1_t1",
	}
	if len(charts) != len(want) {
		t.Fatalf("%d charts, want %d", len(charts), len(want))
	}
	for i, c := range charts {
		if c.Name != want[i] {
			t.Errorf("chart %d is %s, want %s", i, c.Name, want[i])
		}
		golden(t, c.Name+".svg", c.SVG)
		img, err := png.Decode(bytes.NewReader(c.PNG))
		if err != nil {
			t.Fatalf("%s.png: %v", c.Name, err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 100 {
			t.Errorf("%s.png is %v", c.Name, b)
		}
		if c.Name == "rqps_bench1_t1" {
			// The step labels are at most 26 characters of 7 px: the plot
			// starts at x = 26×7+12 = 194. The axis runs to ceil(1.184×5)/5
			// = 1.2 over 480 px. The first bar (11.4 on point-query, rQPS
			// 0.80) spans y 54–64 and x 194 to 194+0.8/1.2×480 = 514.
			probe(t, img, 200, 58, palette[0])
			probe(t, img, 510, 58, palette[0])
			probe(t, img, 516, 56, color.RGBA{255, 255, 255, 255})
			// The second bar (-ps, 0.90) runs to 194+0.9/1.2×480 = 554.
			probe(t, img, 550, 68, palette[1])
		}
	}
}

func probe(t *testing.T, img image.Image, x, y int, want color.RGBA) {
	t.Helper()
	r, g, b, _ := img.At(x, y).RGBA()
	if got := (color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}); got != want {
		t.Errorf("pixel (%d, %d) = %v, want %v", x, y, got, want)
	}
}

func TestChartAxes(t *testing.T) {
	for v, want := range map[float64]float64{10000: 10000, 10001: 20000, 0.37: 0.4, 45: 60, 170000: 200000, 7.2: 8, 0: 1} {
		if got := niceTop(v); got != want {
			t.Errorf("niceTop(%v) = %v, want %v", v, got, want)
		}
	}
	for tmax, want := range map[float64]float64{5: 1, 10: 1, 11: 2, 60: 10, 300: 30} {
		if got := secondStep(tmax); got != want {
			t.Errorf("secondStep(%v) = %v, want %v", tmax, got, want)
		}
	}
	for v, want := range map[float64]string{0: "0", 0.5 * 0.4: "0.2", 3e6: "3e+06", 100000: "100000"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
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
			r.Ops = record.Ops{Source: "Questions", Count: 3 * (v.ops + float64(rep)), Per: 1}
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
	series := string(charts[1].SVG)
	for _, s := range []string{"repeats 1, 2, 3: each second of the windows", ">repeat 1<", ">repeat 2<", ">repeat 3<", ">0s<", ">1s<", ">3s<", ">1000<", ">2000<"} {
		if !strings.Contains(series, s) {
			t.Errorf("series chart lacks %q", s)
		}
	}
	// One polyline per repeat: ops per second 1001, 1002, 1003 on a
	// 0–2000 axis.
	if n := strings.Count(series, "<polyline"); n != 3 {
		t.Errorf("%d lines, want 3", n)
	}
	// rQPS 0.99 with 3 repeats each is not significant: "~", explained.
	rq := string(charts[0].SVG)
	if !strings.Contains(rq, ">0.99~<") || !strings.Contains(rq, "~: not significantly different from the base") {
		t.Errorf("rQPS chart lacks the ~ cell or its legend:\n%s", rq)
	}
}
