package insertbench

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"
)

// counts are operations in one interval: rows inserted, rows deleted,
// queries run.
type counts struct {
	Inserts int64 `json:"inserts"`
	Deletes int64 `json:"deletes"`
	Queries int64 `json:"queries"`
}

// of returns the count of the kind of operation (OpInsert, OpDelete,
// OpQuery).
func (c counts) of(kind string) int64 {
	switch kind {
	case OpInsert:
		return c.Inserts
	case OpDelete:
		return c.Deletes
	case OpQuery:
		return c.Queries
	}
	return 0
}

func (c counts) minus(o counts) counts {
	return counts{c.Inserts - o.Inserts, c.Deletes - o.Deletes, c.Queries - o.Queries}
}

// Point is one interval of a step's load, normally one second: the
// intervals end at whole seconds after the load started, the last one
// when the load ended.
type Point struct {
	// T is the end of the interval, seconds since the load started;
	// Seconds its length as measured.
	T       float64 `json:"t"`
	Seconds float64 `json:"seconds"`
	// Full is set for an interval that ended at a whole second (all but
	// the last).
	Full bool `json:"full"`
	// Counts are summed over the clients.
	counts
	// Clients are each client's counts, by client (table) number - 1.
	Clients []clientCounts `json:"clients"`
	// DriverRSSBytes is perfbench's resident memory at the end of the
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

// sampler cuts the load into per-second Points.
type sampler struct {
	clock   clock
	start   time.Time
	clients []*client
	last    time.Time
	prev    []counts
	points  []Point
	peakRSS int64
}

func newSampler(c clock, start time.Time, clients []*client) *sampler {
	s := &sampler{clock: c, start: start, last: start, clients: clients, prev: make([]counts, len(clients))}
	s.peakRSS = selfRSS()
	return s
}

// run takes a Point at every whole second after start until ctx ends.
func (s *sampler) run(ctx context.Context) {
	for k := 1; ; k++ {
		if s.clock.SleepUntil(ctx, s.start.Add(time.Duration(k)*time.Second)) != nil {
			return
		}
		s.take(s.clock.Now(), true)
	}
}

// take closes the interval that ends now.
func (s *sampler) take(now time.Time, full bool) {
	p := Point{
		T:       now.Sub(s.start).Seconds(),
		Seconds: now.Sub(s.last).Seconds(),
		Full:    full,
		Clients: make([]clientCounts, len(s.clients)),
	}
	for i, c := range s.clients {
		// Read running before the counts: a client seen running was
		// running at least until the counts were read.
		running := c.running.Load()
		cur := c.counts()
		d := cur.minus(s.prev[i])
		s.prev[i] = cur
		p.Clients[i] = clientCounts{counts: d, Full: full && running}
		p.Inserts += d.Inserts
		p.Deletes += d.Deletes
		p.Queries += d.Queries
	}
	p.DriverRSSBytes = selfRSS()
	s.peakRSS = max(s.peakRSS, p.DriverRSSBytes)
	s.last = now
	if !full && p.Seconds <= 0 && p.counts == (counts{}) {
		return // the load ended exactly at a whole second
	}
	s.points = append(s.points, p)
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
