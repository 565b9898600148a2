package hostinfo

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/perfevent"
)

// Verdict is the outcome of one doctor check.
type Verdict string

// Verdicts.
const (
	OK   Verdict = "ok"
	Warn Verdict = "warn" // perfbench works, with less or with a caveat
	Fail Verdict = "fail" // perfbench cannot count (at all, or the target)
)

// Check is one line of perfbench doctor.
type Check struct {
	Name    string  `json:"check"`
	Verdict Verdict `json:"verdict"`
	// Detail is what was found.
	Detail string `json:"detail"`
	// Fix says what to do about a warn or fail.
	Fix string `json:"fix,omitempty"`
}

// Report is the outcome of all checks.
type Report struct {
	// Usable is false when some check failed: perfbench cannot count.
	Usable bool    `json:"usable"`
	Checks []Check `json:"checks"`
	// Conclusion is the last line of the text: whether perfbench can count
	// here, or can count here but not the target process, and why.
	Conclusion string `json:"conclusion"`
}

// DoctorOptions narrows the checks to a real workload. The zero value checks
// the machine for this process.
type DoctorOptions struct {
	// Pid is the process to be measured (0: none given). Its threads size
	// the descriptor estimate and counters are test-opened on it.
	Pid int
	// Events is an event list as perfbench stat -e takes it; empty means
	// defaultEstimateEvents counters per thread for the estimate.
	Events string
	// Probe opens an event on pid (0: this process) and closes it; nil
	// means System.ProbePid. Tests fake it.
	Probe func(sys *perfevent.System, e perfevent.Event, pid int) error
}

// defaultEstimateEvents is the counters per thread assumed when no -e is
// given: a cycles/instructions group plus the usual cache, TLB and software
// events.
const defaultEstimateEvents = 8

// spareFDs is what perfbench needs besides counters (files, sockets, pipes).
const spareFDs = 64

// Doctor checks whether and how well perfbench can count here.
func Doctor(h *Host, opt DoctorOptions) Report {
	probe := opt.Probe
	if probe == nil {
		probe = func(sys *perfevent.System, e perfevent.Event, pid int) error { return sys.ProbePid(e, pid) }
	}
	sys, pv := h.System, h.Privileges
	var r Report
	r.Checks = append(r.Checks, kernelCheck(h), privilegesCheck(pv), paranoidCheck(h.Paranoid, pv))
	// Can anything be counted at all?
	var taskClock perfevent.Event
	if sys != nil {
		if l, err := perfevent.Parse("task-clock", sys); err == nil {
			taskClock = l.Events[0]
			r.Checks = append(r.Checks, countingCheck(probe(sys, taskClock, 0), pv))
		}
		r.Checks = append(r.Checks, pmuChecks(h, probe)...)
	}
	r.Checks = append(r.Checks,
		nmiWatchdogCheck(h.NMIWatchdog, sys != nil && sys.HasHardwarePMU()),
		virtualizationCheck(h),
		// Descriptors: one per thread per counter (each encoding of an event).
		fdCheck(h, opt, sys),
		tracefsCheck(h))

	// The target process and the user's events.
	var gone error // the target has exited or does not exist
	if opt.Pid > 0 {
		gone = procfs.New(h.Root).Proc(opt.Pid).Alive()
		if gone != nil {
			r.Checks = append(r.Checks, Check{Name: "target", Verdict: Fail, Detail: gone.Error(), Fix: "give the pid of a running process (pidof mariadbd mysqld)"})
		} else {
			r.Checks = append(r.Checks, targetCheck(h, opt.Pid, sys, taskClock, probe, pv))
		}
	}
	if opt.Events != "" {
		eo := opt
		if gone != nil {
			eo.Pid = 0 // test-opened on perfbench itself instead
		}
		r.Checks = append(r.Checks, eventsCheck(eo, sys, probe, pv))
	}
	r.Usable, r.Conclusion = conclude(r.Checks, opt.Pid, gone)
	return r
}

