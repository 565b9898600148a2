// Package calibrate checks perfbench's counters against a workload whose
// cost is known by construction: perfbench doctor --calibrate.
//
// The workload is a loop in assembly (workload_amd64.s, workload_arm64.s):
// a chain of 8 dependent ADDs plus the loop's own instructions, so each
// iteration retires a fixed number of instructions, one branch, and takes 8
// cycles. It runs on one thread locked to one CPU, and the counters are
// opened on that thread. On a machine with a hardware PMU the checks are:
//
//   - instructions per iteration (instructions:u, user space only) within
//     1% of the known count: the slope between a short and a long run, so
//     the fixed cost of reading the counters drops out;
//   - cycles per iteration against the chain's length, and cycles per
//     second of CPU time against the clock: APERF/MPERF × the TSC rate
//     (msr/aperf/, msr/mperf/, msr/tsc/) where the msr PMU has them, else
//     the cpufreq driver's frequency, else the TSC rate alone;
//   - a group as large as the PMU's counter budget counts all the time
//     (time_running == time_enabled): nothing else (the NMI watchdog, a
//     VM's smaller virtual PMU, another perf user) holds a counter;
//   - each hardware event of perfbench's default set opens.
//
// On every machine, with or without a PMU, task-clock on the thread is
// checked against the thread's CPU time in /proc (schedstat's run time in
// ns, and stat's utime+stime in clock ticks) within 2%, and
// context-switches against the switches /proc/PID/task/TID/status counts.
package calibrate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/hostinfo"
	"github.com/perfbench/perfbench/perfevent"
)

// Tolerances of the checks.
const (
	// instructionsTolerance bounds the instructions per iteration: the
	// loop retires a fixed number in user space, so a correct counter is
	// off by the rounding of the slope only.
	instructionsTolerance = 0.01
	// cyclesTolerance bounds the cycles per iteration against the ADD
	// chain's length: a sibling hyperthread competing for the core's ALUs
	// may delay the chain a little.
	cyclesTolerance = 0.05
	// clockTolerance bounds cycles per second against a measured clock
	// (APERF/MPERF × TSC, or the TSC when the core ran at its rate).
	clockTolerance = 0.02
	// cpufreqTolerance bounds cycles per second against the cpufreq
	// driver's frequency, which is sampled and, with some drivers, the
	// requested frequency rather than the actual one.
	cpufreqTolerance = 0.05
	// cpuTimeTolerance bounds task-clock against /proc.
	cpuTimeTolerance = 0.02
)

// Run lengths, in CPU time of the calibration thread. The task-clock check
// covers the short and the long run together: 1.25 s, against which stat's
// rounding to 10 ms clock ticks is small.
const (
	shortRun = 250 * time.Millisecond
	longRun  = time.Second
	groupRun = 250 * time.Millisecond
	// paceMin is the least CPU time of the run that measures how long
	// an iteration takes.
	paceMin = 40 * time.Millisecond
)

// errUnsupported is returned where perfbench has no calibration loop (an
// architecture other than amd64 and arm64) or no perf events (not Linux).
var errUnsupported = errors.New("calibration is not supported here")

// Options tune Run. The zero value calibrates this machine.
type Options struct {
	// Root is the directory /proc and /sys are read under; empty means
	// "/".
	Root string
}

// Run runs the calibration workload on a thread of its own, pinned to one
// CPU, and returns a verdict per check and overall: Report.Usable is false
// when a check failed, and Report.Conclusion says whether counts here can
// be trusted, or why not. It returns an error wrapping ErrUnsupported on an
// architecture without a calibration loop, and errors of the machine (a
// counter that cannot be read) as they are.
func Run(ctx context.Context, h *hostinfo.Host, opt Options) (hostinfo.Report, error) {
	if !loop.supported {
		return hostinfo.Report{}, fmt.Errorf("calibrate on %s: perfbench has a calibration loop for amd64 and arm64 only: %w", runtime.GOARCH, errUnsupported)
	}
	if h.System == nil {
		return hostinfo.Report{}, fmt.Errorf("calibrate: no perf events here (%v): %w", h.SystemErr, errUnsupported)
	}
	root := opt.Root
	if root == "" {
		root = "/"
	}
	type result struct {
		rep hostinfo.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		// The thread is unlocked only once its CPUs are given back: a
		// thread still pinned to one CPU must not go back to the
		// runtime's pool, so it ends with this goroutine (or, if it is
		// the process's main thread, which the runtime never ends, it
		// waits there for good).
		runtime.LockOSThread()
		rep, free, err := calibrateThread(ctx, h, root)
		if free {
			runtime.UnlockOSThread()
		}
		done <- result{rep, err}
	}()
	r := <-done
	return r.rep, r.err
}

