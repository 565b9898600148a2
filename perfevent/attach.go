package perfevent

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Errors of Attach that callers branch on with errors.Is (ErrPermission, in
// event.go, is shared with the catalogue's probe). The errors wrapping them
// also wrap the errno and say what to do.
//
// A pid that does not exist, or a process that exited while its counters
// were being opened, is procfs.ErrGone.
var (
	// errTooManyFiles: the process ran out of file descriptors (EMFILE or
	// ENFILE): one is needed per thread per event.
	errTooManyFiles = errors.New("too many open files")
)

// Options tune Attach. The zero value counts every thread of the process with
// inheritance, groups sized to DefaultBudget, using the real /proc and /sys.
type Options struct {
	// Groups are the user's {...} groups: indices in the events given to
	// Attach of events to open as one group.
	Groups [][]int
	// Budgets is the number of events one group may hold on a PMU, by PMU
	// name ("cpu", "cpu_core", ...). PMUs not listed get DefaultBudget;
	// software PMUs need none. BudgetsFrom fills it from the catalogue.
	Budgets map[string]int
	// Cgroup counts with one event per online CPU filtered by the process's
	// cgroup (v2) instead of one per thread: a fixed number of descriptors
	// however many threads the server has, no thread coverage question, but
	// it counts every process in that cgroup and needs CPU-wide counting
	// rights (perf_event_paranoid <= 0, root or CAP_PERFMON).
	Cgroup bool
	// CgroupDir, with Cgroup, is the cgroup directory to count (absolute
	// path under the cgroup2 mount) instead of the process's own.
	CgroupDir string
	// System, when set, is the catalogue's view of this machine: the
	// budgets of its core PMUs (unless Budgets is set) and its explanations
	// of why an event does not open.
	System *System
	// Root is the directory proc and sys are read under; empty means "/".
	// Tests point it at fixtures.
	Root string
	// Workers is how many goroutines open, read and close counters at
	// once; 0 means GOMAXPROCS.
	Workers int
	// Own are threads (thread mode) counted twice: with inherit, like
	// every thread, and without, so that a Reading tells their own counts
	// from those of the threads they create after the attach (see
	// ThreadCounts.Descendants). A server's connection acceptor is the
	// one to name: the connections it creates inside a window are then
	// told apart from its own work.
	Own []int

	sys   sysCalls // nil means the running kernel
	tries int      // attempts at most; 0 means attachTries
}

// BudgetsFrom returns, for Options.Budgets, the number of general-purpose
// counters of each core PMU of sys whose budget is known.
func BudgetsFrom(sys *System) map[string]int {
	out := map[string]int{}
	for _, p := range sys.CorePMUs() {
		if p.Counters.Known && p.Counters.Generic > 0 {
			out[p.Name] = p.Counters.Generic
		}
	}
	return out
}

// coverage says which threads of the process are counted (thread mode).
type coverage struct {
	// Listed is the number of threads in /proc/PID/task when the attach
	// began.
	Listed int
	// Attached is the number of threads counters were opened on.
	Attached int
	// Exited is the number of listed or missed threads that exited
	// before their counters were opened; what they did is not in any
	// window. Attached + Exited = Listed + len(Missed).
	Exited int
	// Missed are threads the listing did not have that were created by a
	// thread without counters (before the first counter was open): the
	// rescan found them and attached those that had not exited meanwhile
	// (the others are in Exited too).
	Missed []int
	// Inherited is the number of threads the rescan found that were
	// created after all their possible creators had counters: they are
	// counted through inheritance and were not attached again.
	Inherited int
	// Ambiguous are threads the rescan found that started while counters
	// were being opened: they were not attached (that would count them
	// twice if their creator was already counted), so they are uncounted
	// if their creator was not. Attach starts over when it finds some, up
	// to 3 attempts; those of the last attempt are reported as a warning.
	Ambiguous []int
	// Attempts is how many times the attach was made; Raced how many of
	// them were started over because a group raced with the threads its
	// thread was creating (see Attach).
	Attempts int
	Raced    int
	// Reopened is how many times a group was opened again on a thread
	// because the kernel refused a member while the thread was creating
	// threads (see Attach).
	Reopened int
}

// Attachment is a set of counters open on one process: per thread (with
// inherit) or, in cgroup mode, per CPU. It stays enabled until Close; read it
// at the start and end of a window and subtract (Reading.Sub).
type Attachment struct {
	pid     int
	root    string
	sys     sysCalls
	lay     *layout
	attrs   []openAttr // per part
	cgroup  bool
	system  *System
	cgFD    int    // cgroup directory descriptor while opening
	cgDir   string // the cgroup counted (cgroup mode)
	workers int
	planned int // targets the attach set out to open (threads listed, CPUs)
	tries   int
	own     map[int]bool // Options.Own

	mu      sync.Mutex
	targets []*target
	cov     coverage
	notes   []string
	closed  bool
}

// target is one place a full set of counters is open: a thread, or a CPU in
// cgroup mode.
type target struct {
	id  int      // tid, or CPU
	fds []int    // per part; -1 when not open
	ids []uint64 // per part: the id read(2) reports it under
	// single is set, per part, for the leader of a group of one, opened
	// without PERF_FORMAT_GROUP.
	single []bool
	// start is the thread's start time (ticks since boot, from
	// /proc/PID/task/TID/stat) read when it was attached; 0 when unknown
	// or in cgroup mode. It tells the thread from a later one given the
	// same tid.
	start uint64
	// cpu is the CPU the thread last ran on when it was attached (the
	// CPU itself in cgroup mode), -1 when unknown: its counters are
	// opened from there (see openTargets).
	cpu int
	// own holds the same events opened without inherit on the same thread
	// (Options.Own); nil for other threads.
	own *target
}

// Attach opens counters for events on every thread of process pid (or, with
// Options.Cgroup, on every CPU for pid's cgroup) and returns them counting.
//
// Events that cannot be opened on this machine are kept, with the reason, as
// not supported; they do not fail the attach. The attach fails with
// procfs.ErrGone, ErrPermission or errTooManyFiles (wrapping the errno), and
// when it fails it closes every descriptor it opened.
//
// # Groups
//
// Events on different PMUs cannot share a group, so groups are made per PMU:
// the user's {...} groups as given, then the other events in the order
// given, cycles and instructions together at the head of their PMU's first
// group, each group no larger than the PMU's counter budget (Options.Budgets,
// else DefaultBudget), so nothing multiplexes unless the events do not fit
// at all. Events of PMUs without counters (software, tracepoints, msr) are
// opened alone (see planLayout for why). A hybrid event is opened on each of
// its core PMUs; see Reading for how its parts are combined.
//
// When the probe finds that the kernel refuses group reads of inherited
// counters (EINVAL for inherit with PERF_FORMAT_GROUP: kernels before
// 4.13), every group is split into events opened alone, with a warning:
// their ratios then come from counters scheduled apart.
//
// # Thread coverage
//
// Counters are opened with inherit on each thread of /proc/PID/task, the
// thread-group leader first. A thread created by a counted thread is counted
// through inheritance, and a thread that exits keeps its counts: the kernel
// folds them into the counter it inherited from. Reads of a thread's
// counters therefore include the threads it created since it was attached.
//
// Threads created between the listing and the moment their creator got its
// counters are missed by the listing, so Attach lists the threads again once
// every listed thread is attached. A new thread cannot simply be attached: if
// its creator already had counters, it carries inherited ones and would be
// counted twice. When it was created tells. Attach notes the last pid the
// kernel handed out (/proc/sys/kernel/ns_last_pid) just before the first
// counter is opened and just after the last; tids are handed out in
// increasing order and a thread's inherited counters are copied in clone(2)
// just before its tid is allocated. A thread whose tid was handed out before
// the first open was created by an uncounted thread and is attached
// (Coverage.Missed); one whose tid came after the last open was created by a
// counted thread and is left alone (Coverage.Inherited). If pid allocation
// wrapped around meanwhile, or the tid falls between the two marks, the
// thread's start time (/proc/PID/task/TID/stat, in 10 ms clock ticks) is
// compared with the same two moments instead; a thread that neither tells
// apart was created during the attach (Coverage.Ambiguous): Attach closes
// everything and starts over, since that thread is in the next listing. If
// threads keep starting during every attempt, the last attempt's are left
// alone with a warning: counting a thread twice would silently inflate every
// per-operation number, while a thread missed is named in the warning. The
// rescan repeats while it finds missed threads, whose own early children the
// next round classifies. Servers that create threads per connection should
// be attached before the load connects.
//
// Inherit also follows processes the target forks; their counts are
// included, as with perf stat -p.
//
// # Cost
//
// Each thread's last CPU is read with its start time before its counters
// are opened, and they are opened from a worker bound to that CPU: the
// kernel installs a counter on a thread from the CPU the thread last ran
// on, by an interprocessor call from anywhere else, which on a VM costs
// more than the rest of the open (perf stat -p opens from one CPU). Events
// read alone need no id (no PERF_EVENT_IOC_ID); descriptors are closed
// with close_range by runs.
//
// # Races with threads that come and go
//
// A thread that exits while its counters are opened makes the open fail
// with ESRCH, or, on an exiting thread, EINVAL or ENODEV (6.x kernels): when
// /proc shows the thread gone or a zombie, that is an exit (Coverage.Exited),
// else a failure. An event of the probe thread is called not supported only
// if it also fails on a thread that is not exiting.
//
// A group is opened member by member. A thread that its creator clones
// meanwhile inherits part of the group, and the kernel then refuses every
// group read of the creator (ECHILD, since the fix for CVE-2023-5717) for as
// long as that thread lives; and while the creator clones, the kernel may
// swap its counter context with its child's, so that a member's open fails
// with EINVAL or ENODEV although the thread is alive. Attach therefore
// opens a group again (up to groupTries times) when a member fails so on a
// live thread, and reads every group once all threads are attached: a group
// that keeps answering ECHILD was inherited in part, and Attach starts over
// like for a thread created during the attach (the thread is then in the
// listing and gets counters of its own). A race that persists through
// every attempt fails the attach, naming the thread. On the probe thread a
// member that keeps failing is opened once more, as a group on perfbench's
// own thread: only if it fails there too is it not supported ("the group
// may not fit the PMU"). Opening a group again closes the first leader, and
// with it the copies the thread's children inherited meanwhile: a thread
// among them is in the rescan (created during the attach), a process
// forked in that moment is not counted in that group.
//
// # Cgroup mode
//
// With Options.Cgroup the events are opened once per online CPU with
// PERF_FLAG_PID_CGROUP on the process's cgroup v2 directory and summed over
// CPUs: a fixed number of descriptors however many threads come and go, no
// coverage question, per-thread counts unavailable, and every process of the
// cgroup counted. It needs CPU-wide counting rights.
func Attach(pid int, events []Event, opts Options) (*Attachment, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("attach to pid %d: not a process id: %w", pid, procfs.ErrGone)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("attach to pid %d: no events to count", pid)
	}
	if opts.Budgets == nil && opts.System != nil {
		opts.Budgets = BudgetsFrom(opts.System)
	}
	lay, err := planLayout(events, opts.Groups, opts.Budgets)
	if err != nil {
		return nil, fmt.Errorf("attach to pid %d: %w", pid, err)
	}
	lay.cgroup = opts.Cgroup
	a := &Attachment{pid: pid, root: opts.Root, sys: opts.sys, lay: lay, system: opts.System, cgroup: opts.Cgroup, cgFD: -1, workers: opts.Workers}
	if a.sys == nil {
		a.sys = realSys{}
	}
	if a.workers <= 0 {
		a.workers = runtime.GOMAXPROCS(0)
	}
	a.tries = opts.tries
	if a.tries <= 0 {
		a.tries = attachTries
	}
	if len(opts.Own) > 0 && !opts.Cgroup {
		a.own = map[int]bool{}
		for _, tid := range opts.Own {
			a.own[tid] = true
		}
	}
	a.attrs = make([]openAttr, len(lay.parts))
	for p, pt := range lay.parts {
		e := events[pt.event]
		a.attrs[p] = engineAttr(e, e.Encodings[pt.enc], !opts.Cgroup)
	}
	a.noteUserGroups(opts.Budgets)
	if opts.Cgroup {
		err = a.attachCgroup(opts.CgroupDir)
	} else {
		err = a.attachThreads()
	}
	if err != nil {
		a.closeAll()
		return nil, err
	}
	lay.renumber()
	return a, nil
}

