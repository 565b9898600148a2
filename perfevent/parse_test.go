package perfevent

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fixture loads one of the sysfs trees under testdata.
func fixture(t testing.TB, name string) *System {
	t.Helper()
	s, err := LoadSystem("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) > 0 {
		t.Fatalf("fixture %s: warnings %q", name, s.Warnings)
	}
	return s
}

func mustParse(t *testing.T, spec string, sys *System) List {
	t.Helper()
	l, err := Parse(spec, sys)
	if err != nil {
		t.Fatalf("Parse(%q): %v", spec, err)
	}
	return l
}

func one(t *testing.T, spec string, sys *System) Event {
	t.Helper()
	l := mustParse(t, spec, sys)
	if len(l.Events) != 1 {
		t.Fatalf("Parse(%q) gave %d events", spec, len(l.Events))
	}
	return l.Events[0]
}

func TestParseGenericOnVM(t *testing.T) {
	vm := fixture(t, "vm")
	for _, tc := range []struct {
		spec      string
		kind      kind
		typ       uint32
		config    uint64
		canonical string
		unit      string
	}{
		{"cycles", KindHardware, 0, 0, "cycles", ""},
		{"cpu-cycles", KindHardware, 0, 0, "cycles", ""},
		{"instructions", KindHardware, 0, 1, "instructions", ""},
		{"branch-instructions", KindHardware, 0, 4, "branches", ""},
		{"idle-cycles-backend", KindHardware, 0, 8, "stalled-cycles-backend", ""},
		{"ref-cycles", KindHardware, 0, 9, "ref-cycles", ""},
		{"L1-dcache-load-misses", KindCache, 3, 0x10000, "L1-dcache-load-misses", ""},
		{"L1-dcache-loads", KindCache, 3, 0, "L1-dcache-loads", ""},
		{"L1-dcache", KindCache, 3, 0, "L1-dcache-loads", ""},
		{"l1d-stores", KindCache, 3, 0x100, "L1-dcache-stores", ""},
		{"L1-data-read-miss", KindCache, 3, 0x10000, "L1-dcache-load-misses", ""},
		{"L1-icache-prefetch-misses", KindCache, 3, 0x10201, "L1-icache-prefetch-misses", ""},
		{"LLC-misses-stores", KindCache, 3, 0x10102, "LLC-store-misses", ""},
		{"L2-speculative-read-access", KindCache, 3, 0x202, "LLC-prefetches", ""},
		{"Data-TLB-load-misses", KindCache, 3, 0x10003, "dTLB-load-misses", ""},
		{"iTLB-load-misses", KindCache, 3, 0x10004, "iTLB-load-misses", ""},
		{"btb-loads", KindCache, 3, 0x5, "branch-loads", ""},
		{"node-store-misses", KindCache, 3, 0x10106, "node-store-misses", ""},
		{"node-Reference", KindCache, 3, 0x6, "node-loads", ""},
		{"task-clock", KindSoftware, 1, 1, "task-clock", "ns"},
		{"cpu-clock", KindSoftware, 1, 0, "cpu-clock", "ns"},
		{"cs", KindSoftware, 1, 3, "context-switches", ""},
		{"migrations", KindSoftware, 1, 4, "cpu-migrations", ""},
		{"faults", KindSoftware, 1, 2, "page-faults", ""},
		{"major-faults", KindSoftware, 1, 6, "major-faults", ""},
		{"emulation-faults", KindSoftware, 1, 8, "emulation-faults", ""},
		{"r1a2", KindRaw, 4, 0x1a2, "r1a2", ""},
		{"rFF", KindRaw, 4, 0xff, "rFF", ""},
		{"msr/tsc/", KindPMU, 9, 0, "msr/tsc/", ""},
		{"msr/event=0x1/", KindPMU, 9, 1, "msr/event=0x1/", ""},
		{"uprobe/retprobe,ref_ctr_offset=16/", KindPMU, 8, 1 | 16<<32, "uprobe/retprobe,ref_ctr_offset=16/", ""},
		{"sched:sched_switch", kindTracepoint, 2, 372, "sched:sched_switch", ""},
	} {
		e := one(t, tc.spec, vm)
		if e.Kind != tc.kind || len(e.Encodings) != 1 || e.Encodings[0].Type != tc.typ || e.Encodings[0].Config != tc.config {
			t.Errorf("%s: got kind %v encodings %+v, want kind %v type %d config %#x", tc.spec, e.Kind, e.Encodings, tc.kind, tc.typ, tc.config)
		}
		if e.Name != tc.spec || e.Canonical != tc.canonical || e.Unit != tc.unit {
			t.Errorf("%s: name %q canonical %q unit %q, want %q %q %q", tc.spec, e.Name, e.Canonical, e.Unit, tc.spec, tc.canonical, tc.unit)
		}
	}
}

