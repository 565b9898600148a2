package analysis

import (
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// TestOpsCountedDecides checks that what a Record says of its op count
// decides its per-op maths, not whether the count is above 0: a window
// that counted 0 operations has a QPS of 0 (in the median) and no per-op
// value, and a note says so; a Record whose count was not counted
// (ops.counted false, edited in or from a failed status read) gives no
// QPS and no per-op value whatever its stale count says, and a note says
// why. On the old rule the 0 was left out of the QPS with a "[2/3]" whose
// "see below" pointed to nothing, and the stale count gave numbers.
func TestOpsCountedDecides(t *testing.T) {
	build := func(edit func(*record.Record)) (*Comparison, record.Key) {
		var recs []*record.Record
		for rep, qps := range []float64{100, 110, 120} {
			recs = append(recs, stepRecord("base", "point", rep+1, qps*10, counted("task-clock", 1e9)))
		}
		for rep, qps := range []float64{90, 95, 100} {
			r := stepRecord("v", "point", rep+1, qps*10, counted("task-clock", 1e9))
			if rep == 1 {
				edit(r)
			}
			recs = append(recs, r)
		}
		c, err := New(recs, "base", Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c, recs[3].Key()
	}
	notes := func(c *Comparison, k record.Key) string {
		return strings.Join(c.Warnings([]record.Key{k}, TopicGeneral|TopicPerOp|TopicCPU, nil), "\n")
	}

	c, k := build(func(r *record.Record) { r.Ops.Count = 0 })
	// QPS 9, 0, 10: median 9 over all 3 repeats.
	if q := c.Value(k, OpsPerSecond); q.State != Measured || q.N != 3 || q.Value != 90 {
		t.Errorf("QPS with a repeat that counted 0 operations = %+v, want 90 from 3 of 3", q)
	}
	if cpu := c.Value(k, CPUPerOp); cpu.State != Measured || cpu.N != 2 || cpu.Of != 3 {
		t.Errorf("cpu/o = %+v, want from 2 of 3 repeats", cpu)
	}
	if n := notes(c, k); !strings.Contains(n, "repeat 2: the window counted 0 operations (Questions): its QPS is 0 and it has no per-op values") {
		t.Errorf("notes:\n%s\nwant one on the repeat that counted 0 operations", n)
	}

	c, k = build(func(r *record.Record) { r.Ops.Counted = false })
	if q := c.Value(k, OpsPerSecond); q.State != Measured || q.N != 2 || q.Of != 3 || q.Value != 95 {
		t.Errorf("QPS with a repeat whose ops were not counted = %+v, want 95 from 2 of 3", q)
	}
	if r := c.ThroughputRatio(k); r.State != Measured || r.N != 2 {
		t.Errorf("rQPS = %+v, want from 2 repeats of the version", r)
	}
	if cpu := c.Value(k, CPUPerOp); cpu.N != 2 || cpu.Of != 3 {
		t.Errorf("cpu/o = %+v, want from 2 of 3 repeats", cpu)
	}
	if n := notes(c, k); !strings.Contains(n, "repeat 2: the Record says its Questions count was not counted over the window (ops.counted false): no QPS and no per-op values from it") {
		t.Errorf("notes:\n%s\nwant one on the repeat whose ops were not counted", n)
	}
	// With the Record's own warning, that warning says it, once.
	c, k = build(func(r *record.Record) {
		r.Ops.Counted = false
		r.Warnf(record.WarnOpsNotCounted, "no Questions count: the status read failed")
	})
	if n := notes(c, k); strings.Contains(n, "ops.counted false") || !strings.Contains(n, "no Questions count: the status read failed") {
		t.Errorf("notes:\n%s\nwant the Record's warning alone", n)
	}
}