// noteUserGroups warns about user groups larger than their PMU's known
// budget: the kernel refuses them or never schedules them.
func (a *Attachment) noteUserGroups(budgets map[string]int) {
	for _, g := range a.lay.groups {
		if !g.user || swPMU(g.pmu) {
			continue
		}
		n := 0
		for _, p := range g.parts {
			pt := a.lay.parts[p]
			if !swPMU(encPMU(a.lay.events[pt.event], a.lay.events[pt.event].Encodings[pt.enc])) {
				n++
			}
		}
		if b := budgets[g.pmu]; b > 0 && n > b {
			a.notes = append(a.notes, fmt.Sprintf("group of %d events on %s is larger than its %d general-purpose counters: it may never be counted", n, g.pmu, b))
		}
	}
}

// attachTries is how many times an attach is made when threads start while
// its counters are being opened (Coverage.Ambiguous), or when a group
// raced with a thread its thread was creating: a thread created during one
// attempt is in the next one's listing, so unless thread creation races
// every attempt, the last one knows every thread.
const attachTries = 3

// groupTries is how many times a group is opened on a live thread whose
// member's open the kernel refused (EINVAL, ENODEV) while the thread was
// creating threads.
const groupTries = 5

// errRaced marks an attach attempt spoiled by threads created while it ran
// (a group inherited in part, a member refused on a live thread): the
// attempt is made again.
var errRaced = errors.New("raced with thread creation")

