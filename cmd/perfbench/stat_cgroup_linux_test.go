package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

// startIn starts a command and moves it into cgroup dir.
func startIn(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatalf("move pid %d into %s: %v", cmd.Process.Pid, dir, err)
	}
	return cmd
}

// TestStatCountMode: perfbench stat counts in cgroup mode by default when
// the process is alone in its cgroup v2 with the processes it forks, and
// says so; --per-thread counts per thread there; a process that shares its
// cgroup with another is counted per thread, with the reason.
func TestStatCountMode(t *testing.T) {
	needLinux(t)
	testenv.NeedRoot(t, "cgroup mode opens counters on every CPU")
	dir := testenv.Cgroup(t)
	// A shell forking a child process again and again: its children
	// descend from it, so it is alone.
	sh := startIn(t, dir, "sh", "-c", "while :; do /bin/true; done")
	pid := strconv.Itoa(sh.Process.Pid)
	cgroupNote := func(r *record.Record) bool {
		return slices.ContainsFunc(r.WarningTexts(), func(s string) bool { return strings.HasPrefix(s, "cgroup mode: counting every process in cgroup ") })
	}
	// stat runs perfbench stat; a window per thread may carry the
	// cpu-gap warning (the children's exits its counters missed).
	stat := func(extra ...string) (*record.Record, string) {
		t.Helper()
		r, errs := statRecord(t, append([]string{"stat", "--pid", pid, "--force", "-e", "task-clock", "--duration", "300ms", "--format", "json"}, extra...)...)
		if slices.ContainsFunc(r.Warnings, func(w record.Warning) bool { return w.Code == record.WarnCPUGap }) {
			t.Logf("%v: cpu-gap", extra)
		}
		return r, errs
	}

	r, errs := stat()
	if r.Outcome != record.OutcomeOK || !strings.Contains(errs, "on the cgroup it is alone in (cgroup mode") || !cgroupNote(r) {
		t.Errorf("alone in its cgroup: not counted in cgroup mode: stderr %q, warnings %q", errs, r.WarningTexts())
	}
	r, errs = stat("--per-thread")
	if strings.Contains(errs, "cgroup it is alone in") || cgroupNote(r) {
		t.Errorf("--per-thread: counted in cgroup mode: stderr %q, warnings %q", errs, r.WarningTexts())
	}
	other := startIn(t, dir, "sleep", "60")
	r, errs = stat()
	if want := fmt.Sprintf("counting per thread: not alone in a cgroup: cgroup %s holds other processes too (pid %d)", dir,
		other.Process.Pid); !strings.Contains(errs, want) || cgroupNote(r) {
		t.Errorf("with another process in its cgroup: stderr %q, warnings %q; want it counted per thread, saying %q", errs, r.WarningTexts(), want)
	}
	if tc, ok := r.Counter("task-clock"); !ok || !tc.Measured() || tc.Value <= 0 {
		t.Errorf("task-clock %+v: want a count", tc)
	}
}
