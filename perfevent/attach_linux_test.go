package perfevent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/testenv"
	"golang.org/x/sys/unix"
)

// procTotals reads a process's own accounting from /proc/PID/stat: CPU time
// (utime+stime, in ns) and page faults (minflt+majflt). Both include the
// threads that exited.
func procTotals(t *testing.T, pid int) (cpuNs, faults float64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	field := func(n int) float64 { // n is the 1-based field number of proc(5)
		v, err := strconv.ParseFloat(string(f[n-3]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return (field(14) + field(15)) * clockTick, field(10) + field(12)
}

// hostSteal is the host's steal time so far, in ns, summed over CPUs (the
// 8th value of the cpu line of /proc/stat, in clock ticks). With
// paravirtualized time accounting the scheduler leaves the time the
// hypervisor took from a running vCPU out of utime+stime, while task-clock,
// which times a thread from its switch-in to its switch-out, keeps it.
func hostSteal(t *testing.T) float64 { t.Helper(); return hostCPU(t, 8) }

// hostInterrupts returns the host's time servicing interrupts (irq and
// softirq in /proc/stat), in ns, summed over CPUs.
func hostInterrupts(t *testing.T) float64 { t.Helper(); return hostCPU(t, 6, 7) }

// hostCPU sums columns cols of the cpu line of /proc/stat (1 is user), in
// ns.
func hostCPU(t *testing.T, cols ...int) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	if len(f) < 9 || f[0] != "cpu" {
		t.Fatalf("/proc/stat starts with %q", f)
	}
	sum := 0.0
	for _, c := range cols {
		v, err := strconv.ParseFloat(f[c], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	return sum * clockTick
}

// cpuWithin compares task-clock with utime+stime: within tol, plus extra
// on the high side: host time over the window that the clock may count and
// /proc does not (steal time, see hostSteal; for cgroup mode also interrupt
// time).
func cpuWithin(t *testing.T, what string, taskClock, procCPU, extra, tol float64) {
	t.Helper()
	diff := taskClock - procCPU
	t.Logf("%s: %.0f vs %.0f (%+.2f%%), allowance for host steal/interrupt time %.1f ms", what, taskClock, procCPU, 100*diff/procCPU, extra/1e6)
	if procCPU == 0 || diff < -tol*procCPU || diff > tol*procCPU+extra {
		t.Errorf("%s: perfbench %.0f ns, /proc %.0f ns: %+.2f%% apart, beyond %.0f%% (plus %.1f ms of host steal/interrupt time)", what, taskClock, procCPU, 100*diff/procCPU, 100*tol, extra/1e6)
	}
}

// switchCharge is how far, per context switch, a thread's task-clock may
// be from the CPU time the scheduler charged it, either way, on a busy
// host: task-clock runs from the switch to a thread to the switch away,
// while the scheduler charges a woken task from its wake-up when it
// preempts the one running (wakeup preemption skips the clock update of
// the switch that follows), so the time between a wake-up and its switch
// is charged to the woken task and counted by the one it preempts. A few
// µs a switch on a quiet VM; window averages reached 37 µs a switch beside
// a busy loop on each CPU (measure's checkCPU warns beyond 40).
const switchCharge = 40e3

// chargedWithin compares task-clock with the CPU time the scheduler
// charged (ns) over a window of switches context switches: within tol,
// plus switchCharge a switch either way, plus extra on the high side
// (host steal and interrupt time task-clock may count). It holds on a busy
// host.
func chargedWithin(t *testing.T, what string, taskClock, charged, switches, extra, tol float64) {
	t.Helper()
	diff := taskClock - charged
	allow := tol*charged + switches*switchCharge
	t.Logf("%s: %.0f vs %.0f (%+.2f%%, %+.2f µs a context switch of %.0f); allowance %.1f ms, plus %.1f ms above",
		what, taskClock, charged, 100*diff/charged, diff/max(switches, 1)/1e3, switches, allow/1e6, extra/1e6)
	if charged == 0 || diff < -allow || diff > allow+extra {
		t.Errorf("%s: perfbench %.0f ns, charged %.0f ns: %+.2f%% apart, beyond %.0f%% and %.0f µs a context switch (%.0f switches; plus %.1f ms of host steal/interrupt time above)",
			what, taskClock, charged, 100*diff/charged, 100*tol, switchCharge/1e3, switches, extra/1e6)
	}
}

// enclosed fails when got, counted over a window that ref's window
// encloses, is not within tol (a fraction) of ref, allowing ref to exceed it
// by extra, what the target measurably used in ref's window outside got's.
func enclosed(t *testing.T, what string, got, ref, extra, tol float64) {
	t.Helper()
	extra = max(extra, 0)
	diff := ref - got
	t.Logf("%s: %.0f vs %.0f (%+.2f%%), %.1f ms used in the reference's window outside perfbench's", what, got, ref, 100*diff/ref, extra/1e6)
	if ref == 0 || diff < -tol*ref || diff > tol*ref+extra {
		t.Errorf("%s: perfbench %.0f, reference %.0f: %.2f%% apart, more than %.0f%% (plus %.1f ms used outside perfbench's window)", what, got, ref, 100*diff/ref, 100*tol, extra/1e6)
	}
}

// within fails when got is not within tol (a fraction) of want.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	diff := math.Abs(got-want) / want
	t.Logf("%s: %.0f vs %.0f (%.2f%%)", what, got, want, 100*diff)
	if want == 0 || diff > tol {
		t.Errorf("%s: perfbench %.0f, reference %.0f: %.2f%% apart, more than %.0f%%", what, got, want, 100*diff, 100*tol)
	}
}

// The work of the accuracy tests: 8 threads created for it (more than the
// workload has idle threads, so some are new and all exit), each spinning
// about 0.25 s and faulting in 5,000 pages: about 2 s of CPU, 40,000 faults.
const (
	workThreads = 8
	workIters   = 170_000_000
	workPages   = 5_000
)

// newDuringWindow checks that some of the threads the work ran on did not
// exist when the counters were attached: they were counted through
// inheritance only.
func newDuringWindow(t *testing.T, a *Attachment, reply string) {
	t.Helper()
	attached := a.Threads()
	fresh := 0
	for _, tid := range ints(t, reply) {
		if !slices.Contains(attached, tid) {
			fresh++
		}
	}
	t.Logf("%d of the %d work threads were created during the window", fresh, workThreads)
	if fresh == 0 {
		t.Fatal("the work ran on threads that were all attached: inheritance is not exercised")
	}
}

// TestAccuracyAgainstProc: over work on threads made for it (some created
// inside the window, all exiting), task-clock is the process's CPU clock
// (what /proc's utime+stime are cut from) within 2% plus 40 µs a context
// switch (the scheduler's charging from wake-ups: see switchCharge; on a
// busy host, 2% alone was missed at -2.85%), page-faults its minflt+majflt
// within 2%, and the threads' counts add up to the total.
func TestAccuracyAgainstProc(t *testing.T) {
	w := startWorkload(t)
	w.do(t, "park 20")
	a, err := Attach(w.pid, []Event{taskClock, pageFaults, contextSwitches}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	steal0 := hostSteal(t)
	clock0 := processCPUClock(t, w.pid)
	tick0, faults0 := procTotals(t, w.pid)
	r0, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	reply := w.do(t, "work %d %d %d", workThreads, workIters, workPages)
	clock1 := processCPUClock(t, w.pid)
	tick1, faults1 := procTotals(t, w.pid)
	r1, err := a.Read()
	steal := hostSteal(t) - steal0
	if err != nil {
		t.Fatal(err)
	}
	d, err := r1.Sub(r0)
	if err != nil {
		t.Fatal(err)
	}
	newDuringWindow(t, a, reply)
	c := a.Coverage()
	t.Logf("coverage: listed %d, attached %d, exited %d, missed %v, inherited %d, ambiguous %v, attempts %d", c.Listed, c.Attached, c.Exited, c.Missed, c.Inherited, c.Ambiguous, c.Attempts)
	tc, pf, cs := d.Events[0], d.Events[1], d.Events[2]
	if tc.Status != StatusCounted || pf.Status != StatusCounted || cs.Status != StatusCounted {
		t.Fatalf("statuses %v %v %v, want counted", tc.Status, pf.Status, cs.Status)
	}
	// The process's CPU clock, which /proc's utime+stime are cut from
	// in clock ticks (logged beside).
	t.Logf("utime+stime %.1f ms, CPU clock %.1f ms", (tick1-tick0)/1e6, (clock1-clock0)/1e6)
	chargedWithin(t, "task-clock vs the process's CPU clock (ns)", tc.Value, clock1-clock0, cs.Value, steal, 0.02)
	within(t, "page-faults vs minflt+majflt", pf.Value, faults1-faults0, 0.02)
	if pf.Value < workThreads*workPages {
		t.Errorf("page-faults %.0f, fewer than the %d pages touched", pf.Value, workThreads*workPages)
	}
	// Per-thread counts add up to the totals.
	var sum uint64
	for _, th := range d.Threads {
		sum += th.Counts[0].Raw
	}
	if sum != tc.Count.Raw {
		t.Errorf("threads' task-clock sums to %d, total %d", sum, tc.Count.Raw)
	}
}

// perfBinary returns the path of perf, the reference the tests compare
// with (see testenv.NeedBinary).
func perfBinary(t testing.TB) string {
	t.Helper()
	return testenv.NeedBinary(t, "perf", "linux-perf")
}

// perfEventFDs counts the perf_event descriptors process pid has open.
func perfEventFDs(pid string) int {
	ents, err := os.ReadDir(filepath.Join("/proc", pid, "fd"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc", pid, "fd", e.Name())); err == nil && l == "anon_inode:[perf_event]" {
			n++
		}
	}
	return n
}

func TestAccuracyAgainstPerfStat(t *testing.T) {
	perf := perfBinary(t)
	w := startWorkload(t)
	w.do(t, "park 20")
	stopPerf := startPerfStat(t, perf, w.pid, "task-clock,page-faults")
	a, err := Attach(w.pid, []Event{taskClock, pageFaults}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r0, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	reply := w.do(t, "work %d %d %d", workThreads, workIters, workPages)
	r1, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	p := stopPerf()
	d, err := r1.Sub(r0)
	if err != nil {
		t.Fatal(err)
	}
	newDuringWindow(t, a, reply)
	within(t, "task-clock vs perf stat (ns)", d.Events[0].Value, p["task-clock"]*1e6, 0.03)
	within(t, "page-faults vs perf stat", d.Events[1].Value, p["page-faults"], 0.03)
}

func TestDetachClosesDescriptors(t *testing.T) {
	w := startWorkload(t)
	w.do(t, "park 50")
	before, perfBefore := countFDs(t), perfEventFDs("self")
	a, err := Attach(w.pid, []Event{taskClock, pageFaults, contextSwitches}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := a.Descriptors()
	if n != 3*len(a.Threads()) || len(a.Threads()) < 50 {
		t.Errorf("%d descriptors for %d threads × 3 events", n, len(a.Threads()))
	}
	if got := perfEventFDs("self") - perfBefore; got != n {
		t.Errorf("%d perf_event descriptors opened, attachment says %d", got, n)
	}
	if _, err := a.Read(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if after := countFDs(t); after != before {
		t.Errorf("%d descriptors open before the attach, %d after Close", before, after)
	}
	if perfEventFDs("self") != perfBefore {
		t.Errorf("perf_event descriptors left open after Close")
	}
}

func TestAttachExitedProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	before := countFDs(t)
	_, err := Attach(cmd.Process.Pid, []Event{taskClock}, Options{})
	if !errors.Is(err, procfs.ErrGone) || !strings.Contains(err.Error(), strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("err = %v, want ErrGone naming pid %d", err, cmd.Process.Pid)
	}
	if countFDs(t) != before {
		t.Error("descriptors leaked")
	}
}

// TestThreadChurn attaches while the process creates and ends threads as
// fast as it can (tens of thousands a second): threads exiting mid-attach are
// skipped and those created meanwhile sorted by the rescan. Then it measures
// a window of work with the churn going on inside it, side by side with perf
// stat and /proc.
//
// Page faults match /proc exactly. CPU time cannot: a thread's counters are
// detached early in its exit (perf_event_exit_task, in do_exit), and what it
// runs after that (cgroup_exit, exit_notify's wait for tasklist_lock, which
// the threads being created hold in turn, and its release) is in its
// utime+stime but in no counter, for perf as for perfbench. That time grows
// with contention: 6 µs per exit on an idle 2-vCPU VM, 20 to 45 µs with
// other tests running. So the reference for task-clock is perf stat on the
// same process counting the same window, which must agree within 1%; the
// gap to /proc is logged per exit, and task-clock may not exceed /proc
// (beyond 2% and the host's steal time).
func TestThreadChurn(t *testing.T) {
	perf := perfBinary(t)
	w := startWorkload(t)
	w.do(t, "park 200")
	w.do(t, "churn on")
	a, err := Attach(w.pid, []Event{taskClock, pageFaults}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	w.do(t, "churn off")
	c := a.Coverage()
	t.Logf("attach under churn: listed %d, attached %d, exited %d, missed %d, inherited %d, ambiguous %d", c.Listed, c.Attached, c.Exited, len(c.Missed), c.Inherited, len(c.Ambiguous))
	if c.Attached < 200 || c.Attached+c.Exited != c.Listed+len(c.Missed) {
		t.Errorf("coverage %+v does not add up", c)
	}

	pw := startPerfWindow(t, perf, w.pid, "task-clock,page-faults")
	churn0 := churned(t, w.do(t, "churn on"))
	steal0 := hostSteal(t)
	cpu0, faults0 := procTotals(t, w.pid)
	pw.enable()
	r0, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	w.do(t, "work %d %d %d", workThreads, workIters, workPages)
	exits := churned(t, w.do(t, "churn off")) - churn0
	cpu1, faults1 := procTotals(t, w.pid)
	steal := hostSteal(t) - steal0
	r1, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	pw.disable()
	p := pw.values()
	d, _ := r1.Sub(r0)
	tc, pf := d.Events[0].Value, d.Events[1].Value
	within(t, "page-faults vs minflt+majflt", pf, faults1-faults0, 0.02)
	within(t, "page-faults vs perf stat", pf, p["page-faults"], 0.01)
	within(t, "task-clock vs perf stat (ns)", tc, p["task-clock"]*1e6, 0.01)
	gap, perfGap := (cpu1-cpu0)-tc, (cpu1-cpu0)-p["task-clock"]*1e6
	t.Logf("%d threads exited in the window; utime+stime exceeds task-clock by %.1f ms (%.2f µs per exit), perf stat's by %.1f ms (%.2f µs per exit)",
		exits, gap/1e6, gap/float64(exits)/1e3, perfGap/1e6, perfGap/float64(exits)/1e3)
	if -gap > 0.02*(cpu1-cpu0)+steal {
		t.Errorf("task-clock %.0f ns exceeds utime+stime %.0f ns by more than 2%% plus %.1f ms of host steal time", tc, cpu1-cpu0, steal/1e6)
	}
}

// churned parses the thread count of a "churn on|off N" reply.
func churned(t *testing.T, reply string) int {
	t.Helper()
	f := strings.Fields(reply)
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		t.Fatalf("bad reply %q", reply)
	}
	return n
}

// startPerfStat runs perf stat -x, -e events -p pid and waits until it has a
// counter open per thread per event; stop interrupts it and returns the
// values it printed by event name (task-clock in msec, as perf prints it).
func startPerfStat(t *testing.T, perf string, pid int, events string) (stop func() map[string]float64) {
	t.Helper()
	threads, err := listThreads("", pid)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(perf, "stat", "-x,", "-e", events, "-p", strconv.Itoa(pid))
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// perf stat -p prints nothing until it ends: wait until it holds a
	// counter per thread per event.
	want := len(threads) * len(strings.Split(events, ","))
	deadline := time.Now().Add(10 * time.Second)
	for perfEventFDs(strconv.Itoa(cmd.Process.Pid)) < want {
		if time.Now().After(deadline) {
			t.Fatalf("perf stat did not attach in 10 s: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() map[string]float64 {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		done = true
		got := map[string]float64{}
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Split(line, ",")
			if len(f) < 3 {
				continue
			}
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				t.Fatalf("perf stat printed %q", line)
			}
			got[f[2]] = v
		}
		for _, e := range strings.Split(events, ",") {
			if _, ok := got[e]; !ok {
				t.Fatalf("perf stat printed no %s:\n%s", e, out.String())
			}
		}
		return got
	}
}

func TestAttachRealUnsupported(t *testing.T) {
	sys, err := LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	w := startWorkload(t)
	a, err := Attach(w.pid, []Event{hwEvent("cycles", 0), taskClock}, Options{System: sys})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	cyc := r.Events[0]
	if sys.HasHardwarePMU() {
		if cyc.Status == StatusNotSupported {
			t.Errorf("cycles not supported on a machine with a PMU: %s", cyc.Reason)
		}
		return
	}
	if cyc.Status != StatusNotSupported || !strings.Contains(cyc.Reason, "no hardware PMU") || !strings.Contains(cyc.Reason, "ENOENT") {
		t.Errorf("cycles without a PMU: %v %q", cyc.Status, cyc.Reason)
	}
	if a.Groups() != "task-clock" {
		t.Errorf("groups %s", a.Groups())
	}
}

// TestCgroupMode counts the workload through a cgroup v2 of its own, per
// CPU, and compares with /proc.
func TestCgroupMode(t *testing.T) {
	w := startWorkload(t)
	inCgroup(t, w)
	before := countFDs(t)
	a, err := Attach(w.pid, []Event{taskClock, pageFaults}, Options{Cgroup: true})
	testenv.SkipUnless(t, err, "cgroup mode counts CPU-wide: run the tests as root", ErrPermission)
	cpus, _ := onlineCPUs("")
	if n := a.Descriptors(); n != 2*len(cpus) {
		t.Errorf("%d descriptors, want 2 events × %d CPUs", n, len(cpus))
	}
	steal0, irq0 := hostSteal(t), hostInterrupts(t)
	cpu0, faults0 := procTotals(t, w.pid)
	r0, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	w.do(t, "work %d %d %d", workThreads, workIters, workPages)
	cpu1, faults1 := procTotals(t, w.pid)
	r1, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	steal, irq := hostSteal(t)-steal0, hostInterrupts(t)-irq0
	d, _ := r1.Sub(r0)
	// The cgroup clock runs while the cgroup is on a CPU, interrupts
	// serviced meanwhile included; utime+stime leave out interrupt time
	// (IRQ time accounting). Alone on the machine the two agree within
	// 1%; with other work raising interrupts (a database under load on
	// the other core, loopback traffic's softirqs) they were seen 4% and
	// 7.5% apart. So cgroup mode gets 5% plus the host's steal and
	// interrupt time over the window on the high side: what it counts
	// beyond that is not the cgroup's. Per-thread mode, the default, is
	// held to 2% above.
	t.Logf("host irq+softirq over the window: %.1f ms", irq/1e6)
	cpuWithin(t, "cgroup task-clock vs utime+stime (ns)", d.Events[0].Value, cpu1-cpu0, steal+irq, 0.05)
	within(t, "cgroup page-faults vs minflt+majflt", d.Events[1].Value, faults1-faults0, 0.02)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if countFDs(t) != before {
		t.Error("descriptors leaked")
	}
}

// inCgroup moves the workload into a new cgroup v2 of its own and returns
// the cgroup's directory and its path under the cgroup2 mount; cleanup
// moves it back and removes the cgroup. It skips the test where cgroup v2
// is not mounted or cannot be written.
func inCgroup(t *testing.T, w *workProc) (dir, name string) {
	t.Helper()
	m, err := procfs.New("").Cgroup2Mount()
	mnt := m.MountPoint
	if err != nil {
		testenv.Skip(t, "cgroup v2 is not mounted: cgroup mode cannot be tested here", "mount -t cgroup2 none /sys/fs/cgroup")
	}
	name = fmt.Sprintf("perfbench-test-%d-%d", os.Getpid(), w.pid)
	dir = filepath.Join(mnt, name)
	testenv.SkipUnless(t, os.Mkdir(dir, 0o755), "run the tests as root with a writable cgroup2 at "+mnt, fs.ErrPermission, unix.EROFS)
	t.Cleanup(func() {
		// Move every process still in it back out (the workload, and the
		// children it forked that have not been reaped yet), then remove
		// the cgroup; a child that is exiting leaves it a moment later.
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, pid := range strings.Fields(string(procs)) {
				os.WriteFile(filepath.Join(mnt, "cgroup.procs"), []byte(pid), 0o644)
			}
			if err = os.Remove(dir); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Errorf("remove test cgroup: %v", err)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(w.pid)), 0o644); err != nil {
		t.Fatalf("move the workload into a new cgroup: %v", err)
	}
	return dir, name
}

// procCPU is utime+stime of pid from /proc/PID/stat, in ns.
func procCPU(t *testing.T, pid int) float64 {
	t.Helper()
	cpu, _ := procTotals(t, pid)
	return cpu
}

// perfWindow is perf stat -p attached to a process with its events
// disabled, enabled and disabled on command through its control fifo, so
// that it counts the same window as perfbench's reads within the fifo's
// round trip.
type perfWindow struct {
	t        *testing.T
	cmd      *exec.Cmd
	out      *lockedBuffer
	ctl, ack *os.File
	events   string
}

// lockedBuffer is a bytes.Buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startPerfWindow runs perf stat -x, -e events -p pid with its events
// disabled (--delay -1) and waits until it holds counters on the process.
func startPerfWindow(t *testing.T, perf string, pid int, events string) *perfWindow {
	t.Helper()
	return startPerfWindowOn(t, perf, events, "-p", strconv.Itoa(pid))
}

// startPerfWindowOn is startPerfWindow counting target (perf stat's
// arguments that say what to count: "-p", PID or "-a", "-G", CGROUP).
func startPerfWindowOn(t *testing.T, perf string, events string, target ...string) *perfWindow {
	t.Helper()
	// perf splits --control at commas: a folder of the test's name may
	// have some.
	dir, err := os.MkdirTemp("", "perfctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctlPath, ackPath := filepath.Join(dir, "ctl"), filepath.Join(dir, "ack")
	for _, p := range []string{ctlPath, ackPath} {
		if err := unix.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Opened read-write, so that neither side's open waits for the other.
	ctl, err := os.OpenFile(ctlPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := os.OpenFile(ackPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := &perfWindow{t: t, out: &lockedBuffer{}, ctl: ctl, ack: ack, events: events}
	args := append([]string{"stat", "-x,", "-e", events}, target...)
	w.cmd = exec.Command(perf, append(args, "--delay", "-1", "--control", "fifo:"+ctlPath+","+ackPath)...)
	w.cmd.Stderr = w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			w.cmd.Process.Kill()
			w.cmd.Wait()
		}
		ctl.Close()
		ack.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(w.out.String(), "Events disabled") || perfEventFDs(strconv.Itoa(w.cmd.Process.Pid)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("perf stat did not start in 10 s: %s", w.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return w
}

// command sends enable or disable and waits for perf's acknowledgement.
func (w *perfWindow) command(c string) {
	w.t.Helper()
	if _, err := w.ctl.WriteString(c + "\n"); err != nil {
		w.t.Fatal(err)
	}
	// perf writes "ack\n" with its terminating NUL.
	buf := make([]byte, 5)
	if _, err := io.ReadFull(w.ack, buf); err != nil || string(buf) != "ack\n\x00" {
		w.t.Fatalf("perf stat did not acknowledge %s: %q %v", c, buf, err)
	}
}

// enable starts perf's count, disable ends it; values stops perf and
// returns the values it printed by event name (task-clock in msec).
func (w *perfWindow) enable()  { w.command("enable") }
func (w *perfWindow) disable() { w.command("disable") }

func (w *perfWindow) values() map[string]float64 {
	w.t.Helper()
	w.cmd.Process.Signal(os.Interrupt)
	w.cmd.Wait()
	got := map[string]float64{}
	for _, line := range strings.Split(w.out.String(), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			w.t.Fatalf("perf stat printed %q", line)
		}
		got[f[2]] = v
	}
	for _, e := range strings.Split(w.events, ",") {
		if _, ok := got[e]; !ok {
			w.t.Fatalf("perf stat printed no %s:\n%s", e, w.out.String())
		}
	}
	return got
}
