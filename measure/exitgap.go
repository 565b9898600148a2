package measure

import (
	"fmt"

	"github.com/perfbench/perfbench/osstat"
	"github.com/perfbench/perfbench/perfevent"
)

// maxExitGap is how far below the process's own CPU time a window's
// per-thread task-clock may fall before the Record says so; minExitGap is
// the least shortfall that is said, in ns: the clock is read after the
// server status at each edge, a little after the counters, and on a nearly
// idle server what runs in between is a large fraction of little.
const (
	maxExitGap = 0.03
	minExitGap = 2e6
)

// exitGapWarning compares a window's task-clock, counted per thread with
// perfbench's own connection thread still in it (all), with the process's
// CPU time over the same window, from its CPU clock at both edges (start
// and end): the run time of all its threads, those that exited included,
// that /proc's utime+stime are cut from. The CPU a thread spends in its
// exit after its counters are detached, and before they are first
// scheduled in, is in that clock and in no per-thread counter, for perf
// stat -p as for perfbench; a server that creates threads all the time
// loses a few percent of its CPU that way. When task-clock falls short by
// more than maxExitGap, the warning gives both numbers and the cure: cgroup
// mode, whose per-CPU counters see that CPU. "" otherwise, in cgroup mode,
// or when either number is missing.
func exitGapWarning(all perfevent.Reading, start, end *osstat.Snapshot, cgroup bool) string {
	if cgroup || start == nil || end == nil || !start.HasCPUClock || !end.HasCPUClock {
		return ""
	}
	if start.Process == nil || end.Process == nil || start.Process.Stat.StartTime != end.Process.Stat.StartTime {
		return "" // not one process from edge to edge
	}
	tc, ok := all.Event("task-clock")
	if !ok || !tc.Status.Measured() {
		return ""
	}
	cpu := float64(end.CPUClock - start.CPUClock)
	if short := cpu - tc.Value; short <= maxExitGap*cpu || short <= minExitGap {
		return ""
	}
	return fmt.Sprintf("task-clock %.1f ms is %.1f%% below the server's CPU time over the window (%.1f ms by its CPU clock, which /proc's utime+stime are cut from): "+
		"per-thread counters (perf stat -p's too) do not see all the CPU the kernel charges to the server's threads — threads that start or exit inside the window run a little outside their counters, "+
		"and a busy shared CPU widened the gap without any thread coming or going; CPU per op from task-clock is low by as much. "+
		"Cgroup mode (perfbench stat --cgroup, the server in a cgroup of its own) counts per CPU and sees the exits",
		tc.Value/1e6, 100*(cpu-tc.Value)/cpu, cpu/1e6)
}
