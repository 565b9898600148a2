// Package eventname is perfbench's one table of perf's generic event names:
// the canonical spelling of every generic hardware, cache and software event,
// the other spellings perf's parser takes for it ("cs" for context-switches,
// "cpu-cycles" for cycles, "l1d-loads" for L1-dcache-loads), and the lexer
// that resolves a spelling to its event the way perf does.
//
// perfevent opens events by it; Records key every per-event value by
// Canonical, so that two spellings of one event compare.
package eventname

import (
	"fmt"
	"strings"
)

// class is the family of a generic event.
type class uint8

// Classes of generic events.
const (
	Hardware class = iota + 1 // PERF_TYPE_HARDWARE
	Cache                     // PERF_TYPE_HW_CACHE
	Software                  // PERF_TYPE_SOFTWARE
)

// Event is one generic event.
type Event struct {
	// Name is the canonical spelling: the one perf lists and prints.
	Name string
	// Aliases are the other spellings perf takes for a hardware or
	// software event. Cache events have many spellings (Lookup takes them
	// all); they are not listed.
	Aliases []string
	Class   class
	// Config is the PERF_COUNT_HW_* or PERF_COUNT_SW_* value, or
	// cache | op<<8 | result<<16 for a cache event: perf_event_attr.config
	// on a CPU with one core PMU.
	Config uint64
}

// symbol is a hardware or software event's spellings, canonical first.
type symbol []string

// hardware are the generic hardware events in PERF_COUNT_HW_* order (the
// position is the config), with the names perf's lexer takes for them.
var hardware = []symbol{
	{"cycles", "cpu-cycles"},
	{"instructions"},
	{"cache-references"},
	{"cache-misses"},
	{"branches", "branch-instructions"},
	{"branch-misses"},
	{"bus-cycles"},
	{"stalled-cycles-frontend", "idle-cycles-frontend"},
	{"stalled-cycles-backend", "idle-cycles-backend"},
	{"ref-cycles"},
}

// software are the software events in PERF_COUNT_SW_* order.
var software = []symbol{
	{"cpu-clock"},
	{"task-clock"},
	{"page-faults", "faults"},
	{"context-switches", "cs"},
	{"cpu-migrations", "migrations"},
	{"minor-faults"},
	{"major-faults"},
	{"alignment-faults"},
	{"emulation-faults"},
	{"dummy"},
	{"bpf-output"},
	{"cgroup-switches"},
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

func symbolEvent(s symbol, class class, config int) Event {
	return Event{Name: s[0], Aliases: append([]string(nil), s[1:]...), Class: class, Config: uint64(config)}
}

func cacheEvent(cache, op, result int) Event {
	return Event{Name: cacheName(cache, op, result), Class: Cache, Config: uint64(cache) | uint64(op)<<8 | uint64(result)<<16}
}

// All returns every generic hardware, cache and software event, in the
// order perf lists them.
func All() []Event {
	var out []Event
	for i, s := range hardware {
		out = append(out, symbolEvent(s, Hardware, i))
	}
	for c := range cacheTypes {
		for op := range cacheOps {
			if !cacheOpValid[c][op] {
				continue
			}
			for r := range cacheResults {
				out = append(out, cacheEvent(c, op, r))
			}
		}
	}
	for i, s := range software {
		out = append(out, symbolEvent(s, Software, i))
	}
	return out
}

// symbols maps every hardware and software spelling to its event.
var symbols = func() map[string]Event {
	m := map[string]Event{}
	for class, list := range map[class][]symbol{Hardware: hardware, Software: software} {
		for i, s := range list {
			e := symbolEvent(s, class, i)
			for _, name := range s {
				m[name] = e
			}
		}
	}
	return m
}()

// Lookup resolves a generic event name (without modifiers) the way perf's
// lexer does: the longest spelling that starts the name wins (a hardware or
// software name over a cache of the same length), and a cache is followed by
// at most two operation and result words. ok reports whether name is a
// generic event; err, whether it is a cache event spelt wrong (two
// operations, an operation the cache does not have): the error says what.
func Lookup(name string) (e Event, ok bool, err error) {
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
			return Event{}, false, nil
		}
		return symbols[bestSym], true, nil
	}
	if bestType < 0 {
		return Event{}, false, nil
	}
	rest := name[bestTypeLen:]
	op, result := -1, -1
	var words []string
	for rest != "" {
		if rest[0] != '-' || len(words) == 2 {
			return Event{}, false, nil
		}
		rest = rest[1:]
		w, kind, idx := longestWord(rest)
		if w == "" {
			return Event{}, false, nil
		}
		rest = rest[len(w):]
		words = append(words, w)
		switch kind {
		case 'o':
			if op >= 0 {
				return Event{}, true, fmt.Errorf("cache event %q names two operations (%s); give one of load, store, prefetch", name, strings.Join(words, ", "))
			}
			op = idx
		case 'r':
			if result >= 0 {
				return Event{}, true, fmt.Errorf("cache event %q names two results (%s); give refs or misses", name, strings.Join(words, ", "))
			}
			result = idx
		}
	}
	op, result = max(op, 0), max(result, 0)
	if !cacheOpValid[bestType][op] {
		return Event{}, true, fmt.Errorf("cache event %q: %s has no %s operation (it has %s)", name, cacheTypes[bestType][0], cacheOps[op][0], validOps(bestType))
	}
	return cacheEvent(bestType, op, result), true, nil
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

// Canonical returns the canonical spelling of an event name as perf and
// perfbench print it: a generic event's other spellings become the one perf
// lists ("cs" → "context-switches", "cpu-cycles:u" → "cycles:u",
// "l1d-load-miss" → "L1-dcache-load-misses"), modifiers kept. Any other
// name (PMU events, raw events, tracepoints, names perf does not know) is
// returned as it is.
func Canonical(name string) string {
	head, mods, hasMods := strings.Cut(name, ":")
	e, ok, err := Lookup(head)
	if !ok || err != nil {
		return name
	}
	if hasMods {
		return e.Name + ":" + mods
	}
	return e.Name
}
