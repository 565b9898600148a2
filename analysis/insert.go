package analysis

import (
	"math"

	"github.com/perfbench/perfbench/record"
)

// InsertColumns are the columns of the insert-benchmark summary line, in
// order (metrics reference). Each is also a metric name of a Record with
// Insert data.
var InsertColumns = []string{
	"ips", "qps", "rps", "rmbps", "wps", "wmbps", "rpq", "rkbpq", "wpi", "wkbpi",
	"csps", "cpups", "cspq", "cpupq", "dbgb1", "dbgb2", "rss", "maxop", "p50", "p99",
}

// HistogramBuckets are the insert benchmark's response-time buckets: upper
// bounds in ms, the last one open (> 16 s).
var HistogramBuckets = []struct {
	Name string
	UpTo float64 // ms; +Inf for the last
}{
	{"256us", 0.256}, {"1ms", 1}, {"4ms", 4}, {"16ms", 16}, {"64ms", 64},
	{"256ms", 256}, {"1s", 1000}, {"4s", 4000}, {"16s", 16000}, {"gt", math.Inf(1)},
}

// HistogramMetric is the metric name of a histogram bucket's percentage of
// operations: "hist:1ms".
func HistogramMetric(bucket string) string { return "hist:" + bucket }

func isInsertColumn(k string) bool {
	for _, c := range InsertColumns {
		if c == k {
			return true
		}
	}
	return false
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
// and "hist:<bucket>" to the percentage of operations in each
// response-time bucket.
func insertMetrics(r *record.Record, p *PerOp, counters map[string]Cell, set func(string, Cell)) {
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
			cpu = Combine(c, Val(1e9), func(x, y float64) float64 { return x / y })
			break
		}
	}
	if !cpu.OK() && r.OS != nil {
		cpu = Val(r.OS.UserSeconds + r.OS.SystemSeconds)
	}
	if secs > 0 {
		set("csps", Combine(cs, Val(secs), func(x, y float64) float64 { return x / y }))
		if n := r.Provenance.CPUs; n > 0 {
			set("cpups", Combine(cpu, Val(secs*float64(n)), func(x, y float64) float64 { return 100 * x / y }))
		}
	}
	if op > 0 {
		set("cspq", Combine(cs, Val(op), func(x, y float64) float64 { return x / y }))
		set("cpupq", Combine(cpu, Val(op), func(x, y float64) float64 { return 1e6 * x / y }))
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

	// Histogram: percentage of operations per fixed bucket.
	if len(in.Histogram) > 0 {
		counts := make([]float64, len(HistogramBuckets))
		var total float64
		for _, b := range in.Histogram {
			i := 0
			for i < len(HistogramBuckets)-1 && b.UpToMs > HistogramBuckets[i].UpTo*(1+1e-9) {
				i++
			}
			if b.UpToMs <= 0 { // an open bucket written as 0
				i = len(HistogramBuckets) - 1
			}
			counts[i] += b.Count
			total += b.Count
		}
		for i, b := range HistogramBuckets {
			if total > 0 {
				set(HistogramMetric(b.Name), Val(100*counts[i]/total))
			}
		}
	}
}
