package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/perfevent"
)

type eventLine struct {
	Name      string  `json:"name"`
	Type      *uint32 `json:"type"`
	Config    *uint64 `json:"config"`
	Config1   *uint64 `json:"config1"`
	Config2   *uint64 `json:"config2"`
	Supported *bool   `json:"supported"`
	Reason    *string `json:"reason"`
}

// TestEventsJSON runs perfbench events --format json on this machine.
func TestEventsJSON(t *testing.T) {
	code, out, errs := runCLI(t, "events", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var lines []eventLine
	if err := json.Unmarshal([]byte(out), &lines); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	byName := map[string]eventLine{}
	for _, l := range lines {
		if l.Type == nil || l.Config == nil || l.Config1 == nil || l.Config2 == nil || l.Supported == nil || l.Reason == nil {
			t.Errorf("%s lacks a required field: %+v", l.Name, l)
			continue
		}
		if *l.Supported != (*l.Reason == "") {
			t.Errorf("%s: supported %v with reason %q", l.Name, *l.Supported, *l.Reason)
		}
		byName[l.Name] = l
	}
	sys, err := perfevent.LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"task-clock", "context-switches", "page-faults", "cpu-migrations"}
	if sys.PMU("msr") != nil {
		want = append(want, "msr/tsc/")
	}
	for _, n := range want {
		if l, ok := byName[n]; !ok || !*l.Supported {
			t.Errorf("%s: listed %v, %+v", n, ok, l)
		}
	}
	for _, n := range []string{"cycles", "instructions", "L1-dcache-load-misses"} {
		l, ok := byName[n]
		if !ok {
			t.Errorf("%s not listed", n)
			continue
		}
		if !sys.HasHardwarePMU() && (*l.Supported || !strings.Contains(*l.Reason, "no hardware PMU")) {
			t.Errorf("%s without a hardware PMU: supported %v, reason %q", n, *l.Supported, *l.Reason)
		}
	}
	if l := byName["L1-dcache-load-misses"]; *l.Type != 3 || *l.Config != 0x10000 {
		t.Errorf("L1-dcache-load-misses encoded as type %d config %#x", *l.Type, *l.Config)
	}
}

func TestEventsText(t *testing.T) {
	code, out, _ := runCLI(t, "events")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if code != exitOK || len(lines) < 55 || !strings.HasPrefix(lines[0], "EVENT") {
		t.Fatalf("exit %d, %d lines:\n%s", code, len(lines), out)
	}
	found := false
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "task-clock" {
			found = true
			if !strings.HasSuffix(l, "yes") {
				t.Errorf("task-clock line %q", l)
			}
		}
	}
	if !found {
		t.Error("no task-clock line")
	}
}

func TestEventsFlags(t *testing.T) {
	if code, _, errs := runCLI(t, "events", "--format", "xml"); code != exitUsage || !strings.Contains(errs, "--format must be text or json") {
		t.Errorf("--format xml: exit %d, %q", code, errs)
	}
	if code, _, _ := runCLI(t, "events", "extra"); code != exitUsage {
		t.Errorf("extra argument: exit %d", code)
	}
}
