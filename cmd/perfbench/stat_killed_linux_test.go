package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
)

// TestStatServerKilled: a server killed inside the window ends stat with
// one short error line that starts with the cause: the server exited.
func TestStatServerKilled(t *testing.T) {
	needLinux(t)
	noMyCnf(t)
	srv := testdb.New(t, testdb.Options{})
	go func() {
		time.Sleep(time.Second)
		syscall.Kill(srv.Pid, syscall.SIGKILL)
	}()
	code, _, errs := runCLI(t, "stat", "--socket", srv.Socket, "--user", "root", "-e", "task-clock", "--duration", "3s")
	line := strings.TrimSuffix(errs[strings.LastIndex(strings.TrimSuffix(errs, "\n"), "\n")+1:], "\n")
	if code != exitFailure || !strings.HasPrefix(line, "perfbench stat: the server (pid ") || !strings.Contains(line, "exited") || len(line) > 300 {
		t.Errorf("exit %d, last stderr line (%d characters) %q; want exit %d and a line of at most 300 characters that starts with the server's exit", code, len(line), line, exitFailure)
	}
}