// calibrateThread calibrates on the calling thread, which must be locked
// to its goroutine, and says whether the thread may be unlocked after:
// only once it has its CPUs back.
func calibrateThread(ctx context.Context, h *hostinfo.Host, root string) (rep hostinfo.Report, free bool, err error) {
	m, err := newMachine(h.System, root)
	if err != nil {
		return hostinfo.Report{}, true, err
	}
	rep, err = calibrate(ctx, m, h, loop)
	return rep, releaseThread(m) == nil, err
}

// machine is what a calibration uses: counters on the calibration thread,
// the loop, and /proc and /sys. The real one (machine_linux.go) is bound to
// a thread locked to one CPU; tests fake it.
type machine interface {
	// where names the calibration thread and the CPU it is pinned to.
	where() (tid, cpu int)
	// count opens the events of l on the calibration thread (l.Groups
	// as groups), counting.
	count(l perfevent.List) (meter, error)
	// spin runs the loop n times on the calibration thread.
	spin(n uint64)
	// threadTime is the calibration thread's CPU time per /proc.
	threadTime() (cpuTime, error)
	// cpuFreq is the calibration CPU's frequency per the cpufreq driver,
	// in kHz; ok is false without cpufreq.
	cpuFreq() (khz float64, ok bool)
	// probe opens e on this process and closes it (System.Probe).
	probe(e perfevent.Event) error
}

// meter is a set of counters open on the calibration thread.
type meter interface {
	// read returns the calibration thread's counts, one per event of the
	// list counted, in its order.
	read() ([]perfevent.Count, error)
	// unsupported maps the name of each event that did not open to why.
	unsupported() map[string]string
	close() error
}

// cpuTime is a thread's CPU time, and its context switches, as /proc gives
// them.
type cpuTime struct {
	// sched is the first field of /proc/PID/task/TID/schedstat: the run
	// time in ns; hasSched is false when the kernel has no schedstat.
	sched    uint64
	hasSched bool
	// ticks is utime+stime from /proc/PID/task/TID/stat, in clock ticks
	// of tickNs each.
	ticks  uint64
	tickNs uint64
	// switches is voluntary_ctxt_switches + nonvoluntary_ctxt_switches
	// of /proc/PID/task/TID/status; hasSwitches is false without them.
	switches    uint64
	hasSwitches bool
}

// ns is the most precise CPU time there is, in ns.
func (t cpuTime) ns() float64 {
	if t.hasSched {
		return float64(t.sched)
	}
	return float64(t.ticks * t.tickNs)
}

// calibration is one run of the checks.
type calibration struct {
	ctx    context.Context
	m      machine
	host   *hostinfo.Host
	sys    *perfevent.System
	w      workload
	checks []hostinfo.Check
	// whys are the short reasons of warn and fail lines, for the
	// conclusion.
	fails, warns []string
	nsPerIter    float64
}

func (c *calibration) add(name string, v hostinfo.Verdict, detail, fix, why string) {
	c.checks = append(c.checks, hostinfo.Check{Name: name, Verdict: v, Detail: detail, Fix: fix})
	switch v {
	case hostinfo.Fail:
		c.fails = append(c.fails, why)
	case hostinfo.Warn:
		c.warns = append(c.warns, why)
	}
}