// gone reports whether an open failed because its thread exited: ESRCH,
// or EINVAL or ENODEV on a thread /proc shows gone or a zombie, which
// openGroupOnce wraps with procfs.ErrGone.
func gone(err error) bool { return errors.Is(err, procfs.ErrGone) || errors.Is(err, errESRCH) }

// attachThreads opens the counters on every thread of the process, rescans
// for threads the listing missed, checks that every group reads, and starts
// over (closing everything) when some threads could not be placed or a
// group raced with thread creation.
func (a *Attachment) attachThreads() error {
	raced, reopened := 0, 0 // over the attempts before the last
	for try := 1; ; try++ {
		err := a.attachThreadsOnce()
		if err != nil && (!errors.Is(err, errRaced) || try >= a.tries) {
			if errors.Is(err, errRaced) {
				return fmt.Errorf("attach to pid %d: %w (in each of %d attempts)", a.pid, err, try)
			}
			return err
		}
		a.cov.Attempts = try
		if err == nil && (len(a.cov.Ambiguous) == 0 || try >= a.tries) {
			break
		}
		if err != nil {
			raced++
		}
		reopened += a.cov.Reopened
		if err := a.closeAll(); err != nil {
			return err
		}
		a.cov = coverage{}
		time.Sleep(time.Duration(try) * 5 * time.Millisecond)
	}
	a.cov.Raced = raced
	a.cov.Reopened += reopened
	if n := len(a.cov.Ambiguous); n > 0 {
		a.notes = append(a.notes, fmt.Sprintf("%d threads started while counters were being opened, in each of %d attempts (last: tid %s): not attached, since a counted creator already counts them; if their creator had none or only some of its counters open yet, they and the threads they create are not counted, or only in some events", n, a.cov.Attempts, tidList(a.cov.Ambiguous)))
	}
	return nil
}

// attachThreadsOnce lists the threads, opens the counters on each, rescans
// and reads every group once.
func (a *Attachment) attachThreadsOnce() error {
	tids, err := listThreads(a.root, a.pid)
	if err != nil {
		return fmt.Errorf("attach to %w", err)
	}
	a.cov.Listed = len(tids)
	a.planned = len(tids)
	var marks attachMarks
	marks.pidFirst = lastPID(a.root)
	marks.firstOpen = a.sys.bootNanos()
	// Probe on the first thread (the thread-group leader when it is alive):
	// events that do not open there are not supported on this machine.
	rest := tids
	for len(rest) > 0 {
		t := newTarget(rest[0], len(a.lay.parts))
		rest = rest[1:]
		err := a.openTarget(t, true)
		if err == nil {
			a.targets = append(a.targets, t)
			break
		}
		a.closeTarget(t)
		if !gone(err) {
			return err
		}
		a.cov.Exited++
		if t.id == a.pid && processGone(a.root, a.pid) {
			return a.goneError()
		}
	}
	if len(a.targets) == 0 {
		return a.goneError()
	}
	// Events found unsupported on the first thread need no descriptors.
	if err := a.ensureFiles(len(rest) * a.lay.openParts()); err != nil {
		return err
	}
	opened, exited, err := a.openTargets(rest)
	a.targets = append(a.targets, opened...)
	a.cov.Exited += exited
	if err != nil {
		return err
	}
	marks.pidCovered = lastPID(a.root)
	marks.covered = a.sys.bootNanos()
	if err := a.rescan(tids, marks); err != nil {
		return err
	}
	a.cov.Attached = len(a.targets)
	return a.checkGroups()
}

// checkGroups reads every group of several events once. A group that keeps
// answering ECHILD was inherited in part by a thread created while it was
// being opened (see Attach): errRaced. Events opened alone cannot be in
// that state and are not read.
func (a *Attachment) checkGroups() error {
	var (
		next    atomic.Int64
		errOnce sync.Once
		first   error
	)
	a.parallel(len(a.targets), func() {
		buf := make([]byte, groupReadSize(a.maxGroup()))
		row := make([]Count, len(a.lay.parts))
		for {
			i := int(next.Add(1) - 1)
			if i >= len(a.targets) {
				return
			}
			t := a.targets[i]
			for _, g := range a.lay.groups {
				if len(g.parts) < 2 || t.fds[g.parts[0]] < 0 {
					continue
				}
				if err := a.readGroup(t, g, buf, row); err != nil {
					if errors.Is(err, errECHILD) {
						err = fmt.Errorf("%w: %w (a thread it created while its group was being opened inherited only part of the group)", errRaced, err)
					}
					errOnce.Do(func() { first = err })
					return
				}
			}
		}
	})
	return first
}

