package perfevent

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that what it
// accepts is consistent: every event has a name and an encoding, groups
// point at events, and each event's printed name (and canonical name)
// parses back to the same encodings and modifiers.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"cycles", "cycles:u", "{cycles,instructions}:k", "L1-dcache-load-misses", "l1d-miss-read",
		"cs,faults,migrations", "r1a2:uk", "cpu_core/event=0x3c,umask=0x0/u", "cpu_atom/cycles/",
		"cpu_core/mem-loads,ldlat=3/", "power/energy-pkg/", "msr/tsc/", "sched:sched_switch:u",
		"sched:sched_*", "{msr/tsc/,cs}:uG", "cpu_core/config=1,config1=2,config2=3/", "a/b/c",
		"{", "}", "/", ":", ",", "cycles:ukhGHIDe", "L2-speculative-load-miss",
	} {
		f.Add(s)
	}
	sys, err := LoadSystem("testdata/intel-hybrid")
	if err != nil {
		f.Fatal(err)
	}
	vm, err := LoadSystem("testdata/vm")
	if err != nil {
		f.Fatal(err)
	}
	sys.TraceFS = vm.TraceFS // the hybrid tree's tracefs has one event
	f.Fuzz(func(t *testing.T, spec string) {
		l, err := Parse(spec, sys)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("Parse(%q): empty error", spec)
			}
			return
		}
		if len(l.Events) == 0 {
			t.Fatalf("Parse(%q): no events and no error", spec)
		}
		inGroup := map[int]bool{}
		for _, g := range l.Groups {
			if len(g) == 0 {
				t.Fatalf("Parse(%q): empty group", spec)
			}
			for i, idx := range g {
				if idx < 0 || idx >= len(l.Events) || inGroup[idx] || i > 0 && idx != g[i-1]+1 {
					t.Fatalf("Parse(%q): bad groups %v", spec, l.Groups)
				}
				inGroup[idx] = true
			}
		}
		for _, e := range l.Events {
			if e.Name == "" || e.Canonical == "" || len(e.Encodings) == 0 {
				t.Fatalf("Parse(%q): incomplete event %+v", spec, e)
			}
			for _, n := range []string{e.Name, e.Canonical} {
				again, err := Parse(n, sys)
				if err != nil {
					t.Fatalf("Parse(%q) gave event %q, which does not parse: %v", spec, n, err)
				}
				if len(again.Events) != 1 {
					t.Fatalf("event %q of %q parses to %d events", n, spec, len(again.Events))
				}
				a := again.Events[0]
				if !reflect.DeepEqual(a.Encodings, e.Encodings) || a.Modifiers != e.Modifiers || a.Kind != e.Kind {
					t.Fatalf("event %q of %q parses to %+v, was %+v", n, spec, a, e)
				}
			}
			if e.Kind == KindHardware || e.Kind == KindCache {
				// cycles: one encoding per core PMU; cpu_atom/cycles/: one.
				want := 2
				if strings.Contains(e.Name, "/") {
					want = 1
				}
				if len(e.Encodings) != want {
					t.Fatalf("generic event %q on a hybrid CPU has %d encodings", e.Name, len(e.Encodings))
				}
				for _, enc := range e.Encodings {
					if p := sys.PMU(enc.PMU); p == nil || enc.Config>>pmuTypeShift != uint64(p.Type) {
						t.Fatalf("generic event %q: encoding %+v lacks its PMU type in config bits 32-63", e.Name, enc)
					}
				}
			}
		}
	})
}