// calibrate runs every check that can run on m and concludes.
func calibrate(ctx context.Context, m machine, h *hostinfo.Host, w workload) (hostinfo.Report, error) {
	c := &calibration{ctx: ctx, m: m, host: h, sys: h.System, w: w}
	tid, cpu := m.where()
	if err := c.pace(); err != nil {
		return hostinfo.Report{}, err
	}
	c.add("workload", hostinfo.OK, fmt.Sprintf("%s, on thread %d pinned to CPU %d (%.2f ns per iteration)", w.describe(), tid, cpu, c.nsPerIter), "", "")
	hw := c.sys.HasHardwarePMU()
	var pmu *perfevent.PMU
	if hw {
		pmu = corePMU(c.sys, cpu)
		c.add("hardware PMU", hostinfo.OK, pmuText(pmu), "", "")
	} else {
		c.noPMU()
	}
	if err := c.runs(hw); err != nil {
		return hostinfo.Report{}, err
	}
	if hw {
		if err := c.fullGroup(pmu); err != nil {
			return hostinfo.Report{}, err
		}
		c.defaultEvents()
	}
	return c.report(hw), nil
}

// pace measures how long an iteration takes, to size the runs.
func (c *calibration) pace() error {
	for n := uint64(1 << 22); ; n *= 2 {
		t0, err := c.m.threadTime()
		if err != nil {
			return err
		}
		c.m.spin(n)
		t1, err := c.m.threadTime()
		if err != nil {
			return err
		}
		if d := t1.ns() - t0.ns(); d >= float64(paceMin) || n >= 1<<36 {
			c.nsPerIter = max(d, 1) / float64(n)
			return nil
		}
	}
}

// iterations is how many iterations take about d of CPU time.
func (c *calibration) iterations(d time.Duration) uint64 {
	return max(uint64(float64(d)/c.nsPerIter), 1<<20)
}

// noPMU says that hardware events cannot be opened, with the kernel's
// reason.
func (c *calibration) noPMU() {
	var why []string
	for _, name := range []string{"cycles", "instructions"} {
		l, err := perfevent.Parse(name, c.sys)
		if err == nil {
			err = c.m.probe(l.Events[0])
		}
		if err != nil {
			why = append(why, err.Error())
		}
	}
	detail := "none: cycles and instructions cannot be opened"
	if len(why) > 0 {
		detail += " (" + strings.Join(why, "; ") + ")"
	}
	detail += "; the instructions, cycles, frequency and counter-group checks cannot run here, only task-clock and context-switches against /proc"
	c.add("hardware PMU", hostinfo.Warn, detail,
		"calibrate on bare metal, or in a VM with its virtual PMU enabled (KVM/QEMU: -cpu host with pmu=on)", "no hardware PMU")
}

// sample is what is read at one edge of a run: the counters, the thread's
// CPU time and the clock.
type sample struct {
	counts []perfevent.Count
	cpu    cpuTime
	khz    float64
	hasKHz bool
}

// take reads the counters, then /proc, then cpufreq: the same reads at
// every edge, so that the fixed cost of reading is the same in every run.
func (c *calibration) take(mt meter) (sample, error) {
	var s sample
	var err error
	if s.counts, err = mt.read(); err != nil {
		return s, err
	}
	if s.cpu, err = c.m.threadTime(); err != nil {
		return s, err
	}
	s.khz, s.hasKHz = c.m.cpuFreq()
	return s, nil
}

// run is the counts of one run of the loop: the difference of two samples.
type run struct {
	iters  uint64
	counts []perfevent.Count
	cpu    [2]cpuTime // at the start and the end
}

func between(a, b sample, iters uint64) run {
	r := run{iters: iters, counts: make([]perfevent.Count, len(b.counts)), cpu: [2]cpuTime{a.cpu, b.cpu}}
	for i := range b.counts {
		r.counts[i], _ = b.counts[i].Sub(a.counts[i])
	}
	return r
}