// maxRescans bounds the rescan rounds: each round attaches threads the
// previous one found missed, whose own early children the next round finds.
const maxRescans = 4

// rescan lists the threads again until no new one appears, attaching those
// created before any counter was open (missed by the listing) and leaving
// those created later by counted threads (inherited). See the package
// documentation for the reasoning.
func (a *Attachment) rescan(seenList []int, marks attachMarks) error {
	seen := make(map[int]bool, len(seenList))
	for _, tid := range seenList {
		seen[tid] = true
	}
	for range maxRescans {
		tids, err := listThreads(a.root, a.pid)
		if err != nil {
			if errors.Is(err, procfs.ErrGone) {
				return a.goneError()
			}
			return fmt.Errorf("rescan threads of pid %d: %w", a.pid, err)
		}
		pidNow := lastPID(a.root)
		var missed, other []int
		var origin []threadOrigin
		for _, tid := range tids {
			if seen[tid] {
				continue
			}
			seen[tid] = true
			start, err := threadStartTick(a.root, a.pid, tid)
			if err != nil {
				continue // exited since the listing
			}
			switch o := marks.classify(tid, start, pidNow); o {
			case originMissed:
				missed = append(missed, tid)
			default:
				other = append(other, tid)
				origin = append(origin, o)
			}
		}
		for i, tid := range other {
			// A missed thread may have created threads before it is
			// attached now: with missed threads about, no later thread
			// is surely inherited.
			if origin[i] == originInherited && len(missed) == 0 {
				a.cov.Inherited++
			} else {
				a.cov.Ambiguous = append(a.cov.Ambiguous, tid)
			}
		}
		if len(missed) == 0 {
			return nil
		}
		if err := a.ensureFiles(len(missed) * a.lay.openParts()); err != nil {
			return err
		}
		opened, exited, err := a.openTargets(missed)
		a.targets = append(a.targets, opened...)
		a.cov.Exited += exited
		if err != nil {
			return err
		}
		a.cov.Missed = append(a.cov.Missed, missed...)
		marks.pidCovered = lastPID(a.root)
		marks.covered = a.sys.bootNanos()
	}
	return nil
}

func (a *Attachment) goneError() error {
	return fmt.Errorf("attach to pid %d: the process exited while counters were being opened: %w: %w", a.pid, procfs.ErrGone, errESRCH)
}

func newTarget(id, nparts int) *target {
	t := &target{id: id, cpu: -1, fds: make([]int, nparts), ids: make([]uint64, nparts), single: make([]bool, nparts)}
	for i := range t.fds {
		t.fds[i] = -1
	}
	return t
}

// openTargets opens the counters on each id in parallel. Threads that exited
// are closed and counted in exited; on any other failure it stops and
// returns the error with the targets opened so far (the caller closes
// them).
//
// The kernel installs a counter on a thread from the CPU the thread last
// ran on, by an interprocessor call when the opener is elsewhere; on a VM
// that call costs more than the rest of the open. So each thread's last
// CPU is read first (with its start time), and the counters are opened by
// one worker per CPU, bound to it (sysCalls.pinned), each taking only the
// threads of its CPU (byCPU). A tid that exits and is reused between the
// stat read and the open gets its counters with the old thread's start
// time: it needs pid_max to wrap within the attach, and is not guarded.
func (a *Attachment) openTargets(ids []int) (opened []*target, exited int, err error) {
	ts := make([]*target, len(ids))
	for i, id := range ids {
		ts[i] = newTarget(id, len(a.lay.parts))
		if a.cgroup {
			ts[i].cpu = id
		}
	}
	if !a.cgroup {
		a.readThreadStats(ts)
	}
	left := make([]bool, len(ts))
	var (
		stop    atomic.Bool
		errOnce sync.Once
		first   error
	)
	a.byCPU(ts, func(i int) bool {
		if stop.Load() {
			return false
		}
		err := a.openTarget(ts[i], false)
		switch {
		case err == nil:
		case gone(err) && !a.cgroup:
			a.closeTarget(ts[i])
			left[i] = true
		default:
			errOnce.Do(func() { first = err })
			stop.Store(true)
			return false
		}
		return true
	})
	for i, t := range ts {
		switch {
		case left[i]:
			exited++
		case t.opened():
			opened = append(opened, t)
		}
	}
	return opened, exited, first
}

// readThreadStats reads each thread's start time and last CPU, in
// parallel. A thread whose stat cannot be read keeps cpu -1 and start 0
// (its open finds out whether it exited).
func (a *Attachment) readThreadStats(ts []*target) {
	var next atomic.Int64
	a.parallel(len(ts), func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(ts) {
				return
			}
			if st, err := threadStat(a.root, a.pid, ts[i].id); err == nil {
				ts[i].start, ts[i].cpu = st.StartTime, st.CPU
			}
		}
	})
}

// byCPU runs work on every index of ts, one worker per CPU the targets
// last ran on (their cpu), bound to it: the kernel's part of the work runs
// on that CPU anyway, by an interprocessor call from anywhere else, so a
// worker done with its CPU's targets does not take another CPU's. Targets
// of unknown CPU go to a worker of their own (or several, as parallel
// shares them). work returns false to stop its worker.
func (a *Attachment) byCPU(ts []*target, work func(i int) bool) {
	at := map[int][]int{}
	var cpus []int
	for i, t := range ts {
		if _, ok := at[t.cpu]; !ok {
			cpus = append(cpus, t.cpu)
		}
		at[t.cpu] = append(at[t.cpu], i)
	}
	var wg sync.WaitGroup
	for _, cpu := range cpus {
		idx := at[cpu]
		if cpu < 0 {
			var next atomic.Int64
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.parallel(len(idx), func() {
					for {
						k := int(next.Add(1) - 1)
						if k >= len(idx) || !work(idx[k]) {
							return
						}
					}
				})
			}()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.sys.pinned(cpu, func() {
				for _, i := range idx {
					if !work(i) {
						return
					}
				}
			})
		}()
	}
	wg.Wait()
}

