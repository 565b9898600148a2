package perfevent

import "testing"

func TestCatalog(t *testing.T) {
	cat := catalog()
	counts := map[kind]int{}
	seen := map[string]bool{}
	for _, c := range cat {
		counts[c.Kind]++
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			if seen[n] {
				t.Errorf("%s listed twice", n)
			}
			seen[n] = true
		}
	}
	// 10 PERF_COUNT_HW_*; cache: L1D 3 ops, L1I 2, LL 3, dTLB 3, iTLB 1,
	// BPU 1, node 3 = 16 operations x {accesses, misses}; 12 PERF_COUNT_SW_*.
	if counts[KindHardware] != 10 || counts[KindCache] != 32 || counts[KindSoftware] != 12 {
		t.Errorf("catalogue has %v", counts)
	}
	want := map[string]struct {
		kind   kind
		config uint64
	}{
		"cycles":                  {KindHardware, 0},
		"stalled-cycles-frontend": {KindHardware, 7},
		"ref-cycles":              {KindHardware, 9},
		"L1-dcache-loads":         {KindCache, 0x0},
		"L1-dcache-load-misses":   {KindCache, 0x10000},
		"L1-dcache-stores":        {KindCache, 0x100},
		"L1-icache-loads":         {KindCache, 0x1},
		"L1-icache-prefetches":    {KindCache, 0x201},
		"LLC-store-misses":        {KindCache, 0x10102},
		"LLC-prefetches":          {KindCache, 0x202},
		"dTLB-load-misses":        {KindCache, 0x10003},
		"iTLB-loads":              {KindCache, 0x4},
		"branch-load-misses":      {KindCache, 0x10005},
		"node-prefetch-misses":    {KindCache, 0x10206},
		"task-clock":              {KindSoftware, 1},
		"context-switches":        {KindSoftware, 3},
		"cgroup-switches":         {KindSoftware, 11},
	}
	for _, c := range cat {
		if w, ok := want[c.Name]; ok {
			if c.Kind != w.kind || c.Config != w.config {
				t.Errorf("%s: kind %v config %#x, want %v %#x", c.Name, c.Kind, c.Config, w.kind, w.config)
			}
			delete(want, c.Name)
		}
	}
	for n := range want {
		t.Errorf("%s missing from the catalogue", n)
	}
	// Every catalogue name parses to its own entry, canonical name kept.
	for _, c := range cat {
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			l, err := Parse(n, nil)
			if err != nil {
				t.Errorf("Parse(%q): %v", n, err)
				continue
			}
			e := l.Events[0]
			if e.Canonical != c.Name || e.Kind != c.Kind || e.Encodings[0].Config != c.Config || e.Encodings[0].Type != c.Type() {
				t.Errorf("Parse(%q) = %+v, want %s", n, e, c.Name)
			}
		}
	}
}

func TestCatalogUnits(t *testing.T) {
	for _, c := range catalog() {
		want := ""
		if c.Name == "task-clock" || c.Name == "cpu-clock" {
			want = "ns"
		}
		if c.Unit != want {
			t.Errorf("%s: unit %q, want %q", c.Name, c.Unit, want)
		}
	}
}
