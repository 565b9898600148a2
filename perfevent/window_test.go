package perfevent

import (
	"reflect"
	"testing"
	"time"
)

// handWindow is a 2-second window with one event of each status, built by
// hand from per-part counts on one thread.
func handWindow(t *testing.T) *Window {
	t.Helper()
	tc := Event{Name: "task-clock", Kind: KindSoftware, Unit: "ns", Encodings: []Encoding{{PMU: "software", Type: 1, Config: 1}}}
	pf := Event{Name: "page-faults", Kind: KindSoftware, Encodings: []Encoding{{PMU: "software", Type: 1, Config: 2}}}
	// cycles as the user spelled it: notes name it so, and key it by its
	// canonical name.
	cyc := Event{Name: "cpu-cycles", Canonical: "cycles", Kind: KindHardware, Encodings: []Encoding{{PMU: "cpu"}}}
	ins := Event{Name: "instructions", Kind: KindHardware, Encodings: []Encoding{{PMU: "cpu", Config: 1}}}
	bm := Event{Name: "branch-misses", Kind: KindHardware, Encodings: []Encoding{{PMU: "cpu", Config: 5}}}
	lay, err := planLayout([]Event{tc, pf, cyc, ins, bm}, nil, map[string]int{"cpu": 1})
	if err != nil {
		t.Fatal(err)
	}
	lay.drop(3, "no hardware PMU on this machine (perf_event_open: no such file or directory)")
	lay.renumber()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := Reading{Start: start, End: start.Add(2 * time.Second), lay: lay, targets: []int{42},
		parts: [][]Count{{
			{Raw: 2032660000, Enabled: 2032660000, Running: 2032660000},
			{Raw: 40069, Enabled: 2032660000, Running: 2032660000},
			{Raw: 1000, Enabled: 4000, Running: 1000},
			{},
			{Raw: 0, Enabled: 4000, Running: 0},
		}},
		notes: []string{"2 threads started while counters were being opened"}}
	r.finish()
	return &Window{Pid: 42, Name: "mariadbd", Exe: "/usr/sbin/mariadbd", Total: r, Planned: 10 * time.Second, Partial: true,
		Coverage: coverage{Listed: 3, Attached: 2, Exited: 2, Missed: []int{50}, Attempts: 2}, Groups: lay.describe()}
}

// TestHandReadingNotes: the hand-built window's events have one status
// each, and its notes say which were multiplexed and which were never
// counted, after the attachment's own: by kind and canonical event name,
// and in words with the events as the user spelled them.
func TestHandReadingNotes(t *testing.T) {
	r := handWindow(t).Total
	want := []Status{StatusCounted, StatusCounted, StatusScaled, StatusNotSupported, StatusNotCounted}
	for i, ec := range r.Events {
		if ec.Status != want[i] {
			t.Errorf("%s: status %v, want %v", ec.Event.Name, ec.Status, want[i])
		}
	}
	// cycles ran a quarter of the time: 1000 raw scale to 4000.
	if v := r.Events[2].Value; v != 4000 {
		t.Errorf("cycles value %v, want 4000", v)
	}
	never := "enabled but never scheduled on the PMU (counters busy: other events, NMI watchdog, or a group that does not fit)"
	notes := []Note{
		{Kind: noteAttach, Text: "2 threads started while counters were being opened"},
		{Kind: NoteMultiplexed, Events: []string{"cycles"}, Running: 0.25, Text: "cpu-cycles was multiplexed: counted 25.0% of the time, value scaled"},
		{Kind: NoteNotCounted, Events: []string{"branch-misses"}, Reason: never, Text: "branch-misses not counted: " + never},
	}
	if !reflect.DeepEqual(r.Notes, notes) {
		t.Errorf("notes\n%+v\nwant\n%+v", r.Notes, notes)
	}
}

// noteTexts returns the texts of notes, in order.
func noteTexts(notes []Note) []string {
	var out []string
	for _, n := range notes {
		out = append(out, n.Text)
	}
	return out
}
