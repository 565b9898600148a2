package insertbench

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/perfbench/perfbench/record"
)

// counts are operations in one interval: rows inserted, rows deleted,
// queries run.
type counts struct {
	Inserts int64 `json:"inserts"`
	Deletes int64 `json:"deletes"`
	Queries int64 `json:"queries"`
}

// of returns the count of the kind of operation (record.OpInsert, record.OpDelete,
// record.OpQuery).
func (c counts) of(kind string) int64 {
	switch kind {
	case record.OpInsert:
		return c.Inserts
	case record.OpDelete:
		return c.Deletes
	case record.OpQuery:
		return c.Queries
	}
	return 0
}

// Point is one interval of a step's load, normally one second: the
// intervals are the whole seconds after the load started, and the last
// one runs from the last whole second to the end of the load.
type Point struct {
	// T is the end of the interval, seconds since the load started;
	// Seconds its length (1 but for the last).
	T       float64 `json:"t"`
	Seconds float64 `json:"seconds"`
	// Full is set for an interval of a whole second (all but the last).
	Full bool `json:"full"`
	// counts are summed over the clients.
	counts
	// Clients are each client's counts, by client (table) number - 1.
	Clients []clientCounts `json:"clients"`
	// DriverRSSBytes is the driver's resident memory at the end of the
	// interval (0 where it cannot be read).
	DriverRSSBytes int64 `json:"driver_rss_bytes,omitempty"`
}

// clientCounts are one client's counts in an interval.
type clientCounts struct {
	counts
	// Full is set when the interval is Full and the client's main loop
	// (its inserts in an l step, its queries in a q step) ran through
	// all of it: only such seconds give per-client rates.
	Full bool `json:"full"`
}

// Rate is the rate of kind over the interval, per second.
func (p Point) Rate(kind string) float64 { return float64(p.of(kind)) / p.Seconds }

// tally counts one goroutine's operations of one kind by the second of
// the load in which each ended: an operation belongs to the second its
// time stamp falls in, however late anything looks at it. It grows by
// one number per second of load.
type tally struct {
	start time.Time
	n     []int64
	total int64
}

// add counts n operations (rows, queries) that ended at t.
func (t *tally) add(at time.Time, n int64) {
	s := max(int(at.Sub(t.start)/time.Second), 0)
	for len(t.n) <= s {
		t.n = append(t.n, 0)
	}
	t.n[s] += n
	t.total += n
}

// sum returns the count of seconds [from, to).
func (t *tally) sum(from, to int) int64 {
	var n int64
	for _, x := range t.n[min(from, len(t.n)):min(to, len(t.n))] {
		n += x
	}
	return n
}

// series cuts the load from start to end into Points by the time stamps
// of the clients' operations: Point k holds those that ended in
// [k, k+1) s after start, the last Point those from the last whole second
// to end. rss is the driver's resident memory sampled at each whole
// second (rss[k] at k+1 s) and lastRSS at end.
func series(start, end time.Time, clients []*client, rss []int64, lastRSS int64) []Point {
	total := end.Sub(start)
	whole := int(total / time.Second)
	rest := total - time.Duration(whole)*time.Second
	n := whole
	if rest > 0 {
		n++
	}
	pts := make([]Point, n)
	for k := range pts {
		p := &pts[k]
		p.T, p.Seconds, p.Full = float64(k+1), 1, k < whole
		p.DriverRSSBytes = lastRSS
		if k < len(rss) && p.Full {
			p.DriverRSSBytes = rss[k]
		}
		if !p.Full {
			p.T, p.Seconds = total.Seconds(), rest.Seconds()
		}
		p.Clients = make([]clientCounts, len(clients))
		for i, c := range clients {
			// An operation stamped at end exactly, a whole second
			// after start, belongs to the last interval.
			upTo := k + 1
			if k == n-1 {
				upTo = math.MaxInt
			}
			d := counts{c.per[hIns].sum(k, upTo), c.per[hDel].sum(k, upTo), c.per[hQry].sum(k, upTo)}
			full := p.Full && !c.mainEnd.Before(start.Add(time.Duration(k+1)*time.Second))
			p.Clients[i] = clientCounts{counts: d, Full: full}
			p.Inserts += d.Inserts
			p.Deletes += d.Deletes
			p.Queries += d.Queries
		}
	}
	return pts
}

// rssSampler reads the driver's resident memory at every whole second
// after start.
type rssSampler struct {
	clock clock
	start time.Time
	rss   []int64
	peak  int64
}

func newRSSSampler(c clock, start time.Time) *rssSampler {
	return &rssSampler{clock: c, start: start, peak: selfRSS()}
}

// run samples until ctx ends.
func (s *rssSampler) run(ctx context.Context) {
	for k := 1; ; k++ {
		if s.clock.SleepUntil(ctx, s.start.Add(time.Duration(k)*time.Second)) != nil {
			return
		}
		s.take()
	}
}

// take samples now and returns the sample.
func (s *rssSampler) take() int64 {
	b := selfRSS()
	s.rss = append(s.rss, b)
	s.peak = max(s.peak, b)
	return b
}

// ratePercentiles returns p50 and p99 of the per-client per-second rates
// of kind, over the seconds in which the client ran throughout (Full),
// and how many such client-seconds there were. As the benchmark reports
// them: sorted from fastest to slowest, the p-th percentile is the one at
// position round(p·n) (1-based), so p50 is the median and p99 is the low
// tail: 99% of the seconds were at least that fast. NaN without any full
// second.
func ratePercentiles(points []Point, kind string) (p50, p99 float64, n int) {
	var rates []float64
	for _, p := range points {
		for _, c := range p.Clients {
			if c.Full && p.Seconds > 0 {
				rates = append(rates, float64(c.of(kind))/p.Seconds)
			}
		}
	}
	if len(rates) == 0 {
		return math.NaN(), math.NaN(), 0
	}
	slices.SortFunc(rates, func(a, b float64) int { return cmp.Compare(b, a) })
	at := func(p float64) float64 {
		i := int(math.Round(p*float64(len(rates)))) - 1
		return rates[min(max(i, 0), len(rates)-1)]
	}
	return at(0.50), at(0.99), len(rates)
}
