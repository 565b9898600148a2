package record

import "math"

// Kinds of operation of an insert-benchmark step with a response-time
// histogram of their own: the keys of Insert.Histograms and
// Insert.MaxSeconds. An insert is one INSERT statement, a delete one DELETE
// statement, a query one query.
const (
	OpQuery  = "query"
	OpInsert = "insert"
	OpDelete = "delete"
)

// InsertBuckets are the insert benchmark's fixed response-time buckets,
// those of Insert.Histogram and Insert.Histograms: a name and an upper
// bound in ms (Bucket.UpToMs), the last one open (> 16 s, +Inf here, 0 in
// a Bucket).
var InsertBuckets = []struct {
	Name string
	UpTo float64 // ms; +Inf for the last
}{
	{"256us", 0.256}, {"1ms", 1}, {"4ms", 4}, {"16ms", 16}, {"64ms", 64},
	{"256ms", 256}, {"1s", 1000}, {"4s", 4000}, {"16s", 16000}, {"gt", math.Inf(1)},
}

// TargetFraction is the share of its target insert rate
// (Insert.TargetInsertsPerSecond) a read+write step must reach to count as
// having sustained it.
const TargetFraction = 0.95

// BelowTarget reports whether an achieved insert rate falls short of the
// target: below TargetFraction of it. A target of 0 or less means none.
// The comparison is on the ratio, so that 95.0 of 100 (and 760 of 800) is
// exactly at the line and not below it.
func BelowTarget(achieved, target float64) bool {
	return target > 0 && achieved/target < TargetFraction
}