func TestParseModifiers(t *testing.T) {
	for _, tc := range []struct {
		mods string
		want modifiers
	}{
		{"u", modifiers{ExcludeKernel: true, ExcludeHV: true}},
		{"k", modifiers{ExcludeUser: true, ExcludeHV: true}},
		{"h", modifiers{ExcludeUser: true, ExcludeKernel: true}},
		{"uk", modifiers{ExcludeHV: true}},
		{"ku", modifiers{ExcludeHV: true}},
		{"ukh", modifiers{}},
		{"G", modifiers{ExcludeHost: true}},
		{"H", modifiers{ExcludeGuest: true}},
		{"GH", modifiers{}},
		{"uG", modifiers{ExcludeKernel: true, ExcludeHV: true, ExcludeHost: true}},
		{"I", modifiers{ExcludeIdle: true}},
		{"D", modifiers{Pinned: true}},
		{"e", modifiers{Exclusive: true}},
		{"kDe", modifiers{ExcludeUser: true, ExcludeHV: true, Pinned: true, Exclusive: true}},
	} {
		for _, ev := range []string{"cycles:" + tc.mods, "cs:" + tc.mods, "msr/tsc/" + tc.mods, "sched:sched_switch:" + tc.mods, "r12:" + tc.mods} {
			e := one(t, ev, fixture(t, "vm"))
			if e.Modifiers != tc.want {
				t.Errorf("%s: modifiers %+v, want %+v", ev, e.Modifiers, tc.want)
			}
			if e.Name != ev {
				t.Errorf("%s printed as %q", ev, e.Name)
			}
		}
	}
	if e := one(t, "cs:u", nil); e.Canonical != "context-switches:u" {
		t.Errorf("cs:u canonical %q", e.Canonical)
	}
}

