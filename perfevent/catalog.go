package perfevent

import "strings"

// perf_event_attr.type values of the kernel's built-in event families.
const (
	TypeHardware   uint32 = 0 // PERF_TYPE_HARDWARE
	TypeSoftware   uint32 = 1 // PERF_TYPE_SOFTWARE
	TypeTracepoint uint32 = 2 // PERF_TYPE_TRACEPOINT
	TypeHWCache    uint32 = 3 // PERF_TYPE_HW_CACHE
	TypeRaw        uint32 = 4 // PERF_TYPE_RAW
)

// PMUTypeShift is where the PMU type goes in the config of a generic
// hardware or cache event opened on one PMU of a hybrid CPU
// (PERF_PMU_TYPE_SHIFT): config = pmu_type<<32 | PERF_COUNT_HW_*.
const PMUTypeShift = 32

// CatalogEntry is a named event perfbench knows without reading sysfs: a
// generic hardware event, a generic cache event or a software event.
type CatalogEntry struct {
	// Name is the spelling perf lists and prints.
	Name string
	// Aliases are the other spellings perf's parser takes for the same
	// event ("cs" for context-switches). Cache events have many (see
	// Parse); they are not listed here.
	Aliases []string
	Kind    Kind
	// Config is the PERF_COUNT_* value: the attr's config on a non-hybrid
	// CPU.
	Config uint64
	// Unit is "ns" for the clocks.
	Unit string
}

// Type is the perf_event_attr.type of the entry.
func (c CatalogEntry) Type() uint32 {
	switch c.Kind {
	case KindCache:
		return TypeHWCache
	case KindSoftware:
		return TypeSoftware
	}
	return TypeHardware
}

// hardwareEvents are the generic hardware events, in PERF_COUNT_HW_* order,
// with the names perf's lexer takes for them.
var hardwareEvents = []CatalogEntry{
	{Name: "cycles", Aliases: []string{"cpu-cycles"}, Kind: KindHardware, Config: 0},
	{Name: "instructions", Kind: KindHardware, Config: 1},
	{Name: "cache-references", Kind: KindHardware, Config: 2},
	{Name: "cache-misses", Kind: KindHardware, Config: 3},
	{Name: "branches", Aliases: []string{"branch-instructions"}, Kind: KindHardware, Config: 4},
	{Name: "branch-misses", Kind: KindHardware, Config: 5},
	{Name: "bus-cycles", Kind: KindHardware, Config: 6},
	{Name: "stalled-cycles-frontend", Aliases: []string{"idle-cycles-frontend"}, Kind: KindHardware, Config: 7},
	{Name: "stalled-cycles-backend", Aliases: []string{"idle-cycles-backend"}, Kind: KindHardware, Config: 8},
	{Name: "ref-cycles", Kind: KindHardware, Config: 9},
}

// softwareEvents are the software events, in PERF_COUNT_SW_* order.
var softwareEvents = []CatalogEntry{
	{Name: "cpu-clock", Kind: KindSoftware, Config: 0, Unit: "ns"},
	{Name: "task-clock", Kind: KindSoftware, Config: 1, Unit: "ns"},
	{Name: "page-faults", Aliases: []string{"faults"}, Kind: KindSoftware, Config: 2},
	{Name: "context-switches", Aliases: []string{"cs"}, Kind: KindSoftware, Config: 3},
	{Name: "cpu-migrations", Aliases: []string{"migrations"}, Kind: KindSoftware, Config: 4},
	{Name: "minor-faults", Kind: KindSoftware, Config: 5},
	{Name: "major-faults", Kind: KindSoftware, Config: 6},
	{Name: "alignment-faults", Kind: KindSoftware, Config: 7},
	{Name: "emulation-faults", Kind: KindSoftware, Config: 8},
	{Name: "dummy", Kind: KindSoftware, Config: 9},
	{Name: "bpf-output", Kind: KindSoftware, Config: 10},
	{Name: "cgroup-switches", Kind: KindSoftware, Config: 11},
}

// Generic cache events: config = cache | op<<8 | result<<16. The spellings
// are perf's (tools/perf/util/evsel.c), first one canonical.
var (
	cacheTypes = [][]string{
		{"L1-dcache", "l1-d", "l1d", "L1-data"},
		{"L1-icache", "l1-i", "l1i", "L1-instruction"},
		{"LLC", "L2"},
		{"dTLB", "d-tlb", "Data-TLB"},
		{"iTLB", "i-tlb", "Instruction-TLB"},
		{"branch", "branches", "bpu", "btb", "bpc"},
		{"node"},
	}
	cacheOps = [][]string{
		{"load", "loads", "read"},
		{"store", "stores", "write"},
		{"prefetch", "prefetches", "speculative-read", "speculative-load"},
	}
	cacheResults = [][]string{
		{"refs", "Reference", "ops", "access"},
		{"misses", "miss"},
	}
	// cacheOpValid is which operations each cache has (perf rejects the
	// others): L1I no stores; iTLB and branch loads only.
	cacheOpValid = [][3]bool{
		{true, true, true},
		{true, false, true},
		{true, true, true},
		{true, true, true},
		{true, false, false},
		{true, false, false},
		{true, true, true},
	}
)

