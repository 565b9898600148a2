package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/perfevent"
)

// TestDoctorHere runs perfbench doctor on this machine.
func TestDoctorHere(t *testing.T) {
	code, out, errs := runCLI(t, "doctor")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr: %s", code, out, errs)
	}
	for _, name := range []string{"kernel", "privileges", "perf_event_paranoid", "hardware PMU", "nmi_watchdog", "virtualization", "open files", "tracefs"} {
		if !strings.Contains(out, name) {
			t.Errorf("no %s line in:\n%s", name, out)
		}
	}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "ok ") && !strings.HasPrefix(l, "warn ") && !strings.HasPrefix(l, "fail ") && !strings.HasPrefix(l, "perfbench can") {
			t.Errorf("line without a verdict: %q", l)
		}
	}
	sys, err := perfevent.LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	if !sys.HasHardwarePMU() {
		for _, s := range []string{"no hardware PMU", "Still works: software events", "perfbench loses IPC/CPI"} {
			if !strings.Contains(out, s) {
				t.Errorf("doctor without a PMU does not say %q:\n%s", s, out)
			}
		}
	}
}

func TestDoctorJSONWithPid(t *testing.T) {
	pid := strconv.Itoa(os.Getpid())
	code, out, errs := runCLI(t, "doctor", "--format", "json", "--pid", pid, "-e", "task-clock,cs")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q\n%s", code, errs, out)
	}
	var rep struct {
		Usable bool `json:"usable"`
		Checks []struct {
			Check, Verdict, Detail, Fix string
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, c := range rep.Checks {
		got[c.Check] = c.Verdict + ": " + c.Detail
	}
	if !rep.Usable || !strings.HasPrefix(got["target"], "ok: pid "+pid) || !strings.HasPrefix(got["events"], "ok: all 2 events open") {
		t.Errorf("usable %v, checks %q", rep.Usable, got)
	}
}

func TestDoctorFailures(t *testing.T) {
	code, out, errs := runCLI(t, "doctor", "--pid", "999999999")
	if code != exitFailure || !strings.Contains(out, "fail  target") || strings.Count(errs, "\n") != 1 {
		t.Errorf("missing pid: exit %d\n%s\nstderr %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, "doctor", "--format", "yaml"); code != exitUsage || !strings.Contains(errs, "--format") {
		t.Errorf("--format yaml: exit %d %q", code, errs)
	}
}