// conclude says whether perfbench can count here, given the checks and
// whether the target pid is gone.
func conclude(checks []Check, pid int, gone error) (usable bool, conclusion string) {
	failed := 0
	for _, c := range checks {
		if c.Verdict == Fail {
			failed++
		}
	}
	switch {
	case failed == 0:
		return true, "perfbench can count here"
	case failed == 1 && gone != nil:
		return false, fmt.Sprintf("perfbench can count here, but not pid %d: %v", pid, gone)
	}
	return false, "perfbench cannot count here"
}

// kernelCheck checks the kernel has perf events, and CAP_PERFMON.
func kernelCheck(h *Host) Check {
	if h.System == nil {
		return Check{Name: "kernel", Verdict: Fail, Detail: fmt.Sprintf("%s: no perf events (%v)", orUnknown(h.Kernel), h.SystemErr),
			Fix: "boot a kernel built with CONFIG_PERF_EVENTS and mount sysfs at /sys"}
	}
	if maj, min, ok := kernelVersion(h.Kernel); ok && (maj < 5 || maj == 5 && min < 8) {
		fix := "run as root (CAP_SYS_ADMIN), or use a 5.8+ kernel to grant CAP_PERFMON alone"
		if h.Privileges.EUID == 0 && h.Privileges.Known {
			fix = "nothing to do as root (CAP_SYS_ADMIN); to count without root, use a 5.8+ kernel and grant CAP_PERFMON alone"
		}
		return Check{Name: "kernel", Verdict: Warn, Detail: fmt.Sprintf("%s: perf events present; CAP_PERFMON needs 5.8 or later", h.Kernel),
			Fix: fix}
	}
	return Check{Name: "kernel", Verdict: OK, Detail: fmt.Sprintf("%s: perf events present", orUnknown(h.Kernel))}
}

// privilegesCheck checks which processes perfbench's privileges let it
// count.
func privilegesCheck(pv privileges) Check {
	var caps []string
	for _, c := range []struct {
		n    int
		name string
	}{{capPerfmon, "CAP_PERFMON"}, {capSysAdmin, "CAP_SYS_ADMIN"}, {capSysPtrace, "CAP_SYS_PTRACE"}} {
		if pv.Has(c.n) {
			caps = append(caps, c.name)
		}
	}
	who := "uid " + strconv.Itoa(pv.EUID)
	if pv.EUID == 0 {
		who = "root"
	}
	c := Check{Name: "privileges", Verdict: Warn}
	switch {
	case !pv.Known:
		c.Detail, c.Fix = "could not read /proc/self/status", "run as root to be sure perf_event_paranoid does not apply"
	case pv.CanPerfmon() && pv.Has(capSysPtrace):
		c.Verdict, c.Detail = OK, fmt.Sprintf("%s with %s: any process can be counted, perf_event_paranoid does not apply", who, strings.Join(caps, ", "))
	case pv.CanPerfmon():
		c.Detail = fmt.Sprintf("%s with %s but not CAP_SYS_PTRACE: only processes of the same user can be counted", who, strings.Join(caps, ", "))
		c.Fix = "grant CAP_SYS_PTRACE too (mysqld runs as another user): setcap cap_perfmon,cap_sys_ptrace=ep $(command -v perfbench)"
	case pv.EUID == 0:
		c.Detail, c.Fix = "root but without CAP_PERFMON or CAP_SYS_ADMIN (a restricted container?): perf_event_paranoid applies", rootFix
	default:
		c.Detail = who + " without CAP_PERFMON or CAP_SYS_ADMIN: perf_event_paranoid applies, and only processes of the same user can be counted"
		c.Fix = "run as root (sudo), or setcap cap_perfmon,cap_sys_ptrace=ep $(command -v perfbench)"
	}
	return c
}

