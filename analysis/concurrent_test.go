package analysis

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/perfbench/perfbench/perfevent/metric"
	"github.com/perfbench/perfbench/record"
)

// TestConcurrentRatios checks that ratios asked for from several
// goroutines at once (as a report's tables are built) equal those of a
// Comparison asked one at a time, and that every Record's metrics, now
// computed on every CPU, are in input order. Run with -race.
func TestConcurrentRatios(t *testing.T) {
	var recs []*record.Record
	for s := range 6 {
		for rep := range 6 {
			for v, ops := range []float64{1000, 900 + float64(10*s)} {
				recs = append(recs, stepRecord([]string{"base", "new"}[v], fmt.Sprintf("s%d", s), rep+1, ops+float64(rep),
					counted("instructions", 1e9+float64(rep)*1e6), counted("cycles", 2e9-float64(s)*1e7)))
			}
		}
	}
	serial, err := New(recs, "base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	concurrent, err := New(recs, "base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		s := serial.samples[r.Key()]
		if s.Records[r.Repeat-1] != recs[i] || !reflect.DeepEqual(s.PerOp[r.Repeat-1], compute(r, Options{})) {
			t.Fatalf("Record %d: metrics not those of Compute in input order", i)
		}
	}
	metrics := append([]string{OpsPerSecond}, concurrent.CounterMetrics()...)
	var wg sync.WaitGroup
	got := make([][]Cell, 4)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, m := range metrics {
				for s := range 6 {
					got[g] = append(got[g], concurrent.Ratio(record.Key{Host: "h", Version: "new", Step: fmt.Sprintf("s%d", s), Threads: 1}, m))
				}
			}
		}()
	}
	wg.Wait()
	var want []Cell
	for _, m := range metrics {
		for s := range 6 {
			want = append(want, serial.Ratio(record.Key{Host: "h", Version: "new", Step: fmt.Sprintf("s%d", s), Threads: 1}, m))
		}
	}
	tested := 0
	for _, c := range want {
		if c.Tested {
			tested++
		}
	}
	if tested == 0 {
		t.Fatalf("no ratio was tested: %+v", want)
	}
	for g := range got {
		if !reflect.DeepEqual(fmt.Sprint(got[g]), fmt.Sprint(want)) {
			t.Errorf("goroutine %d: ratios\n%v\nwant\n%v", g, got[g], want)
		}
	}
}

// TestTopDownReadsCached checks that what topDownSetFits keeps of each set
// is what walking the set's expressions gives.
func TestTopDownReadsCached(t *testing.T) {
	fits := 0
	for _, s := range metric.Sets() {
		want := topDownReads(s)
		var slots string
		for _, h := range topDownSlots {
			if s.Metric(h) != nil {
				slots = h
			}
		}
		if slots != want.slots {
			t.Errorf("%s: slots %q, want %q", s.Name, want.slots, slots)
		}
		if want.ok {
			fits++
			for _, c := range topDownCategories {
				for _, m := range topDownMetrics[c] {
					for _, e := range s.Needs(m) {
						if !slices.Contains(want.need, e) {
							t.Errorf("%s: %s reads %s, not among %v", s.Name, m, e, want.need)
						}
					}
				}
			}
		}
		// counted agrees with topDownSetFits: with a counter for every
		// event (under its core PMU name), and without the last one.
		byName := map[string]record.Counter{}
		for _, e := range want.need {
			byName["cpu/"+e+"/"] = counted(e, 1)
		}
		for _, drop := range []bool{false, true} {
			if drop && len(want.need) > 0 {
				delete(byName, "cpu/"+want.need[len(want.need)-1]+"/")
			}
			_, fits := topDownSetFits(s, topDownEvents(byName)(s))
			if got := want.counted(byName); got != fits || got != (want.ok && !drop) {
				t.Errorf("%s without the last event %v: counted %v, topDownSetFits %v", s.Name, drop, got, fits)
			}
		}
		if again := topDownReads(s); !reflect.DeepEqual(again, want) {
			t.Errorf("%s: second look %+v, first %+v", s.Name, again, want)
		}
	}
	if fits == 0 {
		t.Error("no set has TopDown metrics")
	}
}
