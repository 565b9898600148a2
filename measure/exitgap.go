package measure

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/osstat"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// MaxExitGap is how far a window's task-clock may be from the server's CPU
// time (below it per thread, either way in cgroup mode) before the Record
// says so with a cpu-gap warning, which the report prints next to the
// tables. minExitGap is the least difference that is said, in ns: the
// clock is read after the server status at each edge, a little after the
// counters, and on a nearly idle server what runs in between is a large
// fraction of little.
//
// The per-thread gap is mostly a slice of every context switch (2.2–3.3 µs
// each on the VM perfbench is developed on, in 32 of 32 sysbench windows:
// 4–12% of the server's CPU where server and load share CPUs), and of every
// thread or process start and exit. It is no error of the window, and no
// correction for it is measured; cgroup mode has no such gap. The gap does
// not make a Record partial: on a loaded machine ordinary windows were
// 9–13% apart per thread, and 16% below to 6% above in cgroup mode, so a
// status drawn from it would mark every window there.
//
// MaxCgroupGap is the same bound in cgroup mode, either way: there the
// counters ran 2.5–3.7% above usage_usec in sysbench windows of a sandbox
// server on a quiet machine (not understood yet; time the scheduler does
// not charge to a task, such as interrupts served while it runs, is one
// candidate), so 3% would flag ordinary windows.
const (
	MaxExitGap   = 0.03
	maxCgroupGap = 0.05
	minExitGap   = 2e6
)

// markCPUGap compares r's task-clock with the server's CPU time over the
// window (see exitGap): a gap over MaxExitGap is a cpu-gap warning, with
// the window's context switches and the gap per switch when counted.
func markCPUGap(r *record.Record, all perfevent.Reading, start, end *osstat.Snapshot, cgroup bool) {
	w, short, _ := exitGap(all, start, end, cgroup)
	if w.Text == "" {
		return
	}
	if cs, ok := all.Event("context-switches"); ok && cs.Status.Measured() && cs.Value > 0 {
		w.Text += fmt.Sprintf(" (%.0f context switches in the window, %.2f µs short per switch: per-thread counters miss a slice of each)", cs.Value, short/cs.Value/1e3)
	}
	r.AddWarning(w)
}

// exitGap compares a window's task-clock, counted per thread with
// perfbench's own connection thread still in it (all), with the CPU time
// the same counters are there to count over the window: the process's CPU
// clock at both edges (start and end), the run time of all its threads,
// those that exited included, that /proc's utime+stime are cut from; plus,
// when read at both edges, its child processes' CPU (reaped or not), which
// counters opened with inherit count too. The CPU a thread or child
// process spends in its exit after its counters are detached, and before
// they are first scheduled in, is in that time and in no per-thread
// counter, for perf stat -p as for perfbench; a server that creates
// threads all the time loses a few percent of its CPU that way. When
// task-clock falls short by more than MaxExitGap (and minExitGap), it
// returns a warning (code cpu-gap) with both numbers and the cure: cgroup
// mode, whose per-CPU counters see that CPU. A zero Warning otherwise, in
// cgroup mode, or when either number is missing.
//
// It also returns the shortfall and the CPU time, in ns.
func exitGap(all perfevent.Reading, start, end *osstat.Snapshot, cgroup bool) (w record.Warning, short, cpu float64) {
	if cgroup || start == nil || end == nil || !start.HasCPUClock || !end.HasCPUClock {
		return record.Warning{}, 0, 0
	}
	if start.Process == nil || end.Process == nil || start.Process.Stat.StartTime != end.Process.Stat.StartTime {
		return record.Warning{}, 0, 0 // not one process from edge to edge
	}
	tc, ok := all.Event("task-clock")
	if !ok || !tc.Status.Measured() {
		return record.Warning{}, 0, 0
	}
	cpu = float64(end.CPUClock - start.CPUClock)
	what := "by its CPU clock"
	if start.HasChildrenCPU && end.HasChildrenCPU && end.ChildrenCPU != start.ChildrenCPU {
		children := float64(end.ChildrenCPU - start.ChildrenCPU)
		what = fmt.Sprintf("%.1f ms by its CPU clock and %.1f ms of its child processes', which inherited counters count too", cpu/1e6, children/1e6)
		cpu += children
	}
	short = cpu - tc.Value
	if short <= MaxExitGap*cpu || short <= minExitGap {
		return record.Warning{}, 0, 0
	}
	pct := 100 * short / cpu
	return record.Warning{Code: record.WarnCPUGap, Text: fmt.Sprintf(
		"task-clock %.1f ms is %.1f%% below the server's CPU time over the window (%.1f ms: %s; /proc's utime+stime are cut from the clock): "+
			"per-thread counters (perf stat -p's too) do not see all the CPU the kernel charges to the server's threads — threads and processes that start or exit inside the window run a little outside their counters, "+
			"and so does a slice of every context switch; CPU per op from task-clock is low by as much. "+
			"Cgroup mode (perfbench stat --cgroup, the server in a cgroup of its own; the default when it is alone in its cgroup) counts per CPU and sees it",
		tc.Value/1e6, pct, cpu/1e6, what)}, short, cpu
}

// cgroupUsage reads usage_usec of a cgroup v2's cpu.stat, in ns: the CPU
// time of every process in it and below, those that exited included.
func cgroupUsage(dir string) (float64, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, fmt.Errorf("read the cgroup's CPU time: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, fmt.Errorf("read the cgroup's CPU time: %s/cpu.stat: bad line %q", dir, line)
			}
			return n * 1e3, nil
		}
	}
	return 0, fmt.Errorf("read the cgroup's CPU time: %s/cpu.stat has no usage_usec", dir)
}

// markCgroupGap compares, in cgroup mode, r's task-clock with the cgroup's
// CPU time over the window (cpu.stat usage_usec, read right after the
// counters at both edges): the per-CPU counters see all of it, so the two
// differ by little (within about 2% in the churn tests, and 4% under
// sysbench on a quiet machine). A difference over MaxCgroupGap (and
// minExitGap) either way is a cpu-gap warning with both numbers.
func markCgroupGap(r *record.Record, all perfevent.Reading, start, end edge) {
	if start.cgUsage == 0 && start.cgErr == nil {
		return // not cgroup mode
	}
	tc, ok := all.Event("task-clock")
	if !ok || !tc.Status.Measured() {
		return
	}
	if err := errors.Join(start.cgErr, end.cgErr); err != nil {
		r.Warnf(record.WarnGeneral, "task-clock could not be checked against the cgroup's CPU time: %v", err)
		return
	}
	usage := end.cgUsage - start.cgUsage
	diff := tc.Value - usage
	if math.Abs(diff) <= maxCgroupGap*usage || math.Abs(diff) <= minExitGap {
		return
	}
	side := "below"
	if diff > 0 {
		side = "above"
	}
	r.AddWarning(record.Warning{Code: record.WarnCPUGap, Text: fmt.Sprintf(
		"task-clock %.1f ms is %.1f%% %s the cgroup's CPU time over the window (%.1f ms, from cpu.stat usage_usec read right after the counters): cgroup mode's per-CPU counters see all of the cgroup's CPU, so the two should agree within a few percent; CPU per op from task-clock may be off by as much",
		tc.Value/1e6, 100*math.Abs(diff)/usage, side, usage/1e6)})
}
