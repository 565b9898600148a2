package perfevent

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// TestThreadStartTick reads field 22 of a thread's stat, also behind a
// command name with spaces and parentheses; a thread without a stat has
// none.
func TestThreadStartTick(t *testing.T) {
	root := t.TempDir()
	for tid, line := range map[string]string{
		// A bash line in the kernel's layout: starttime is field 22.
		"7":  "7 (bash) S 1 7 7 34816 1234 4194560 1029 3120 0 0 2 1 3 4 20 0 1 0 5217 8712192 873 18446744073709551615 1\n",
		"42": "42 (my (weird) cmd) R 1 42 42 0 -1 4194624 10 0 0 0 3 1 0 0 20 0 4 0 987654321 123 45",
		"43": "43 (bash) S 1 7 7 34816 1234 4194560 1029 3120 0 0 2 1 3 4 20 0 1 0 x",
	} {
		writeFile(t, filepath.Join(root, "proc/7/task", tid, "stat"), line)
	}
	for tid, want := range map[int]uint64{7: 5217, 42: 987654321} {
		if got, err := threadStartTick(root, 7, tid); err != nil || got != want {
			t.Errorf("tid %d: got %d, %v; want %d", tid, got, err, want)
		}
	}
	if _, err := threadStartTick(root, 7, 43); err == nil {
		t.Error("a stat whose starttime is not a number: no error")
	}
	if _, err := threadStartTick(root, 7, 44); !errors.Is(err, procfs.ErrGone) {
		t.Errorf("a thread without a stat: %v, want it gone", err)
	}
}

func TestClassifyThread(t *testing.T) {
	// The first counter opened at 10.005 s after boot (tick 1000 runs from
	// 10.000 to 10.010 s); every thread was covered at 10.030 s.
	const firstOpen, covered = 10_005_000_000, 10_030_000_000
	for _, tc := range []struct {
		tick uint64
		want threadOrigin
	}{
		{999, originMissed},     // 9.990–10.000 s: before any counter
		{1000, originAmbiguous}, // its tick holds the first open
		{1002, originAmbiguous}, // during the attach
		{1003, originInherited}, // 10.030 s: after everything was covered
		{5000, originInherited},
		{0, originMissed},
	} {
		if got := classifyThread(tc.tick, firstOpen, covered); got != tc.want {
			t.Errorf("tick %d: %v, want %v", tc.tick, got, tc.want)
		}
	}
}

func TestListThreads(t *testing.T) {
	root := t.TempDir()
	for _, tid := range []string{"31", "300", "4", "30"} {
		if err := os.MkdirAll(filepath.Join(root, "proc/30/task", tid), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := listThreads(root, 30)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{30, 4, 31, 300}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v (leader first, then by id)", got, want)
	}
	if _, err := listThreads(root, 31); !errors.Is(err, procfs.ErrGone) {
		t.Errorf("missing pid: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "proc/50/task"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := listThreads(root, 50); !errors.Is(err, procfs.ErrGone) {
		t.Errorf("zombie: %v", err)
	}
}
