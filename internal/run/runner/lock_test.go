package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFolderLock: a second run into a folder in use is refused at once,
// naming the pid that holds it, and leaves the holder's lock alone; the lock
// file goes when its holder ends; a lock file whose holder died is taken
// over and said to be.
func TestFolderLock(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	first, err := lockFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	p := parsePlan(t, twoStepPlan)
	began := time.Now()
	var progress syncBuffer
	sum, err := Run(context.Background(), p, Options{Out: out, Progress: &progress})
	if !errors.Is(err, errFolderInUse) || !strings.Contains(err.Error(), "(pid "+me+")") || sum != nil {
		t.Errorf("a run into a locked folder: %v, %+v; want ErrFolderInUse naming pid %s", err, sum, me)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the refusal took %v", d)
	}
	if b, err := os.ReadFile(filepath.Join(out, lockName)); err != nil || string(b) != me+"\n" {
		t.Errorf("the holder's lock file: %q, %v", b, err)
	}
	if _, err := lockFolder(out); !errors.Is(err, errFolderInUse) {
		t.Errorf("second lock: %v", err)
	}
	first.unlock()
	if _, err := os.Stat(filepath.Join(out, lockName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file stays after unlock: %v", err)
	}

	// A run killed by SIGKILL leaves its file, but not its flock.
	if err := os.WriteFile(filepath.Join(out, lockName), []byte("4194305\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := lockFolder(out)
	if err != nil {
		t.Fatalf("a stale lock file: %v", err)
	}
	defer l.unlock()
	if l.stale != "4194305" {
		t.Errorf("stale holder %q, want 4194305", l.stale)
	}
	if b, _ := os.ReadFile(filepath.Join(out, lockName)); string(b) != me+"\n" {
		t.Errorf("lock file after taking over: %q", b)
	}
}
