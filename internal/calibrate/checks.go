package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/host/cpuset"

	"github.com/perfbench/perfbench/internal/host/hostinfo"
	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/perfevent"
)

// slope is the count of event i per iteration between a short and a long
// run, and what is left of the short run's count: the fixed cost of
// reading the counters.
func slope(short, long run, i int) (perIter, fixed float64) {
	a, b := float64(short.counts[i].Raw), float64(long.counts[i].Raw)
	perIter = (b - a) / float64(long.iters-short.iters)
	return perIter, a - perIter*float64(short.iters)
}

// instructions checks the instructions per iteration against the loop's.
func (c *calibration) instructions(short, long run, i int) {
	per, fixed := slope(short, long, i)
	dev := per/c.w.instructions - 1
	detail := fmt.Sprintf("%.4f per iteration in user space (instructions:u), expected %s (%+.2f%%): the slope between "+
		"runs of %d and %d iterations (%d and %d instructions), less a fixed %.0f of reading the counters",
		per, fmtNum(c.w.instructions), 100*dev, short.iters, long.iters, short.counts[i].Raw, long.counts[i].Raw, fixed)
	if math.Abs(dev) <= instructionsTolerance {
		c.add("instructions", hostinfo.OK, detail, "", "")
		return
	}
	c.add("instructions", hostinfo.Fail, detail+c.vmNote(),
		"instructions per query will be off by as much: measure on bare metal, or on a CPU whose PMU counts this loop right",
		fmt.Sprintf("instructions per iteration %.3f where the loop retires %s", per, fmtNum(c.w.instructions)))
}

// cycles checks the cycles per iteration against the ADD chain: the loop
// cannot run faster than one dependent ADD per cycle, so fewer cycles than
// the chain means cycles are lost; more means the core was slowed (a busy
// sibling hyperthread) or cycles are added.
func (c *calibration) cycles(short, long run, i int) {
	per, _ := slope(short, long, i)
	dev := per/c.w.cycles - 1
	detail := fmt.Sprintf("%.3f per iteration, expected %s (%+.2f%%): the loop's chain of %d dependent ADDs at 1 cycle each",
		per, fmtNum(c.w.cycles), 100*dev, c.w.adds)
	switch {
	case math.Abs(dev) <= cyclesTolerance:
		c.add("cycles", hostinfo.OK, detail, "", "")
	case dev < 0:
		c.add("cycles", hostinfo.Fail, detail+": fewer cycles than the dependency chain needs, so cycles are lost"+c.vmNote(),
			"cycles and IPC per query will be off: measure on bare metal",
			fmt.Sprintf("cycles per iteration %.2f, below the %s the ADD chain needs", per, fmtNum(c.w.cycles)))
	default:
		c.add("cycles", hostinfo.Warn, detail+": the chain ran slower than 1 ADD per cycle",
			"calibrate on an idle machine (a busy sibling hyperthread slows the chain); if it persists, the PMU adds cycles",
			fmt.Sprintf("cycles per iteration %.2f where the ADD chain takes %s", per, fmtNum(c.w.cycles)))
	}
}

// clocks are the indices of the clock events of a run, -1 for those not
// counted.
type clocks struct {
	cycles, taskClock, tsc, aperf, mperf int
}

// governorFix is what steadies the clock.
const governorFix = "for steady time-per-query numbers fix the clock: cpupower frequency-set -g performance, and turn " +
	"turbo off (echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo, or echo 0 > /sys/devices/system/cpu/cpufreq/boost); counts per query are not affected"