func TestParseGroups(t *testing.T) {
	vm := fixture(t, "vm")
	l := mustParse(t, "{cycles,instructions},cs, {msr/tsc/,L1-dcache-loads:k}:u ,sched:sched_*", vm)
	var names []string
	for _, e := range l.Events {
		names = append(names, e.Name)
	}
	want := []string{"cycles", "instructions", "cs", "msr/tsc/u", "L1-dcache-loads:ku",
		"sched:sched_process_exit", "sched:sched_switch", "sched:sched_wakeup"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	if !reflect.DeepEqual(l.Groups, [][]int{{0, 1}, {3, 4}}) {
		t.Errorf("groups %v", l.Groups)
	}
	if m := l.Events[3].Modifiers; m != (modifiers{ExcludeKernel: true, ExcludeHV: true}) {
		t.Errorf("msr/tsc/ in {}:u has modifiers %+v", m)
	}
	if m := l.Events[4].Modifiers; m != (modifiers{ExcludeHV: true}) {
		t.Errorf("L1-dcache-loads:k in {}:u has modifiers %+v", m)
	}
	if got := l.Events[6].Encodings[0].Config; got != 372 {
		t.Errorf("sched_switch id %d", got)
	}
}

func TestParseHybrid(t *testing.T) {
	h := fixture(t, "intel-hybrid")
	if !h.Hybrid() || !h.HasHardwarePMU() {
		t.Fatalf("hybrid fixture: hybrid %v, hardware %v", h.Hybrid(), h.HasHardwarePMU())
	}
	// cpu_atom is type 8, cpu_core type 4: the PMU type goes in config
	// bits 32-63 of a generic event, one encoding per core PMU.
	for _, tc := range []struct {
		spec string
		want []Encoding
	}{
		{"cycles", []Encoding{{PMU: "cpu_atom", Type: 0, Config: 0x8_0000_0000}, {PMU: "cpu_core", Type: 0, Config: 0x4_0000_0000}}},
		{"instructions:u", []Encoding{{PMU: "cpu_atom", Type: 0, Config: 0x8_0000_0001}, {PMU: "cpu_core", Type: 0, Config: 0x4_0000_0001}}},
		{"L1-dcache-load-misses", []Encoding{{PMU: "cpu_atom", Type: 3, Config: 0x8_0001_0000}, {PMU: "cpu_core", Type: 3, Config: 0x4_0001_0000}}},
		{"dTLB-store-misses", []Encoding{{PMU: "cpu_atom", Type: 3, Config: 0x8_0001_0103}, {PMU: "cpu_core", Type: 3, Config: 0x4_0001_0103}}},
		{"cpu_atom/cycles/", []Encoding{{PMU: "cpu_atom", Type: 0, Config: 0x8_0000_0000}}},
		{"cpu_core/LLC-load-misses/", []Encoding{{PMU: "cpu_core", Type: 3, Config: 0x4_0001_0002}}},
		{"r1a2", []Encoding{{PMU: "cpu_atom", Type: 8, Config: 0x1a2}, {PMU: "cpu_core", Type: 4, Config: 0x1a2}}},
		{"cpu_core/event=0x3c,umask=0x00/", []Encoding{{PMU: "cpu_core", Type: 4, Config: 0x3c}}},
		{"cpu_core/cpu-cycles/", []Encoding{{PMU: "cpu_core", Type: 4, Config: 0x3c}}},
		{"cpu_atom/ref-cycles/k", []Encoding{{PMU: "cpu_atom", Type: 8, Config: 0x300}}},
		{"cpu_core/event=0xd0,umask=0x81,cmask=2,inv,edge/", []Encoding{{PMU: "cpu_core", Type: 4, Config: 0xd0 | 0x81<<8 | 2<<24 | 1<<23 | 1<<18}}},
		{"cpu_core/mem-loads/", []Encoding{{PMU: "cpu_core", Type: 4, Config: 0x1cd, Config1: 3}}},
		{"cpu_core/mem-loads,ldlat=0x40/", []Encoding{{PMU: "cpu_core", Type: 4, Config: 0x1cd, Config1: 0x40}}},
		{"cpu_core/event=0xb7,umask=0x1,offcore_rsp=0x10003c0001/", []Encoding{{PMU: "cpu_core", Type: 4, Config: 0x1b7, Config1: 0x10003c0001}}},
		{"cpu_core/config=0x1234,config1=5,config2=6/", []Encoding{{PMU: "cpu_core", Type: 4, Config: 0x1234, Config1: 5, Config2: 6}}},
		{"task-clock", []Encoding{{PMU: "software", Type: 1, Config: 1}}},
		{"msr/aperf/", []Encoding{{PMU: "msr", Type: 10, Config: 1}}},
	} {
		e := one(t, tc.spec, h)
		if !reflect.DeepEqual(e.Encodings, tc.want) {
			t.Errorf("%s: encodings %+v, want %+v", tc.spec, e.Encodings, tc.want)
		}
	}
	e := one(t, "power/energy-pkg/", h)
	if e.Unit != "Joules" || e.Scale != 2.3283064365386962890625e-10 || e.Encodings[0].Config != 2 || e.Encodings[0].Type != 11 {
		t.Errorf("power/energy-pkg/: %+v", e)
	}
	_, err := Parse("cpu/event=0x3c/", h)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "cpu_atom and cpu_core") {
		t.Errorf("cpu/ on hybrid: %v", err)
	}
	cores := h.CorePMUs()
	if len(cores) != 2 || cores[0].CPUs != "16-23" || cores[1].CPUs != "0-15" {
		t.Errorf("core PMUs %+v", cores)
	}
	if cores[1].Caps["pmu_name"] != "alderlake_hybrid" {
		t.Errorf("caps %v", cores[1].Caps)
	}
	// Intel counter counts are only in CPUID: unknown from fixture files.
	if cores[0].Counters.Known {
		t.Errorf("budget from fixture claims %v", cores[0].Counters)
	}
}

