package measure

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testenv"
)

func TestLoadCommand(t *testing.T) {
	var out bytes.Buffer
	l, err := StartLoad([]string{"sh", "-c", "echo one; sleep 0.2; echo two >&2; exit 2", "--mysql-password=secret"}, LoadOptions{Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitOrStop(context.Background(), time.Second); err == nil || err.Error() != "exit status 2" {
		t.Errorf("Wait: %v, want exit status 2", err)
	}
	if out.String() != "one\ntwo\n" {
		t.Errorf("output %q, want %q", out.String(), "one\ntwo\n")
	}
	c := l.Client()
	if c.Tool != "command" || c.ExitCode != 2 || c.Seconds < 0.15 || c.Started.IsZero() {
		t.Errorf("client %+v: want tool command, exit 2, at least 0.15 s", c)
	}
	if got := strings.Join(c.Command, " "); got != "sh -c echo one; sleep 0.2; echo two >&2; exit 2 --mysql-password=***" {
		t.Errorf("command %q: the password must be masked", got)
	}
	if l.Sysbench() != nil {
		t.Errorf("sh's output was parsed as sysbench's")
	}
	if _, err := StartLoad(nil, LoadOptions{Out: &out}); err == nil {
		t.Errorf("an empty command started")
	}
}

// TestLoadStoppedWithItsGroup: a load runs in a process group of its own,
// and ending ctx ends it and what it started.
func TestLoadStoppedWithItsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	l, err := StartLoad([]string{"sh", "-c", "sleep 60 & echo $! >" + pidFile + "; wait"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var bg int
	if !testenv.Await(5*time.Second, func() bool {
		b, _ := os.ReadFile(pidFile)
		bg, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return bg != 0
	}) {
		t.Fatal("the command did not say its child's pid")
	}
	t.Cleanup(func() { syscall.Kill(bg, syscall.SIGKILL) })
	if pgid, err := syscall.Getpgid(bg); err != nil || pgid != l.Pid() {
		t.Errorf("the load's child is in group %d (%v), want the load's own, %d", pgid, err, l.Pid())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.WaitOrStop(ctx, time.Second); err == nil || err.Error() != "signal: terminated" {
		t.Errorf("Wait after ctx ended: %v, want signal: terminated", err)
	}
	if !testenv.Await(5*time.Second, func() bool { return syscall.Kill(bg, 0) != nil }) {
		t.Fatalf("the load's child %d outlived the load", bg)
	}
}
