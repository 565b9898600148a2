// Package proctest helps tests of process lifetimes: that a child dies with
// the process that started it.
package proctest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/testenv"
)

// DiesWithParent checks that a process does not outlive the process that
// started it, even when that one is killed with SIGKILL: it runs this test
// binary again as the helper process helper with args (see
// testenv.Helpers). The helper starts the process and prints "pid N" on its
// standard output; DiesWithParent checks that N runs, kills the helper with
// SIGKILL and fails the test unless N exits within the given time.
func DiesWithParent(t testing.TB, within time.Duration, helper string, args ...string) {
	t.Helper()
	cmd, pid := startHelper(t, helper, args...)
	if !Alive(pid) {
		t.Fatalf("pid %d does not run while the helper that started it does", pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	WaitGone(t, pid, within)
}

// startHelper starts the helper and returns it and the pid it says. A
// helper still running at the end of the test is killed, and so is the
// process it started.
func startHelper(t testing.TB, helper string, args ...string) (*exec.Cmd, int) {
	t.Helper()
	cmd := testenv.HelperCommand(t, helper, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		kill(pid)
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "pid %d\n", &pid); serr != nil {
		t.Fatalf("the helper %s did not say a pid: %q, %v", helper, line, err)
	}
	return cmd, pid
}

// Alive reports whether process pid runs (a zombie has exited).
func Alive(pid int) bool {
	return procfs.New("").Proc(pid).Alive() == nil
}

// WaitGone waits until process pid has exited, at most within; then it
// kills it and fails the test.
func WaitGone(t testing.TB, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for Alive(pid) {
		if time.Now().After(deadline) {
			kill(pid)
			t.Fatalf("pid %d still runs %v later", pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil && pid > 0 {
		_ = p.Kill()
	}
}
