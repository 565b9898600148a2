// Package perfevent turns perf event names into perf_event_attr encodings and
// counts them on every thread of a running process.
//
// It knows nothing of databases: callers give it a pid and a list of events
// and get back windows of counts, each with its raw value, time enabled and
// time running, and a status (counted, scaled, not counted, not supported).
//
// Only files named *_linux.go call perf_event_open; the rest builds on any OS.
package perfevent

// Kind is the family of an event, which decides how its name is encoded.
type Kind int

const (
	KindHardware   Kind = iota // PERF_TYPE_HARDWARE: cycles, instructions, ...
	KindCache                  // PERF_TYPE_HW_CACHE: L1-dcache-load-misses, ...
	KindSoftware               // PERF_TYPE_SOFTWARE: task-clock, context-switches, ...
	KindPMU                    // a sysfs PMU event: msr/tsc/, cpu/event=0x3c/, cpu/name/
	KindRaw                    // rNNNN on the core PMU
	KindTracepoint             // subsystem:name
)

func (k Kind) String() string {
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
	case KindTracepoint:
		return "tracepoint"
	}
	return "unknown"
}

// Encoding is one perf_event_attr identity of an event: the PMU it is opened
// on and its type and config words.
type Encoding struct {
	// PMU is the name of the PMU under /sys/bus/event_source/devices
	// ("cpu", "cpu_core", "cpu_atom", "software", "tracepoint", "msr").
	PMU     string
	Type    uint32
	Config  uint64
	Config1 uint64
	Config2 uint64
}

// Modifiers are the ":ukh..." suffixes of an event name.
type Modifiers struct {
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
	Kind Kind
	// Encodings has one entry for most events. On hybrid CPUs a generic
	// hardware or cache event has one per core PMU (cpu_core, cpu_atom):
	// the engine opens each and reports their sum as the event.
	Encodings []Encoding
	Modifiers Modifiers
	// Unit is "ns" for the clock events, empty for plain counts.
	Unit string
}
