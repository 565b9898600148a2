package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

// TestRunSignal sends SIGINT to perfbench run in the middle of a window: it
// writes that window as a partial Record, runs nothing more, stops the server
// it started and exits with status 1.
func TestRunSignal(t *testing.T) {
	testenv.SkipIfShort(t, "starts a server and runs sysbench")
	testdb.NeedServer(t)
	testdb.NeedSysbench(t)
	path := writeRunPlan(t, runTestPlan)
	out := t.TempDir()
	cmd := perfbenchCmd(t, "", "run", path, "--out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})

	// Wait until sysbench's threads of the first step have started.
	logPath := filepath.Join(out, "logs", "a__point-query_range=100__t1__r1.sysbench.txt")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(logPath); err == nil && strings.Contains(string(b), "Threads started!") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first window did not open; stderr:\n%s", stderr.String())
		}
		select {
		case <-exited:
			t.Fatalf("perfbench run exited early (%v); stderr:\n%s", waitErr, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	// A second run into the folder is refused at once, naming the first
	// one's pid; the first goes on (it is interrupted below, and writes its
	// partial window).
	began := time.Now()
	code, _, errs := runCLI(t, "run", path, "--out", out)
	if code != exitFailure || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "output folder is in use: "+
		"perfbench (pid "+strconv.Itoa(cmd.Process.Pid)+")") {
		t.Errorf("a second run into %s: exit %d, stderr %q; want one line naming pid %d", out, code, errs, cmd.Process.Pid)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("the second run took %v to give up", d)
	}
	// The window opens 1 s (the warm-up) after the threads start and lasts
	// 8 s; its opening reads the server's status (the roles' read, then the
	// opening edge's). Interrupt it 1.5 s in, once each version ran a slice.
	if err := testdb.WaitOthersRead(filepath.Join(out, "servers", "a", "mysqld.sock"), 2, exited); err != nil {
		t.Fatalf("the first window did not open: %v; stderr:\n%s", err, stderr.String())
	}
	time.Sleep(1500 * time.Millisecond) // into the window, a pause the test makes
	b, err := os.ReadFile(filepath.Join(out, "servers", "a", "mysqld.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		err = waitErr
	case <-time.After(90 * time.Second):
		t.Fatalf("perfbench run did not exit after SIGINT; stderr:\n%s", stderr.String())
	}
	t.Logf("stderr:\n%s", stderr.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Errorf("exit: %v, want status %d", err, exitFailure)
	}
	// a and b are measured together: the interrupted comparison's two
	// Records, partial, and nothing else.
	loaded, _, err := record.Load([]string{filepath.Join(out, "records")}, false)
	if err != nil || len(loaded) != 2 {
		t.Fatalf("Records %v (%v), want the interrupted comparison's two", loaded, err)
	}
	for _, l := range loaded {
		r := l.Record
		// In slices or duet, a version's window is up to two of the
		// step's 8 s.
		if r.Step != "point-query_range=100" || r.Outcome != record.OutcomePartial || r.Window.Seconds <= 0 ||
			r.Window.Seconds >= 16 || r.Ops.Count <= 0 || r.Comparison == nil {
			t.Errorf("Record %s %s: outcome %s, window %.2f s, ops %+v; want partial with what was measured", r.Version, r.Step, r.Outcome, r.Window.Seconds, r.Ops)
		}
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("the server (pid %d) still runs", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if !strings.Contains(stderr.String(), "--resume") {
		t.Errorf("stderr does not say how to finish")
	}
	if _, err := os.Stat(filepath.Join(out, ".perfbench.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file stays after the run: %v", err)
	}
}
