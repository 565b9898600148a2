package perfevent

import (
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

// handWindow is a 2-second window with one event of each status, built by
// hand from per-part counts on one thread.
func handWindow(t *testing.T) *Window {
	t.Helper()
	tc := Event{Name: "task-clock", Kind: KindSoftware, Unit: "ns", Encodings: []Encoding{{PMU: "software", Type: 1, Config: 1}}}
	pf := Event{Name: "page-faults", Kind: KindSoftware, Encodings: []Encoding{{PMU: "software", Type: 1, Config: 2}}}
	cyc := Event{Name: "cycles", Kind: KindHardware, Encodings: []Encoding{{PMU: "cpu"}}}
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
		Coverage: Coverage{Listed: 3, Attached: 2, Exited: 2, Missed: []int{50}, Attempts: 2}, Groups: lay.describe()}
}

func TestWindowText(t *testing.T) {
	var b strings.Builder
	if err := handWindow(t).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	// task-clock: 2032.66 msec over 2 s = 1016.33 msec/s; page-faults
	// 40069 / 2 = 20034.50 /s; cycles ran a quarter of the time: 4000.
	want := `perfbench stat: pid 42 (mariadbd), 2 threads, window 2.000 s (partial: 10s planned)
groups: task-clock,page-faults,cycles,branch-misses
threads: 2 exited before their counters opened; 1 created during the attach by uncounted threads, found by the rescan and attached; attached 2 times, as threads started during the attach

           2032.66 msec  task-clock             1016.33 msec/s   counted
             40069       page-faults           20034.50 /s       counted
              4000       cycles                 2000.00 /s       scaled (running 25.0%)
   <not supported>       instructions                            no hardware PMU on this machine (perf_event_open: no such file or directory)
     <not counted>       branch-misses                           enabled but never scheduled on the PMU (counters busy: other events, NMI watchdog, or a group that does not fit)

warning: 2 threads started while counters were being opened
warning: cycles was multiplexed: counted 25.0% of the time, value scaled
warning: branch-misses not counted: enabled but never scheduled on the PMU (counters busy: other events, NMI watchdog, or a group that does not fit)
warning: interrupted: the window lasted 2.000 s of the 10s planned
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWindowRecord(t *testing.T) {
	w := handWindow(t)
	r := w.Record()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.Kind != record.KindStat || r.Outcome != record.OutcomePartial || r.Version != "mariadbd" || r.Step != "stat" || r.Server.Pid != 42 || r.Window.Seconds != 2 {
		t.Errorf("record %+v", r)
	}
	want := []record.Counter{
		{Event: "task-clock", Raw: 2032660000, Enabled: 2032660000, Running: 2032660000, Value: 2032660000, Status: "counted", Unit: "ns"},
		{Event: "page-faults", Raw: 40069, Enabled: 2032660000, Running: 2032660000, Value: 40069, Status: "counted"},
		{Event: "cycles", Raw: 1000, Enabled: 4000, Running: 1000, Value: 4000, Status: "scaled"},
		{Event: "instructions", Status: "not supported", Reason: "no hardware PMU on this machine (perf_event_open: no such file or directory)"},
		{Event: "branch-misses", Enabled: 4000, Status: "not counted", Reason: w.Total.Events[4].Reason},
	}
	for i, c := range r.Counters {
		if c != want[i] {
			t.Errorf("counter %d:\n got %+v\nwant %+v", i, c, want[i])
		}
	}
	if len(r.Warnings) != 4 || !strings.HasPrefix(r.Error, "interrupted after 2.000 s") {
		t.Errorf("warnings %q error %q", r.Warnings, r.Error)
	}
	b, err := record.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := record.Parse(b); err != nil {
		t.Errorf("the JSON does not parse back: %v", err)
	}
}
