package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testenv"
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

// zombie starts a child that exits at once and is not waited for until the
// test ends: a zombie, whose pid it returns.
func zombie(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Wait() })
	stat := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "stat")
	if !testenv.Await(5*time.Second, func() bool {
		b, err := os.ReadFile(stat)
		return err == nil && strings.Contains(string(b), ") Z ")
	}) {
		t.Fatalf("pid %d did not become a zombie", cmd.Process.Pid)
	}
	return cmd.Process.Pid
}

// TestZombieTarget: doctor, profile and stat on a zombie say that it has
// exited (and that the machine can count), in one line, with exit 1, and
// write nothing.
func TestZombieTarget(t *testing.T) {
	needLinux(t)
	pid := zombie(t)
	says := fmt.Sprintf("pid %d (true) is a zombie: it has exited and its parent, pid %d, has not reaped it", pid, os.Getpid())
	code, out, errs := runCLI(t, "doctor", "--pid", strconv.Itoa(pid))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitFailure || !strings.HasPrefix(lines[len(lines)-1], fmt.Sprintf("perfbench can count here, but not pid %d: %s", pid, says)) ||
		strings.Count(errs, "\n") != 1 || !strings.Contains(errs, says) {
		t.Errorf("doctor: exit %d, last line %q, stderr %q", code, lines[len(lines)-1], errs)
	}
	output := filepath.Join(t.TempDir(), "p.pb.gz")
	code, out, errs = runCLI(t, "profile", "--pid", strconv.Itoa(pid), "--duration", "200ms", "--output", output)
	if _, err := os.Stat(output); code != exitFailure || out != "" || strings.Count(errs, "\n") != 1 ||
		!strings.Contains(errs, says+": the process has exited: nothing to sample") || err == nil {
		t.Errorf("profile: exit %d, stdout %q, stderr %q, profile written: %v", code, out, errs, err == nil)
	}
	code, out, errs = runCLI(t, "stat", "--pid", strconv.Itoa(pid), "--force", "-e", "task-clock", "--duration", "200ms")
	if code != exitFailure || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, says) {
		t.Errorf("stat: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestDoctorCalibrate runs perfbench doctor --calibrate on this machine:
// one line per check with its verdict, then the verdict on the machine.
// Without a hardware PMU it says so and checks task-clock against /proc.
func TestDoctorCalibrate(t *testing.T) {
	if code, _, errs := runCLI(t, "doctor", "--calibrate", "--pid", "1"); code != exitUsage || !strings.Contains(errs, "--calibrate counts its own loop") {
		t.Errorf("--calibrate --pid: exit %d %q", code, errs)
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		testenv.Skip(t, "no calibration loop on "+runtime.GOARCH, "perfbench calibrates on amd64 and arm64")
	}
	// As in internal/calibrate's test: on a CPU shared with other tests,
	// calibrate again, up to three times.
	code, out, errs := runCLI(t, "doctor", "--calibrate")
	for attempt := 2; attempt <= 3 && code != exitOK && strings.Contains(out, "(the CPU was busy)"); attempt++ {
		t.Logf("attempt %d, the CPU was busy:\n%s", attempt-1, out)
		time.Sleep(2 * time.Second) // a pause before the next attempt, for the burst to pass
		code, out, errs = runCLI(t, "doctor", "--calibrate")
	}
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr: %s", code, out, errs)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "ok ") && !strings.HasPrefix(l, "warn ") && !strings.HasPrefix(l, "fail ") {
			t.Errorf("line without a verdict: %q", l)
		}
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "counts here can be trusted") {
		t.Errorf("verdict: %q", last)
	}
	if !strings.Contains(out, "\nok    task-clock          ") {
		t.Errorf("no ok task-clock line:\n%s", out)
	}
	sys, err := perfevent.LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	if !sys.HasHardwarePMU() && !strings.Contains(out, "\nwarn  hardware PMU        none: cycles and instructions cannot be opened") {
		t.Errorf("no PMU, and calibrate does not say so:\n%s", out)
	}
}