// cacheName is perf's name for a cache event: "L1-dcache-loads" for
// accesses, "L1-dcache-load-misses" for misses.
func cacheName(cache, op, result int) string {
	if result == 1 {
		return cacheTypes[cache][0] + "-" + cacheOps[op][0] + "-" + cacheResults[1][0]
	}
	return cacheTypes[cache][0] + "-" + cacheOps[op][1]
}

// Catalog returns every generic hardware, cache and software event, in the
// order perf lists them.
func Catalog() []CatalogEntry {
	out := append([]CatalogEntry(nil), hardwareEvents...)
	for c := range cacheTypes {
		for op := range cacheOps {
			if !cacheOpValid[c][op] {
				continue
			}
			for r := range cacheResults {
				out = append(out, CatalogEntry{
					Name:   cacheName(c, op, r),
					Kind:   KindCache,
					Config: uint64(c) | uint64(op)<<8 | uint64(r)<<16,
				})
			}
		}
	}
	return append(out, softwareEvents...)
}

// symbols maps every hardware and software spelling to its entry.
var symbols = func() map[string]CatalogEntry {
	m := map[string]CatalogEntry{}
	for _, list := range [][]CatalogEntry{hardwareEvents, softwareEvents} {
		for _, e := range list {
			m[e.Name] = e
			for _, a := range e.Aliases {
				m[a] = e
			}
		}
	}
	return m
}()

// toolEvents are perf stat's own measurements, not kernel counters.
var toolEvents = map[string]bool{"duration_time": true, "user_time": true, "system_time": true}

// lookupCatalog resolves a generic or software event name the way perf's
// lexer does: the longest spelling that starts the name wins (a symbol over
// a cache type of the same length), and a cache type is followed by at most
// two operation/result words. It returns the entry with Name set to the
// canonical spelling.
func lookupCatalog(name string) (CatalogEntry, bool, error) {
	bestSym, bestType := "", -1
	bestTypeLen := 0
	for s := range symbols {
		if strings.HasPrefix(name, s) && len(s) > len(bestSym) {
			bestSym = s
		}
	}
	for i, aliases := range cacheTypes {
		for _, a := range aliases {
			if strings.HasPrefix(name, a) && len(a) > bestTypeLen {
				bestType, bestTypeLen = i, len(a)
			}
		}
	}
	if bestSym != "" && len(bestSym) >= bestTypeLen {
		if bestSym != name {
			return CatalogEntry{}, false, nil
		}
		return symbols[bestSym], true, nil
	}
	if bestType < 0 {
		return CatalogEntry{}, false, nil
	}
	rest := name[bestTypeLen:]
	op, result := -1, -1
	var words []string
	for rest != "" {
		if rest[0] != '-' || len(words) == 2 {
			return CatalogEntry{}, false, nil
		}
		rest = rest[1:]
		w, kind, idx := longestWord(rest)
		if w == "" {
			return CatalogEntry{}, false, nil
		}
		rest = rest[len(w):]
		words = append(words, w)
		switch kind {
		case 'o':
			if op >= 0 {
				return CatalogEntry{}, true, syntaxf("cache event %q names two operations (%s); give one of load, store, prefetch", name, strings.Join(words, ", "))
			}
			op = idx
		case 'r':
			if result >= 0 {
				return CatalogEntry{}, true, syntaxf("cache event %q names two results (%s); give refs or misses", name, strings.Join(words, ", "))
			}
			result = idx
		}
	}
	if op < 0 {
		op = 0
	}
	if result < 0 {
		result = 0
	}
	if !cacheOpValid[bestType][op] {
		return CatalogEntry{}, true, syntaxf("cache event %q: %s has no %s operation (it has %s)", name, cacheTypes[bestType][0], cacheOps[op][0], validOps(bestType))
	}
	return CatalogEntry{
		Name:   cacheName(bestType, op, result),
		Kind:   KindCache,
		Config: uint64(bestType) | uint64(op)<<8 | uint64(result)<<16,
	}, true, nil
}

// longestWord finds the longest operation or result spelling that starts s
// and is not followed by more letters (perf's lexer would then read a
// longer, unknown word).
func longestWord(s string) (word string, kind byte, idx int) {
	try := func(table [][]string, k byte) {
		for i, aliases := range table {
			for _, a := range aliases {
				if strings.HasPrefix(s, a) && len(a) > len(word) {
					word, kind, idx = a, k, i
				}
			}
		}
	}
	try(cacheOps, 'o')
	try(cacheResults, 'r')
	if word != "" && len(s) > len(word) && s[len(word)] != '-' {
		return "", 0, 0
	}
	return word, kind, idx
}

func validOps(cache int) string {
	var ops []string
	for op, ok := range cacheOpValid[cache] {
		if ok {
			ops = append(ops, cacheOps[op][0])
		}
	}
	return strings.Join(ops, ", ")
}