// clock checks cycles per second of CPU time in the long run against the
// core's clock: APERF/MPERF × the TSC rate where the msr PMU has them, else
// the cpufreq driver's frequency sampled at the edges of the runs, else
// the TSC rate.
func (c *calibration) clock(long run, clk clocks, samples []sample) {
	ns := float64(long.counts[clk.taskClock].Raw)
	ghz := float64(long.counts[clk.cycles].Raw) / ns
	raw := func(i int) float64 { return float64(long.counts[i].Raw) }
	have := func(i int) bool { return i >= 0 && long.counts[i].Raw > 0 }
	var khz []float64
	for _, s := range samples {
		if s.hasKHz {
			khz = append(khz, s.khz)
		}
	}
	switch {
	case have(clk.aperf) && have(clk.mperf) && have(clk.tsc):
		tsc, ratio := raw(clk.tsc)/ns, raw(clk.aperf)/raw(clk.mperf)
		core := tsc * ratio
		dev := ghz/core - 1
		detail := fmt.Sprintf("cycles ran at %.3f GHz of CPU time; the core's clock, from msr/aperf/ / msr/mperf/ × the TSC "+
			"rate (%.4f × %.3f GHz), was %.3f GHz (%+.2f%%)",
			ghz, ratio, tsc, core, 100*dev)
		switch {
		case math.Abs(dev) > clockTolerance:
			c.add("frequency", hostinfo.Fail, detail+": cycles do not follow the core's clock"+c.vmNote(),
				"cycles and IPC per query will be off: measure on bare metal",
				fmt.Sprintf("cycles are %+.1f%% off the core's clock (APERF)", 100*dev))
		case math.Abs(ratio-1) > clockTolerance:
			c.add("frequency", hostinfo.Warn, detail+fmt.Sprintf("; the core ran at %.0f%% of its nominal (TSC) clock: turbo or power saving", 100*ratio),
				governorFix, fmt.Sprintf("frequency scaling (the core ran at %.0f%% of its nominal clock)", 100*ratio))
		default:
			c.add("frequency", hostinfo.OK, detail+"; the core ran at its nominal clock", "", "")
		}
	case len(khz) > 0:
		lo, hi := slices.Min(khz), slices.Max(khz)
		var mean float64
		for _, k := range khz {
			mean += k / float64(len(khz))
		}
		dev := ghz/(mean/1e6) - 1
		var mhz []string
		for _, k := range khz {
			mhz = append(mhz, strconv.FormatFloat(k/1e3, 'f', 0, 64))
		}
		detail := fmt.Sprintf("cycles ran at %.3f GHz of CPU time; cpufreq gave %s MHz at the edges of the runs (mean %.3f GHz, %+.2f%%)",
			ghz, strings.Join(mhz, ", "), mean/1e6, 100*dev)
		switch {
		case math.Abs(dev) > cpufreqTolerance:
			c.add("frequency", hostinfo.Warn, detail+": cycles do not follow the frequency cpufreq reports",
				"some cpufreq drivers report the requested rather than the actual frequency (acpi-cpufreq with turbo); if yours "+
					"does not, the PMU miscounts cycles: measure on bare metal",
				fmt.Sprintf("cycles per second %+.0f%% off cpufreq's frequency", 100*dev))
		case (hi-lo)/mean > cpufreqTolerance:
			c.add("frequency", hostinfo.Warn, detail+": the frequency changed during the runs",
				governorFix, fmt.Sprintf("frequency scaling (cpufreq read %.0f to %.0f MHz)", lo/1e3, hi/1e3))
		default:
			c.add("frequency", hostinfo.OK, detail, "", "")
		}
	case have(clk.tsc):
		tsc := raw(clk.tsc) / ns
		dev := ghz/tsc - 1
		detail := fmt.Sprintf("cycles ran at %.3f GHz of CPU time; the TSC (msr/tsc/) at %.3f GHz (%+.2f%%); no msr/aperf/ or "+
			"cpufreq here to tell the core's own clock", ghz, tsc, 100*dev)
		if math.Abs(dev) <= clockTolerance {
			c.add("frequency", hostinfo.OK, detail+": the core ran at its nominal (TSC) clock", "", "")
			return
		}
		c.add("frequency", hostinfo.Warn, detail+": turbo, power saving, or cycles miscounted",
			governorFix+"; then calibrate again: cycles should follow the TSC",
			fmt.Sprintf("cycles per second %+.0f%% off the TSC rate", 100*dev))
	default:
		c.add("frequency", hostinfo.Warn, fmt.Sprintf("not checked: no msr/tsc/ and no cpufreq to compare with the %.3f GHz cycles ran at", ghz),
			"", "the clock could not be checked")
	}
}