// parallel runs work on up to a.workers goroutines (fewer for few items) and
// waits for them.
func (a *Attachment) parallel(items int, work func()) {
	n := min(a.workers, (items+63)/64)
	if n <= 1 {
		work()
		return
	}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	wg.Wait()
}

func (t *target) opened() bool {
	for _, fd := range t.fds {
		if fd >= 0 {
			return true
		}
	}
	return t.own != nil && t.own.opened()
}

// openTarget opens every group on target t (and, for a thread of
// Options.Own, every group again without inherit), then reads the thread's
// start time when readThreadStats did not. With probe set (the first target), a part that fails because
// the event is not available here is marked not supported and dropped from
// the layout; on other targets every failure is returned. Errors wrap
// ErrPermission, errTooManyFiles, procfs.ErrGone (the thread exited), errRaced or
// the errno.
func (a *Attachment) openTarget(t *target, probe bool) error {
	for gi := 0; gi < len(a.lay.groups); gi++ {
		err := a.openGroup(t, gi, probe, !a.cgroup)
		if probe && errors.Is(err, errNoGroupRead) {
			// Start again on this target with every group split.
			a.closeTarget(t)
			a.lay.splitGroups()
			a.notes = append(a.notes, "this kernel refuses group reads of inherited counters (before Linux 4.13): every event is opened alone, so events meant to be read together (cycles and instructions) may be scheduled apart when counters are short")
			gi = -1
			continue
		}
		if err != nil {
			return err
		}
	}
	if a.cgroup {
		return nil
	}
	if a.own[t.id] {
		t.own = newTarget(t.id, len(a.lay.parts))
		for gi := range a.lay.groups {
			if err := a.openGroup(t.own, gi, false, false); err != nil {
				return err
			}
		}
	}
	if t.start == 0 {
		t.start, _ = threadStartTick(a.root, a.pid, t.id)
	}
	return nil
}

// errNoGroupRead: the kernel refused a group leader with inherit and
// PERF_FORMAT_GROUP, and took it without PERF_FORMAT_GROUP.
var errNoGroupRead = errors.New("the kernel refuses group reads of inherited counters")

// openGroup opens group gi on t, once more (up to groupTries times) when a
// member's open races with the thread's clones (see Attach).
func (a *Attachment) openGroup(t *target, gi int, probe, inherit bool) error {
	for try := 1; ; try++ {
		err := a.openGroupOnce(t, gi, probe, inherit)
		var race *memberRace
		if !errors.As(err, &race) {
			return err
		}
		a.closeGroup(t, gi)
		if try < groupTries {
			a.mu.Lock()
			a.cov.Reopened++
			a.mu.Unlock()
			time.Sleep(time.Duration(try) * time.Millisecond)
			continue
		}
		if probe && !a.groupFitsHere(gi, race.part) {
			a.lay.drop(race.part, a.unsupportedReason(race.part, gi, race.k, race.err))
			return a.openGroup(t, gi, probe, inherit)
		}
		return fmt.Errorf("%w: %s on %s: the kernel refused it in its group %d times while the thread was alive, creating threads: %w", errRaced, a.lay.partName(race.part), a.where(t), groupTries, race.err)
	}
}

// memberRace is a member's open that failed with EINVAL or ENODEV on a
// live thread.
type memberRace struct {
	part, k int
	err     error
}

func (e *memberRace) Error() string { return e.err.Error() }

// exitErrno reports whether err is an errno the kernel gives for an open on
// a thread that is exiting.
func exitErrno(err error) bool {
	return errors.Is(err, errESRCH) || errors.Is(err, errEINVAL) || errors.Is(err, errENODEV)
}

// openGroupOnce opens the members of group gi on t in order, the first as
// leader.
func (a *Attachment) openGroupOnce(t *target, gi int, probe, inherit bool) error {
	pid, cpu, flags := t.id, -1, flagFDCloexec
	if a.cgroup {
		pid, cpu, flags = a.cgFD, t.id, flagFDCloexec|flagPIDCgroup
	}
	leader := -1
	for k := 0; k < len(a.lay.groups[gi].parts); {
		g := a.lay.groups[gi]
		p := g.parts[k]
		attr := a.attr(p, len(g.parts) > 1, inherit)
		fd, err := a.sys.perfOpen(&attr, pid, cpu, leader, flags)
		if err != nil {
			switch {
			case probe && k == 0 && inherit && len(g.parts) > 1 && errors.Is(err, errEINVAL) && a.opensAlone(p, pid, cpu, flags):
				return errNoGroupRead
			case !a.cgroup && exitErrno(err) && (errors.Is(err, errESRCH) || threadExiting(a.root, a.pid, t.id)):
				return fmt.Errorf("open %s on %s: the thread exited (%w): %w", a.lay.partName(p), a.where(t), procfs.ErrGone, err)
			case !a.cgroup && k > 0 && (errors.Is(err, errEINVAL) || errors.Is(err, errENODEV)):
				return &memberRace{part: p, k: k, err: err}
			case probe && unsupportedErrno(err):
				a.lay.drop(p, a.unsupportedReason(p, gi, k, err))
				continue
			}
			return a.openError(t, p, err)
		}
		t.fds[p] = fd
		t.single[p] = !attrGrouped(attr)
		if !t.single[p] {
			// A group read gives each member's count with its id;
			// an event read alone needs none (one ioctl less per
			// counter: 16,000 on 2,000 threads × 8 events).
			id, err := a.sys.eventID(fd)
			if err != nil {
				return fmt.Errorf("get the id of %s on %s: %w", a.lay.partName(p), a.where(t), err)
			}
			t.ids[p] = id
		}
		if leader < 0 {
			leader = fd
		}
		k++
	}
	return nil
}

