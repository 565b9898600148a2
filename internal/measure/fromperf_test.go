package measure

import (
	"reflect"
	"testing"

	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// TestFromReading converts a reading with one event of each status, one
// spelled as an alias, and its notes: counters keyed by canonical name,
// values only where measured, warnings typed by the notes' kinds.
func TestFromReading(t *testing.T) {
	never := "enabled but never scheduled on the PMU"
	r := perfevent.Reading{
		Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "task-clock", Unit: "ns"}, Count: cnt(2000, 2000, 2000), Value: 2000, Status: perfevent.StatusCounted},
			{Event: perfevent.Event{Name: "cpu-cycles", Canonical: "cycles"}, Group: 1, Count: cnt(1000, 4000, 1000), Value: 4000, Status: perfevent.StatusScaled},
			{Event: perfevent.Event{Name: "instructions"}, Status: perfevent.StatusNotSupported, Reason: "no hardware PMU"},
			{Event: perfevent.Event{Name: "cs", Canonical: "context-switches"}, Count: cnt(0, 4000, 0), Value: 12, Status: perfevent.StatusNotCounted, Reason: never},
		},
		Notes: []perfevent.Note{
			{Text: "cgroup mode: counting every process in cgroup /x, not only pid 1"}, // the zero Kind: a note of the attachment
			{Kind: perfevent.NoteMultiplexed, Events: []string{"cycles"}, Running: 0.25, Text: "cpu-cycles was multiplexed: counted 25.0% of the time, value scaled"},
			{Kind: perfevent.NoteNotCounted, Events: []string{"context-switches"}, Reason: never, Text: "cs not counted: " + never},
		},
	}
	counters := []record.Counter{
		{Event: "task-clock", Raw: 2000, Enabled: 2000, Running: 2000, Value: 2000, Status: record.StatusCounted, Unit: "ns"},
		{Event: "cycles", Group: 1, Raw: 1000, Enabled: 4000, Running: 1000, Value: 4000, Status: record.StatusScaled},
		{Event: "instructions", Status: record.StatusNotSupported, Reason: "no hardware PMU"},
		// A value the kernel did not measure is not carried.
		{Event: "context-switches", Enabled: 4000, Status: record.StatusNotCounted, Reason: never},
	}
	if got := recordCounters(r); !reflect.DeepEqual(got, counters) {
		t.Errorf("counters\n%+v\nwant\n%+v", got, counters)
	}
	warnings := []record.Warning{
		{Code: record.WarnGeneral, Text: r.Notes[0].Text},
		{Code: record.WarnMultiplexed, Events: []string{"cycles"}, Text: r.Notes[1].Text},
		{Code: record.WarnNotCounted, Events: []string{"context-switches"}, Text: r.Notes[2].Text},
	}
	if got := noteWarnings(r.Notes); !reflect.DeepEqual(got, warnings) {
		t.Errorf("warnings\n%+v\nwant\n%+v", got, warnings)
	}
	rec := record.New(record.KindStat)
	rec.Version, rec.Step, rec.Counters = "v", "s", counters
	rec.AddWarning(warnings...)
	if err := rec.Validate(); err != nil {
		t.Errorf("the Record does not validate: %v", err)
	}
}
