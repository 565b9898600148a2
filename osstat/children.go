package osstat

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// maxChildDepth bounds how deep childrenCPU follows children of children.
const maxChildDepth = 8

// childrenCPU is the CPU time of process pid's child processes and of
// theirs: the reaped ones from pid's cutime+cstime (ticks, each truncated
// by the kernel), the others (running, or exited and not yet reaped) from
// their CPU clocks (clock) and, in turn, their own children. pid's children
// are those /proc/PID/task/TID/children lists. false when pid's stat cannot
// be read or a child's clock cannot be read while it is still listed.
func (f FS) childrenCPU(pid int, reaped ProcStat, clock func(int) (time.Duration, bool)) (time.Duration, bool) {
	return f.childrenCPUAt(pid, reaped, clock, 0)
}

func (f FS) childrenCPUAt(pid int, st ProcStat, clock func(int) (time.Duration, bool), depth int) (time.Duration, bool) {
	total := ticksDuration(st.CUTime+st.CSTime, f.ticks())
	if depth >= maxChildDepth {
		return total, false
	}
	for _, c := range f.children(pid) {
		cpu, ok := clock(c)
		b, err := f.readProc(c, "stat")
		if err != nil || !ok {
			// Reaped since pid's cutime was read: this reading
			// misses its CPU (a short-lived child's: little).
			if _, gone := os.Stat(f.path("proc", strconv.Itoa(c))); gone != nil {
				continue
			}
			return total, false
		}
		cst, err := ParseProcStat(b)
		if err != nil {
			return total, false
		}
		sub, ok := f.childrenCPUAt(c, cst, clock, depth+1)
		if !ok {
			return total, false
		}
		total += cpu + sub
	}
	return total, true
}

// children lists the child processes of pid's threads.
func (f FS) children(pid int) []int {
	tasks, err := os.ReadDir(f.path("proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := readProcFile(f.path("proc", strconv.Itoa(pid), "task", t.Name(), "children"))
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