func TestParseAMD(t *testing.T) {
	a := fixture(t, "amd-zen")
	for _, tc := range []struct {
		spec string
		want Encoding
	}{
		{"cycles", Encoding{PMU: "cpu", Type: 0, Config: 0}},
		{"LLC-loads", Encoding{PMU: "cpu", Type: 3, Config: 2}},
		{"cpu/cpu-cycles/", Encoding{PMU: "cpu", Type: 4, Config: 0x76}},
		{"cpu/cache-misses/", Encoding{PMU: "cpu", Type: 4, Config: 0x964}},
		// event is config:0-7,32-35: bits 8-11 of the value go to 32-35.
		{"cpu/event=0x1c0/", Encoding{PMU: "cpu", Type: 4, Config: 0x1_0000_00c0}},
		{"cpu/event=0x76,umask=0x1,cmask=2,inv,edge/", Encoding{PMU: "cpu", Type: 4, Config: 0x76 | 0x100 | 2<<24 | 1<<23 | 1<<18}},
		// amd_df event is config:0-7,32-35,59-60.
		{"amd_df/event=0x1ff7/", Encoding{PMU: "amd_df", Type: 11, Config: 0x0800_000f_0000_00f7}},
		{"amd_l3/event=0x4,umask=0xff,enallcores,enallslices,threadmask=3/", Encoding{PMU: "amd_l3", Type: 12, Config: 0x0300_c000_0000_ff04}},
		{"msr/irperf/", Encoding{PMU: "msr", Type: 10, Config: 5}},
		{"r76", Encoding{PMU: "cpu", Type: 4, Config: 0x76}},
	} {
		e := one(t, tc.spec, a)
		if len(e.Encodings) != 1 || e.Encodings[0] != tc.want {
			t.Errorf("%s: encodings %+v, want %+v", tc.spec, e.Encodings, tc.want)
		}
	}
	c := a.CorePMUs()
	if len(c) != 1 || c[0].Name != "cpu" || c[0].Counters != (Counters{Known: true, Generic: 6, Fixed: 0, Source: "cpuinfo flag perfctr_core"}) {
		t.Errorf("AMD core PMUs %+v", c)
	}
	if a.Paranoid == nil || *a.Paranoid != -1 {
		t.Errorf("paranoid %v", a.Paranoid)
	}
	if a.Hybrid() {
		t.Error("AMD fixture is not hybrid")
	}
}