// attr is the perf_event_attr of part p: with PERF_FORMAT_GROUP when its
// group has several members, inherit or not.
func (a *Attachment) attr(p int, grouped, inherit bool) openAttr {
	return attrFor(a.attrs[p], grouped, inherit)
}

// opensAlone reports whether part p opens (and closes it again) without
// PERF_FORMAT_GROUP where it failed with it.
func (a *Attachment) opensAlone(p, pid, cpu, flags int) bool {
	attr := a.attr(p, false, true)
	fd, err := a.sys.perfOpen(&attr, pid, cpu, -1, flags)
	if err != nil {
		return false
	}
	a.sys.close(fd)
	return true
}

// groupFitsHere reports whether group gi, up to and including part, opens
// as a group on perfbench's own thread (without inherit, disabled): then
// the event is supported and what failed on the target was a race.
func (a *Attachment) groupFitsHere(gi, part int) bool {
	fds, ok := a.sys.openHere(a.groupAttrs(gi, part))
	for i := len(fds) - 1; i >= 0; i-- {
		a.sys.close(fds[i])
	}
	return ok
}

// groupAttrs are the attrs of group gi's members up to and including part,
// without inherit and disabled.
func (a *Attachment) groupAttrs(gi, part int) []openAttr {
	var out []openAttr
	g := a.lay.groups[gi]
	for _, p := range g.parts {
		out = append(out, attrDisabled(a.attr(p, len(g.parts) > 1, false)))
		if p == part {
			break
		}
	}
	return out
}

// closeGroup closes group gi's descriptors on t, members before the leader.
func (a *Attachment) closeGroup(t *target, gi int) {
	ps := a.lay.groups[gi].parts
	for k := len(ps) - 1; k >= 0; k-- {
		if p := ps[k]; t.fds[p] >= 0 {
			a.sys.close(t.fds[p])
			t.fds[p] = -1
		}
	}
}

// maxGroup is the number of members of the largest group.
func (a *Attachment) maxGroup() int {
	n := 1
	for _, g := range a.lay.groups {
		n = max(n, len(g.parts))
	}
	return n
}

