package analysis

import (
	"encoding/json"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// A read+write step with a histogram per kind: each kind's percentages,
// its own maximum, the target; the legacy histogram stays the main kind's.
func TestInsertHistogramsByKind(t *testing.T) {
	r := stepRecord("v", "q100.1", 1, 40000)
	r.Insert = &record.Insert{Inserts: 7970, Queries: 40000, MaxOpSeconds: 0.02, TargetInsertsPerSecond: 800,
		Histograms: map[string][]record.Bucket{
			// 400 queries: 300 ≤ 256 µs, 99 ≤ 1 ms, 1 > 16 s (open bucket written as 0)
			"query": {{UpToMs: 0.256, Count: 300}, {UpToMs: 1, Count: 99}, {UpToMs: 0, Count: 1}},
			// 200 inserts: 50 ≤ 1 ms, 150 ≤ 4 ms
			"insert": {{UpToMs: 1, Count: 50}, {UpToMs: 4, Count: 150}},
			// 8 deletes: 2 ≤ 4 ms, 6 ≤ 16 ms
			"delete": {{UpToMs: 4, Count: 2}, {UpToMs: 16, Count: 6}},
		},
		MaxSeconds: map[string]float64{"insert": 0.011, "delete": 0.018},
	}
	p := compute(r, Options{})
	want := map[string]float64{
		"hist:query:256us": 75, "hist:query:1ms": 24.75, "hist:query:gt": 0.25, "hist:query:4ms": 0,
		"hist:insert:1ms": 25, "hist:insert:4ms": 75, "hist:insert:256us": 0,
		"hist:delete:4ms": 25, "hist:delete:16ms": 75,
		"max:insert": 0.011, "max:delete": 0.018,
		"max:query":  0.02, // MaxOpSeconds, the main kind's, as MaxSeconds has no query entry
		"target_ips": 800,
		"ips":        797, // 7970 / 10 s
	}
	for m, w := range want {
		if c := p.Get(m); !c.OK() || !near(c.Value, w) {
			t.Errorf("%s = %+v, want %v", m, c, w)
		}
	}
	// No legacy Histogram: the main-kind metrics are not set.
	if c := p.Get(histogramMetric("1ms")); c.State != Missing {
		t.Errorf("hist:1ms without Histogram = %+v, want missing", c)
	}
}

// A Record written before per-kind histograms: Histogram and MaxOpSeconds
// are the main kind's (queries here), nothing else is made up.
func TestInsertLegacyHistogram(t *testing.T) {
	var in record.Insert
	old := `{"inserts": 7970, "queries": 341720, "max_op_seconds": 0.02,
	  "histogram": [{"le_ms": 0.256, "count": 291236}, {"le_ms": 1, "count": 50481}, {"le_ms": 4, "count": 3}]}`
	if err := json.Unmarshal([]byte(old), &in); err != nil {
		t.Fatal(err)
	}
	r := stepRecord("v", "qr100", 1, 341720)
	r.Insert = &in
	p := compute(r, Options{})
	// 291236 / 341720 = 85.2265%, 50481 / 341720 = 14.7726%, 3 / 341720 = 0.00088%
	for m, w := range map[string]float64{
		"hist:query:256us": 100 * 291236.0 / 341720, "hist:query:1ms": 100 * 50481.0 / 341720, "hist:query:4ms": 100 * 3.0 / 341720,
		"hist:256us": 100 * 291236.0 / 341720, "max:query": 0.02,
	} {
		if c := p.Get(m); !c.OK() || !near(c.Value, w) {
			t.Errorf("%s = %+v, want %v", m, c, w)
		}
	}
	for _, m := range []string{"hist:insert:1ms", "hist:delete:1ms", "max:insert", "max:delete", TargetIPS} {
		if c := p.Get(m); c.State != Missing {
			t.Errorf("%s = %+v, want missing (not recorded)", m, c)
		}
	}
	// Load step: the legacy histogram is the inserts'.
	r = stepRecord("v", "l.i0", 1, 100)
	r.Insert = &record.Insert{Inserts: 100, MaxOpSeconds: 0.3, Histogram: []record.Bucket{{UpToMs: 1, Count: 100}}}
	p = compute(r, Options{})
	if c := p.Get("hist:insert:1ms"); !c.OK() || c.Value != 100 {
		t.Errorf("load step hist:insert:1ms = %+v, want 100", c)
	}
	if c := p.Get("max:insert"); !c.OK() || c.Value != 0.3 {
		t.Errorf("load step max:insert = %+v, want 0.3", c)
	}
	if c := p.Get("hist:query:1ms"); c.State != Missing {
		t.Errorf("load step hist:query:1ms = %+v, want missing", c)
	}
}

// Histogram and per-kind metrics are insert metrics: a CSV table gives
// them directly, and they are not taken for perf events.
func TestInsertMetricNames(t *testing.T) {
	for _, k := range []string{"ips", "maxop", TargetIPS, histogramMetric("1ms"), KindHistogramMetric(record.OpDelete, "gt"), MaxMetric(record.OpQuery)} {
		if !isInsertColumn(k) {
			t.Errorf("%s is not an insert metric", k)
		}
	}
	if isInsertColumn("instructions") || isInsertColumn("cpu/o") {
		t.Error("instructions or cpu/o taken for an insert metric")
	}
}
