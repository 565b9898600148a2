package analysis

import "github.com/perfbench/perfbench/record"

// Topic is what part of a report a note bears on, so that a report prints
// it only under the tables it concerns. Topics are bits: a table takes the
// notes of every topic it shows.
type Topic uint8

// Topics of notes.
const (
	// TopicGeneral notes concern every number of the Record: its outcome,
	// its window, its op count.
	TopicGeneral Topic = 1 << iota
	// TopicPerOp notes concern every per-op value (how an op was counted
	// for per-op tables only, such as the 1,000-row scan normalization).
	TopicPerOp
	// TopicCPU notes concern cpu/o and cs/o (their /proc fallbacks).
	TopicCPU
	// TopicIO notes concern r/o, w/o, rKB/o and wKB/o.
	TopicIO
	// TopicCounters notes concern perf counters: Note.Events names them
	// (all counters when empty).
	TopicCounters
	// TopicRoles notes concern the shares by thread role.
	TopicRoles
)

// Note is a note on how a Record's numbers were measured or computed, with
// what it concerns.
type Note struct {
	Text  string
	Topic Topic
	// Events are the counters a TopicCounters note concerns; empty means
	// all of them.
	Events []string
}

// Concerns reports whether the note bears on a table that shows the topics
// and, for counter notes, one of the events (all events when events is
// nil).
func (n Note) Concerns(topics Topic, events []string) bool {
	if n.Topic == TopicGeneral || n.Topic == 0 {
		return true
	}
	if n.Topic&topics == 0 {
		return false
	}
	if n.Topic != TopicCounters || len(n.Events) == 0 || events == nil {
		return true
	}
	for _, e := range n.Events {
		for _, f := range events {
			if e == f {
				return true
			}
		}
	}
	return false
}

// ClassifyWarning tells what a Record warning concerns, by its code: thread
// roles, the server's IO, its CPU time and context switches from /proc, or
// particular counters (multiplexed, not counted: its events). Any other
// code concerns every table (TopicGeneral).
func ClassifyWarning(w record.Warning) Note {
	n := Note{Text: w.Text, Topic: TopicGeneral}
	switch w.Code {
	case record.WarnRoles:
		n.Topic = TopicRoles
	case record.WarnIONotMeasured, record.WarnIO:
		n.Topic = TopicIO
	case record.WarnHostCPUNotMeasured, record.WarnCSSplit:
		n.Topic = TopicCPU
	case record.WarnMultiplexed, record.WarnNotCounted:
		n.Topic, n.Events = TopicCounters, w.Events
	}
	return n
}
