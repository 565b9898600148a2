package analysis

import (
	"strings"

	"github.com/perfbench/perfbench/record"
)

// InsertColumns are the columns of the insert-benchmark summary line, in
// order (metrics reference). Each is also a metric name of a Record with
// Insert data.
var InsertColumns = []string{
	"ips", "qps", "rps", "rmbps", "wps", "wmbps", "rpq", "rkbpq", "wpi", "wkbpi",
	"csps", "cpups", "cspq", "cpupq", "dbgb1", "dbgb2", "rss", "maxop", "p50", "p99",
}

// histogramMetric is the metric name of a histogram bucket's percentage of
// the step's main operations (queries when it ran any, else inserts):
// "hist:1ms".
func histogramMetric(bucket string) string { return "hist:" + bucket }

// HistogramKinds lists the kinds of operation (record.OpQuery...) in the
// order reports print their histograms.
var HistogramKinds = []string{record.OpQuery, record.OpInsert, record.OpDelete}

// KindHistogramMetric is the metric name of a histogram bucket's percentage
// of the operations of one kind: "hist:delete:1ms".
func KindHistogramMetric(kind, bucket string) string { return "hist:" + kind + ":" + bucket }

// MaxMetric is the metric name of the slowest operation of a kind, in
// seconds: "max:delete".
func MaxMetric(kind string) string { return "max:" + kind }

// TargetIPS is the metric name of the insert rate a step's rate-limited
// writers aimed for, inserts/s summed over clients.
const TargetIPS = "target_ips"

// mainKind is the kind of operation record.Insert.Histogram and
// MaxOpSeconds describe: queries when the step ran any, else inserts.
func mainKind(in *record.Insert) string {
	if in.Queries > 0 {
		return record.OpQuery
	}
	return record.OpInsert
}

// isInsertColumn reports whether k is an insert-benchmark metric: a column
// of the summary line, the target rate, a histogram bucket ("hist:...") or
// a per-kind maximum ("max:..."). A table Record (CSV input) gives these
// values directly.
func isInsertColumn(k string) bool {
	for _, c := range InsertColumns {
		if c == k {
			return true
		}
	}
	return k == TargetIPS || strings.HasPrefix(k, "hist:") || strings.HasPrefix(k, "max:")
}

const mib = 1 << 20

