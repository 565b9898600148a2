package record

import (
	"fmt"
	"math"
)

// Comparison modes: how the versions of a step were measured against each
// other (Comparison.Mode).
const (
	// ComparisonDuet: every version's server and load ran at once, each
	// on CPUs of its own, the CPUs rotated among the versions from one
	// slice to the next; every server was read at the same instants.
	ComparisonDuet = "duet"
	// ComparisonSlices: every version's load was connected and warm, and
	// one ran at a time, switching every slice in a random order each turn;
	// the others were stopped (SIGSTOP), their servers idle.
	ComparisonSlices = "slices"
)

// Comparison says how a Record's version was measured against the other
// versions of its step, thread count and repeat when they were measured
// together (perfbench run's compare = "duet" or "slices"). Absent, the
// Record's window was measured alone (compare = "windows").
//
// The Record's window covers the whole comparison; its counters, status
// and ops are the window's, slices in which its load did not run included
// (its server then ran only its background work). Readers that need rates
// take the seconds of the slices in which it ran (ActiveSeconds).
type Comparison struct {
	// Mode is ComparisonDuet or ComparisonSlices.
	Mode string `json:"mode"`
	// ID names the comparison: every Record measured in it has the same
	// ID, and its slices are numbered alike.
	ID string `json:"id"`
	// Versions are the labels of the versions compared, in the order the
	// plan gives them.
	Versions []string `json:"versions"`
	// SliceSeconds is the planned length of a slice.
	SliceSeconds float64 `json:"slice_seconds"`
	// Slices are the comparison's slices in time order, as this Record's
	// server saw them: every slice of the comparison, whether its load ran
	// in it or not.
	Slices []Slice `json:"slices"`
}

// Slice is one slice of a comparison, for one version: what its server did
// between two reads that every server of the comparison had at the same
// instants.
type Slice struct {
	// Turn numbers the slices' turns from 0: in duet, a turn is as many
	// slices as there are versions, over which each version ran once on
	// each set of CPUs; in slices, one slice of each version, in the
	// turn's random order. Pairs are made inside a turn.
	Turn int `json:"turn"`
	// Start is seconds from the window's start to the slice's start;
	// Seconds is the slice's length (between the two reads).
	Start   float64 `json:"start"`
	Seconds float64 `json:"seconds"`
	// Ran is set when this version's load ran in the slice (always, in
	// duet).
	Ran bool `json:"ran"`
	// CPUs is where this version's server and load were allowed to run in
	// the slice (duet), as taskset -c lists them.
	CPUs string `json:"cpus,omitempty"`
	// Ops is the op count of the slice (of the Record's ops source, and
	// divided by its per like Ops.Count); OpsCounted says it was counted.
	Ops        float64 `json:"ops"`
	OpsCounted bool    `json:"ops_counted"`
	// Counters are the scaled deltas of the counted events over the
	// slice, by canonical name; an event absent was not counted in it.
	Counters map[string]float64 `json:"counters,omitempty"`
	// Status holds the server status counters that changed over the slice
	// (deltas, perfbench's own statements taken out).
	Status map[string]float64 `json:"status,omitempty"`
	// CPUSeconds is the server's user+system CPU over the slice (/proc).
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// OtherCPUSeconds is the CPU time processes other than the servers,
	// loads and perfbench used on the host over the slice; Busy is set
	// when it makes the slice busy (as a busy window), and then the
	// slice's pairs are left out of the comparison.
	OtherCPUSeconds float64 `json:"other_cpu_seconds"`
	Busy            bool    `json:"busy,omitempty"`
	// Error says why the slice has no numbers (a read failed at one of its
	// edges): its pairs are left out.
	Error string `json:"error,omitempty"`
}

// Usable reports whether the slice's numbers can be paired: its load ran,
// its ops were counted, and it is neither busy nor failed.
func (s Slice) Usable() bool {
	return s.Ran && s.OpsCounted && !s.Busy && s.Error == "" && s.Seconds > 0
}

// ActiveSeconds is the seconds of the comparison's slices in which the
// Record's load ran: the time its rates are over. It is 0 when r was not
// measured in a comparison.
func (r *Record) ActiveSeconds() float64 {
	if r.Comparison == nil {
		return 0
	}
	t := 0.0
	for _, s := range r.Comparison.Slices {
		if s.Ran {
			t += s.Seconds
		}
	}
	return t
}

// validate checks what a reader relies on: a known mode, the Record's
// version among the versions compared, slices in time order with
// non-negative, finite numbers.
func (c *Comparison) validate(version string) error {
	switch c.Mode {
	case ComparisonDuet, ComparisonSlices:
	default:
		return fmt.Errorf("comparison has unknown mode %q (duet or slices)", c.Mode)
	}
	if c.ID == "" {
		return fmt.Errorf("comparison has no id")
	}
	found := false
	for _, v := range c.Versions {
		found = found || v == version
	}
	if !found {
		return fmt.Errorf("comparison %s does not list the Record's version %q among its versions", c.ID, version)
	}
	prevStart, prevTurn := math.Inf(-1), 0
	for i, s := range c.Slices {
		bad := func(what string) error {
			return fmt.Errorf("comparison %s: slice %d %s", c.ID, i, what)
		}
		switch {
		case !finite(s.Start) || !finite(s.Seconds) || !finite(s.Ops) || !finite(s.CPUSeconds) || !finite(s.OtherCPUSeconds):
			return bad("has a number that is not finite")
		case s.Seconds < 0 || s.Ops < 0 || s.CPUSeconds < 0 || s.OtherCPUSeconds < 0:
			return bad("has a negative number")
		case s.Start < prevStart:
			return bad("starts before the slice before it")
		case s.Turn < prevTurn:
			return bad("belongs to a turn before the slice before it")
		}
		for k, v := range s.Counters {
			if !finite(v) {
				return bad("has a counter that is not finite: " + k)
			}
		}
		prevStart, prevTurn = s.Start, s.Turn
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
