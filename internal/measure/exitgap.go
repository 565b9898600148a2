package measure

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// A window's task-clock is checked against the kernel's CPU time of what
// it counted over the same window (the reference, record.KernelCPU: see
// kernelCPU). The reference is read right before and right after the
// counters at each edge, so whatever perfbench waited between the reads
// (descheduled on a loaded host, say) widens the interval it gives
// instead of moving a point. Two more margins widen it (see refSlack): a
// running task's CPU reaches its clock and usage_usec only at the
// scheduler's next tick or switch, and reaped children's CPU comes in
// clock ticks (2 ticks a read).
//
// The two part by a few µs per context switch, either way, and that is
// the kernel's accounting, not a count perfbench misses (perf stat -a -G
// counts what cgroup mode counts, to 0.8 ms over 3 s windows): task-clock
// runs from each switch to a task to the next switch away, while the
// scheduler charges a woken task from its wake-up when it preempts the
// one running (the idle task included): wakeup preemption skips the clock
// update of the switch that follows. So the kernel charges more than
// task-clock to a server woken from idle or from other work, less to a
// server preempted by the client it woke. On the VM perfbench is
// developed on, sysbench windows of 3 s mid-load were −2.0 to +3.0% off
// the cgroup's usage_usec when quiet (−0.9 to +0.7 µs a switch; within
// 7 µs a switch in every case), and up to 30% below it beside a busy loop
// on each CPU (up to 37 µs a switch, a rate-limited load: wake-ups wait
// for the loop's slice). Per-thread counters also miss a slice of every
// context switch (2.2–3.9 µs a switch) and the start and exit of threads
// and processes (22–30 µs a switch of a leader forking every 2 ms).
//
// So the check is per context switch of the window (the counter's, else
// /proc's): task-clock outside the reference's interval by more than
// maxSwitchGap a switch makes an ok Record partial, both numbers and the
// cause first in its Error: no wake-up explains it, the counters missed
// CPU (a window that counted 7.5 ms of its cgroup's 194 ms), and every
// count per op from them is low by as much. More than warnSwitchGap a
// switch (beyond any ordinary window seen) is a cpu-gap warning; per
// thread, so is task-clock more than maxExitGap below it (the counts per
// op of the other events are low by about as much). Without a switch
// count, maxCPUGap either way is a cpu-gap warning. Less than minExitGap
// (ns) is never said.
const (
	maxExitGap    = 0.03
	maxCPUGap     = 0.05
	minExitGap    = 2e6
	warnSwitchGap = 40e3
	maxSwitchGap  = 100e3
)

// cpuRef is the reference read on both sides of one counter read, in ns:
// lo before it, hi after it plus the reading's slack. The reference at the
// counter read is in [lo, hi].
type cpuRef struct {
	lo, hi, slack float64
	// children: per thread, the child processes' CPU is in both reads.
	children bool
	err      error
}

// refSlack is how far the reference may lag the CPU its tasks used, in ns:
// the scheduler adds a running task's CPU to its clock and to its cgroup's
// usage_usec at each tick (and switch), so each CPU but the reader's may
// hold up to one tick of it.
func refSlack() float64 {
	return float64(max(onlineCPUs()-1, 0)) * float64(kernelTick())
}

// onlineCPUs counts the CPUs /proc/stat lists (the online ones), 0 when it
// cannot be read.
func onlineCPUs() int {
	b, err := procfs.New("").ReadFile("stat")
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if len(line) > 3 && strings.HasPrefix(line, "cpu") && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return n
}

// kernelTick is the scheduler tick, 1/CONFIG_HZ, from the kernel's config
// (/proc/config.gz, else /boot/config-RELEASE); 10 ms (HZ=100, the longest
// tick Linux builds with) when neither says.
func kernelTick() time.Duration {
	const longest = 10 * time.Millisecond
	var r io.Reader
	proc := procfs.New("")
	if b, err := proc.ReadFile("config.gz"); err == nil {
		if z, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
			r = z
		}
	} else {
		release, err := proc.Sysctl("kernel.osrelease")
		if err != nil {
			return longest
		}
		f, err := os.Open("/boot/config-" + release)
		if err != nil {
			return longest
		}
		defer f.Close()
		r = f
	}
	if r == nil {
		return longest
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CONFIG_HZ="); ok {
			if hz, err := strconv.Atoi(v); err == nil && hz > 0 {
				return time.Second / time.Duration(hz)
			}
		}
	}
	return longest
}