// unsupportedErrno reports whether a perf_event_open failure means the event
// cannot be counted on this machine (rather than a problem of the target or
// of rights).
func unsupportedErrno(err error) bool {
	for _, e := range []error{errENOENT, errEOPNOTSUPP, errEINVAL, errENODEV, errE2BIG, errEBUSY} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// unsupportedReason says in words why part p (member k of group gi) did not
// open.
func (a *Attachment) unsupportedReason(p, gi, k int, err error) string {
	pt := a.lay.parts[p]
	enc := a.lay.events[pt.event].Encodings[pt.enc]
	if a.system != nil && !(errors.Is(err, errEINVAL) && k > 0) {
		if r := explainOpen(a.system, a.lay.events[pt.event], enc, err); r != "" {
			return strings.TrimPrefix(r, "not supported: ")
		}
	}
	var why string
	switch {
	case errors.Is(err, errENOENT) && (enc.Type == 0 || enc.Type == 3 || enc.Type == 4):
		why = "no hardware PMU on this machine (a VM without a virtual PMU?)"
	case errors.Is(err, errENOENT):
		why = "the kernel does not know this event"
	case errors.Is(err, errEOPNOTSUPP):
		why = "the PMU does not support this event or its modifiers"
	case errors.Is(err, errEINVAL) && k > 0:
		why = fmt.Sprintf("the kernel refused it in a group with %s (the group may not fit the PMU)", a.lay.partName(a.lay.groups[gi].parts[0]))
	case errors.Is(err, errEINVAL):
		why = "the kernel or PMU refused its encoding"
	case errors.Is(err, errENODEV):
		why = fmt.Sprintf("no %s PMU on this machine", encPMU(a.lay.events[pt.event], enc))
	case errors.Is(err, errE2BIG):
		why = "perf_event_attr is newer than this kernel"
	case errors.Is(err, errEBUSY):
		why = "the PMU is in exclusive use by another tool"
	default:
		why = "it could not be opened"
	}
	return fmt.Sprintf("%s (perf_event_open: %v)", why, err)
}

// openErr is an attach failure: a message that says what to do, and the
// sentinel and errno it wraps.
type openErr struct {
	msg  string
	errs []error
}

func (e *openErr) Error() string   { return e.msg }
func (e *openErr) Unwrap() []error { return e.errs }

func (a *Attachment) where(t *target) string {
	if a.cgroup {
		return fmt.Sprintf("CPU %d for the cgroup of pid %d", t.id, a.pid)
	}
	return fmt.Sprintf("tid %d of pid %d", t.id, a.pid)
}

// openError turns a perf_event_open failure of part p on t into the error
// Attach returns.
func (a *Attachment) openError(t *target, p int, err error) error {
	what := fmt.Sprintf("open %s on %s", a.lay.partName(p), a.where(t))
	switch {
	case errors.Is(err, errEACCES), errors.Is(err, errEPERM):
		msg := fmt.Sprintf("%s: %v (perf_event_paranoid=%s; %s)", what, err, a.paranoid(), refusedFix())
		switch {
		case a.cgroup && euid() == 0:
			msg = fmt.Sprintf("%s: %v (perf_event_paranoid=%s; cgroup mode counts per CPU: %s)", what, err, a.paranoid(), refusedFix())
		case a.cgroup:
			msg = fmt.Sprintf("%s: %v (perf_event_paranoid=%s; cgroup mode counts per CPU: run as root, grant CAP_PERFMON or set perf_event_paranoid to 0 or less)", what, err, a.paranoid())
		case a.system != nil:
			pt := a.lay.parts[p]
			if r := explainOpen(a.system, a.lay.events[pt.event], a.lay.events[pt.event].Encodings[pt.enc], err); r != "" {
				msg = what + ": " + r
			}
		}
		return &openErr{msg: msg, errs: []error{ErrPermission, err}}
	case errors.Is(err, errEMFILE), errors.Is(err, errENFILE):
		return a.filesError(what, err)
	case errors.Is(err, errESRCH) && !a.cgroup:
		return &openErr{msg: what + ": the thread exited: " + err.Error(), errs: []error{procfs.ErrGone, err}}
	case a.cgroup && errors.Is(err, errEBADF):
		return fmt.Errorf("%s: the kernel refused the cgroup (is it a cgroup v2 directory, and the perf_event controller not bound to cgroup v1?): %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// paranoid is kernel.perf_event_paranoid, or "unknown".
func (a *Attachment) paranoid() string {
	p, err := procfs.New(a.root).Sysctl("kernel.perf_event_paranoid")
	if err != nil {
		return "unknown"
	}
	return p
}

// spareFiles is what an attach leaves free under RLIMIT_NOFILE for the
// files perfbench opens while it counts (the server connection, /proc,
// pipes of a load command).
const spareFiles = 64

// filesError explains EMFILE: the descriptors the attach needs, those
// perfbench holds besides and keeps free, the limit, and how to raise it.
func (a *Attachment) filesError(what string, err error) error {
	targets, per := a.planned, a.lay.openParts()
	unit := "threads"
	if a.cgroup {
		unit = "CPUs"
	}
	need := targets * per
	// What perfbench holds besides this attachment's counters.
	held := a.sys.openFiles()
	for _, t := range a.targets {
		for _, fd := range t.fds {
			if fd >= 0 {
				held--
			}
		}
	}
	held = max(held, 0)
	want := need + held + spareFiles
	cur, max, lerr := a.sys.nofile()
	limit := "unknown"
	if lerr == nil {
		limit = fmt.Sprintf("%d (hard limit %d)", cur, max)
	}
	asRoot := " as root" // a limit above the hard limit needs root
	if euid() == 0 {
		asRoot = ""
	}
	msg := fmt.Sprintf("%s: %v: counting needs %d descriptors (%d %s × %d events), and perfbench holds %d others and keeps %d free for its own files: %d in all, but RLIMIT_NOFILE is %s: raise it with 'ulimit -n %d'%s in the shell that runs perfbench", what, err, need, targets, unit, per, held, spareFiles, want, limit, want, asRoot)
	if a.cgroup || need > 100000 {
		msg += fmt.Sprintf(", or count per CPU with cgroup mode (%d descriptors per event)", runtime.NumCPU())
	}
	return &openErr{msg: msg, errs: []error{errTooManyFiles, err}}
}

// ensureFiles raises the soft RLIMIT_NOFILE to the hard limit when n more
// descriptors (and spareFiles) would not fit under it, and fails early when
// they would not fit under the hard limit either.
func (a *Attachment) ensureFiles(n int) error {
	cur, max, err := a.sys.nofile()
	if err != nil {
		return nil // cannot tell: let the opens say
	}
	want := uint64(a.sys.openFiles() + n + spareFiles)
	if want > cur && cur < max {
		if err := a.sys.setNofile(max); err == nil {
			cur = max
		}
	}
	if want > cur {
		return a.filesError(fmt.Sprintf("attach to pid %d", a.pid), errEMFILE)
	}
	return nil
}

// closeTarget closes t's descriptors, members before leaders, and those of
// its counters without inherit.
func (a *Attachment) closeTarget(t *target) error {
	var first error
	if t.own != nil {
		first = a.closeTarget(t.own)
	}
	for p := len(t.fds) - 1; p >= 0; p-- {
		if t.fds[p] < 0 {
			continue
		}
		if err := a.sys.close(t.fds[p]); err != nil && first == nil {
			first = fmt.Errorf("close %s on %s: %w", a.lay.partName(p), a.where(t), err)
		}
		t.fds[p] = -1
	}
	return first
}

// closeAll closes every target's descriptors: sorted, in as many
// contiguous slices as there are workers, each closed by runs
// (sysCalls.closeAll).
func (a *Attachment) closeAll() error {
	var fds []int
	for _, t := range a.targets {
		for _, tt := range []*target{t, t.own} {
			if tt == nil {
				continue
			}
			for p, fd := range tt.fds {
				if fd >= 0 {
					fds = append(fds, fd)
					tt.fds[p] = -1
				}
			}
		}
	}
	a.targets = nil
	slices.Sort(fds)
	n := max(1, min(a.workers, (len(fds)+1023)/1024))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range n {
		part := fds[w*len(fds)/n : (w+1)*len(fds)/n]
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = a.sys.closeAll(part)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("close the counters of pid %d: %w", a.pid, err)
		}
	}
	return nil
}

// Close closes every counter. Closing twice is a no-op.
func (a *Attachment) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	return a.closeAll()
}

// Pid is the process the attachment counts.
func (a *Attachment) Pid() int { return a.pid }

// Coverage reports which threads are counted (thread mode).
func (a *Attachment) Coverage() coverage {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cov
	c.Missed = append([]int(nil), c.Missed...)
	c.Ambiguous = append([]int(nil), c.Ambiguous...)
	return c
}

// Warnings are the attachment's conditions that weaken every reading (they
// are in each Reading's Warnings too).
func (a *Attachment) Warnings() []string { return append([]string(nil), a.notes...) }

// Unsupported returns, for each event none of whose encodings opened on
// this machine (found by the probe on the first thread), why not, keyed by
// the event's name. Every other event is counted.
func (a *Attachment) Unsupported() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]string{}
	for i, e := range a.lay.events {
		reason, open := "", false
		if i < len(a.lay.reason) && a.lay.reason[i] != "" {
			reason = a.lay.reason[i]
		}
		for _, p := range a.lay.eventParts[i] {
			if a.lay.parts[p].group >= 0 {
				open = true
			} else if reason == "" {
				reason = a.lay.parts[p].reason
			}
		}
		if !open {
			if reason == "" {
				reason = "not supported"
			}
			out[e.Name] = reason
		}
	}
	return out
}

// Groups describes the groups as opened, perf-style:
// "{cycles,instructions},{task-clock,page-faults}".
func (a *Attachment) Groups() string { return a.lay.describe() }

