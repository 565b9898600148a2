package perfevent

import "github.com/perfbench/perfbench/internal/eventname"

// perf_event_attr.type values of the kernel's built-in event families.
const (
	typeHardware   uint32 = 0 // PERF_TYPE_HARDWARE
	typeSoftware   uint32 = 1 // PERF_TYPE_SOFTWARE
	typeTracepoint uint32 = 2 // PERF_TYPE_TRACEPOINT
	typeHWCache    uint32 = 3 // PERF_TYPE_HW_CACHE
	typeRaw        uint32 = 4 // PERF_TYPE_RAW
)

// The software clocks' configs (PERF_COUNT_SW_CPU_CLOCK, _TASK_CLOCK):
// they count every nanosecond a counted thread runs.
const (
	swCPUClock  uint64 = 0
	swTaskClock uint64 = 1
)

// pmuTypeShift is where the PMU type goes in the config of a generic
// hardware or cache event opened on one PMU of a hybrid CPU
// (PERF_PMU_TYPE_SHIFT): config = pmu_type<<32 | PERF_COUNT_HW_*.
const pmuTypeShift = 32

// catalogEntry is a named event perfbench knows without reading sysfs: a
// generic hardware event, a generic cache event or a software event.
type catalogEntry struct {
	// Name is the spelling perf lists and prints.
	Name string
	// Aliases are the other spellings perf's parser takes for the same
	// event ("cs" for context-switches). Cache events have many (see
	// Parse); they are not listed here.
	Aliases []string
	Kind    kind
	// Config is the PERF_COUNT_* value: the attr's config on a non-hybrid
	// CPU.
	Config uint64
	// Unit is "ns" for the clocks.
	Unit string
}

// Type is the perf_event_attr.type of the entry.
func (c catalogEntry) Type() uint32 {
	switch c.Kind {
	case KindCache:
		return typeHWCache
	case KindSoftware:
		return typeSoftware
	}
	return typeHardware
}

// catalog returns every generic hardware, cache and software event, in the
// order perf lists them (the names are internal/eventname's).
func catalog() []catalogEntry {
	all := eventname.All()
	out := make([]catalogEntry, len(all))
	for i, e := range all {
		out[i] = entryOf(e)
	}
	return out
}

// entryOf is the catalogEntry of a generic event.
func entryOf(e eventname.Event) catalogEntry {
	c := catalogEntry{Name: e.Name, Aliases: e.Aliases, Config: e.Config}
	switch e.Class {
	case eventname.Hardware:
		c.Kind = KindHardware
	case eventname.Cache:
		c.Kind = KindCache
	case eventname.Software:
		c.Kind = KindSoftware
		if e.Name == "cpu-clock" || e.Name == "task-clock" {
			c.Unit = "ns"
		}
	}
	return c
}

// toolEvents are perf stat's own measurements, not kernel counters.
var toolEvents = map[string]bool{"duration_time": true, "user_time": true, "system_time": true}

// lookupCatalog resolves a generic or software event name the way perf's
// lexer does (eventname.Lookup). It returns the entry with Name set to the
// canonical spelling.
func lookupCatalog(name string) (catalogEntry, bool, error) {
	e, ok, err := eventname.Lookup(name)
	if err != nil {
		return catalogEntry{}, true, syntaxf("%s", err)
	}
	if !ok {
		return catalogEntry{}, false, nil
	}
	return entryOf(e), true, nil
}
