package perfevent

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// addFakeThreadOn adds a thread whose stat says it last ran on cpu
// (field 39).
func addFakeThreadOn(t *testing.T, root string, pid, tid int, start uint64, cpu int) {
	t.Helper()
	stat := fmt.Sprintf("%d (work) S 1 %d %d 0 -1 4194624 10 0 0 0 3 1 0 0 20 0 4 0 %d 123 45 0 0 0 0 0 0 0 0 0 0 0 0 0 17 %d 0 0\n", tid, pid, pid, start, cpu)
	writeFile(t, filepath.Join(root, "proc", strconv.Itoa(pid), "task", strconv.Itoa(tid), "stat"), stat)
}

// Each thread's counters are opened from a worker bound to the CPU the
// thread last ran on (its stat's processor), where the kernel installs
// them: 150 threads on CPU 1, 100 on CPU 0, 20 whose stat stops before
// the processor field. The leader, the probe, is opened first, from the
// caller.
func TestOpensFromThreadsCPU(t *testing.T) {
	f := newFakeSys()
	root := fakeRoot(t, 100, nil)
	cpuOf := map[int]int{}
	for i := range 270 {
		tid := 100 + i
		switch {
		case i < 150:
			cpuOf[tid] = 1
			addFakeThreadOn(t, root, 100, tid, 5, 1)
		case i < 250:
			cpuOf[tid] = 0
			addFakeThreadOn(t, root, 100, tid, 5, 0)
		default:
			cpuOf[tid] = -1
			addFakeThread(t, root, 100, tid, 5)
		}
	}
	a, err := attachFake(t, f, root, 100, fourSoftware, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Threads(); len(got) != 270 {
		t.Fatalf("%d threads attached, want 270", len(got))
	}
	opens := map[int]int{}
	for _, o := range f.opens() {
		opens[o.pid]++
		want := cpuOf[o.pid]
		if o.pid == 100 {
			want = -1 // the probe
		}
		if o.from != want {
			t.Errorf("tid %d (last on CPU %d) opened from CPU %d", o.pid, cpuOf[o.pid], o.from)
		}
	}
	for tid := range cpuOf {
		if opens[tid] != len(fourSoftware) {
			t.Errorf("tid %d: %d opens, want %d", tid, opens[tid], len(fourSoftware))
		}
	}
	pins := slices.Sorted(slices.Values(f.pins))
	if !slices.Equal(pins, []int{0, 1}) {
		t.Errorf("workers bound to CPUs %v, want one to each of 0 and 1", f.pins)
	}
}