// events of the runs, by name.
const (
	evCycles = "cycles"
	// evInstructions counts user space only: the loop's count is known,
	// the kernel's (interrupts taken during the loop, the reads of the
	// counters and of /proc) is not.
	evInstructions = "instructions:u"
	evTaskClock    = "task-clock"
	evSwitches     = "context-switches"
	evTSC          = "msr/tsc/"
	evAPERF        = "msr/aperf/"
	evMPERF        = "msr/mperf/"
)

// runs counts a short and a long run of the loop: task-clock and
// context-switches always, cycles and instructions (one group) with a PMU,
// and the msr PMU's clock counters where it has them. It checks
// instructions, cycles and the clock (with a PMU), and task-clock and
// context-switches against /proc.
func (c *calibration) runs(hw bool) error {
	names := []string{evTaskClock, evSwitches}
	spec := evTaskClock + "," + evSwitches
	if hw {
		names = []string{evCycles, evInstructions, evTaskClock, evSwitches}
		spec = "{" + evCycles + "," + evInstructions + "}," + spec
		if p := c.sys.PMU("msr"); p != nil {
			add := []string{"tsc"}
			if _, ok := p.Aliases["aperf"]; ok {
				if _, ok := p.Aliases["mperf"]; ok {
					add = append(add, "aperf", "mperf")
				}
			}
			for _, a := range add {
				if _, ok := p.Aliases[a]; ok {
					names = append(names, "msr/"+a+"/")
					spec += ",msr/" + a + "/"
				}
			}
		}
	}
	l, err := perfevent.Parse(spec, c.sys)
	if err != nil {
		return fmt.Errorf("calibrate: parse %s: %w", spec, err)
	}
	mt, err := c.m.count(l)
	if err != nil {
		if hw {
			c.add("counting", hostinfo.Fail, err.Error(), "see perfbench doctor", "the counters do not open")
			return nil
		}
		return fmt.Errorf("calibrate: %w", err)
	}
	defer mt.close()
	n1, n2 := c.iterations(shortRun), c.iterations(longRun)
	s0, err := c.take(mt)
	if err != nil {
		return err
	}
	c.m.spin(n1)
	s1, err := c.take(mt)
	if err != nil {
		return err
	}
	if err := c.ctx.Err(); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	c.m.spin(n2)
	s2, err := c.take(mt)
	if err != nil {
		return err
	}
	short, long := between(s0, s1, n1), between(s1, s2, n2)
	at := func(name string) int { return slices.Index(names, name) }
	if hw {
		bad := mt.unsupported()
		if why := bad[evCycles] + bad[evInstructions]; why != "" {
			c.add("counting", hostinfo.Fail, "cycles and instructions do not open on the calibration thread: "+why, "see "+
				"perfbench doctor", "cycles and instructions do not open")
		} else if c.counted("cycles and instructions", []int{at(evCycles), at(evInstructions)}, short, long) {
			c.instructions(short, long, at(evInstructions))
			c.cycles(short, long, at(evCycles))
			clk := clocks{cycles: at(evCycles), taskClock: at(evTaskClock), tsc: -1, aperf: -1, mperf: -1}
			for i, n := range names {
				if bad[n] != "" {
					continue
				}
				switch n {
				case evTSC:
					clk.tsc = i
				case evAPERF:
					clk.aperf = i
				case evMPERF:
					clk.mperf = i
				}
			}
			c.clock(long, clk, []sample{s0, s1, s2})
		}
	}
	c.taskClock(short, long, at(evTaskClock))
	c.switches(short, long, at(evSwitches))
	return nil
}

// counted checks that the events at idx counted all the time in every run,
// and says so when not: a {cycles,instructions} group on an idle PMU that
// multiplexes means something else holds its counters.
func (c *calibration) counted(what string, idx []int, runs ...run) bool {
	for _, r := range runs {
		for _, i := range idx {
			if st := r.counts[i].Status(); st != perfevent.StatusCounted {
				why, fix := c.contention()
				c.add("counting", hostinfo.Fail,
					fmt.Sprintf("%s were %s on the calibration thread (counted %.1f%% of the time): %s", what, notCounting(st), 100*r.counts[i].Fraction(), why),
					fix, what+" were "+notCounting(st))
				return false
			}
		}
	}
	return true
}
