package perfevent

import (
	"errors"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// pinned runs its work on a thread bound to the CPU asked for, and
// unbound for a CPU perfbench may not run on; the caller's CPUs do not
// change.
func TestPinnedBinds(t *testing.T) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for c := range 1024 {
		if all.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	for _, cpu := range cpus {
		var in unix.CPUSet
		realSys{}.pinned(cpu, func() {
			if err := unix.SchedGetaffinity(0, &in); err != nil {
				t.Error(err)
			}
		})
		if in.Count() != 1 || !in.IsSet(cpu) {
			t.Errorf("pinned(%d): the work ran on a thread allowed %d CPUs (CPU %d among them: %v)", cpu, in.Count(), cpu, in.IsSet(cpu))
		}
	}
	for _, cpu := range []int{-1, 1023} {
		if all.IsSet(cpu) {
			continue
		}
		var in unix.CPUSet
		realSys{}.pinned(cpu, func() { unix.SchedGetaffinity(0, &in) })
		if in != all {
			t.Errorf("pinned(%d), a CPU this process may not use: the work ran on %d CPUs, the process has %d", cpu, in.Count(), all.Count())
		}
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil || after != all {
		t.Errorf("the caller's CPUs changed: %d, was %d (%v)", after.Count(), all.Count(), err)
	}
}

// closeAll closes exactly the descriptors it is given, runs of
// consecutive ones and lone ones alike, in any order.
func TestCloseAllExactly(t *testing.T) {
	var fds []int
	for range 12 {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	slices.Sort(fds)
	// Close the 1st–4th, 6th, and the 8th–11th, given out of order; keep
	// the 5th, 7th and 12th.
	closing := []int{fds[10], fds[0], fds[5], fds[2], fds[7], fds[1], fds[9], fds[3], fds[8]}
	keep := []int{fds[4], fds[6], fds[11]}
	if err := (realSys{}).closeAll(closing); err != nil {
		t.Fatal(err)
	}
	for _, fd := range closing {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
			t.Errorf("descriptor %d is still open (%v)", fd, err)
		}
	}
	for _, fd := range keep {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			t.Errorf("descriptor %d, not given, was closed: %v", fd, err)
		}
		unix.Close(fd)
	}
}