// refKind is what the reference is.
type refKind int

const (
	refProcess refKind = iota // per thread: the process's CPU clock and its children's CPU
	refAlone                  // per thread: the usage_usec of the cgroup the process is alone in
	refCgroup                 // cgroup mode: the cgroup's usage_usec
)

// refKind says what s's reference is.
func (s *Session) refKind() refKind {
	switch {
	case s.att.CgroupDir() != "":
		return refCgroup
	case s.aloneIn != "":
		return refAlone
	}
	return refProcess
}

// cpuGap is the comparison of a window's task-clock with the reference
// over it.
type cpuGap struct {
	taskClock float64 // ns
	lo, hi    float64 // the reference over the window, ns
	off       float64 // how far task-clock is outside [lo, hi]: < 0 below, > 0 above, ns
	switches  float64 // the window's context switches, 0 when not read
}

// compare compares task-clock tc with the reference between edges start
// and end: over the window it was between end.lo-start.hi and
// end.hi-start.lo. Per thread without the children's CPU at every read,
// the reference leaves out what inherited counters count, and task-clock
// above it says nothing.
func compare(tc float64, start, end cpuRef) cpuGap {
	g := cpuGap{taskClock: tc, lo: max(end.lo-start.hi, 0), hi: end.hi - start.lo}
	switch {
	case tc < g.lo:
		g.off = tc - g.lo
	case tc > g.hi && start.children && end.children:
		g.off = tc - g.hi
	}
	return g
}

// share is how far task-clock is outside the reference, as a share of the
// nearer bound.
func (g cpuGap) share() float64 {
	switch {
	case g.off < 0 && g.lo > 0:
		return -g.off / g.lo
	case g.off > 0 && g.hi > 0:
		return g.off / g.hi
	}
	return 0
}

// perSwitch is how far task-clock is outside the reference per context
// switch, in ns (0 without a switch count).
func (g cpuGap) perSwitch() float64 {
	if g.switches <= 0 {
		return 0
	}
	return math.Abs(g.off) / g.switches
}

// checkCPU compares r's task-clock, counted with perfbench's own
// connection thread still in it (all), with the reference read at the
// window's edges: more than maxSwitchGap a context switch outside it makes
// a Record that did not fail partial, the gap and its cause first in its
// Error; more than warnSwitchGap a switch, or per thread more than
// maxExitGap below it, or without a switch count more than maxCPUGap
// either way, is a cpu-gap warning. An edge whose reference could not be
// read is a warning in cgroup mode and nothing per thread (a fixture
// root, another system, a process that exited: /proc's CPU times remain).
// It returns the comparison (zero but for its switches when none was
// made).
func checkCPU(r *record.Record, all perfevent.Reading, start, end cpuRef, kind refKind) (g cpuGap) {
	cgroup := kind == refCgroup
	g.switches = contextSwitches(all, r)
	tc, ok := all.Event("task-clock")
	if !ok || !tc.Status.Measured() {
		return g
	}
	if err := errors.Join(start.err, end.err); err != nil {
		if cgroup && !errors.Is(err, errBackward) {
			r.Warnf(record.WarnGeneral, "task-clock could not be checked against the cgroup's CPU time: %v", err)
		}
		return g
	}
	switches := g.switches
	g = compare(tc.Value, start, end)
	g.switches = switches
	if math.Abs(g.off) <= minExitGap {
		return g
	}
	text := g.text(kind)
	per := g.perSwitch()
	switch {
	case per > maxSwitchGap:
		markPartial(r, text)
	case per > warnSwitchGap, switches == 0 && g.share() > maxCPUGap, !cgroup && g.off < 0 && g.share() > maxExitGap:
		r.AddWarning(record.Warning{Code: record.WarnCPUGap, Text: text})
	}
	return g
}