func TestParseErrors(t *testing.T) {
	vm := fixture(t, "vm")
	amd := fixture(t, "amd-zen")
	for _, tc := range []struct {
		spec     string
		sys      *System
		sentinel error
		says     []string
	}{
		{"cylces", vm, errUnknownEvent, []string{`unknown event "cylces"`, `did you mean "cycles"?`}},
		{"instrutions:u", vm, errUnknownEvent, []string{`did you mean "instructions"?`}},
		{"contex-switches", vm, errUnknownEvent, []string{`did you mean "context-switches"?`}},
		{"tsc", vm, errUnknownEvent, []string{`did you mean "msr/tsc/"?`}},
		{"frobnicate", vm, errUnknownEvent, []string{"perfbench events"}},
		{"cycles:x", vm, errSyntax, []string{`unknown modifier "x"`}},
		{"cycles:pp", vm, errSyntax, []string{"precise sampling"}},
		{"cycles:", vm, errSyntax, []string{"no modifiers"}},
		{"cycles,,instructions", vm, errSyntax, []string{"empty event name"}},
		{"", vm, errSyntax, []string{"empty event list"}},
		{"{cycles,{instructions}}", vm, errSyntax, []string{"do not nest"}},
		{"{cycles", vm, errSyntax, []string{"unbalanced"}},
		{"cycles}", vm, errSyntax, []string{"unbalanced"}},
		{"{}", vm, errSyntax, []string{"empty group"}},
		{"task-clock,context-switches,cs", vm, errSyntax, []string{"context-switches is listed twice", "give each event once"}},
		{"{cycles,instructions},cycles", vm, errSyntax, []string{"cycles is listed twice"}},
		{"{cycles}x", vm, errSyntax, []string{"a group may only be followed by :MODIFIERS"}},
		{"msr/tsc", vm, errSyntax, []string{"unterminated"}},
		{"msr/tsc/:u", vm, errSyntax, []string{"without ':'", "msr/tsc/u"}},
		{"msr//", vm, errSyntax, []string{"no terms", "format/ allows event"}},
		{"msr/tscc/", vm, errSyntax, []string{`unknown term "tscc"`, `did you mean "tsc"?`, "format/ allows event"}},
		{"amd_l3/evnt=1/", amd, errSyntax, []string{`unknown term "evnt"`, `did you mean "event"?`, "format/ allows coreid, enallcores, enallslices, event, sliceid, threadmask, umask"}},
		{"cpu/event=0x1000/", amd, errSyntax, []string{"0x1000 does not fit in 12 bits (config:0-7,32-35)"}},
		{"cpu/umask=zz/", amd, errSyntax, []string{`value "zz" is not a number`}},
		{"cpu/period=1000/", amd, errSyntax, []string{"perf record option"}},
		{"cpu/name=foo,event=1/", amd, errSyntax, []string{"name= is not supported"}},
		{"cpu/event=0x3c/", vm, ErrNotSupported, []string{"no hardware PMU"}},
		{"cpuu/event=1/", amd, ErrNotSupported, []string{`no PMU "cpuu"`, `did you mean "cpu"?`}},
		{"iTLB-stores", vm, errSyntax, []string{"iTLB has no store operation (it has load)"}},
		{"L1-icache-store-misses", vm, errSyntax, []string{"L1-icache has no store operation (it has load, prefetch)"}},
		{"L1-dcache-loads-stores", vm, errSyntax, []string{"two operations"}},
		{"LLC-misses-refs", vm, errSyntax, []string{"two results"}},
		{"sched:sched_swich", vm, errUnknownEvent, []string{`did you mean "sched:sched_switch"?`}},
		{"shed:sched_switch", vm, errUnknownEvent, []string{`did you mean "sched"?`}},
		{"sched:nothing_*", vm, errUnknownEvent, []string{"matches no tracepoint"}},
		{"sched:sched_switch", amd, ErrNotSupported, []string{"tracefs is not mounted"}},
		{"ftrace:bprint", vm, ErrNotSupported, []string{"has no id"}},
		{"duration_time", vm, ErrNotSupported, []string{"tool event"}},
		{"mem:0x1000", vm, ErrNotSupported, []string{"breakpoint"}},
		{"sched:..:u", vm, errUnknownEvent, nil},
		{"sched:../../../etc:u", vm, errSyntax, nil},
	} {
		_, err := Parse(tc.spec, tc.sys)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", tc.spec)
			continue
		}
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("Parse(%q): %v does not wrap %v", tc.spec, err, tc.sentinel)
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Parse(%q): %q does not say %q", tc.spec, err, s)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): error is not one line: %q", tc.spec, err)
		}
	}
}

// TestParseRejectsWhatPerfRejects checks spellings perf 6.1's lexer refuses
// (verified with perf stat -e): case matters, "branches" cannot start a
// cache event, and a hardware event name cannot be extended.
func TestParseRejectsWhatPerfRejects(t *testing.T) {
	for _, spec := range []string{"Cycles", "CYCLES", "dtlb-load-misses", "l1-icache-loads", "L1-DCACHE-LOADS",
		"branches-loads", "branches-misses", "branch-misses-loads", "bpu-ref", "rz", "cyclesx", "L1-dcache-loadsx"} {
		if _, err := Parse(spec, nil); err == nil {
			t.Errorf("Parse(%q) succeeded; perf rejects it", spec)
		}
	}
}
