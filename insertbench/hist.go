package insertbench

import (
	"time"

	"github.com/perfbench/perfbench/record"
)

// Kinds of operation, the keys of Result.Histograms (and of the Record's
// insert histograms): one INSERT statement, one DELETE statement, one
// query.
const (
	OpInsert = "insert"
	OpDelete = "delete"
	OpQuery  = "query"
)

// BucketBounds are the upper bounds of the benchmark's response-time
// buckets: an operation goes to the first bucket whose bound it does not
// exceed, and past the last to an open bucket (> 16 s).
var BucketBounds = [...]time.Duration{
	256 * time.Microsecond, time.Millisecond, 4 * time.Millisecond, 16 * time.Millisecond,
	64 * time.Millisecond, 256 * time.Millisecond, time.Second, 4 * time.Second, 16 * time.Second,
}

// NumBuckets is the number of buckets: one per bound and the open one.
const NumBuckets = len(BucketBounds) + 1

// Histogram is the response times of one kind of operation: counts in the
// fixed buckets, the slowest, and the sum (for a mean). Its size does not
// grow with the number of operations.
type Histogram struct {
	Counts [NumBuckets]int64
	Max    time.Duration
	Sum    time.Duration
}

// Add counts one operation that took d.
func (h *Histogram) Add(d time.Duration) {
	i := 0
	for i < len(BucketBounds) && d > BucketBounds[i] {
		i++
	}
	h.Counts[i]++
	h.Sum += d
	h.Max = max(h.Max, d)
}

// Count is the number of operations.
func (h *Histogram) Count() int64 {
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Merge adds o's operations to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.Sum += o.Sum
	h.Max = max(h.Max, o.Max)
}

// Buckets returns the counts as the Record stores them: one bucket per
// non-empty count, its bound in ms, the open bucket with bound +Inf
// written as 0 (JSON has no infinity; readers take 0 as open).
func (h *Histogram) Buckets() []record.Bucket {
	var b []record.Bucket
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		le := 0.0
		if i < len(BucketBounds) {
			le = float64(BucketBounds[i]) / float64(time.Millisecond)
		}
		b = append(b, record.Bucket{UpToMs: le, Count: float64(c)})
	}
	return b
}
