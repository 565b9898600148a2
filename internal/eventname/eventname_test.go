package eventname

import (
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"cs":                     "context-switches",
		"context-switches":       "context-switches",
		"cpu-cycles":             "cycles",
		"cpu-cycles:u":           "cycles:u",
		"cycles:uk":              "cycles:uk",
		"faults":                 "page-faults",
		"migrations":             "cpu-migrations",
		"branch-instructions":    "branches",
		"idle-cycles-frontend":   "stalled-cycles-frontend",
		"l1d-load-miss":          "L1-dcache-load-misses",
		"L1-dcache-loads":        "L1-dcache-loads",
		"LLC-misses":             "LLC-load-misses",
		"L2-loads":               "LLC-loads",
		"dTLB-store-misses":      "dTLB-store-misses",
		"msr/tsc/":               "msr/tsc/",
		"cpu/cpu-cycles/":        "cpu/cpu-cycles/",
		"sched:sched_switch":     "sched:sched_switch",
		"r01c2":                  "r01c2",
		"cyclesx":                "cyclesx",
		"L1-dcache-load-store":   "L1-dcache-load-store", // two operations: not an event
		"L1-icache-stores":       "L1-icache-stores",     // L1I has no stores
		"instructions:u":         "instructions:u",
		"task-clock":             "task-clock",
		"":                       "",
		"stalled-cycles-backend": "stalled-cycles-backend",
	} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every event of All resolves to itself under its name and each alias, and
// the configs are perf's: the position in PERF_COUNT_* order, cache |
// op<<8 | result<<16 for caches.
func TestAllLookup(t *testing.T) {
	all := All()
	seen := map[string]bool{}
	counts := map[class]int{}
	for _, e := range all {
		counts[e.Class]++
		for _, name := range append([]string{e.Name}, e.Aliases...) {
			if seen[name] {
				t.Errorf("%s spelt twice", name)
			}
			seen[name] = true
			got, ok, err := Lookup(name)
			if !ok || err != nil || got.Name != e.Name || got.Config != e.Config || got.Class != e.Class {
				t.Errorf("Lookup(%q) = %+v, %v, %v; want %+v", name, got, ok, err, e)
			}
		}
	}
	// 10 hardware, 12 software; caches: 7 × 2 results × their valid ops
	// (3 + 2 + 3 + 3 + 1 + 1 + 3 = 16): 32.
	if counts[Hardware] != 10 || counts[Software] != 12 || counts[Cache] != 32 {
		t.Errorf("classes %v, want 10 hardware, 32 cache, 12 software", counts)
	}
	for name, config := range map[string]uint64{
		"cycles": 0, "ref-cycles": 9, "context-switches": 3, "cgroup-switches": 11,
		"L1-dcache-load-misses": 0 | 0<<8 | 1<<16, "LLC-stores": 2 | 1<<8, "node-prefetch-misses": 6 | 2<<8 | 1<<16,
	} {
		if e, ok, _ := Lookup(name); !ok || e.Config != config {
			t.Errorf("%s: config %#x, want %#x", name, e.Config, config)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	for name, want := range map[string]string{
		"L1-dcache-load-store": "names two operations",
		"LLC-refs-misses":      "names two results",
		"L1-icache-store":      "L1-icache has no store operation (it has load, prefetch)",
		"branch-prefetch-miss": "branch has no prefetch operation",
	} {
		_, ok, err := Lookup(name)
		if !ok || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Lookup(%q): ok %v err %v, want an error containing %q", name, ok, err, want)
		}
	}
}
