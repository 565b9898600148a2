package remote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGuard runs commands under Guard here: one that exits by itself
// keeps its status and output; one whose heartbeat stops, and one whose
// input ends, are stopped (SIGTERM ignored, then SIGKILL after the grace)
// long before they would have ended.
func TestGuard(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil { // the live files go to the working folder
		t.Fatal(err)
	}
	defer os.Chdir(wd)

	var out bytes.Buffer
	open, held, err := os.Pipe() // the controller holds its end open
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	code, err := Guard(context.Background(), []string{"sh", "-c", "echo hi; exit 3"}, open, &out, io.Discard, time.Minute, time.Second)
	open.Close()
	if code != 3 || err != nil || out.String() != "hi\n" {
		t.Errorf("exit by itself: status %d, %v, output %q; want 3, no error, hi", code, err, out.String())
	}

	for _, tc := range []struct {
		name  string
		beats func(w *os.File)
		want  error
	}{
		{"no heartbeat", func(w *os.File) { w.Write([]byte("\n")) }, errNoHeartbeat},
		{"input ends", func(w *os.File) { w.Close() }, nil},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		tc.beats(w)
		start := time.Now()
		code, err := Guard(context.Background(), []string{"sh", "-c", `trap "" TERM; sleep 60 & wait; sleep 60`}, r, io.Discard, io.Discard, 300*time.Millisecond, 500*time.Millisecond)
		took := time.Since(start)
		w.Close()
		r.Close()
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) || code == 0 {
			t.Errorf("%s: status %d, %v; want the command stopped (%v)", tc.name, code, err, tc.want)
		}
		if took > 30*time.Second {
			t.Errorf("%s: stopped after %v, the command's own end would be 60 s", tc.name, took)
		}
		if tc.name == "no heartbeat" && !strings.Contains(err.Error(), "the link dropped") {
			t.Errorf("%s: %v does not say the link dropped", tc.name, err)
		}
	}
	if left, _ := os.ReadDir(liveDir); len(left) != 0 {
		t.Errorf("live files left: %v", left)
	}
	// No sleep of the stopped commands is left (the guard here leads no
	// session: it kills the command's process group).
	time.Sleep(100 * time.Millisecond)
	for _, pid := range sessionMembers(sessionOf(t), os.Getpid()) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); strings.HasPrefix(string(b), "sleep\x0060") {
			t.Errorf("pid %d (sleep 60) is still running", pid)
		}
	}
}

func sessionOf(t *testing.T) int {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return int(sid)
}
