// Package perfevent turns perf event names into perf_event_attr encodings and
// counts them on every thread of a running process.
//
// It knows nothing of databases: callers give it a pid and a list of events
// and get back windows of counts, each with its raw value, time enabled and
// time running, and a status (counted, scaled, not counted, not supported).
//
// Only files named *_linux.go call perf_event_open; the rest builds on any OS.
package perfevent

import "errors"

// Sentinel errors callers branch on with errors.Is. The errors that wrap them
// say what was being done to which event and how to fix it.
var (
	// errUnknownEvent: the name is not a perf event known here (not in the
	// catalogue, not a PMU alias in sysfs, not a tracepoint in tracefs).
	errUnknownEvent = errors.New("unknown event")
	// errSyntax: the event list is malformed (bad PMU term, bad modifier,
	// unbalanced braces).
	errSyntax = errors.New("bad event syntax")
	// ErrNotSupported: the event cannot be opened on this machine (no PMU,
	// or the PMU does not have the event).
	ErrNotSupported = errors.New("not supported")
	// ErrPermission: perf_event_open refused with EACCES or EPERM.
	ErrPermission = errors.New("permission denied")
)

// kind is the family of an event, which decides how its name is encoded.
type kind int

const (
	KindHardware   kind = iota // PERF_TYPE_HARDWARE: cycles, instructions, ...
	KindCache                  // PERF_TYPE_HW_CACHE: L1-dcache-load-misses, ...
	KindSoftware               // PERF_TYPE_SOFTWARE: task-clock, context-switches, ...
	KindPMU                    // a sysfs PMU event: msr/tsc/, cpu/event=0x3c/, cpu/name/
	KindRaw                    // rNNNN on the core PMU
	kindTracepoint             // subsystem:name
)

func (k kind) String() string {
	switch k {
	case KindHardware:
		return "hardware"
	case KindCache:
		return "cache"
	case KindSoftware:
		return "software"
	case KindPMU:
		return "pmu"
	case KindRaw:
		return "raw"
	case kindTracepoint:
		return "tracepoint"
	}
	return "unknown"
}

// Encoding is one perf_event_attr identity of an event: the PMU it is opened
// on and its type and config words.
type Encoding struct {
	// PMU is the name of the PMU under /sys/bus/event_source/devices
	// ("cpu", "cpu_core", "cpu_atom", "software", "tracepoint", "msr").
	PMU     string `json:"pmu"`
	Type    uint32 `json:"type"`
	Config  uint64 `json:"config"`
	Config1 uint64 `json:"config1"`
	Config2 uint64 `json:"config2"`
}

// modifiers are the ":ukh..." suffixes of an event name.
type modifiers struct {
	ExcludeUser   bool
	ExcludeKernel bool
	ExcludeHV     bool
	ExcludeIdle   bool
	ExcludeHost   bool
	ExcludeGuest  bool
	Pinned        bool // ":D"
	Exclusive     bool // ":e"
}

// Event is an event as the user named it, resolved on this machine.
type Event struct {
	// Name is the event as perf prints it, modifiers included.
	Name string
	Kind kind
	// Encodings has one entry for most events. On hybrid CPUs a generic
	// hardware or cache event has one per core PMU (cpu_core, cpu_atom):
	// the engine opens each and reports their sum as the event.
	Encodings []Encoding
	Modifiers modifiers
	// Unit is "ns" for the clock events, the PMU alias's unit (from its
	// events/NAME.unit file, for example "Joules") when it has one, empty
	// for plain counts.
	Unit string
	// Scale multiplies raw counts into Unit (from the alias's
	// events/NAME.scale file). 0 means 1: counts are used as they are.
	Scale float64
	// Canonical is the name under which perfbench's analysis knows the
	// event: the catalogue spelling for aliases perf also accepts
	// ("context-switches" for "cs", "L1-dcache-loads" for "l1d-loads"),
	// with the same modifiers as Name. Equal to Name for other events.
	Canonical string
}

// Counterless reports whether every encoding of e is on a PMU without
// counters (software events, tracepoints): opened per thread and per CPU
// at once, it takes no hardware counter from either.
func (e Event) Counterless() bool {
	for _, enc := range e.Encodings {
		if !swPMU(encPMU(e, enc)) {
			return false
		}
	}
	return len(e.Encodings) > 0
}

// RecordName is the name a Record keys the event by: Canonical, or Name
// for an event built without one.
func (e Event) RecordName() string {
	if e.Canonical != "" {
		return e.Canonical
	}
	return e.Name
}