// contextSwitches is the server's context switches over the window: its
// counter, else those /proc summed over its live threads (r.OS); 0 when
// neither was read.
func contextSwitches(all perfevent.Reading, r *record.Record) float64 {
	if cs, ok := all.Event("context-switches"); ok && cs.Status.Measured() && cs.Value > 0 {
		return cs.Value
	}
	if r.OS != nil {
		return r.OS.VoluntaryCS + r.OS.InvoluntaryCS
	}
	return 0
}

// text says what g is, with both numbers, the gap per context switch and
// the cause.
func (g cpuGap) text(kind refKind) string {
	what, ref := "the server's", refText(kind)
	if kind == refCgroup {
		what = "the cgroup's"
	}
	dir, pct, by := "below", 100*g.share(), g.lo-g.taskClock
	if g.off > 0 {
		dir, by = "above", g.taskClock-g.hi
	}
	text := fmt.Sprintf("task-clock %.1f ms is %.1f%% %s %s CPU time over the window (%.1f–%.1f ms: %s)",
		g.taskClock/1e6, pct, dir, what, g.lo/1e6, g.hi/1e6, ref)
	if g.switches > 0 {
		text += fmt.Sprintf(", %.2f µs a context switch (%.0f in the window)", g.perSwitch()/1e3, g.switches)
	}
	var cause string
	switch {
	case g.perSwitch() > maxSwitchGap:
		cause = fmt.Sprintf("more than %.0f µs a switch is beyond the few µs a switch by which the kernel's charging from a "+
			"wake-up and task-clock's counting from the switch part: "+
			"the counters missed %.1f ms the kernel charged, and every count per op from them is low by as much; CPU per op is the kernel's", maxSwitchGap/1e3, by/1e6)
		if g.off > 0 {
			cause = fmt.Sprintf("more than %.0f µs a switch is beyond the few µs a switch by which the kernel's charging and task-clock part: "+
				"the counters counted %.1f ms the kernel did not charge to what they count; CPU per op is the kernel's", maxSwitchGap/1e3, by/1e6)
		}
	case kind != refCgroup && g.off < 0:
		cause = "per-thread counters (perf stat -p's too) miss a slice of every context switch and the start and exit of threads and processes, forks above all, " +
			"so the counts per op of every event are low by about as much; CPU per op is the kernel's. " +
			"Cgroup mode (perfbench stat --cgroup, the server in a cgroup of its own; the default when it is alone in its " +
			"cgroup; perfbench run's sandbox servers) counts per CPU and sees them"
	case g.switches == 0:
		cause = fmt.Sprintf("the kernel charges a woken task from its wake-up and task-clock counts from the switch to it, "+
			"which parts them by a few µs a context switch either way; "+
			"with no context switch count (context-switches not counted, /proc not read) the gap cannot be judged per switch, "+
			"and more than %.0f%% is said; CPU per op is the kernel's", 100*maxCPUGap)
	default:
		cause = fmt.Sprintf("the kernel charges a woken task from its wake-up and task-clock counts from the switch to it, "+
			"which parts them by a few µs a switch either way (up to 37 µs a switch seen beside busy loops); "+
			"more than %.0f µs a switch is more than that; CPU per op is the kernel's", warnSwitchGap/1e3)
	}
	return text + ": " + cause
}

// refText says what the reference of kind is.
func refText(kind refKind) string {
	switch kind {
	case refCgroup:
		return "cpu.stat usage_usec read right before and right after the counters at both edges, give or take a scheduler tick per CPU"
	case refAlone:
		return "the cpu.stat usage_usec of the cgroup it is alone in with its child processes, read right before and right after the counters at both edges"
	}
	return "its CPU clock and its child processes', read right before and right after the counters at both edges"
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

// beforeRead returns a WindowOptions.BeforeStart or BeforeEnd that reads
// the edge's first part into e, then calls next (when set: a profile's
// edge, which must be last before the counters).
func (s *Session) beforeRead(e *edgeRef, next func()) func() {
	return func() {
		s.before(e)
		if next != nil {
			next()
		}
	}
}