// paranoidCheck checks what perf_event_paranoid (nil: missing) lets
// perfbench count with its privileges.
func paranoidCheck(p *int, pv privileges) Check {
	c := Check{Name: "perf_event_paranoid"}
	switch {
	case p == nil:
		c.Verdict, c.Detail, c.Fix = Fail, "/proc/sys/kernel/perf_event_paranoid is missing: the kernel has no perf events",
			"boot a kernel built with CONFIG_PERF_EVENTS"
	case pv.CanPerfmon():
		c.Verdict, c.Detail = OK, fmt.Sprintf("%d (%s); does not apply with CAP_PERFMON/CAP_SYS_ADMIN", *p, paranoidMeaning(*p))
	case *p <= 1:
		c.Verdict, c.Detail = OK, fmt.Sprintf("%d (%s)", *p, paranoidMeaning(*p))
	case *p == 2:
		c.Verdict, c.Detail = Warn, fmt.Sprintf("2 (%s): counts of an unprivileged perfbench miss the server's kernel time", paranoidMeaning(2))
		c.Fix = "sysctl kernel.perf_event_paranoid=1, or run as root"
	default:
		c.Verdict, c.Detail = Fail, fmt.Sprintf("%d (%s)", *p, paranoidMeaning(*p))
		c.Fix = "run as root, grant CAP_PERFMON, or sysctl kernel.perf_event_paranoid=1"
	}
	if c.Verdict != OK && p != nil && pv.EUID == 0 {
		// Root without the capabilities: running as root would not help.
		c.Fix = "sysctl kernel.perf_event_paranoid=1, or " + rootFix
	}
	return c
}

// countingCheck checks that task-clock opened on perfbench itself (err is
// the probe's).
func countingCheck(err error, pv privileges) Check {
	if err != nil {
		return Check{Name: "counting", Verdict: Fail, Detail: "task-clock does not open on perfbench itself: " + err.Error(), Fix: fixFor(err, pv)}
	}
	return Check{Name: "counting", Verdict: OK, Detail: "software counters open (task-clock on perfbench itself)"}
}

// nmiWatchdogCheck checks whether the NMI watchdog (nil: not present)
// holds a hardware counter.
func nmiWatchdogCheck(w *int, hasPMU bool) Check {
	c := Check{Name: "nmi_watchdog", Verdict: OK}
	switch {
	case w == nil:
		c.Detail = "not present"
	case *w == 0 && !hasPMU:
		c.Detail = "off"
	case *w == 0:
		c.Detail = "off: every hardware counter is free"
	case !hasPMU:
		c.Detail = "on, but there is no hardware PMU here for it to hold"
	default:
		c.Verdict, c.Detail = Warn, "on: it holds one hardware counter on every CPU, so one counter fewer is left for events and groups multiplex sooner"
		c.Fix = "sysctl kernel.nmi_watchdog=0 while measuring (set it back to 1 after)"
	}
	return c
}

// virtualizationCheck warns of counting under a hypervisor.
func virtualizationCheck(h *Host) Check {
	if h.Virtualization == "none" || h.Virtualization == "" {
		return Check{Name: "virtualization", Verdict: OK, Detail: "bare metal (" + h.VirtualizationDetail + ")" + containerNote(h)}
	}
	virt := h.Virtualization + containerNote(h)
	return Check{Name: "virtualization", Verdict: Warn,
		Detail: fmt.Sprintf("%s (%s): the PMU may be missing or partial, some hypervisors return zeros without an error (a "+
			"counter that reads 0 while instructions retired is suspect), and steal time adds noise", virt, h.VirtualizationDetail),
		Fix: "measure on bare metal for publishable hardware counts"}
}

// tracefsCheck checks tracepoints can be named.
func tracefsCheck(h *Host) Check {
	if h.TraceFS == "" {
		return Check{Name: "tracefs", Verdict: Warn, Detail: "not mounted: tracepoint events (sched:sched_switch, syscalls:...) cannot be named",
			Fix: "mount -t tracefs nodev /sys/kernel/tracing"}
	}
	n := ""
	if h.System != nil {
		if tps, err := h.System.Tracepoints(); err == nil {
			n = fmt.Sprintf(" (%d tracepoints)", len(tps))
		}
	}
	return Check{Name: "tracefs", Verdict: OK, Detail: "mounted at " + h.TraceFS + n}
}