// taskClock checks task-clock over both runs against the thread's CPU time
// in /proc: schedstat's run time (ns) and stat's utime+stime (clock ticks),
// each within 2%, stat give or take its rounding.
func (c *calibration) taskClock(short, long run, i int) {
	tc := float64(short.counts[i].Raw + long.counts[i].Raw)
	t0, t1 := short.cpu[0], long.cpu[1]
	stat := float64((t1.ticks - t0.ticks) * t1.tickNs)
	devStat := stat/tc - 1
	detail := fmt.Sprintf("%.4f s on the calibration thread; /proc/self/task/%d/", tc/1e9, c.tid())
	// utime and stime are each rounded down to a tick at both edges:
	// stat is allowed its 2 ticks of rounding on top of the tolerance.
	statOK := math.Abs(stat-tc) <= cpuTimeTolerance*tc+float64(2*t1.tickNs)
	ok, worst, worstDev := statOK, "stat", devStat
	if t0.hasSched && t1.hasSched {
		sched := float64(t1.sched - t0.sched)
		devSched := sched/tc - 1
		detail += fmt.Sprintf("schedstat run time %.4f s (%+.2f%%, ns resolution), stat utime+stime %.2f s (%+.2f%%, %d ms ticks)",
			sched/1e9, 100*devSched, stat/1e9, 100*devStat, t1.tickNs/1e6)
		if math.Abs(devSched) > cpuTimeTolerance {
			ok, worst, worstDev = false, "schedstat", devSched
		}
	} else {
		detail += fmt.Sprintf("stat utime+stime %.2f s (%+.2f%%, %d ms ticks; no schedstat in this kernel)", stat/1e9, 100*devStat, t1.tickNs/1e6)
	}
	if ok {
		c.add("task-clock", hostinfo.OK, detail+fmt.Sprintf(": within %.0f%% (stat: and its 2 ticks of rounding)", 100*cpuTimeTolerance), "", "")
		return
	}
	fix := "CPU time per query from task-clock will not match the kernel's accounting: report it with the kernel version"
	if n, busy := busyCPU(short, long); busy {
		detail += fmt.Sprintf("; the calibration thread was switched out %d times (the CPU was busy)", n)
		fix = "calibrate again with nothing else running; if they still differ, " + fix
	}
	c.add("task-clock", hostinfo.Fail, detail+fmt.Sprintf(": more than %.0f%% apart", 100*cpuTimeTolerance), fix,
		fmt.Sprintf("task-clock and the thread's CPU time in /proc (%s) are %.1f%% apart", worst, 100*math.Abs(worstDev)))
}

// busySwitches is how many context switches per second of the runs mean
// that the calibration thread shared its CPU: alone, it is switched out a
// few times per second (under 10 in 1.25 s here); sharing a CPU, thousands.
// On a shared CPU task-clock was seen 19% above schedstat's run time (6229
// switches in 1.2 s, a 2-vCPU VM running other tests), for reasons not yet
// known: the comparison only means something on a quiet CPU.
const busySwitches = 100

// busyCPU returns the switches of the calibration thread over both runs
// and whether they were more than busySwitches per second of its CPU time.
func busyCPU(short, long run) (int64, bool) {
	t0, t1 := short.cpu[0], long.cpu[1]
	if !t0.hasSwitches || !t1.hasSwitches {
		return 0, false
	}
	n := int64(t1.switches - t0.switches)
	secs := float64((t1.ticks-t0.ticks)*t1.tickNs) / 1e9
	return n, float64(n) > busySwitches*max(secs, 0.1)
}

// switchesSlack is how far context-switches and /proc's count may be
// apart: both count every switch away from the thread, but the counters
// and /proc are read one after the other at each edge of the runs, and
// threadTime yields the CPU in between.
const switchesSlack = 2

// switches checks context-switches over both runs against the switches
// /proc/PID/task/TID/status counts for the thread.
func (c *calibration) switches(short, long run, i int) {
	t0, t1 := short.cpu[0], long.cpu[1]
	if !t0.hasSwitches || !t1.hasSwitches {
		return
	}
	cs, proc := int64(short.counts[i].Raw+long.counts[i].Raw), int64(t1.switches-t0.switches)
	detail := fmt.Sprintf("%d on the calibration thread; /proc/self/task/%d/status voluntary+nonvoluntary %d", cs, c.tid(), proc)
	// A thread switched out thousands of times is also switched out
	// between the reads at an edge now and then: one more per thousand.
	slack := switchesSlack + proc/1000
	if d := cs - proc; d >= -slack && d <= slack {
		c.add("context-switches", hostinfo.OK, fmt.Sprintf("%s: within %d", detail, slack), "", "")
		return
	}
	// As for task-clock: on a CPU shared with other work the edges' reads
	// are interleaved with more switches (seen: 1025 against 1029 with
	// the calibration thread switched out 1029 times in 1.3 s).
	fix := "context switches per query from perfbench will not match the kernel's accounting: report it with the kernel version"
	if n, busy := busyCPU(short, long); busy {
		detail += fmt.Sprintf("; the calibration thread was switched out %d times (the CPU was busy)", n)
		fix = "calibrate again with nothing else running; if they still differ, " + fix
	}
	c.add("context-switches", hostinfo.Fail, fmt.Sprintf("%s: more than %d apart", detail, slack), fix,
		fmt.Sprintf("context-switches %d where /proc counts %d", cs, proc))
}

func (c *calibration) tid() int {
	tid, _ := c.m.where()
	return tid
}

