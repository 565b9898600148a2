package perfevent

import (
	"fmt"
	"strings"
	"time"
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
// two reads of the same counter. ok is false when a field went backwards,
// which the kernel's counts never do: then the difference is no count.
func (c Count) Sub(prev Count) (d Count, ok bool) {
	if c.Raw < prev.Raw || c.Enabled < prev.Enabled || c.Running < prev.Running {
		return Count{}, false
	}
	return Count{Raw: c.Raw - prev.Raw, Enabled: c.Enabled - prev.Enabled, Running: c.Running - prev.Running}, true
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

// String returns the status as perf stat spells it (and the Record: see
// record.Status).
func (s Status) String() string {
	switch s {
	case StatusNotSupported:
		return "not supported"
	case StatusNotCounted:
		return "not counted"
	case StatusScaled:
		return "scaled"
	case StatusCounted:
		return "counted"
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
	// Count is the sum over threads of each thread's raw count, enabled
	// and running times (for a hybrid event, its parts combined first:
	// see Reading).
	Count Count
	// Value is the scaled count: the sum over threads of each thread's
	// count scaled by its own enabled and running times. It is meaningful
	// only when Status is counted or scaled.
	Value  float64
	Status Status
	// Reason says why the event is not supported or not counted.
	Reason string
	// Missing, when set, says why the count is unknown: a counter that
	// could not be read at an edge of the window, or went backwards. The
	// status is then not counted, with Missing as the Reason.
	Missing string
}

// ThreadCounts is one thread's counts in a Reading, per event. A thread's
// counters are opened with inherit, so they include the counts of every
// thread it created after it was attached, those still running and those
// that exited: the counts of a thread that a connection-handling thread
// spawned show up under that thread's creator. A thread counted twice
// (Options.Own) has two rows: its own counts, and those of the threads it
// created (Descendants).
//
// Tid is the thread the counters were opened on; it may have exited since
// (its counts stay), and the kernel may have given its id to a new thread:
// Start tells the two apart.
type ThreadCounts struct {
	Tid int
	// Start is the thread's start time, in clock ticks since boot (field
	// 22 of /proc/PID/task/TID/stat), read when it was attached; 0 when
	// unknown.
	Start uint64
	// Descendants marks the row of the threads Tid created since it was
	// attached (its inherited counts less its own).
	Descendants bool
	// Counts are in the order of Reading.Events, hybrid parts combined.
	// Count.Scaled is the row's share of the event's Value (Values are
	// scaled per thread).
	Counts []Count
}

// Reading is the counters of an Attachment at one instant (from Read) or
// over a window (from Sub: the difference of two readings).
//
// A hybrid event (one part per core PMU) is combined on each thread before
// anything else: raw counts added, over the time the parts were enabled in
// common, and the parts' running times added. A per-task event on a hybrid
// CPU stays enabled while its task runs on the other core type, where it
// cannot count: each part alone looks multiplexed, scaling each part by its
// own enabled/running times would inflate the count up to twice with a
// false multiplexing note, while the sum of raws over the common enabled
// time is the count.
//
// Multiplexed counts are scaled per thread and then added, as perf 6.2 and
// later do: a thread that ran while the event was scheduled counts for what
// it did, not for the average of every thread.
type Reading struct {
	// Start is the instant of the earlier read of a window; zero for a
	// single read. End is the instant of the (later) read.
	Start, End time.Time
	// Events has one entry per event given to Attach, in that order.
	Events []EventCount
	// Threads has one entry per attached thread in thread mode, in the
	// order they were attached (two for a thread counted twice); it is
	// empty in cgroup mode. They add up to Events.
	Threads []ThreadCounts
	// Notes are conditions that weaken the reading without voiding it:
	// the attachment's (threads that may be uncounted, ...), then
	// multiplexed events, then never-counted events. A window keeps those
	// of both its readings.
	Notes []Note

	lay     *layout
	targets []int     // tid (thread mode) or CPU (cgroup mode) of each row of parts
	starts  []uint64  // thread start time of each row (thread mode)
	parts   [][]Count // per target, per part of lay
	own     [][]Count // per target, per part: the counts without inherit; nil rows for other targets
	gaps    []gap     // counts that are not known
	cpuGap  string    // cgroup mode: CPUs came online since the attach
	notes   []string  // warnings that come from the attachment
}

// gap is a part of a target whose count is not known, with the reason.
type gap struct {
	target, part int
	why          string
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
// earlier reading of the same Attachment. A count unknown in either reading,
// or that went backwards between them, is unknown in the window (see
// EventCount.Missing); the warnings of both readings are kept.
func (r Reading) Sub(prev Reading) (Reading, error) {
	if r.lay == nil || r.lay != prev.lay || len(r.targets) != len(prev.targets) {
		return Reading{}, fmt.Errorf("subtract readings: the two readings are not of the same attachment")
	}
	d := Reading{Start: prev.End, End: r.End, lay: r.lay, targets: r.targets, starts: r.starts, cpuGap: r.cpuGap}
	d.notes = append(append([]string(nil), prev.notes...), r.notes...)
	unknown := map[[2]int]bool{}
	for _, g := range prev.gaps {
		d.gaps = append(d.gaps, gap{g.target, g.part, "at the start of the window: " + g.why})
		unknown[[2]int{g.target, g.part}] = true
	}
	for _, g := range r.gaps {
		d.gaps = append(d.gaps, gap{g.target, g.part, "at the end of the window: " + g.why})
		unknown[[2]int{g.target, g.part}] = true
	}
	sub := func(t int, a, b []Count) []Count {
		row := make([]Count, len(a))
		for p := range row {
			if unknown[[2]int{t, p}] {
				continue
			}
			c, ok := a[p].Sub(b[p])
			if !ok {
				d.gaps = append(d.gaps, gap{t, p, fmt.Sprintf("%s went backwards between two reads (raw %d to %d, enabled %d to %d ns, running %d to %d ns)",
					r.lay.rowName(p, r.targets[t]), b[p].Raw, a[p].Raw, b[p].Enabled, a[p].Enabled, b[p].Running, a[p].Running)})
			}
			row[p] = c
		}
		return row
	}
	d.parts = make([][]Count, len(r.parts))
	d.own = make([][]Count, len(r.parts))
	for t := range r.parts {
		if r.targets[t] != prev.targets[t] {
			return Reading{}, fmt.Errorf("subtract readings: target %d is %d in one and %d in the other", t, r.targets[t], prev.targets[t])
		}
		d.parts[t] = sub(t, r.parts[t], prev.parts[t])
		if t < len(r.own) && t < len(prev.own) && r.own[t] != nil && prev.own[t] != nil {
			d.own[t] = sub(t, r.own[t], prev.own[t])
		}
	}
	d.finish()
	return d, nil
}

// Without returns r without the counts of thread tid (thread mode): the
// thread attached under that tid, if its start time is start (0: any). ok
// is false when no such thread was attached: r is returned as it is.
func (r Reading) Without(tid int, start uint64) (Reading, bool) {
	t := -1
	for i, id := range r.targets {
		if id == tid && (start == 0 || i >= len(r.starts) || r.starts[i] == 0 || r.starts[i] == start) {
			t = i
			break
		}
	}
	if t < 0 || r.lay == nil || r.lay.cgroup {
		return r, false
	}
	cut := func(rows [][]Count) [][]Count {
		if t >= len(rows) {
			return rows
		}
		return append(append([][]Count(nil), rows[:t]...), rows[t+1:]...)
	}
	d := Reading{Start: r.Start, End: r.End, lay: r.lay, cpuGap: r.cpuGap, notes: r.notes}
	d.targets = append(append([]int(nil), r.targets[:t]...), r.targets[t+1:]...)
	if t < len(r.starts) {
		d.starts = append(append([]uint64(nil), r.starts[:t]...), r.starts[t+1:]...)
	}
	d.parts, d.own = cut(r.parts), cut(r.own)
	for _, g := range r.gaps {
		switch {
		case g.target < t:
			d.gaps = append(d.gaps, g)
		case g.target > t:
			g.target--
			d.gaps = append(d.gaps, g)
		}
	}
	d.finish()
	return d, true
}

// Missing says why the counts of some events are unknown ("" when every
// count is known): the Record of the window fails for that reason.
func (r Reading) Missing() string {
	var names []string
	why := ""
	for _, ec := range r.Events {
		if ec.Missing != "" {
			names = append(names, ec.Event.Name)
			if why == "" {
				why = ec.Missing
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("the count of %s is unknown: %s", strings.Join(names, ", "), why)
}

// combine is the count of the event whose opened parts are parts on one
// row: raw counts added over the parts' common enabled time, running times
// added (see Reading).
func combine(row []Count, parts []int) Count {
	var c Count
	for _, p := range parts {
		x := row[p]
		c.Raw += x.Raw
		c.Enabled = max(c.Enabled, x.Enabled)
		c.Running += x.Running
	}
	c.Running = min(c.Running, c.Enabled)
	return c
}

// finish derives Events, Threads and Notes from the per-target, per-part
// counts.
func (r *Reading) finish() {
	lay := r.lay
	open := lay.openedByEvent()
	missing := r.missing()
	r.Events = make([]EventCount, len(lay.events))
	for i := range lay.events {
		r.Events[i] = r.eventCount(i, open[i], missing[i])
	}
	if !lay.cgroup {
		r.Threads = r.threadRows(open)
	}
	r.Notes = eventNotes(r.notes, r.Events, !r.Start.IsZero())
}

// openedByEvent are the opened parts of each event, nil for an event missing a
// part.
func (lay *layout) openedByEvent() [][]int {
	open := make([][]int, len(lay.events))
	for i := range lay.events {
		ps := lay.eventParts[i]
		for _, p := range ps {
			if lay.parts[p].reason == "" {
				open[i] = append(open[i], p)
			}
		}
		if len(open[i]) < len(ps) {
			open[i] = nil
		}
	}
	return open
}

// missing says, per event, why its count is unknown ("" when it is known):
// the first reason of its gaps (and how many other reasons there are), or
// in cgroup mode the CPUs that came online.
func (r *Reading) missing() []string {
	lay := r.lay
	missing := make([]string, len(lay.events))
	more := make([]int, len(lay.events))
	for _, g := range r.gaps {
		i := lay.parts[g.part].event
		if missing[i] == "" {
			missing[i] = g.why
		} else if g.why != missing[i] {
			more[i]++
		}
	}
	for i := range missing {
		switch {
		case more[i] > 0:
			missing[i] += fmt.Sprintf(" (and %d more such counters)", more[i])
		case missing[i] == "":
			missing[i] = r.cpuGap
		}
	}
	return missing
}

// eventCount is event i's count over the reading's rows: ps are its opened
// parts (nil: not supported), missing why its count is unknown ("" when
// known).
func (r *Reading) eventCount(i int, ps []int, missing string) EventCount {
	lay := r.lay
	ec := EventCount{Event: lay.events[i], Status: StatusCounted}
	switch {
	case len(lay.eventParts[i]) == 0 || ps == nil:
		// No part, or a hybrid event that opened on some of its PMUs
		// only: a sum that misses a PMU is not the event's count.
		ec.Status = StatusNotSupported
		ec.Reason = lay.eventReason(i)
		return ec
	case missing != "":
		ec.Status = StatusNotCounted
		ec.Missing = missing
		ec.Reason = ec.Missing
		return ec
	}
	ec.Group = lay.groupNumber(lay.parts[ps[0]].group)
	ran, scaled := false, false
	for _, row := range r.parts {
		c := combine(row, ps)
		ec.Count = ec.Count.Add(c)
		ec.Value += c.Scaled()
		ran = ran || c.Running > 0
		scaled = scaled || (c.Enabled > 0 && c.Running < c.Enabled)
	}
	switch {
	case ec.Count.Enabled == 0 || !ran:
		ec.Status = StatusNotCounted
		ec.Value = 0
		switch {
		case ec.Count.Enabled > 0:
			ec.Reason = "enabled but never scheduled on the PMU (counters busy: other events, NMI watchdog, or a group that does not fit)"
		case lay.cgroup:
			ec.Reason = "no task of the cgroup ran during the window"
		default:
			ec.Reason = "the counted threads did not run during the window"
		}
	case scaled:
		ec.Status = StatusScaled
	}
	return ec
}

// threadRows are the rows of Threads (thread mode): one per target, two for
// a thread counted twice.
func (r *Reading) threadRows(open [][]int) []ThreadCounts {
	var rows []ThreadCounts
	for t, tid := range r.targets {
		start := uint64(0)
		if t < len(r.starts) {
			start = r.starts[t]
		}
		if t >= len(r.own) || r.own[t] == nil {
			rows = append(rows, r.threadRow(tid, start, false, r.parts[t], open))
			continue
		}
		// The thread's own counts were read just before its inherited
		// ones: what it ran between the two reads counts as its own,
		// and over a window its own delta is capped by the inherited
		// one, so that the rows add up.
		own := make([]Count, len(r.parts[t]))
		desc := make([]Count, len(r.parts[t]))
		for p, inh := range r.parts[t] {
			o := r.own[t][p]
			o = Count{Raw: min(o.Raw, inh.Raw), Enabled: min(o.Enabled, inh.Enabled), Running: min(o.Running, inh.Running)}
			own[p] = o
			desc[p], _ = inh.Sub(o)
		}
		rows = append(rows, r.threadRow(tid, start, false, own, open), r.threadRow(tid, start, true, desc, open))
	}
	return rows
}

// threadRow is the ThreadCounts of one row of part counts.
func (r *Reading) threadRow(tid int, start uint64, desc bool, row []Count, open [][]int) ThreadCounts {
	tc := ThreadCounts{Tid: tid, Start: start, Descendants: desc, Counts: make([]Count, len(open))}
	for i, ps := range open {
		if ps != nil {
			tc.Counts[i] = combine(row, ps)
		}
	}
	return tc
}

// Ran tells, for the threads of r, which may have run since prev, an
// earlier reading of the same attachment (thread mode): ran(tid, start) is
// false only for the thread attached under tid with that start time whose
// task-clock or cpu-clock count is the same in both readings. Those
// clocks count every moment a thread runs, so such a thread did nothing
// in between, and neither did the threads it created since the attach
// (their counts fold into its counters). ok is false when neither clock
// is counted on every thread as it is (no modifiers): nothing can be told.
func (r Reading) Ran(prev Reading) (ran func(tid int, start uint64) bool, ok bool) {
	if r.lay == nil || r.lay != prev.lay || r.lay.cgroup || len(r.targets) != len(prev.targets) {
		return nil, false
	}
	clock := -1
	for p, pt := range r.lay.parts {
		e := r.lay.events[pt.event]
		enc := e.Encodings[pt.enc]
		if pt.group >= 0 && e.Kind == KindSoftware && enc.Type == typeSoftware && (enc.Config == swCPUClock || enc.Config == swTaskClock) && e.Modifiers == (modifiers{}) {
			clock = p
			break
		}
	}
	if clock < 0 {
		return nil, false
	}
	unknown := map[int]bool{}
	for _, gaps := range [][]gap{prev.gaps, r.gaps} {
		for _, g := range gaps {
			if g.part == clock {
				unknown[g.target] = true
			}
		}
	}
	type thread struct {
		tid   int
		start uint64
	}
	still := map[thread]bool{}
	for t := range r.targets {
		if r.targets[t] != prev.targets[t] || r.starts[t] != prev.starts[t] || r.starts[t] == 0 || unknown[t] {
			continue
		}
		if r.parts[t][clock].Raw == prev.parts[t][clock].Raw {
			still[thread{r.targets[t], r.starts[t]}] = true
		}
	}
	return func(tid int, start uint64) bool { return !still[thread{tid, start}] }, true
}
