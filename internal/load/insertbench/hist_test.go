package insertbench

import (
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

func TestHistogramBuckets(t *testing.T) {
	var h Histogram
	for _, tc := range []struct {
		d      time.Duration
		bucket int
	}{
		{0, 0},
		{256 * time.Microsecond, 0}, // a bound belongs to its bucket
		{256*time.Microsecond + 1, 1},
		{time.Millisecond, 1},
		{3 * time.Millisecond, 2},
		{16 * time.Millisecond, 3},
		{20 * time.Millisecond, 4},
		{256 * time.Millisecond, 5},
		{999 * time.Millisecond, 6},
		{4 * time.Second, 7},
		{16 * time.Second, 8},
		{16*time.Second + 1, 9},
		{time.Hour, 9},
	} {
		var one Histogram
		one.Add(tc.d)
		if one.Counts[tc.bucket] != 1 || one.Count() != 1 {
			t.Errorf("%s went to %v, want bucket %d", tc.d, one.Counts, tc.bucket)
		}
		h.Add(tc.d)
	}
	want := [numBuckets]int64{2, 2, 1, 1, 1, 1, 1, 1, 1, 2}
	if h.Counts != want || h.Count() != 13 || h.Max != time.Hour {
		t.Errorf("counts %v, count %d, max %s; want %v, 13, 1h", h.Counts, h.Count(), h.Max, want)
	}

	var m Histogram
	m.Add(2 * time.Millisecond)
	m.Merge(&h)
	if m.Count() != 14 || m.Counts[2] != 2 || m.Max != time.Hour || m.Sum != h.Sum+2*time.Millisecond {
		t.Errorf("merged: %+v", m)
	}
}

// The buckets as the Record stores them land in the same buckets when
// the report reads them back: the bounds in ms, the open one as 0.
func TestHistogramRecordBuckets(t *testing.T) {
	var h Histogram
	h.Add(100 * time.Microsecond)
	h.Add(100 * time.Microsecond)
	h.Add(3 * time.Millisecond)
	h.Add(20 * time.Second)
	got := h.Buckets()
	want := []record.Bucket{{UpToMs: 0.256, Count: 2}, {UpToMs: 4, Count: 1}, {UpToMs: 0, Count: 1}}
	if len(got) != len(want) {
		t.Fatalf("Buckets() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Buckets()[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	// The bounds, written out.
	want2 := [...]time.Duration{256 * time.Microsecond, time.Millisecond, 4 * time.Millisecond, 16 * time.Millisecond,
		64 * time.Millisecond, 256 * time.Millisecond, time.Second, 4 * time.Second, 16 * time.Second}
	if bucketBounds != want2 || len(record.InsertBuckets) != numBuckets {
		t.Errorf("bounds %v of %d buckets, want %v of %d", bucketBounds, len(record.InsertBuckets), want2, numBuckets)
	}
}

// Counting an operation allocates nothing: the driver's memory does not
// grow with the operations of a step.
func TestHistogramAddAllocatesNothing(t *testing.T) {
	var h Histogram
	d := time.Duration(0)
	if n := testing.AllocsPerRun(10000, func() { d += 7 * time.Microsecond; h.Add(d) }); n != 0 {
		t.Errorf("Histogram.Add allocates %v times per call", n)
	}
}