// rootFix is the fix for a root perfbench that still lacks a privilege: it
// runs in a container or user namespace that withholds capabilities, where
// "run as root" would not help.
const rootFix = "perfbench runs as root but without CAP_PERFMON (or CAP_SYS_ADMIN) and CAP_SYS_PTRACE (a container or " +
	"user namespace?): grant them (docker run --cap-add PERFMON --cap-add SYS_PTRACE, or --privileged), or run perfbench on the host"

func containerNote(h *Host) string {
	if h.Container == "" {
		return ""
	}
	return ", in a " + h.Container + " container"
}

func orUnknown(s string) string {
	if s == "" {
		return "kernel version unknown"
	}
	return s
}

// kernelVersion reads major.minor from a release such as "6.1.0-18-amd64".
func kernelVersion(rel string) (int, int, bool) {
	f := strings.FieldsFunc(rel, func(r rune) bool { return r == '.' || r == '-' })
	if len(f) < 2 {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(f[0])
	min, err2 := strconv.Atoi(f[1])
	return maj, min, err1 == nil && err2 == nil
}

func paranoidMeaning(p int) string {
	switch {
	case p <= -1:
		return "no restrictions"
	case p == 0:
		return "unprivileged users may count kernel and user space, but not raw tracepoint data"
	case p == 1:
		return "unprivileged users may count kernel and user space of their own processes"
	case p == 2:
		return "unprivileged users may count user space only"
	}
	return "unprivileged users may not use perf events at all"
}

// fixFor turns an open error into advice.
func fixFor(err error, pv privileges) string {
	switch {
	case errors.Is(err, perfevent.ErrPermission) && pv.EUID == 0 && pv.Known:
		if pv.CanPerfmon() && pv.Has(capSysPtrace) {
			return "root with CAP_PERFMON and CAP_SYS_PTRACE was refused: a security module (SELinux, AppArmor, Yama " +
				"ptrace_scope=3) or another PID namespace denies it; check the audit log"
		}
		return rootFix
	case errors.Is(err, perfevent.ErrPermission):
		return "run as root or grant CAP_PERFMON (and CAP_SYS_PTRACE for other users' processes)"
	case errors.Is(err, perfevent.ErrNotSupported):
		return "boot a kernel with perf events"
	}
	return ""
}

// pmuChecks describes the PMUs: the core PMUs with their counter budgets,
// or, without one, what still works and what perfbench loses.
func pmuChecks(h *Host, probe func(*perfevent.System, perfevent.Event, int) error) []Check {
	sys := h.System
	var out []Check
	cores := sys.CorePMUs()
	if len(cores) == 0 {
		works := []string{"software events (task-clock, context-switches, cpu-migrations, page-faults)"}
		if p := sys.PMU("msr"); p != nil {
			if l, err := perfevent.Parse("msr/tsc/", sys); err == nil && probe(sys, l.Events[0], 0) == nil {
				works = append(works, "msr/tsc/")
			}
		}
		if h.TraceFS != "" || sys.TraceFS != "" {
			works = append(works, "tracepoints")
		}
		if sys.PMU("uprobe") != nil {
			works = append(works, "uprobes")
		}
		out = append(out, Check{
			Name:    "hardware PMU",
			Verdict: Warn,
			Detail: "none: this machine has no hardware PMU, so cycles, instructions, cache, TLB and branch events cannot be counted (they fail with ENOENT). " +
				"Still works: " + strings.Join(works, ", ") + ". " +
				"perfbench loses IPC/CPI, instructions per query (the code-bloat term), MPKI and cache/TLB/branch ratios (the memory-system terms); " +
				"it keeps CPU µs/op, cs/op, faults/op, IO/op and QPS comparisons",
			Fix: "run on bare metal, or enable the VM's virtual PMU (KVM/QEMU: -cpu host with pmu=on, libvirt <pmu state='on'/>; " +
				"VMware: virtualize CPU performance counters)",
		})
	} else {
		var parts []string
		unknown := false
		for _, p := range cores {
			s := fmt.Sprintf("%s (type %d", p.Name, p.Type)
			if p.CPUs != "" {
				s += ", cpus " + p.CPUs
			}
			if p.Counters.Known {
				s += fmt.Sprintf("): %s counters per CPU (%s)", p.Counters, p.Counters.Source)
			} else {
				s += "): counter budget unknown"
				unknown = true
			}
			parts = append(parts, s)
		}
		detail := strings.Join(parts, "; ")
		if len(cores) > 1 {
			detail += "; hybrid CPU: each generic event is opened on every core PMU and the counts summed"
		}
		v, fix := OK, ""
		if l, err := perfevent.Parse("cycles,instructions", sys); err == nil {
			var bad []string
			for _, e := range l.Events {
				if err := probe(sys, e, 0); err != nil {
					bad = append(bad, err.Error())
				}
			}
			if len(bad) > 0 {
				v = Warn
				detail += "; but " + strings.Join(bad, "; ")
				fix = "the PMU is partial (a VM's vPMU?): measure on bare metal"
			}
		}
		if unknown && v == OK {
			detail += "; size event groups to the CPU's documented counters to avoid multiplexing"
		}
		out = append(out, Check{Name: "hardware PMU", Verdict: v, Detail: detail, Fix: fix})
	}
	var names []string
	for _, p := range sys.PMUs {
		names = append(names, fmt.Sprintf("%s (type %d)", p.Name, p.Type))
	}
	out = append(out, Check{Name: "PMUs", Verdict: OK, Detail: strings.Join(names, " ")})
	return out
}

// fdCheck compares RLIMIT_NOFILE with the descriptors counting needs: one
// per thread and counter. Go raises the soft limit to the hard one when
// perfbench starts, so the hard limit is what counts.
func fdCheck(h *Host, opt DoctorOptions, sys *perfevent.System) Check {
	c := Check{Name: "open files"}
	if !h.NoFile.Known {
		c.Verdict, c.Detail = Warn, "RLIMIT_NOFILE unknown (no /proc/self/limits)"
		return c
	}
	limit := h.NoFile.Hard
	lim := fmt.Sprintf("RLIMIT_NOFILE soft %s, hard %s", limitString(h.NoFile.Soft), limitString(h.NoFile.Hard))
	perThread, what := defaultEstimateEvents, fmt.Sprintf("%d counters", defaultEstimateEvents)
	if opt.Events != "" && sys != nil {
		if l, err := perfevent.Parse(opt.Events, sys); err == nil {
			perThread = 0
			for _, e := range l.Events {
				perThread += len(e.Encodings)
			}
			what = fmt.Sprintf("%d counters for -e", perThread)
		}
	}
	if opt.Pid <= 0 {
		if limit == unlimited {
			c.Verdict, c.Detail = OK, lim+": no limit on descriptors"
			return c
		}
		threads := 0
		if limit > spareFDs {
			threads = int((limit - spareFDs) / uint64(perThread))
		}
		c.Verdict = OK
		c.Detail = fmt.Sprintf("%s: room for %d threads at %s each (perfbench raises its soft limit to the hard one; pass "+
			"--pid for a real server)", lim, threads, what)
		return c
	}
	threads, err := threads(h.Root, opt.Pid)
	if err != nil {
		c.Verdict, c.Detail = Warn, lim+": "+err.Error()
		return c
	}
	need := uint64(threads*perThread + spareFDs)
	detail := fmt.Sprintf("%s; pid %d has %d threads × %s + %d spare = %d descriptors", lim, opt.Pid, threads, what, spareFDs, need)
	switch {
	case limit != unlimited && need > limit:
		c.Verdict, c.Detail = Fail, detail+": over the hard limit"
		c.Fix = fmt.Sprintf("raise the hard limit to at least %d (as root: ulimit -Hn %d; systemd: LimitNOFILE=%d; or nofile "+
			"in /etc/security/limits.conf), count fewer events, or use cgroup mode (CPUs × events descriptors)", need, need, need)
	case limit != unlimited && need > limit*8/10:
		c.Verdict, c.Detail = Warn, detail+": within 20% of the hard limit; threads the server starts later need more"
		c.Fix = fmt.Sprintf("raise the hard limit above %d (ulimit -Hn as root, or LimitNOFILE in systemd)", need*2)
	default:
		c.Verdict, c.Detail = OK, detail
	}
	return c
}

func limitString(v uint64) string {
	if v == unlimited {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

// targetCheck test-opens task-clock on the target process.
func targetCheck(h *Host, pid int, sys *perfevent.System, taskClock perfevent.Event, probe func(*perfevent.System,
	perfevent.Event, int) error, pv privileges) Check {
	c := Check{Name: "target"}
	threads, err := threads(h.Root, pid)
	if err != nil {
		c.Verdict, c.Detail, c.Fix = Fail, err.Error(), "give the pid of a running process (pidof mariadbd mysqld)"
		return c
	}
	comm := ""
	if b, err := procfs.New(h.Root).Proc(pid).Comm(); err == nil {
		comm = " (" + strings.TrimSpace(b) + ")"
	}
	if sys == nil || len(taskClock.Encodings) == 0 {
		c.Verdict, c.Detail = Fail, fmt.Sprintf("pid %d%s, %d threads: no perf events to open", pid, comm, threads)
		return c
	}
	if err := probe(sys, taskClock, pid); err != nil {
		c.Verdict, c.Detail, c.Fix = Fail, fmt.Sprintf("pid %d%s, %d threads: %v", pid, comm, threads, err), fixFor(err, pv)
		return c
	}
	c.Verdict, c.Detail = OK, fmt.Sprintf("pid %d%s, %d threads: counters open on it", pid, comm, threads)
	return c
}

// eventsCheck parses the user's events and test-opens each.
func eventsCheck(opt DoctorOptions, sys *perfevent.System, probe func(*perfevent.System, perfevent.Event, int) error, pv privileges) Check {
	c := Check{Name: "events"}
	if sys == nil {
		c.Verdict, c.Detail = Fail, "no perf events on this kernel"
		return c
	}
	l, err := perfevent.Parse(opt.Events, sys)
	if err != nil {
		c.Verdict, c.Detail, c.Fix = Fail, err.Error(), "run 'perfbench events' for the names this machine has"
		return c
	}
	var bad []string
	denied := false
	for _, e := range l.Events {
		if err := probe(sys, e, opt.Pid); err != nil {
			var oe *perfevent.OpenError
			if errors.As(err, &oe) {
				bad = append(bad, e.Name+": "+oe.Reason)
			} else {
				bad = append(bad, e.Name+": "+err.Error())
			}
			denied = denied || errors.Is(err, perfevent.ErrPermission)
		}
	}
	switch {
	case len(bad) == 0:
		c.Verdict, c.Detail = OK, fmt.Sprintf("all %d events open", len(l.Events))
	case denied:
		c.Verdict, c.Detail, c.Fix = Fail, strings.Join(bad, "; "), fixFor(perfevent.ErrPermission, pv)
	default:
		c.Verdict = Warn
		c.Detail = fmt.Sprintf("%d of %d events will show n/a: %s", len(bad), len(l.Events), strings.Join(bad, "; "))
		c.Fix = "drop them, or measure where the PMU has them"
	}
	return c
}

// WriteText prints one line per check: verdict, check, what was found and
// the fix.
func (r Report) WriteText(w io.Writer) error {
	for _, c := range r.Checks {
		line := fmt.Sprintf("%-4s  %-19s %s", c.Verdict, c.Name, c.Detail)
		if c.Fix != "" {
			line += ". Fix: " + c.Fix
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, r.Conclusion)
	return err
}
