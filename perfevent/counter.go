package perfevent

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/perfbench/perfbench/record"
)

// Count is what the kernel reports for one counter, or a sum or a difference
// of such reports: the raw count and the nanoseconds the counter was enabled
// (time_enabled) and actually counting on the PMU (time_running).
type Count struct {
	Raw     uint64
	Enabled uint64
	Running uint64
}

// Add returns the field-by-field sum of c and d.
func (c Count) Add(d Count) Count {
	return Count{Raw: c.Raw + d.Raw, Enabled: c.Enabled + d.Enabled, Running: c.Running + d.Running}
}

// Sub returns c − prev field by field: the count over the interval between
// two reads of the same counter. The kernel's counts never go backwards; a
// field that did (two reads of different counters) gives 0, not a wrapped
// huge number.
func (c Count) Sub(prev Count) Count {
	sub := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return Count{Raw: sub(c.Raw, prev.Raw), Enabled: sub(c.Enabled, prev.Enabled), Running: sub(c.Running, prev.Running)}
}

// Scaled is the count estimated over the whole enabled time: Raw when the
// counter ran all the time, Raw × Enabled / Running when it was multiplexed,
// and 0 when it never ran (then there is no estimate; see Status).
func (c Count) Scaled() float64 {
	switch {
	case c.Running == 0:
		return 0
	case c.Running >= c.Enabled:
		return float64(c.Raw)
	}
	return float64(c.Raw) * (float64(c.Enabled) / float64(c.Running))
}

// Fraction is Running / Enabled: 1 when the counter ran the whole time, less
// when multiplexed, 0 when it never ran.
func (c Count) Fraction() float64 {
	if c.Enabled == 0 || c.Running >= c.Enabled {
		if c.Running == 0 {
			return 0
		}
		return 1
	}
	return float64(c.Running) / float64(c.Enabled)
}

// Status is the status of a counter, as perf stat reports it. The order is
// from weakest to strongest: the status of a sum is the lowest of its parts.
type Status int

const (
	// StatusNotSupported: the event could not be opened on this machine.
	StatusNotSupported Status = iota
	// StatusNotCounted: opened, but never running during the window.
	StatusNotCounted
	// StatusScaled: multiplexed; the value is Raw × Enabled / Running.
	StatusScaled
	// StatusCounted: running for the whole window; the value is Raw.
	StatusCounted
)

