package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/perfevent/metric"
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

// TestEventsMetrics runs perfbench events --metrics for this machine and for
// another CPU given with --cpuid.
func TestEventsMetrics(t *testing.T) {
	sys, err := perfevent.LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "events", "--metrics")
	if code != exitOK {
		t.Fatalf("events --metrics: exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, "metric set ") && !strings.Contains(out, "perfbench has no metric set for cpu ") {
		t.Errorf("events --metrics names no set:\n%s", out)
	}

	code, out, errs = runCLI(t, "events", "--metrics", "--cpuid", "GenuineIntel-6-8F-0", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var r struct {
		Set     string `json:"set"`
		Source  string `json:"source"`
		HasPMU  bool   `json:"hardware_pmu"`
		Metrics []struct {
			Name       string   `json:"name"`
			Level      string   `json:"level"`
			Events     []string `json:"events"`
			Computable bool     `json:"computable"`
		} `json:"metrics"`
		Events []struct {
			Name, Spelling string
			Opens          bool
			Reason         string
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if r.Set != "sapphirerapids" || r.Source != "Linux 6.1.187 tools/perf/pmu-events/arch/x86/sapphirerapids v1.06" {
		t.Errorf("set %q from %q", r.Set, r.Source)
	}
	levels := map[string]int{}
	for _, m := range r.Metrics {
		levels[m.Level]++
		if len(m.Events) == 0 {
			t.Errorf("%s reads no event", m.Name)
		}
		if !sys.HasHardwarePMU() && m.Computable {
			t.Errorf("%s computable on a machine without a PMU", m.Name)
		}
	}
	if levels["topdown-l1"] != 4 || levels["topdown-l2"] != 8 || levels["architectural"] == 0 {
		t.Errorf("levels %v, want 4 topdown-l1, 8 topdown-l2 and architectural metrics", levels)
	}
	for _, e := range r.Events {
		if e.Opens == (e.Reason != "") {
			t.Errorf("%s: opens %v, reason %q", e.Name, e.Opens, e.Reason)
		}
	}

	code, out, _ = runCLI(t, "events", "--metrics", "--cpuid", "GenuineIntel-6-8F-0")
	if code != exitOK || !strings.Contains(out, "tma_frontend_bound") || !strings.Contains(out, "note: topdown-* events count only in one group led by slots") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
	if !sys.HasHardwarePMU() && !strings.Contains(out, "this machine has no hardware PMU: 0 of 24 metrics can be computed here") {
		t.Errorf("text output does not say the metrics cannot be computed without a PMU:\n%s", out)
	}

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"events", "--cpuid", "GenuineIntel-6-8F-0"}, exitUsage, "--cpuid goes with --metrics"},
		{[]string{"events", "--metrics", "--cpuid", "skylake"}, exitUsage, "is not a perf cpuid string"},
		{[]string{"events", "--metrics", "--cpuid", "GenuineIntel-6-FF-0"}, exitFailure, "no metric set for cpu GenuineIntel-6-FF-0"},
	} {
		code, _, errs := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.msg)
		}
	}
}

// TestOpenReason: on a fixture AMD machine (a cpu PMU with AMD's format/
// bits) every event of the Zen 4 set parses and is probed; a probe's
// refusal is the reason, an OpenError's reason its own, a spelling the
// machine cannot encode says why.
func TestOpenReason(t *testing.T) {
	sys, err := perfevent.LoadSystem("../../perfevent/testdata/amd-zen")
	if err != nil {
		t.Fatal(err)
	}
	s := metric.Lookup("AuthenticAMD-25-11-0")
	if s == nil || s.Name != "amdzen4" {
		t.Fatalf("the set of AuthenticAMD-25-11-0: %v", s)
	}
	failing := s.Event("ex_ret_brn_misp").Spelling
	probed := 0
	reason := openReason(sys, func(e perfevent.Event) error {
		probed++
		switch e.Name {
		case failing:
			return errors.New("refused")
		case s.Event("ls_not_halted_cyc").Spelling:
			return &perfevent.OpenError{Event: e.Name, Reason: "not supported: no PMU here"}
		}
		return nil
	})
	for _, e := range s.Events {
		want := ""
		switch e.Name {
		case "ex_ret_brn_misp":
			want = "refused"
		case "ls_not_halted_cyc":
			want = "not supported: no PMU here"
		}
		if got := reason(e.Spelling); got != want {
			t.Errorf("%s (%s): reason %q, want %q", e.Name, e.Spelling, got, want)
		}
	}
	if probed != len(s.Events) {
		t.Errorf("probed %d events, the set has %d", probed, len(s.Events))
	}
	if got := reason("cpu/nosuchterm=1/"); got == "" || strings.HasPrefix(got, "event ") {
		t.Errorf("a spelling the PMU has no term for: reason %q", got)
	}
}
