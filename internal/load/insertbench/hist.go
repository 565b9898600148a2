package insertbench

import (
	"math"
	"time"

	"github.com/perfbench/perfbench/record"
)

// numBuckets is the number of the benchmark's response-time buckets
// (record.InsertBuckets): nine bounds and the open one.
const numBuckets = 10

// bucketBounds are the upper bounds of the buckets but the open one, from
// record.InsertBuckets: an operation goes to the first bucket whose
// bound it does not exceed, and past the last to the open bucket (> 16 s).
var bucketBounds = func() (b [numBuckets - 1]time.Duration) {
	for i := range b {
		b[i] = time.Duration(math.Round(record.InsertBuckets[i].UpTo * float64(time.Millisecond)))
	}
	return b
}()

// Histogram is the response times of one kind of operation: counts in the
// fixed buckets, the slowest, and the sum (for a mean). Its size does not
// grow with the number of operations.
type Histogram struct {
	Counts [numBuckets]int64
	Max    time.Duration
	Sum    time.Duration
}

// Add counts one operation that took d.
func (h *Histogram) Add(d time.Duration) {
	i := 0
	for i < len(bucketBounds) && d > bucketBounds[i] {
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
		if i < len(bucketBounds) {
			le = record.InsertBuckets[i].UpTo
		}
		b = append(b, record.Bucket{UpToMs: le, Count: float64(c)})
	}
	return b
}
