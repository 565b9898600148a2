package perfevent

import (
	"context"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// FakeWindowRecord counts list on a fake kernel, over one window of one
// thread (pid 100), and returns the window's Record. perRead gives the
// count each event adds per read by its perf_event_attr type and config;
// enabled and running grow by 1,000 ns per read, so nothing is scaled. It
// lets tests outside the package (package perfevent_test) take counts of
// their choosing through the engine's open, group read and Record code.
func FakeWindowRecord(t *testing.T, sys *System, list List, perRead func(typ uint32, config uint64) uint64) *record.Record {
	t.Helper()
	f := newFakeSys()
	f.count = func(o fakeOpen, r int) Count {
		return Count{Raw: uint64(r) * perRead(o.attr.Type, o.attr.Config), Enabled: uint64(r) * 1000, Running: uint64(r) * 1000}
	}
	root := fakeRoot(t, 100, threads(100))
	a, err := attachFake(t, f, root, 100, list.Events, Options{Groups: list.Groups, System: sys})
	if err != nil {
		t.Fatalf("attach to the fake kernel: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w, err := Measure(ctx, a, WindowOptions{})
	if err != nil {
		t.Fatalf("measure on the fake kernel: %v", err)
	}
	// The Record's counters as perfbench writes them (measure's
	// recordCounters, which this package cannot import): canonical name,
	// raw, enabled, running, the scaled value and the status.
	r := &record.Record{Schema: record.SchemaVersion}
	for _, ec := range w.Total.Events {
		c := record.Counter{Event: ec.Event.RecordName(), Group: ec.Group, Raw: ec.Count.Raw, Enabled: ec.Count.Enabled,
			Running: ec.Count.Running, Reason: ec.Reason, Unit: ec.Event.Unit, Scale: ec.Event.Scale}
		switch ec.Status {
		case StatusCounted:
			c.Status, c.Value = record.StatusCounted, ec.Value
		case StatusScaled:
			c.Status, c.Value = record.StatusScaled, ec.Value
		case StatusNotCounted:
			c.Status = record.StatusNotCounted
		default:
			c.Status = record.StatusNotSupported
		}
		r.Counters = append(r.Counters, c)
	}
	return r
}