// fullGroup opens one group as large as the PMU's counter budget on the
// calibration thread, runs the loop, and checks that every member counted
// all the time (time_running == time_enabled).
func (c *calibration) fullGroup(pmu *perfevent.PMU) error {
	l, desc, err := groupList(pmu, c.sys)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%d events at once (%s)", len(l.Events), desc)
	mt, err := c.m.count(l)
	if err != nil {
		c.add("counter group", hostinfo.Fail, what+": "+err.Error(), "see perfbench doctor", "a full group does not open")
		return nil
	}
	defer mt.close()
	n := c.iterations(groupRun)
	s0, err := mt.read()
	if err != nil {
		return err
	}
	c.m.spin(n)
	s1, err := mt.read()
	if err != nil {
		return err
	}
	if bad := mt.unsupported(); len(bad) > 0 {
		var why []string
		for _, e := range l.Events {
			if r, ok := bad[e.Name]; ok && !slices.Contains(why, r) {
				why = append(why, r)
			}
		}
		c.add("counter group", hostinfo.Fail, what+": the kernel refused them as one group: "+strings.Join(why, "; "),
			"perfbench's groups are sized to this budget: check it with perfbench doctor", "a group of the PMU's full budget does not open")
		return nil
	}
	worst, branches := 1.0, []string{}
	var state perfevent.Status = perfevent.StatusCounted
	for i, e := range l.Events {
		d, _ := s1[i].Sub(s0[i])
		if st := d.Status(); st != perfevent.StatusCounted {
			worst, state = min(worst, d.Fraction()), min(state, st)
		}
		if e.Name == "branches" {
			branches = append(branches, fmt.Sprintf("%.3f", float64(d.Raw)/float64(n)))
		}
	}
	if state == perfevent.StatusCounted {
		detail := what + " counted all the time (time_running = time_enabled)"
		if len(branches) > 0 {
			detail += fmt.Sprintf("; branches per iteration %s (the loop takes %s)", strings.Join(branches, ", "), fmtNum(c.w.branches))
		}
		c.add("counter group", hostinfo.OK, detail, "", "")
		return nil
	}
	why, fix := c.contention()
	c.add("counter group", hostinfo.Fail, fmt.Sprintf("%s %s: counted %.1f%% of the time: %s", what, notCounting(state), 100*worst, why), fix,
		fmt.Sprintf("a group of the PMU's full budget was %s (%s)", notCounting(state), why))
	return nil
}

// groupList is one group that fills the core PMU's counters: cycles and
// instructions (on Intel's fixed counters when there are, else on
// general-purpose ones) and branches on every other general-purpose
// counter. The same event fills them so that no event's counter
// constraints make the group fail to fit where the budget would allow it;
// perf's syntax names an event once, so the copies of branches are added
// to the parsed list.
func groupList(pmu *perfevent.PMU, sys *perfevent.System) (l perfevent.List, desc string, err error) {
	ct := pmu.Counters
	generic, fixed := ct.Generic, ct.Fixed
	budget := fmt.Sprintf("the %d general-purpose and %d fixed counters of %s (%s)", generic, fixed, pmu.Name, ct.Source)
	if !ct.Known || generic <= 0 {
		generic, fixed = perfevent.DefaultBudget, 0
		budget = fmt.Sprintf("%s's counter budget is unknown: %d, the size perfbench gives groups then", pmu.Name, generic)
	}
	copies := generic
	if fixed < 2 {
		copies = max(generic-2, 0)
	}
	const spec = "cycles,instructions,branches"
	if l, err = perfevent.Parse(spec, sys); err != nil {
		return l, "", fmt.Errorf("calibrate: parse %s: %w", spec, err)
	}
	branches := l.Events[2]
	l.Events, l.Groups = l.Events[:2], [][]int{{0, 1}}
	for range copies {
		l.Groups[0] = append(l.Groups[0], len(l.Events))
		l.Events = append(l.Events, branches)
	}
	return l, fmt.Sprintf("cycles, instructions and %d × branches: %s", copies, budget), nil
}

// notCounting says what a status other than counted means for a group:
// "multiplexed" or "never counted".
func notCounting(st perfevent.Status) string {
	if st == perfevent.StatusScaled {
		return "multiplexed"
	}
	return "never counted"
}

