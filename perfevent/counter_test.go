package perfevent

import (
	"testing"
)

func TestCountArithmetic(t *testing.T) {
	a := Count{Raw: 1000, Enabled: 400, Running: 100}
	b := Count{Raw: 250, Enabled: 100, Running: 40}
	if got := a.Add(b); got != (Count{1250, 500, 140}) {
		t.Errorf("Add = %+v", got)
	}
	if got, ok := a.Sub(b); got != (Count{750, 300, 60}) || !ok {
		t.Errorf("Sub = %+v, %v", got, ok)
	}
	// A count that went backwards is no count: not a wrap-around to
	// 2^64, not a silent 0.
	if got, ok := b.Sub(a); ok || got != (Count{}) {
		t.Errorf("backwards Sub = %+v, %v; want not ok", got, ok)
	}
}

func TestCountScaling(t *testing.T) {
	for _, tc := range []struct {
		c        Count
		scaled   float64
		fraction float64
		status   Status
	}{
		{Count{Raw: 5000, Enabled: 1e9, Running: 1e9}, 5000, 1, StatusCounted},
		// Ran a quarter of the time: 4× the raw count.
		{Count{Raw: 5000, Enabled: 1e9, Running: 2.5e8}, 20000, 0.25, StatusScaled},
		{Count{Raw: 3, Enabled: 3, Running: 1}, 9, 1.0 / 3, StatusScaled},
		// Never ran: no value, not a zero.
		{Count{Raw: 0, Enabled: 1e9, Running: 0}, 0, 0, StatusNotCounted},
		// The process did not run at all in the window.
		{Count{}, 0, 0, StatusNotCounted},
		// Huge raw counts do not overflow the scaling.
		{Count{Raw: 1 << 62, Enabled: 4, Running: 2}, 1 << 63, 0.5, StatusScaled},
	} {
		if got := tc.c.Scaled(); got != tc.scaled {
			t.Errorf("%+v: Scaled = %v, want %v", tc.c, got, tc.scaled)
		}
		if got := tc.c.Fraction(); got != tc.fraction {
			t.Errorf("%+v: Fraction = %v, want %v", tc.c, got, tc.fraction)
		}
		if got := tc.c.Status(); got != tc.status {
			t.Errorf("%+v: Status = %v, want %v", tc.c, got, tc.status)
		}
	}
}

func TestStatusNames(t *testing.T) {
	// As perf stat prints them, and as record.Status spells them.
	want := map[Status]string{
		StatusNotSupported: "not supported",
		StatusNotCounted:   "not counted",
		StatusScaled:       "scaled",
		StatusCounted:      "counted",
	}
	for s, name := range want {
		if s.String() != name {
			t.Errorf("%d prints %q, want %q", int(s), s.String(), name)
		}
	}
	if !(StatusNotSupported < StatusNotCounted && StatusNotCounted < StatusScaled && StatusScaled < StatusCounted) {
		t.Error("statuses are not ordered weakest first")
	}
}

// TestReadingSub builds two readings by hand (two threads, one event with
// two PMUs, one software event) and checks the window between them.
func TestReadingSub(t *testing.T) {
	hybrid := Event{Name: "cycles", Kind: KindHardware, Encodings: []Encoding{{PMU: "cpu_core"}, {PMU: "cpu_atom", Config: 8 << 32}}}
	sw := Event{Name: "task-clock", Kind: KindSoftware, Unit: "ns", Encodings: []Encoding{{PMU: "software", Type: 1, Config: 1}}}
	lay, err := planLayout([]Event{hybrid, sw}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	lay.renumber()
	// parts: 0 cycles/cpu_core, 1 cycles/cpu_atom, 2 task-clock.
	mk := func(rows ...[]Count) Reading {
		r := Reading{lay: lay, targets: []int{10, 11}, parts: rows}
		r.finish()
		return r
	}
	// Over the window thread 10 runs 1000 ns, 600 on a core CPU (200
	// cycles) and 400 on an atom CPU (20 cycles); thread 11 runs 1000 ns
	// on core CPUs only (200 cycles). Each part is enabled the whole time
	// its thread runs and runs only on its own core type.
	r0 := mk(
		[]Count{{100, 1000, 600}, {10, 1000, 400}, {7, 7, 7}},
		[]Count{{200, 2000, 2000}, {0, 2000, 0}, {9, 9, 9}},
	)
	r1 := mk(
		[]Count{{300, 2000, 1200}, {30, 2000, 800}, {17, 17, 17}},
		[]Count{{400, 3000, 3000}, {0, 3000, 0}, {29, 29, 29}},
	)
	d, err := r1.Sub(r0)
	if err != nil {
		t.Fatal(err)
	}
	// The parts combine per thread into counts that ran the whole time:
	// 220 and 200 cycles, counted, not scaled up to 500 + 100.
	c := d.Events[0]
	if c.Count != (Count{Raw: 420, Enabled: 2000, Running: 2000}) || c.Value != 420 || c.Status != StatusCounted {
		t.Errorf("cycles %+v", c)
	}
	tc := d.Events[1]
	if tc.Count != (Count{30, 30, 30}) || tc.Value != 30 || tc.Status != StatusCounted {
		t.Errorf("task-clock %+v", tc)
	}
	if got := d.Threads[0].Counts[0]; got != (Count{Raw: 220, Enabled: 1000, Running: 1000}) {
		t.Errorf("thread 10 cycles %+v", got)
	}
	if d.Threads[1].Tid != 11 || d.Threads[1].Counts[1] != (Count{20, 20, 20}) {
		t.Errorf("thread 11 %+v", d.Threads[1])
	}
	if len(noteTexts(d.Notes)) != 0 {
		t.Errorf("warnings %q", noteTexts(d.Notes))
	}
	other, _ := planLayout([]Event{sw}, nil, nil)
	if _, err := r1.Sub(Reading{lay: other}); err == nil {
		t.Error("subtracting readings of different attachments succeeded")
	}
}

// TestReadingWithout leaves one thread's counts out of a reading, and only
// the thread attached under that tid with that start time.
func TestReadingWithout(t *testing.T) {
	sw := Event{Name: "task-clock", Kind: KindSoftware, Unit: "ns", Encodings: []Encoding{{PMU: "software", Type: 1, Config: 1}}}
	lay, err := planLayout([]Event{sw}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := Reading{lay: lay, targets: []int{10, 11, 12}, starts: []uint64{5, 6, 7},
		parts: [][]Count{{{100, 100, 100}}, {{20, 20, 20}}, {{3, 3, 3}}}, own: make([][]Count, 3),
		gaps: []gap{{target: 2, part: 0, why: "unreadable"}}}
	r.finish()
	if _, ok := r.Without(11, 9); ok {
		t.Error("a thread 11 that started at another time was left out")
	}
	d, ok := r.Without(11, 6)
	if !ok || len(d.Threads) != 2 || d.Threads[1].Tid != 12 {
		t.Fatalf("without 11: %v %+v", ok, d.Threads)
	}
	// The gap moved with its thread.
	if d.Events[0].Missing != "unreadable" {
		t.Errorf("task-clock %+v", d.Events[0])
	}
	d, _ = r.Without(12, 0)
	if d.Events[0].Count.Raw != 120 || d.Events[0].Missing != "" {
		t.Errorf("without 12: %+v", d.Events[0])
	}
}