// Threads returns the ids of the threads counters are open on (thread mode),
// sorted.
func (a *Attachment) Threads() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cgroup {
		return nil
	}
	out := make([]int, len(a.targets))
	for i, t := range a.targets {
		out[i] = t.id
	}
	sort.Ints(out)
	return out
}

// Descriptors is how many counter descriptors are open.
func (a *Attachment) Descriptors() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, t := range a.targets {
		for _, tt := range []*target{t, t.own} {
			if tt == nil {
				continue
			}
			for _, fd := range tt.fds {
				if fd >= 0 {
					n++
				}
			}
		}
	}
	return n
}

// Read reads every counter: one read(2) per group per thread (or CPU), a
// thread's counters without inherit (Options.Own) just before its inherited
// ones. A group that cannot be read (see readGroup) leaves its events'
// counts on that thread unknown in the Reading, with the reason: every
// window that uses the Reading says so instead of giving a count. Other
// read failures fail the Read.
func (a *Attachment) Read() (Reading, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return Reading{}, fmt.Errorf("read counters of pid %d: already closed", a.pid)
	}
	n := len(a.targets)
	r := Reading{End: time.Now(), lay: a.lay, notes: a.notes}
	r.targets = make([]int, n)
	r.starts = make([]uint64, n)
	r.parts = make([][]Count, n)
	r.own = make([][]Count, n)
	for i, t := range a.targets {
		r.targets[i], r.starts[i] = t.id, t.start
	}
	// One allocation for every thread's counts.
	np := len(a.lay.parts)
	rows := make([]Count, n*np)
	gaps := make([][]gap, n)
	var (
		next    atomic.Int64
		errOnce sync.Once
		first   error
	)
	a.parallel(n, func() {
		buf := make([]byte, groupReadSize(a.maxGroup()))
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			t := a.targets[i]
			if t.own != nil {
				row := make([]Count, np)
				gs, err := a.readTarget(t.own, i, buf, row)
				if err != nil {
					errOnce.Do(func() { first = err })
					return
				}
				r.own[i] = row
				gaps[i] = append(gaps[i], gs...)
			}
			row := rows[i*np : (i+1)*np : (i+1)*np]
			gs, err := a.readTarget(t, i, buf, row)
			if err != nil {
				errOnce.Do(func() { first = err })
				return
			}
			r.parts[i] = row
			gaps[i] = append(gaps[i], gs...)
		}
	})
	if first != nil {
		return Reading{}, first
	}
	for _, gs := range gaps {
		r.gaps = append(r.gaps, gs...)
	}
	if a.cgroup {
		r.cpuGap = a.newCPUs()
	}
	r.finish()
	return r, nil
}

// readTries and readWait bound how long a group answering ECHILD is read
// again: a group whose inherited copies change while a thread exits may
// answer it for a moment; one inherited in part keeps answering it (see
// Attach).
const (
	readTries = 40
	readWait  = 500 * time.Microsecond
)

// errPinnedError: read(2) returned end of file: the kernel put a pinned
// group in error state because it could not be scheduled.
var errPinnedError = errors.New("the kernel put the pinned group in error state: it could not be scheduled on the PMU")

// readTarget reads every group of t (row ti of a Reading) into row, one
// count per part, and returns the parts whose group could not be read with
// the reason.
func (a *Attachment) readTarget(t *target, ti int, buf []byte, row []Count) ([]gap, error) {
	var gaps []gap
	for _, g := range a.lay.groups {
		if len(g.parts) == 0 || t.fds[g.parts[0]] < 0 {
			continue
		}
		err := a.readGroup(t, g, buf, row)
		if err == nil {
			continue
		}
		if !errors.Is(err, errECHILD) && !errors.Is(err, errPinnedError) {
			return nil, err
		}
		why := fmt.Sprintf("%s on %s: %v", a.lay.partName(g.parts[0]), a.where(t), errPinnedError)
		if errors.Is(err, errECHILD) {
			why = fmt.Sprintf("the group of %s on %s could not be read (ECHILD for %s: a thread it created while the group was being opened inherited only part of it)", a.lay.partName(g.parts[0]), a.where(t), readTries*readWait)
		}
		for _, p := range g.parts {
			row[p] = Count{}
			gaps = append(gaps, gap{target: ti, part: p, why: why})
		}
	}
	return gaps, nil
}

// readGroup reads group g on t, again for up to readTries × readWait while
// the kernel answers ECHILD, into row (indexed by part).
func (a *Attachment) readGroup(t *target, g group, buf []byte, row []Count) error {
	lead := g.parts[0]
	name := func() string { return fmt.Sprintf("read %s on %s", a.lay.partName(lead), a.where(t)) }
	b := buf[:groupReadSize(len(g.parts))]
	var n int
	var err error
	for try := 1; ; try++ {
		n, err = a.sys.read(t.fds[lead], b)
		if err == nil || !errors.Is(err, errECHILD) || try == readTries {
			break
		}
		time.Sleep(readWait)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name(), err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", name(), errPinnedError)
	}
	if t.single[lead] {
		c, err := decodeSingleRead(b[:n])
		if err != nil {
			return fmt.Errorf("%s: %w", name(), err)
		}
		row[lead] = c
		return nil
	}
	gr, err := decodeGroupRead(b[:n])
	if err != nil {
		return fmt.Errorf("%s: %w", name(), err)
	}
	if len(gr.Values) != len(g.parts) {
		return fmt.Errorf("%s: the group has %d members, the kernel returned %d", name(), len(g.parts), len(gr.Values))
	}
	for k, p := range g.parts {
		j := k
		if gr.IDs[k] != t.ids[p] {
			j = indexOf(gr.IDs, t.ids[p])
			if j < 0 {
				return fmt.Errorf("%s: id %d of %s not in the group read", name(), t.ids[p], a.lay.partName(p))
			}
		}
		row[p] = Count{Raw: gr.Values[j], Enabled: gr.Enabled, Running: gr.Running}
	}
	return nil
}

func indexOf(s []uint64, v uint64) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// tidList prints up to 10 ids: "12, 13, 20 and 4 more".
func tidList(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i == 10 {
			fmt.Fprintf(&b, " and %d more", len(ids)-10)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}
