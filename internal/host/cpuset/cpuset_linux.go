package cpuset

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

func mask(s Set) (*unix.CPUSet, error) {
	if len(s) == 0 {
		return nil, errors.New("no CPU to run on")
	}
	var m unix.CPUSet
	for _, c := range s {
		if c >= len(m)*64 {
			return nil, fmt.Errorf("CPU %d is beyond the %d this build of perfbench can place on", c, len(m)*64)
		}
		m.Set(c)
	}
	return &m, nil
}

func fromMask(m *unix.CPUSet) Set {
	var out Set
	for c := range len(m) * 64 {
		if m.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// Own returns the CPUs the calling thread may run on: those perfbench was
// given (by taskset, a cgroup cpuset, a container).
func Own() (Set, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(0, &m); err != nil {
		return nil, fmt.Errorf("read perfbench's CPU affinity: %w", err)
	}
	return fromMask(&m), nil
}

// StartOn calls start, which starts a process (exec.Cmd.Start), with the
// calling OS thread pinned to s, and restores the thread's affinity after:
// the process inherits the affinity, and so does every thread it creates,
// while perfbench's own threads keep theirs. The caller must be locked to
// its thread (runtime.LockOSThread). An empty s just calls start.
func StartOn(s Set, start func() error) error {
	if len(s) == 0 {
		return start()
	}
	m, err := mask(s)
	if err != nil {
		return err
	}
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("read CPU affinity: %w", err)
	}
	if err := unix.SchedSetaffinity(0, m); err != nil {
		return fmt.Errorf("set CPU affinity %s: %w", s, err)
	}
	err = start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = fmt.Errorf("restore CPU affinity %s: %w", fromMask(&old), rerr)
	}
	return err
}

// PinProcess sets the CPU affinity of every thread of a running process,
// and returns how many threads it set. Threads created while it works are
// caught by listing the threads again, and reading back each one's
// affinity, until two passes in a row find nothing to change; threads
// created afterwards inherit the affinity of the thread that creates
// them, which is pinned by then. One race is left: a thread that an
// unpinned thread began creating before it was pinned, and that becomes
// visible only after those two passes (5 ms apart), keeps the old
// affinity (the kernel copies it at the start of the creation); the
// Record's placement counts such threads (record.Placement.ServerThreadsElsewhere).
// Starting a process pinned (StartOn, which pins the thread that execs it)
// has no such race.
func PinProcess(pid int, s Set) (int, error) {
	m, err := mask(s)
	if err != nil {
		return 0, err
	}
	p := procfs.FS{}.Proc(pid)
	set := map[int]bool{}
	for pass, quiet := 0, 0; quiet < 2; pass++ {
		if pass == 100 {
			return len(set), fmt.Errorf("pin pid %d to CPUs %s: its threads kept changing over 100 passes", pid, s)
		}
		tids, err := p.Tasks()
		if err != nil {
			return len(set), fmt.Errorf("pin pid %d to CPUs %s: %w", pid, s, err)
		}
		changed := false
		for _, tid := range tids {
			var now unix.CPUSet
			if err := unix.SchedGetaffinity(tid, &now); err == nil && now == *m {
				continue
			} else if errors.Is(err, unix.ESRCH) {
				continue // the thread ended
			}
			if err := unix.SchedSetaffinity(tid, m); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue
				}
				return len(set), fmt.Errorf("pin thread %d of pid %d to CPUs %s: %w", tid, pid, s, err)
			}
			set[tid], changed = true, true
		}
		if changed {
			quiet = 0
		} else {
			quiet++
			time.Sleep(5 * time.Millisecond) // let a creation under way finish
		}
	}
	return len(set), nil
}

// allowed reads where a process's threads may run, from the kernel
// (Cpus_allowed_list of /proc/PID/task/TID/status): the main thread's
// list, and how many of the other threads have another list.
func allowed(pid int) (main Set, others int, err error) {
	p := procfs.FS{}.Proc(pid)
	st, err := p.Status()
	if err != nil {
		return nil, 0, fmt.Errorf("read the CPUs pid %d may run on: %w", pid, err)
	}
	if main, err = Parse(st.CPUsAllowed); err != nil {
		return nil, 0, fmt.Errorf("read the CPUs pid %d may run on: Cpus_allowed_list: %w", pid, err)
	}
	tids, err := p.Tasks()
	if err != nil {
		return nil, 0, fmt.Errorf("read the CPUs pid %d may run on: %w", pid, err)
	}
	for _, tid := range tids {
		if tid == pid {
			continue
		}
		ts, err := p.Task(tid).Status()
		if err != nil {
			continue // the thread ended
		}
		if ts.CPUsAllowed != st.CPUsAllowed {
			others++
		}
	}
	return main, others, nil
}
