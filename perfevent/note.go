package perfevent

import (
	"fmt"
	"slices"
	"strings"
)

// Note is a condition that weakens a Reading without voiding it: what it
// concerns (Kind and Events) for programs, and Text for people.
type Note struct {
	Kind noteKind
	// Events are the canonical names (Event.RecordName) of the events a
	// multiplexed or not-counted note concerns, in the reading's order;
	// empty for an attachment note.
	Events []string
	// Running is the share of the window a multiplexed event counted
	// (Count.Fraction).
	Running float64
	// Reason says why not-counted events were not counted.
	Reason string
	// Text is the note as perfbench prints it, events named as the user
	// spelled them.
	Text string
}

// noteKind is what a Note concerns.
type noteKind int

const (
	// noteAttach: a condition of the attachment (threads that may be
	// uncounted, a group larger than its PMU, cgroup mode, ...).
	noteAttach noteKind = iota
	// NoteMultiplexed: one event ran part of the window; its value is
	// scaled.
	NoteMultiplexed
	// NoteNotCounted: events enabled but never counted over the window
	// (never scheduled, or their count is unknown), all for one Reason.
	NoteNotCounted
)

// eventNotes are a reading's notes: the attachment's (attach, each once),
// one per multiplexed event, and one per reason some events were not
// counted. A single read (window false) notes an event not counted yet
// only when its count is unknown.
func eventNotes(attach []string, events []EventCount, window bool) []Note {
	var out []Note
	for _, t := range attach {
		if !slices.ContainsFunc(out, func(n Note) bool { return n.Text == t }) {
			out = append(out, Note{Kind: noteAttach, Text: t})
		}
	}
	// Not-counted events with the same reason share one note.
	var notCounted []Note
	var names [][]string
	for _, ec := range events {
		switch ec.Status {
		case StatusScaled:
			f := ec.Count.Fraction()
			out = append(out, Note{Kind: NoteMultiplexed, Events: []string{ec.Event.RecordName()}, Running: f,
				Text: fmt.Sprintf("%s was multiplexed: counted %.1f%% of the time, value scaled", ec.Event.Name, 100*f)})
		case StatusNotCounted:
			if !window && ec.Missing == "" {
				break
			}
			i := slices.IndexFunc(notCounted, func(n Note) bool { return n.Reason == ec.Reason })
			if i < 0 {
				i = len(notCounted)
				notCounted = append(notCounted, Note{Kind: NoteNotCounted, Reason: ec.Reason})
				names = append(names, nil)
			}
			notCounted[i].Events = append(notCounted[i].Events, ec.Event.RecordName())
			names[i] = append(names[i], ec.Event.Name)
		}
	}
	for i, n := range notCounted {
		n.Text = fmt.Sprintf("%s not counted: %s", strings.Join(names[i], ", "), n.Reason)
		out = append(out, n)
	}
	return out
}