// String returns the status as perf stat and the Record spell it.
func (s Status) String() string {
	switch s {
	case StatusNotSupported:
		return record.StatusNotSupported
	case StatusNotCounted:
		return record.StatusNotCounted
	case StatusScaled:
		return record.StatusScaled
	case StatusCounted:
		return record.StatusCounted
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Measured reports whether a counter with this status has a value.
func (s Status) Measured() bool { return s == StatusScaled || s == StatusCounted }

// Status returns the status of a counter with count c: not counted when it
// never ran, scaled when it ran part of the time it was enabled, else
// counted.
func (c Count) Status() Status {
	switch {
	case c.Running == 0:
		return StatusNotCounted
	case c.Running < c.Enabled:
		return StatusScaled
	}
	return StatusCounted
}

// EventCount is one event in a Reading: its counts summed over every thread
// (or CPU, in cgroup mode) and, for a hybrid event, over its PMUs.
type EventCount struct {
	Event Event
	// Group numbers the events opened as one group (1, 2, ...); 0 for an
	// event opened alone or not opened.
	Group int
	// Count is the sum of the raw counts and of the enabled and running
	// times.
	Count Count
	// Value is the scaled count: Count.Scaled() for an event opened on one
	// PMU, the sum of each PMU's scaled count for a hybrid event. It is
	// meaningful only when Status is counted or scaled.
	Value  float64
	Status Status
	// Reason says why the event is not supported or not counted.
	Reason string
}

// ThreadCounts is one thread's counts in a Reading, per event (hybrid events
// summed over their PMUs). A thread's counters are opened with inherit, so
// they include the counts of every thread it created after it was attached,
// those still running and those that exited: the counts of a thread that a
// connection-handling thread spawned show up under that thread's creator.
//
// Tid is the thread the counters were opened on; it may have exited since
// (its counts stay), and the kernel may have given its id to a new thread.
type ThreadCounts struct {
	Tid    int
	Counts []Count // in the order of Reading.Events
}

// Reading is the counters of an Attachment at one instant (from Read) or
// over a window (from Sub: the difference of two readings).
type Reading struct {
	// Start is the instant of the earlier read of a window; zero for a
	// single read. End is the instant of the (later) read.
	Start, End time.Time
	// Events has one entry per event given to Attach, in that order.
	Events []EventCount
	// Threads has one entry per attached thread in thread mode, in the
	// order they were attached; it is empty in cgroup mode.
	Threads []ThreadCounts
	// Warnings are conditions that weaken the reading without voiding it:
	// multiplexed or never-counted events, threads that may be uncounted.
	Warnings []string

	lay     *layout
	targets []int     // tid (thread mode) or CPU (cgroup mode) of each row of parts
	parts   [][]Count // per target, per part of lay
	notes   []string  // warnings that come from the attachment
}

// Seconds is the length of the window in seconds; 0 for a single read.
func (r Reading) Seconds() float64 {
	if r.Start.IsZero() {
		return 0
	}
	return r.End.Sub(r.Start).Seconds()
}

// Event returns the count of the event named name (Event.Name).
func (r Reading) Event(name string) (EventCount, bool) {
	for _, e := range r.Events {
		if e.Event.Name == name {
			return e, true
		}
	}
	return EventCount{}, false
}

// Sub returns the window from prev to r: each counter's raw value, enabled
// and running times subtracted separately, then scaled. prev must be an
// earlier reading of the same Attachment.
func (r Reading) Sub(prev Reading) (Reading, error) {
	if r.lay == nil || r.lay != prev.lay || len(r.targets) != len(prev.targets) {
		return Reading{}, fmt.Errorf("subtract readings: the two readings are not of the same attachment")
	}
	d := Reading{Start: prev.End, End: r.End, lay: r.lay, targets: r.targets, notes: r.notes}
	d.parts = make([][]Count, len(r.parts))
	for t := range r.parts {
		if r.targets[t] != prev.targets[t] {
			return Reading{}, fmt.Errorf("subtract readings: target %d is %d in one and %d in the other", t, r.targets[t], prev.targets[t])
		}
		row := make([]Count, len(r.parts[t]))
		for p := range row {
			row[p] = r.parts[t][p].Sub(prev.parts[t][p])
		}
		d.parts[t] = row
	}
	d.finish()
	return d, nil
}

// finish derives Events, Threads and Warnings from the per-target, per-part
// counts.
func (r *Reading) finish() {
	lay := r.lay
	nev := len(lay.events)
	partSum := make([]Count, len(lay.parts))
	for _, row := range r.parts {
		for p, c := range row {
			partSum[p] = partSum[p].Add(c)
		}
	}
	r.Events = make([]EventCount, nev)
	for i, ev := range lay.events {
		ec := EventCount{Event: ev, Status: StatusCounted}
		opened := 0
		for _, p := range lay.eventParts[i] {
			pt := lay.parts[p]
			if pt.reason != "" {
				continue
			}
			opened++
			c := partSum[p]
			ec.Count = ec.Count.Add(c)
			ec.Value += c.Scaled()
			ec.Status = min(ec.Status, c.Status())
			if ec.Group == 0 {
				ec.Group = lay.groupNumber(pt.group)
			}
		}
		switch {
		case opened == 0:
			ec.Status = StatusNotSupported
			ec.Reason = lay.eventReason(i)
			ec.Value = 0
			ec.Group = 0
		case opened < len(lay.eventParts[i]):
			// A hybrid event that opened on some of its PMUs only: a
			// sum that misses a PMU is not the event's count.
			ec.Status = StatusNotSupported
			ec.Reason = lay.eventReason(i)
			ec.Value = 0
		case ec.Status == StatusNotCounted:
			ec.Value = 0
			if ec.Count.Enabled == 0 {
				ec.Reason = "the counted threads did not run during the window"
				if lay.cgroup {
					ec.Reason = "no task of the cgroup ran during the window"
				}
			} else {
				ec.Reason = "enabled but never scheduled on the PMU (counters busy: other events, NMI watchdog, or a group that does not fit)"
			}
		}
		r.Events[i] = ec
	}
	if !lay.cgroup {
		r.Threads = make([]ThreadCounts, len(r.targets))
		for t, tid := range r.targets {
			counts := make([]Count, nev)
			for p, c := range r.parts[t] {
				counts[lay.parts[p].event] = counts[lay.parts[p].event].Add(c)
			}
			r.Threads[t] = ThreadCounts{Tid: tid, Counts: counts}
		}
	}
	r.Warnings = append([]string(nil), r.notes...)
	// Not-counted events with the same reason share one warning.
	var reasons []string
	notCounted := map[string][]string{}
	for _, ec := range r.Events {
		switch ec.Status {
		case StatusScaled:
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s was multiplexed: counted %.1f%% of the time, value scaled", ec.Event.Name, 100*ec.Count.Fraction()))
		case StatusNotCounted:
			if r.Start.IsZero() {
				break
			}
			if _, ok := notCounted[ec.Reason]; !ok {
				reasons = append(reasons, ec.Reason)
			}
			notCounted[ec.Reason] = append(notCounted[ec.Reason], ec.Event.Name)
		}
	}
	for _, why := range reasons {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s not counted: %s", strings.Join(notCounted[why], ", "), why))
	}
}

// RecordCounters converts r's events into Record counters: raw, enabled and
// running deltas, the scaled value and the status, in the events' order.
// Values that were not measured are 0 with a not supported or not counted
// status and the reason.
func (r Reading) RecordCounters() []record.Counter {
	out := make([]record.Counter, len(r.Events))
	for i, ec := range r.Events {
		// Records carry the catalogue spelling ("context-switches" for
		// "cs"), so Records written from different spellings compare.
		name := ec.Event.Canonical
		if name == "" {
			name = ec.Event.Name
		}
		c := record.Counter{
			Event:   name,
			Group:   ec.Group,
			Raw:     ec.Count.Raw,
			Enabled: ec.Count.Enabled,
			Running: ec.Count.Running,
			Status:  ec.Status.String(),
			Reason:  ec.Reason,
			Unit:    ec.Event.Unit,
			Scale:   ec.Event.Scale,
		}
		if ec.Status.Measured() && !math.IsNaN(ec.Value) {
			c.Value = ec.Value
		}
		out[i] = c
	}
	return out
}
