package perfevent

import (
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		word  int
		bits  []bitRange
		width int
	}{
		{"config:0-7", 0, []bitRange{{0, 7}}, 8},
		{"config:0-7,32-35\n", 0, []bitRange{{0, 7}, {32, 35}}, 12},
		{"config1:0-63", 1, []bitRange{{0, 63}}, 64},
		{"config2:5", 2, []bitRange{{5, 5}}, 1},
		{"config:0-7,32-35,59-60", 0, []bitRange{{0, 7}, {32, 35}, {59, 60}}, 14},
	} {
		f, err := parseFormat(tc.spec)
		if err != nil {
			t.Errorf("parseFormat(%q): %v", tc.spec, err)
			continue
		}
		if f.Word != tc.word || len(f.Bits) != len(tc.bits) || f.Width() != tc.width {
			t.Errorf("parseFormat(%q) = %+v", tc.spec, f)
			continue
		}
		for i := range f.Bits {
			if f.Bits[i] != tc.bits[i] {
				t.Errorf("parseFormat(%q) bits %v, want %v", tc.spec, f.Bits, tc.bits)
			}
		}
	}
	for _, bad := range []string{"", "config", "config3:0-7", "config:7-0", "config:0-64", "config:a-b", "config:0-7,4", "config:-1"} {
		if _, err := parseFormat(bad); err == nil {
			t.Errorf("parseFormat(%q) accepted", bad)
		}
	}
}

func TestParseFormatApply(t *testing.T) {
	f, _ := parseFormat("config:0-7,32-35")
	var w [3]uint64
	w[0] = 0xffff_ffff_ffff_ffff
	if err := f.apply(&w, 0xabc); err != nil {
		t.Fatal(err)
	}
	// Bits 0-7 take 0xbc, bits 32-35 take 0xa; other bits untouched.
	if want := uint64(0xffff_fffa_ffff_ffbc); w[0] != want {
		t.Errorf("apply: %#x, want %#x", w[0], want)
	}
	if err := f.apply(&w, 0x1000); err == nil || !strings.Contains(err.Error(), "12 bits") {
		t.Errorf("apply of 0x1000 to 12 bits: %v", err)
	}
	full, _ := parseFormat("config1:0-63")
	if err := full.apply(&w, ^uint64(0)); err != nil || w[1] != ^uint64(0) {
		t.Errorf("64-bit apply: %v %#x", err, w[1])
	}
}

func TestParseSysfsVM(t *testing.T) {
	s := fixture(t, "vm")
	if got := strings.Join(s.PMUNames(), " "); got != "breakpoint msr software tracepoint uprobe" {
		t.Errorf("PMUs %q", got)
	}
	if s.HasHardwarePMU() || s.Hybrid() || len(s.CorePMUs()) != 0 {
		t.Error("the VM fixture has no core PMU")
	}
	if s.PMU("msr").Type != 9 || s.PMU("msr").Aliases["tsc"].Terms != "event=0x00" {
		t.Errorf("msr: %+v", s.PMU("msr"))
	}
	if s.TraceFS == "" || s.Paranoid == nil || *s.Paranoid != 2 {
		t.Errorf("tracefs %q paranoid %v", s.TraceFS, s.Paranoid)
	}
	if s.CPU.Vendor != "AuthenticAMD" || s.CPU.Family != 26 || !s.CPU.HasFlag("hypervisor") || s.CPU.HasFlag("perfctr_core") {
		t.Errorf("cpu %+v", s.CPU)
	}
	tps, err := s.Tracepoints()
	if err != nil || strings.Join(tps, " ") != "ftrace:function sched:sched_process_exit sched:sched_switch sched:sched_wakeup syscalls:sys_enter_read syscalls:sys_exit_read" {
		t.Errorf("tracepoints %q %v", tps, err)
	}
}

func TestParseSysfsMissing(t *testing.T) {
	if _, err := LoadSystem(t.TempDir()); err == nil {
		t.Error("LoadSystem of an empty root succeeded")
	}
}

func TestCatalogCounterBudget(t *testing.T) {
	// CPUID.0AH on a Skylake with SMT: version 4, 4 GP counters, 3 fixed.
	if c := decodeIntelLeafA(0x07300404, 0x00000603); c != (Counters{Known: true, Generic: 4, Fixed: 3, Source: "cpuid leaf 0xa"}) {
		t.Errorf("leaf 0xa: %+v", c)
	}
	// Version 0: no architectural PMU (a VM that hides it).
	if c := decodeIntelLeafA(0, 0); c.Known {
		t.Errorf("version 0 decoded as %+v", c)
	}
	if c := decodeAMDCounters(true, 0x6, 0); c.Generic != 6 || !c.Known {
		t.Errorf("PerfMonV2: %+v", c)
	}
	if c := decodeAMDCounters(false, 0, 1<<23); c.Generic != 6 {
		t.Errorf("PerfCtrExtCore: %+v", c)
	}
	if c := decodeAMDCounters(false, 0, 0); c.Generic != 4 {
		t.Errorf("legacy AMD: %+v", c)
	}
	if n, ok := firstCPU("16-23,40-47"); !ok || n != 16 {
		t.Errorf("firstCPU: %d %v", n, ok)
	}
}
