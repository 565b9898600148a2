package analysis

import (
	"regexp"
	"strings"
)

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

var (
	multiplexedWarning = regexp.MustCompile(`^(\S+) (was multiplexed|ran [0-9.]+% of the time)`)
	notCountedWarning  = regexp.MustCompile(`^([^:]+) not counted: `)
	roleWord           = regexp.MustCompile(`\broles?\b`)
)

// ClassifyWarning tells what a Record warning concerns from its text:
// thread roles, the server's IO, its CPU time and context switches from
// /proc, or particular counters (multiplexed, not counted). Anything it
// does not recognize concerns every table (TopicGeneral).
func ClassifyWarning(text string) Note {
	n := Note{Text: text, Topic: TopicGeneral}
	lower := strings.ToLower(text)
	switch {
	case roleWord.MatchString(lower):
		n.Topic = TopicRoles
	case strings.HasPrefix(text, ProcIONotMeasured), strings.Contains(text, "read_bytes"), strings.Contains(text, "write_bytes"):
		n.Topic = TopicIO
	case strings.HasPrefix(text, "host CPU not measured"), strings.Contains(text, "context switches they made"),
		strings.Contains(text, "their context switches are not counted"):
		n.Topic = TopicCPU
	default:
		if m := multiplexedWarning.FindStringSubmatch(text); m != nil {
			n.Topic, n.Events = TopicCounters, []string{m[1]}
		} else if m := notCountedWarning.FindStringSubmatch(text); m != nil {
			n.Topic = TopicCounters
			for _, e := range strings.Split(m[1], ",") {
				n.Events = append(n.Events, strings.TrimSpace(e))
			}
		}
	}
	return n
}