// insertMetrics sets the insert-benchmark columns of a Record with Insert
// data (metrics reference):
//
//	ips, qps        inserts/s and queries/s over the window
//	rps, wps        disk reads/s and writes/s
//	rmbps, wmbps    MB/s read and written (MB = 2^20 bytes, as iostat -m)
//	rpq, rkbpq      disk reads and KB read per op: per query when the step
//	                ran queries, else per insert
//	wpi, wkbpi      disk writes and KB written per insert
//	csps, cspq      context switches per second and per op
//	cpups           the server's CPU as a percentage of all CPUs of the host
//	cpupq           µs of the server's CPU per op
//	dbgb1, dbgb2    logical database size and data-directory size, GB
//	rss             server resident memory, GB (2^30 bytes)
//	maxop           slowest single operation, s
//	p50, p99        per-interval rates as the benchmark reports them
//
// and the response-time metrics: "hist:<bucket>" the percentage of the
// main operations (mainKind) in each bucket, "hist:<kind>:<bucket>" the
// same for each kind with a histogram, "max:<kind>" the slowest operation
// of each kind, s; target_ips the target insert rate of a rate-limited
// step.
func insertMetrics(r *record.Record, p *PerOp, counters map[string]Cell, set func(string, Cell)) {
	if r.Kind == record.KindTable {
		// A table (CSV) gives the columns directly; with ips among them it
		// is an insert-benchmark table, whose qps is the queries/s column
		// (elsewhere in a table qps is the step's operations per second).
		if q, ok := r.Metrics[TableQPS]; ok && hasMetric(r, "ips") {
			set("qps", Val(q))
		}
		return
	}
	in := r.Insert
	if in == nil {
		return
	}
	secs := p.Seconds
	rate := func(x float64) Cell {
		if secs <= 0 {
			return Stated(Missing)
		}
		return Val(x / secs)
	}
	set("ips", rate(in.Inserts))
	set("qps", rate(in.Queries))
	op := in.Inserts
	if in.Queries > 0 {
		op = in.Queries
	}
	per := func(x, n float64) Cell {
		if n <= 0 {
			return Stated(Missing)
		}
		return Val(x / n)
	}
	if r.OS != nil && r.OS.Disk != nil {
		d := r.OS.Disk
		set("rps", rate(d.Reads))
		set("rmbps", rate(d.ReadSectors*512/mib))
		set("wps", rate(d.Writes))
		set("wmbps", rate(d.WriteSectors*512/mib))
		set("rpq", per(d.Reads, op))
		set("rkbpq", per(d.ReadSectors*512/1024, op))
		set("wpi", per(d.Writes, in.Inserts))
		set("wkbpi", per(d.WriteSectors*512/1024, in.Inserts))
	}
	// Context switches and CPU: counters first, /proc second.
	cs := Stated(Missing)
	if c, ok := counters["context-switches"]; ok && (c.OK() || r.OS == nil) {
		cs = c
	} else if r.OS != nil {
		cs = Val(r.OS.VoluntaryCS + r.OS.InvoluntaryCS)
	}
	cpu := Stated(Missing) // seconds
	for _, e := range []string{"task-clock", "cpu-clock"} {
		if c, ok := counters[e]; ok && c.OK() {
			cpu = combine(c, Val(1e9), func(x, y float64) float64 { return x / y })
			break
		}
	}
	if !cpu.OK() && r.OS != nil {
		cpu = Val(r.OS.UserSeconds + r.OS.SystemSeconds)
	}
	if secs > 0 {
		set("csps", combine(cs, Val(secs), func(x, y float64) float64 { return x / y }))
		if n := r.Provenance.CPUs; n > 0 {
			set("cpups", combine(cpu, Val(secs*float64(n)), func(x, y float64) float64 { return 100 * x / y }))
		}
	}
	if op > 0 {
		set("cspq", combine(cs, Val(op), func(x, y float64) float64 { return x / y }))
		set("cpupq", combine(cpu, Val(op), func(x, y float64) float64 { return 1e6 * x / y }))
	}
	positive := func(name string, v float64) {
		if v > 0 {
			set(name, Val(v))
		}
	}
	positive("dbgb1", in.DBGBLogical)
	positive("dbgb2", in.DBGBDir)
	if r.OS != nil {
		positive("rss", r.OS.RSSBytes/(1<<30))
	}
	positive("maxop", in.MaxOpSeconds)
	if in.P50 != 0 || in.P99 != 0 {
		set("p50", Val(in.P50))
		set("p99", Val(in.P99))
	}

	if in.TargetInsertsPerSecond > 0 {
		set(TargetIPS, Val(in.TargetInsertsPerSecond))
	}

	// Histograms: percentage of operations per fixed bucket, by kind; the
	// main kind's from Histogram when Histograms has none for it, and its
	// maximum from MaxOpSeconds when MaxSeconds has none.
	main := mainKind(in)
	if pct := histogramPercent(in.Histogram); pct != nil {
		for i, b := range record.InsertBuckets {
			set(histogramMetric(b.Name), Val(pct[i]))
		}
	}
	for _, kind := range HistogramKinds {
		h, ok := in.Histograms[kind]
		if !ok && kind == main {
			h = in.Histogram
		}
		if pct := histogramPercent(h); pct != nil {
			for i, b := range record.InsertBuckets {
				set(KindHistogramMetric(kind, b.Name), Val(pct[i]))
			}
		}
		if m, ok := in.MaxSeconds[kind]; ok {
			set(MaxMetric(kind), Val(m))
		} else if kind == main && in.MaxOpSeconds > 0 {
			set(MaxMetric(kind), Val(in.MaxOpSeconds))
		}
	}
}

func hasMetric(r *record.Record, k string) bool {
	_, ok := r.Metrics[k]
	return ok
}

// InsertQueries reports whether an insert-benchmark Record ran queries:
// its Insert has queries, or, for a table Record with an ips column, its
// qps is above 0.
func InsertQueries(r *record.Record) bool {
	if r.Insert != nil {
		return r.Insert.Queries > 0
	}
	return r.Kind == record.KindTable && hasMetric(r, "ips") && r.Metrics[TableQPS] > 0
}

// histogramPercent returns the percentage of operations in each of
// record.InsertBuckets, or nil without operations. A bucket goes to the first
// fixed bucket whose bound is at least its own; an open bucket (bound 0 or
// +Inf) and bounds above 16 s go to "gt".
func histogramPercent(h []record.Bucket) []float64 {
	counts := make([]float64, len(record.InsertBuckets))
	var total float64
	for _, b := range h {
		i := 0
		for i < len(record.InsertBuckets)-1 && b.UpToMs > record.InsertBuckets[i].UpTo*(1+1e-9) {
			i++
		}
		if b.UpToMs <= 0 { // an open bucket written as 0
			i = len(record.InsertBuckets) - 1
		}
		counts[i] += b.Count
		total += b.Count
	}
	if total <= 0 {
		return nil
	}
	for i := range counts {
		counts[i] = 100 * counts[i] / total
	}
	return counts
}
