package insertbench

import (
	"math"
	"testing"
	"time"
)

func TestRatePercentiles(t *testing.T) {
	// One client, 200 full seconds with 1..200 queries, and a last
	// interval that is not full (its rate must not count).
	var pts []Point
	for i := 1; i <= 200; i++ {
		pts = append(pts, Point{Seconds: 1, Full: true, Clients: []clientCounts{{counts: counts{Queries: int64(i)}, Full: true}}})
	}
	pts = append(pts, Point{Seconds: 0.1, Clients: []clientCounts{{counts: counts{Queries: 1}}}})
	p50, p99, n := ratePercentiles(pts, OpQuery)
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
	p50, p99, n = ratePercentiles(pts, OpInsert)
	// Rates 150, 100, 50: position round(1.5) = 2 → 100; round(2.97) = 3 → 50.
	if p50 != 100 || p99 != 50 || n != 3 {
		t.Errorf("p50 %v p99 %v from %d, want 100, 50, 3", p50, p99, n)
	}

	if p50, p99, n := ratePercentiles(nil, OpInsert); !math.IsNaN(p50) || !math.IsNaN(p99) || n != 0 {
		t.Errorf("no seconds: %v %v %d, want NaN NaN 0", p50, p99, n)
	}
}

func TestSampler(t *testing.T) {
	clk := &fakeClock{now: epoch}
	c1, c2 := &client{n: 1}, &client{n: 2}
	c1.running.Store(true)
	c2.running.Store(true)
	s := newSampler(clk, epoch, []*client{c1, c2})

	clk.advance(time.Second)
	c1.ins.Add(100)
	c2.ins.Add(50)
	c2.del.Add(50)
	s.take(clk.Now(), true)

	clk.advance(time.Second + 10*time.Millisecond) // a late tick
	c1.ins.Add(101)
	c2.qry.Add(7)
	c2.running.Store(false) // client 2 ended in this second
	s.take(clk.Now(), true)

	clk.advance(300 * time.Millisecond) // the load ends
	c1.ins.Add(30)
	s.take(clk.Now(), false)

	if len(s.points) != 3 {
		t.Fatalf("%d points, want 3: %+v", len(s.points), s.points)
	}
	p := s.points
	if p[0].T != 1 || p[0].Seconds != 1 || !p[0].Full || p[0].counts != (counts{150, 50, 0}) ||
		p[0].Clients[0] != (clientCounts{counts{100, 0, 0}, true}) || p[0].Clients[1] != (clientCounts{counts{50, 50, 0}, true}) {
		t.Errorf("second 1: %+v", p[0])
	}
	if p[1].T != 2.01 || p[1].Seconds != 1.01 || p[1].counts != (counts{101, 0, 7}) ||
		!p[1].Clients[0].Full || p[1].Clients[1].Full || p[1].Rate(OpInsert) != 100 {
		t.Errorf("second 2: %+v (rate %v)", p[1], p[1].Rate(OpInsert))
	}
	if math.Abs(p[2].Seconds-0.3) > 1e-9 || p[2].Full || p[2].Clients[0].Full || p[2].Inserts != 30 {
		t.Errorf("last interval: %+v", p[2])
	}

	// A load that ends exactly at a whole second adds no empty interval.
	s.take(clk.Now(), false)
	if len(s.points) != 3 {
		t.Errorf("an empty final interval was kept: %+v", s.points[len(s.points)-1])
	}
}