// contention says why counters were not all available, and the fix.
func (c *calibration) contention() (why, fix string) {
	h := c.host
	switch {
	case h.NMIWatchdog != nil && *h.NMIWatchdog != 0:
		return "the NMI watchdog holds a hardware counter (kernel.nmi_watchdog = 1)",
			"sysctl kernel.nmi_watchdog=0 while benchmarking (perf stat asks the same)"
	case h.Virtualization != "" && h.Virtualization != "none":
		return fmt.Sprintf("this is a VM (%s): its virtual PMU may offer fewer counters than the CPU reports, or lose them to the host", h.Virtualization),
			"measure on bare metal, or give the VM all of the host's counters"
	}
	return "something else holds counters: another perf stat or record, a monitoring agent",
		"stop other users of the PMU while benchmarking (ls -l /proc/*/fd | grep perf_event lists them)"
}

// vmNote is ": this is a VM (kvm): ..." in a VM, else "".
func (c *calibration) vmNote() string {
	if v := c.host.Virtualization; v != "" && v != "none" {
		return fmt.Sprintf(" (this is a VM, %s: its virtual PMU may drop or add events)", v)
	}
	return ""
}

// defaultEvents checks that each hardware event of perfbench's default set
// opens.
func (c *calibration) defaultEvents() {
	var ok, bad, missing []string
	for _, name := range measure.HardwareEvents {
		l, err := perfevent.Parse(name, c.sys)
		if err == nil {
			err = c.m.probe(l.Events[0])
		}
		if err != nil {
			bad, missing = append(bad, err.Error()), append(missing, name)
			continue
		}
		ok = append(ok, name)
	}
	switch {
	case len(bad) == 0:
		c.add("default events", hostinfo.OK, fmt.Sprintf("all %d hardware events of perfbench's default set open: %s", len(ok), strings.Join(ok, ", ")), "", "")
	case slices.Contains(missing, evCycles) || slices.Contains(missing, evInstructions):
		c.add("default events", hostinfo.Fail, strings.Join(bad, "; "), "see perfbench doctor", "cycles or instructions do not open")
	default:
		c.add("default events", hostinfo.Warn, fmt.Sprintf("%d of %d open (%s); %s", len(ok), len(measure.HardwareEvents),
			strings.Join(ok, ", "), strings.Join(bad, "; ")),
			"perfbench's tables show the others as n/a", "the PMU does not count "+strings.Join(missing, ", "))
	}
}

// report concludes.
func (c *calibration) report(hw bool) hostinfo.Report {
	r := hostinfo.Report{Usable: len(c.fails) == 0, Checks: c.checks}
	switch {
	case len(c.fails) > 0:
		r.Conclusion = "counts here cannot be trusted: " + strings.Join(c.fails, "; ")
	case !hw:
		r.Conclusion = "software counts here can be trusted (task-clock agrees with /proc); there is no hardware PMU, so no hardware counts to trust"
	case len(c.warns) > 0:
		r.Conclusion = "counts here can be trusted, with caveats: " + strings.Join(c.warns, "; ")
	default:
		r.Conclusion = "counts here can be trusted"
	}
	return r
}

// corePMU is the core PMU of CPU cpu.
func corePMU(sys *perfevent.System, cpu int) *perfevent.PMU {
	cores := sys.CorePMUs()
	for _, p := range cores {
		if slices.Contains(cpuList(p.CPUs), cpu) {
			return p
		}
	}
	return cores[0]
}

func pmuText(p *perfevent.PMU) string {
	if !p.Counters.Known {
		return fmt.Sprintf("%s (type %d): counter budget unknown", p.Name, p.Type)
	}
	return fmt.Sprintf("%s (type %d): %s counters per CPU (%s)", p.Name, p.Type, p.Counters, p.Counters.Source)
}

// pickCPU chooses the CPU to calibrate on among those allowed (sorted): on
// a hybrid CPU the last performance core (cpu_core), else the last one
// (CPU 0 takes more interrupts).
func pickCPU(allowed []int, sys *perfevent.System) int {
	if p := sys.PMU("cpu_core"); p != nil && sys.Hybrid() {
		cores := cpuList(p.CPUs)
		for i := len(allowed) - 1; i >= 0; i-- {
			if slices.Contains(cores, allowed[i]) {
				return allowed[i]
			}
		}
	}
	return allowed[len(allowed)-1]
}

// cpuList is the CPUs of a sysfs CPU list ("0-3,8"); none when malformed.
func cpuList(s string) cpuset.Set {
	set, err := cpuset.Parse(s)
	if err != nil {
		return nil
	}
	return set
}

// fmtNum prints 11 as "11" and 8.5 as "8.5".
func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// parseSchedstat returns the first field of /proc/PID/task/TID/schedstat,
// the thread's run time in ns.
func parseSchedstat(b []byte) (uint64, bool) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	return n, err == nil
}
