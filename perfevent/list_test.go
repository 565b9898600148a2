package perfevent

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// fakeProbe supports software events and msr, and refuses the rest the way
// a machine without a hardware PMU does.
func fakeProbe(e Event) error {
	if e.Kind == KindSoftware || e.Kind == kindTracepoint || e.Encodings[0].PMU == "msr" {
		return nil
	}
	return &OpenError{Event: e.Name, Target: "this process", Reason: "not supported: this machine has no hardware PMU (ENOENT)", Err: errors.New("ENOENT"), Kind: ErrNotSupported}
}

func TestEventsList(t *testing.T) {
	vm := fixture(t, "vm")
	list, err := vm.Events(ListOptions{Probe: fakeProbe})
	if err != nil {
		t.Fatal(err)
	}
	// 54 catalogue events and the one msr alias; no tracepoints without All.
	if len(list) != 55 {
		t.Errorf("%d events listed, want 55", len(list))
	}
	byName := map[string]eventInfo{}
	for _, e := range list {
		byName[e.Name] = e
	}
	for name, want := range map[string]eventInfo{
		"cycles":                {Kind: "hardware", PMU: "cpu", Type: 0, Config: 0, Supported: false, Reason: "not supported: this machine has no hardware PMU (ENOENT)"},
		"L1-dcache-load-misses": {Kind: "cache", PMU: "cpu", Type: 3, Config: 0x10000, Supported: false, Reason: "not supported: this machine has no hardware PMU (ENOENT)"},
		"context-switches":      {Kind: "software", PMU: "software", Type: 1, Config: 3, Supported: true},
		"msr/tsc/":              {Kind: "pmu", PMU: "msr", Type: 9, Config: 0, Supported: true},
	} {
		got, ok := byName[name]
		if !ok {
			t.Errorf("%s not listed", name)
			continue
		}
		if got.Kind != want.Kind || got.PMU != want.PMU || got.Type != want.Type || got.Config != want.Config || got.Supported != want.Supported || got.Reason != want.Reason {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if a := byName["context-switches"].Aliases; len(a) != 1 || a[0] != "cs" {
		t.Errorf("context-switches aliases %v", a)
	}

	all, err := vm.Events(ListOptions{All: true, Tracepoints: true, Probe: fakeProbe})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range all {
		names[e.Name] = true
	}
	for _, n := range []string{"cs", "cpu-cycles", "faults", "sched:sched_switch", "syscalls:sys_enter_read", "ftrace:function"} {
		if !names[n] {
			t.Errorf("--all does not list %s", n)
		}
	}
	if names["ftrace:bprint"] {
		t.Error("--tracepoints lists ftrace:bprint, which has no id")
	}
	if _, err := fixture(t, "amd-zen").Events(ListOptions{Tracepoints: true, Probe: fakeProbe}); !errors.Is(err, errNoTraceFS) {
		t.Errorf("tracepoints without tracefs: %v", err)
	}
}

func TestEventsListHybridText(t *testing.T) {
	h := fixture(t, "intel-hybrid")
	list, err := h.Events(ListOptions{Probe: func(Event) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteEventsText(&buf, list); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != len(list)+1 || !strings.HasPrefix(lines[0], "EVENT") {
		t.Fatalf("%d lines for %d events:\n%s", len(lines), len(list), buf.String())
	}
	var cycles, pkg string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "cycles "):
			cycles = l
		case strings.HasPrefix(l, "power/energy-pkg/ "):
			pkg = l
		}
	}
	for _, want := range []string{"cpu_atom+cpu_core", "0+0", "0x800000000+0x400000000", "yes"} {
		if !strings.Contains(cycles, want) {
			t.Errorf("cycles line %q lacks %q", cycles, want)
		}
	}
	if !strings.Contains(pkg, "power") || !strings.Contains(pkg, "0x2") {
		t.Errorf("energy-pkg line %q", pkg)
	}
}
