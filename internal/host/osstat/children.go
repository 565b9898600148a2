package osstat

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// maxChildDepth bounds how deep childrenCPU follows children of children.
const maxChildDepth = 8

// Children lists the child processes of a process. A nil Children reads
// /proc/PID/task/TID/children of each of the process's threads: as many
// reads as it has threads. ChildrenFromList answers from a process list
// read once.
type Children func(pid int) []int

// ChildrenFromList returns the Children of a process list that gives each
// process's parent (pid to ppid, as /proc/PID/stat has it): what one pass
// over /proc tells of every process's children, for a process with more
// threads than the host has processes.
func ChildrenFromList(parents map[int]int) Children {
	byParent := map[int][]int{}
	for p, pp := range parents {
		byParent[pp] = append(byParent[pp], p)
	}
	return func(pid int) []int { return byParent[pid] }
}

// childrenCPU is the CPU time of process pid's child processes and of
// theirs: the reaped ones from pid's cutime+cstime (ticks, each truncated
// by the kernel), the others (running, or exited and not yet reaped) from
// their CPU clocks (clock) and, in turn, their own children. kids lists
// the children (nil: /proc/PID/task/TID/children). false when a child's
// clock cannot be read while it is still listed.
func (f FS) childrenCPU(pid int, reaped procfs.Stat, kids Children, clock func(int) (time.Duration, bool)) (time.Duration, bool) {
	return f.childrenCPUAt(pid, reaped, kids, clock, 0, nil)
}

// childrenCPUAt is childrenCPU at depth, leaving out the children of pid
// that skip lists with their start time (and theirs).
func (f FS) childrenCPUAt(pid int, st procfs.Stat, kids Children, clock func(int) (time.Duration, bool), depth int, skip map[int]uint64) (time.Duration, bool) {
	total := ticksDuration(st.CUTime+st.CSTime, f.ticks())
	if depth >= maxChildDepth {
		return total, false
	}
	if kids == nil {
		kids = f.children
	}
	for _, c := range kids(pid) {
		cpu, ok := clock(c)
		child := f.proc().Proc(c)
		cst, err := child.Stat()
		if err != nil || !ok {
			// Reaped since pid's cutime was read: this reading
			// misses its CPU (a short-lived child's: little).
			if _, err := child.Stat(); errors.Is(err, procfs.ErrGone) {
				continue
			}
			return total, false
		}
		if start, ok := skip[c]; ok && start == cst.StartTime {
			continue
		}
		sub, ok := f.childrenCPUAt(c, cst, kids, clock, depth+1, nil)
		if !ok {
			return total, false
		}
		total += cpu + sub
	}
	return total, true
}

// ChildrenOf lists process pid's child processes now (kids lists them;
// nil: /proc/PID/task/TID/children), each with its start time (clock
// ticks after boot, from its stat): what ProcessCPU can be told to leave
// out.
func (f FS) ChildrenOf(pid int, kids Children) map[int]uint64 {
	if kids == nil {
		kids = f.children
	}
	out := map[int]uint64{}
	for _, c := range kids(pid) {
		if st, err := f.proc().Proc(c).Stat(); err == nil {
			out[c] = st.StartTime
		}
	}
	return out
}

// children lists the child processes of pid's threads.
func (f FS) children(pid int) []int {
	proc := f.proc().Proc(pid)
	tids, err := proc.Tasks()
	if err != nil {
		return nil
	}
	var out []int
	for _, tid := range tids {
		b, err := proc.Task(tid).ReadFile("children")
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// ticksDuration converts clock ticks at rate ticks a second to a duration.
func ticksDuration(n uint64, ticks float64) time.Duration {
	return time.Duration(float64(n) / ticks * 1e9)
}

// CPUTime is a process's CPU time: see FS.ProcessCPU.
type CPUTime struct {
	// Clock is the process's CPU clock (Snapshot.CPUClock).
	Clock time.Duration
	// Children is its child processes' CPU and theirs, when
	// HasChildren: counters opened with inherit count a child's CPU as
	// it runs; the process's clock leaves it out, and cutime takes it
	// in only when the child is reaped. The reaped ones' part is cutime+cstime, each truncated
	// to a clock tick by the kernel: the children's CPU is up to Slack
	// (two ticks) more than Children.
	Children    time.Duration
	HasChildren bool
	Slack       time.Duration
}

// ProcessCPU reads process pid's CPU clock, then its stat and its child
// processes' CPU (kids lists them; nil: /proc/PID/task/TID/children), for
// a reading taken next to perf counters. false when the clock cannot be
// read (a fixture root, not Linux, or the process is gone). The child
// processes skip lists (see ChildrenOf), while they live, are left out
// with theirs; once reaped their CPU is in pid's cutime+cstime.
func (f FS) ProcessCPU(pid int, kids Children, skip map[int]uint64) (CPUTime, bool) {
	var c CPUTime
	if f.Root != "" && f.Root != "/" {
		return c, false
	}
	var ok bool
	if c.Clock, ok = processCPUClock(pid); !ok {
		return c, false
	}
	st, err := f.proc().Proc(pid).Stat()
	if err != nil {
		return c, true
	}
	c.Children, c.HasChildren = f.childrenCPUAt(pid, st, kids, processCPUClock, 0, skip)
	c.Slack = ticksDuration(2, f.ticks())
	return c, true
}
