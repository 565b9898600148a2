package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSignalEndsBlockedReport runs perfbench report with its stdout a
// pipe of one page that nothing reads, so that the report blocks in a
// write, then sends SIGINT: perfbench must exit within its grace (1.5 s)
// with status 130 and say why, though the write never returns (it
// ignored SIGINT and SIGTERM there, and only SIGKILL ended it).
func TestSignalEndsBlockedReport(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096); err != nil {
		t.Fatal(err)
	}
	cmd := perfbenchCmd(t, "", "report", filepath.Join("..", "..", "testdata", "records"))
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	// The report is blocked once the pipe is full.
	for deadline := time.Now().Add(30 * time.Second); ; {
		n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		if n >= 4096 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the report wrote %d bytes in 30 s; stderr:\n%s", n, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case err = <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("perfbench report blocked on its stdout still runs 10 s after SIGINT; stderr:\n%s", stderr.String())
	}
	took := time.Since(sent)
	t.Logf("exited %.2f s after SIGINT: %v; stderr: %s", took.Seconds(), err, stderr.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted || !strings.Contains(stderr.String(), "did not stop within") {
		t.Errorf("exit %v, stderr %q; want status %d and why", err, stderr.String(), exitInterrupted)
	}
	if took < signalGrace("report") {
		t.Errorf("exited %v after SIGINT, before its grace of %v: the watchdog did not wait", took, signalGrace("report"))
	}
}
