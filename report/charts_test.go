package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
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
		"series_mariadb-10.11.6_point-query_range=100_bench1_t1_r1",
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
