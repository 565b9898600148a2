package osstat

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// TestChildrenCPU: a process's children's CPU is its reaped children's
// cutime+cstime, plus the CPU clock of each child still listed and, in
// turn, its own children's; a child that is gone when read is skipped.
func TestChildrenCPU(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, "proc", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat := func(pid int, cutime, cstime int) string {
		return fmt.Sprintf("%d (x) S 1 1 1 0 -1 0 0 0 0 0 7 7 %d %d 20 0 1 0 5 0 25 0\n", pid, cutime, cstime)
	}
	// 10's threads 10 and 11 have children 20 and 21 (21 already gone
	// from /proc); 20 has child 30.
	write("10/task/10/children", "20 ")
	write("10/task/11/children", "21 ")
	write("20/stat", stat(20, 3, 1)) // 40 ms reaped under 20
	write("20/task/20/children", "30 ")
	write("30/stat", stat(30, 0, 0))
	write("30/task/30/children", "")
	clocks := map[int]time.Duration{20: 5 * time.Millisecond, 30: 2 * time.Millisecond}
	clock := func(pid int) (time.Duration, bool) { c, ok := clocks[pid]; return c, ok }
	f := FS{Root: root, Ticks: 100}
	got, ok := f.childrenCPU(10, procfs.Stat{CUTime: 10, CSTime: 2}, nil, clock)
	// 120 ms reaped under 10, 20's clock 5 ms and its reaped 40 ms, 30's 2 ms.
	if want := 167 * time.Millisecond; !ok || got != want {
		t.Errorf("childrenCPU = %v, %v; want %v, true", got, ok, want)
	}
	// The same children from a process list (pid to parent), which
	// has no children files to read: the same sum.
	list := ChildrenFromList(map[int]int{10: 1, 11: 1, 20: 10, 21: 10, 30: 20, 40: 11})
	if got, ok := f.childrenCPU(10, procfs.Stat{CUTime: 10, CSTime: 2}, list, clock); !ok || got != 167*time.Millisecond {
		t.Errorf("childrenCPU from a process list = %v, %v; want 167ms, true", got, ok)
	}
	// A listed child whose clock cannot be read while its /proc entry
	// stays is not a reading.
	delete(clocks, 30)
	if got, ok := f.childrenCPU(10, procfs.Stat{}, nil, clock); ok {
		t.Errorf("childrenCPU with a child's clock unread = %v, true; want false", got)
	}
}
