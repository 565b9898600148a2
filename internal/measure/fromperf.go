package measure

import (
	"math"
	"slices"

	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// recordCounters converts r's events into Record counters: raw, enabled and
// running deltas, the scaled value and the status, in the events' order,
// keyed by the canonical event name (Event.RecordName: "context-switches"
// for "cs"), so that Records written from different spellings compare.
// Values that were not measured are 0 with a not supported or not counted
// status and the reason.
func recordCounters(r perfevent.Reading) []record.Counter {
	out := make([]record.Counter, len(r.Events))
	for i, ec := range r.Events {
		c := record.Counter{
			Event:   ec.Event.RecordName(),
			Group:   ec.Group,
			Raw:     ec.Count.Raw,
			Enabled: ec.Count.Enabled,
			Running: ec.Count.Running,
			Status:  recordStatus(ec.Status),
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

// recordStatus is the Record's status of a counter's.
func recordStatus(s perfevent.Status) record.Status {
	switch s {
	case perfevent.StatusNotSupported:
		return record.StatusNotSupported
	case perfevent.StatusNotCounted:
		return record.StatusNotCounted
	case perfevent.StatusScaled:
		return record.StatusScaled
	case perfevent.StatusCounted:
		return record.StatusCounted
	}
	return record.Status(s.String())
}

// notesOf returns r's notes, without cgroup mode's note on a cgroup
// perfbench made (Config.CgroupMade).
func (s *Session) notesOf(r perfevent.Reading) []perfevent.Note {
	if !s.cfg.CgroupMade || s.att.CgroupDir() == "" {
		return r.Notes
	}
	own := perfevent.CgroupNote(s.att.CgroupDir(), s.cfg.Pid)
	return slices.DeleteFunc(slices.Clone(r.Notes), func(n perfevent.Note) bool { return n.Text == own })
}

// noteWarnings are the Record's warnings of a reading's notes: multiplexed
// and not-counted events keep their kind and (canonical) events, the
// attachment's notes are general.
func noteWarnings(notes []perfevent.Note) []record.Warning {
	out := make([]record.Warning, len(notes))
	for i, n := range notes {
		w := record.Warning{Code: record.WarnGeneral, Text: n.Text}
		switch n.Kind {
		case perfevent.NoteMultiplexed:
			w.Code, w.Events = record.WarnMultiplexed, n.Events
		case perfevent.NoteNotCounted:
			w.Code, w.Events = record.WarnNotCounted, n.Events
		}
		out[i] = w
	}
	return out
}
