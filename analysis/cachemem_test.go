package analysis

import (
	"fmt"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// TestRatioCacheSingleRepeats: the ratios of samples of one repeat (a
// CSV table's, one value per version, step and metric) are not kept, so
// that the caches do not grow with versions × steps × metrics (a 100 MB
// table peaked at 3.2 GB); those with repeats on both sides are, and
// asking again gives the same cell.
func TestRatioCacheSingleRepeats(t *testing.T) {
	metrics := []string{OpsPerSecond, "context-switches/o", "task-clock/o"}
	build := func(repeats int) *Comparison {
		var recs []*record.Record
		for v := range 5 {
			for s := range 20 {
				for r := 1; r <= repeats; r++ {
					recs = append(recs, stepRecord(fmt.Sprintf("v%d", v), fmt.Sprintf("step-%02d", s), r, float64(1000+10*v+s+r),
						counted("context-switches", float64(500+v*s+r)), counted("task-clock", float64(9e9+1e6*float64(v+r)))))
				}
			}
		}
		c, err := New(recs, "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, repeats := range []int{1, 3} {
		c := build(repeats)
		first := map[string]Cell{}
		for range 2 {
			for k := range c.samples {
				for _, m := range metrics {
					cell := c.Ratio(k, m)
					id := fmt.Sprint(k, m)
					if prev, ok := first[id]; ok && fmt.Sprint(prev) != fmt.Sprint(cell) {
						t.Errorf("%d repeats, %v %s: %v, then %v", repeats, k, m, prev, cell)
					}
					first[id] = cell
				}
			}
		}
		kept := 0
		for _, s := range c.samples {
			kept += len(s.ratios)
		}
		want := 0
		if repeats > 1 {
			want = len(c.samples) * len(metrics)
		}
		if kept != want {
			t.Errorf("%d repeats: %d ratios kept for %d samples × %d metrics, want %d", repeats, kept, len(c.samples), len(metrics), want)
		}
	}
}
