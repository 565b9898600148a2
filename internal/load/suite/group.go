package suite

import (
	"regexp"
	"strings"
)

// Group is the block of a report's tables a step's rows belong to. A Record
// carries its step's group (record.Record.Group); GroupOf gives the group of
// a step name or label for Records that do not.
type Group string

// Groups, in the order tables print them.
const (
	GroupPoint  Group = "point"  // point queries: "point" is in the name
	GroupRange  Group = "range"  // every other read step
	GroupWrites Group = "writes" // delete, insert, update or write in the name
	// GroupInsert holds the insert benchmark's steps: l.i0 (load), l.x
	// (create indexes), l.i1 and l.i2 (inserts and deletes), qrN and qpN
	// (queries beside N inserts/s), and imported copies such as q1000.1.
	GroupInsert Group = "insert"
)

// Rank is the place of the group's rows in a table: point, range, writes,
// a group this version does not know, insert benchmark.
func (g Group) Rank() int {
	switch g {
	case GroupPoint:
		return 0
	case GroupRange:
		return 1
	case GroupWrites:
		return 2
	case GroupInsert:
		return 4
	}
	return 3
}

var insertStepRE = regexp.MustCompile(`^(l\.[a-z]+[0-9]*|q[rp]?[0-9]+(\.[0-9]+)?)$`)

// IsInsertStep reports whether the label names an insert-benchmark step:
// l.i0, l.x, l.i1, l.i2, qr100, qp500, q1000.1 and the like (every name
// insertbench.ParseStep accepts, and the labels of other runs of the
// benchmark). It is the one rule: their group is GroupInsert, their tables
// keep them in the order they ran, a plan runs them with the insert
// benchmark's driver.
func IsInsertStep(label string) bool { return insertStepRE.MatchString(label) }

// withoutParams is the label without its parameters, the "_name=value"
// parts: "read-only.pre_range=100_pk=1" gives "read-only.pre". The
// underscores of sysbench's own test names stay ("oltp_update_index" is a
// name).
func withoutParams(label string) string {
	for i := 0; i < len(label); i++ {
		if label[i] != '_' {
			continue
		}
		seg := label[i+1:]
		if j := strings.IndexByte(seg, '_'); j >= 0 {
			seg = seg[:j]
		}
		if strings.Contains(seg, "=") {
			return label[:i]
		}
	}
	return label
}

// StepName is the label without its parameters and copy suffix:
// "read-only.pre_range=100" gives "read-only". An insert-benchmark label
// is a name whole ("l.i0").
func StepName(label string) string {
	name := withoutParams(label)
	if i := strings.IndexByte(name, '.'); i > 0 && !IsInsertStep(name) {
		name = name[:i]
	}
	return name
}

// GroupOf returns the group of any step name or label, the suite's or not,
// by the published rule: insert-benchmark labels are their own group; a
// name (the label without its parameters) with delete, insert, update or
// write is a write step, read-write and bulk_insert included; else a name
// with point is a point query; every other step is a range query.
func GroupOf(nameOrLabel string) Group {
	if IsInsertStep(nameOrLabel) {
		return GroupInsert
	}
	name := withoutParams(nameOrLabel)
	for _, w := range []string{"delete", "insert", "update", "write"} {
		if strings.Contains(name, w) {
			return GroupWrites
		}
	}
	if strings.Contains(name, "point") {
		return GroupPoint
	}
	return GroupRange
}
