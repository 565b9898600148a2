package insertbench

import (
	"math"
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

func TestRatePercentiles(t *testing.T) {
	// One client, 200 full seconds with 1..200 queries, and a last
	// interval that is not full (its rate must not count).
	var pts []Point
	for i := 1; i <= 200; i++ {
		pts = append(pts, Point{Seconds: 1, Full: true, Clients: []clientCounts{{counts: counts{Queries: int64(i)}, Full: true}}})
	}
	pts = append(pts, Point{Seconds: 0.1, Clients: []clientCounts{{counts: counts{Queries: 1}}}})
	p50, p99, n := ratePercentiles(pts, record.OpQuery)
	// Fastest first: position round(0.5·200) = 100 is 101, position
	// round(0.99·200) = 198 is 3.
	if p50 != 101 || p99 != 3 || n != 200 {
		t.Errorf("p50 %v p99 %v from %d seconds, want 101, 3, 200", p50, p99, n)
	}

	// Rates are per second of the interval as measured, and per client:
	// two clients, 2 s intervals.
	pts = []Point{
		{Seconds: 2, Full: true, Clients: []clientCounts{{counts: counts{Inserts: 200}, Full: true}, {counts: counts{Inserts: 100}, Full: true}}},
		// Client 2 finished in this interval: only client 1 counts.
		{Seconds: 2, Full: true, Clients: []clientCounts{{counts: counts{Inserts: 300}, Full: true}, {counts: counts{Inserts: 2}}}},
	}
	p50, p99, n = ratePercentiles(pts, record.OpInsert)
	// Rates 150, 100, 50: position round(1.5) = 2 → 100; round(2.97) = 3 → 50.
	if p50 != 100 || p99 != 50 || n != 3 {
		t.Errorf("p50 %v p99 %v from %d, want 100, 50, 3", p50, p99, n)
	}

	if p50, p99, n := ratePercentiles(nil, record.OpInsert); !math.IsNaN(p50) || !math.IsNaN(p99) || n != 0 {
		t.Errorf("no seconds: %v %v %d, want NaN NaN 0", p50, p99, n)
	}
}

// TestSeries: a second holds the operations whose time stamps fall in it,
// whenever they are looked at; the last interval runs to the end of the
// load and holds what ended exactly at its end.
func TestSeries(t *testing.T) {
	at := func(d time.Duration) time.Time { return epoch.Add(d) }
	c1, c2 := &client{n: 1}, &client{n: 2}
	for _, c := range []*client{c1, c2} {
		for k := range c.per {
			c.per[k].start = epoch
		}
	}
	ms := time.Millisecond
	c1.per[hIns].add(at(999*ms), 100) // second 1
	c1.per[hIns].add(at(1000*ms), 60) // second 2
	c1.per[hIns].add(at(1999*ms), 40)
	c1.per[hIns].add(at(2300*ms), 30) // the last interval, ending at 2.3 s
	c2.per[hIns].add(at(500*ms), 50)
	c2.per[hDel].add(at(600*ms), 50)
	c2.per[hQry].add(at(1500*ms), 7)
	c1.mainEnd = at(2300 * ms)
	c2.mainEnd = at(1700 * ms) // client 2 ended in second 2
	end := at(2300 * ms)

	p := series(epoch, end, []*client{c1, c2}, []int64{10, 20, 30}, 40)
	if len(p) != 3 {
		t.Fatalf("%d points, want 3: %+v", len(p), p)
	}
	if p[0].T != 1 || p[0].Seconds != 1 || !p[0].Full || p[0].counts != (counts{150, 50, 0}) || p[0].DriverRSSBytes != 10 ||
		p[0].Clients[0] != (clientCounts{counts{100, 0, 0}, true}) || p[0].Clients[1] != (clientCounts{counts{50, 50, 0}, true}) {
		t.Errorf("second 1: %+v", p[0])
	}
	if p[1].T != 2 || p[1].Seconds != 1 || !p[1].Full || p[1].counts != (counts{100, 0, 7}) || p[1].DriverRSSBytes != 20 ||
		!p[1].Clients[0].Full || p[1].Clients[1].Full || p[1].Rate(record.OpInsert) != 100 {
		t.Errorf("second 2: %+v (rate %v)", p[1], p[1].Rate(record.OpInsert))
	}
	if math.Abs(p[2].Seconds-0.3) > 1e-9 || p[2].T != 2.3 || p[2].Full || p[2].Clients[0].Full || p[2].Inserts != 30 || p[2].DriverRSSBytes != 40 {
		t.Errorf("last interval: %+v", p[2])
	}

	// A load that ends exactly at a whole second adds no empty interval:
	// what ended at its end belongs to its last second.
	c1.per[hIns].add(at(3000*ms), 5)
	c1.mainEnd = at(3000 * ms)
	p = series(epoch, at(3000*ms), []*client{c1}, nil, 0)
	if len(p) != 3 || !p[2].Full || p[2].Inserts != 35 || !p[2].Clients[0].Full {
		t.Errorf("a load of 3 s: %+v", p)
	}
	if p := series(epoch, epoch, []*client{c1}, nil, 0); len(p) != 0 {
		t.Errorf("an empty load: %+v", p)
	}
}
