package record

import (
	"regexp"
	"strings"

	"github.com/perfbench/perfbench/internal/eventname"
)

// Schema 1 Records (perfbench before typed warnings) are converted to
// schema 2 once, as they are read: this file is the only place that reads
// meaning into a warning's wording. docs/record.md lists the mapping.

// convertSchema1 turns r, decoded from schema 1 with its warnings' texts
// apart (Parse), into a schema-2 Record: typed warnings, Ops.Counted and
// Ops.Estimated from the warnings' wording, canonical event names.
func convertSchema1(r *Record, texts []string) {
	r.Schema = SchemaVersion
	r.Warnings = nil
	for _, t := range texts { // all kept, as written
		r.Warnings = append(r.Warnings, classify(t, r.Ops.Source))
	}
	r.Ops.Counted = r.Ops.Source != "" && r.Outcome != OutcomeFailed
	for _, t := range texts {
		if opsNotCounted(t, r.Ops.Source) {
			r.Ops.Counted = false
		}
	}
	// Imports made before Ops.Estimated existed said it in a warning.
	if r.Kind == KindImported && r.Client != nil && r.Client.Whole && strings.HasPrefix(r.Ops.Source, "client.") {
		for _, t := range texts {
			r.Ops.Estimated = r.Ops.Estimated || strings.HasPrefix(t, opsEstimatedPrefix)
		}
	}
	canonicalCounters(r.Counters)
	for i := range r.Roles {
		canonicalCounters(r.Roles[i].Counters)
	}
	for i, p := range r.Series {
		if len(p.Counters) == 0 {
			continue
		}
		m := make(map[string]float64, len(p.Counters))
		for e, v := range p.Counters {
			c := eventname.Canonical(e)
			if _, ok := m[c]; ok && c != e {
				continue // the event under its canonical name wins
			}
			m[c] = v
		}
		r.Series[i].Counters = m
	}
}

func canonicalCounters(cs []Counter) {
	for i := range cs {
		cs[i].Event = eventname.Canonical(cs[i].Event)
	}
}

// The wording of schema-1 warnings, as perfbench wrote them.
var (
	// "cycles was multiplexed: counted 62.0% of the time, value scaled"
	// (perf counters), "cycles ran 62.50% of the time (multiplexed)"
	// (imported perf stat output).
	multiplexedText = regexp.MustCompile(`^(\S+) (was multiplexed|ran [0-9.]+% of the time)`)
	// "LLC-loads, LLC-load-misses not counted: never scheduled".
	notCountedText = regexp.MustCompile(`^([^:]+) not counted: `)
	// Any mention of a thread role.
	roleText = regexp.MustCompile(`\broles?\b`)
)

const (
	ioNotMeasuredPrefix = "IO of the process not measured"
	hostCPUPrefix       = "host CPU not measured"
	opsEstimatedPrefix  = "ops estimated as"
	noOpCountPrefix     = "no op count"
)

// classify reads a schema-1 warning: its code, and the events it names
// (canonical). opsSource is the Record's op source, which its "no <source>
// count" warnings name. The order of the rules is that of the reports of
// schema 1: a warning that mentions roles concerns the roles, whatever else
// it says.
func classify(text, opsSource string) Warning {
	w := Warning{Code: WarnGeneral, Text: text}
	switch {
	case roleText.MatchString(strings.ToLower(text)):
		w.Code = WarnRoles
	case strings.HasPrefix(text, ioNotMeasuredPrefix):
		w.Code = WarnIONotMeasured
	case strings.Contains(text, "read_bytes"), strings.Contains(text, "write_bytes"):
		w.Code = WarnIO
	case strings.HasPrefix(text, hostCPUPrefix):
		w.Code = WarnHostCPUNotMeasured
	case strings.Contains(text, "context switches they made"), strings.Contains(text, "their context switches are not counted"):
		w.Code = WarnCSSplit
	case multiplexedText.MatchString(text):
		w.Code = WarnMultiplexed
		w.Events = []string{eventname.Canonical(multiplexedText.FindStringSubmatch(text)[1])}
	case notCountedText.MatchString(text):
		w.Code = WarnNotCounted
		for _, e := range strings.Split(notCountedText.FindStringSubmatch(text)[1], ",") {
			w.Events = append(w.Events, eventname.Canonical(strings.TrimSpace(e)))
		}
	case opsNotCounted(text, opsSource):
		w.Code = WarnOpsNotCounted
	case strings.HasPrefix(text, opsEstimatedPrefix):
		w.Code = WarnOpsEstimated
	}
	return w
}

// opsNotCounted reports whether a schema-1 warning says that the op source
// had no count: "no op count: ..." or "no <source> count ...".
func opsNotCounted(text, opsSource string) bool {
	return strings.HasPrefix(text, noOpCountPrefix) || opsSource != "" && strings.HasPrefix(text, "no "+opsSource+" count")
}
