package calibrate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/perfevent"
	"golang.org/x/sys/unix"
)

// liveMachine is this machine, seen from the calibration thread: the
// calling thread, which must be locked (runtime.LockOSThread) and stay so.
type liveMachine struct {
	sys      *perfevent.System
	root     string
	proc     procfs.Proc // the calibration thread in /proc
	pid, tid int
	cpu      int
	tickNs   uint64
	old      unix.CPUSet // the thread's CPUs before it was pinned
}

// newMachine pins the calling thread, which must be locked to its
// goroutine, to one CPU (see pickCPU).
func newMachine(sys *perfevent.System, root string) (*liveMachine, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("calibrate: read the CPUs this thread may run on: %w", err)
	}
	var allowed []int
	for n := range len(set) * 64 {
		if set.IsSet(n) {
			allowed = append(allowed, n)
		}
	}
	if len(allowed) == 0 {
		return nil, fmt.Errorf("calibrate: this thread may run on no CPU")
	}
	m := &liveMachine{sys: sys, root: root, pid: os.Getpid(), tid: unix.Gettid(), cpu: pickCPU(allowed, sys), old: set}
	var one unix.CPUSet
	one.Set(m.cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return nil, fmt.Errorf("calibrate: pin thread %d to CPU %d: %w", m.tid, m.cpu, err)
	}
	m.proc = procfs.New(root).Self().Task(m.tid)
	m.tickNs = uint64(1e9 / procfs.ClockTicks())
	return m, nil
}

func (m *liveMachine) where() (tid, cpu int) { return m.tid, m.cpu }

func (m *liveMachine) spin(n uint64) { spinChunks(n) }

func (m *liveMachine) probe(e perfevent.Event) error { return m.sys.Probe(e) }

// count attaches the events to this process, every thread (perfevent has
// no attach to one thread), and reads the calibration thread's row. The
// row is the thread's own count although the counters are inherited: a
// locked thread creates no threads (the Go runtime has its template thread
// create them) and the calibration forks nothing.
func (m *liveMachine) count(l perfevent.List) (meter, error) {
	a, err := perfevent.Attach(m.pid, l.Events, perfevent.Options{Groups: l.Groups, System: m.sys, Root: m.root})
	if err != nil {
		return nil, err
	}
	return &attachMeter{a: a, tid: m.tid}, nil
}

type attachMeter struct {
	a   *perfevent.Attachment
	tid int
}

func (am *attachMeter) read() ([]perfevent.Count, error) {
	r, err := am.a.Read()
	if err != nil {
		return nil, err
	}
	for _, e := range r.Events {
		if e.Missing != "" {
			return nil, fmt.Errorf("read counters: %s: %s", e.Event.Name, e.Missing)
		}
	}
	for _, t := range r.Threads {
		if t.Tid == am.tid && !t.Descendants {
			return t.Counts, nil
		}
	}
	return nil, fmt.Errorf("read counters: the calibration thread %d has none", am.tid)
}

func (am *attachMeter) unsupported() map[string]string { return am.a.Unsupported() }

func (am *attachMeter) close() error { return am.a.Close() }

// threadTime reads schedstat, stat and status of the calibration thread. It yields
// the CPU first: the kernel adds a running thread's run time to what /proc
// shows only at a scheduler event (a tick, a switch), so a thread reading
// its own /proc would see its time up to one tick old; sched_yield brings
// it up to date (the scheduler accounts the current thread as it picks the
// next one, itself when the CPU is otherwise idle).
func (m *liveMachine) threadTime() (cpuTime, error) {
	t := cpuTime{tickNs: m.tickNs}
	unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) // cannot fail
	st, err := m.proc.Stat()
	if err != nil {
		return t, fmt.Errorf("calibrate: %w", err)
	}
	t.ticks = st.UTime + st.STime
	if ss, err := m.proc.Status(); err == nil && ss.HasCtxt {
		t.switches, t.hasSwitches = ss.Voluntary+ss.Involuntary, true
	}
	if b, err := m.proc.ReadFile("schedstat"); err == nil {
		t.sched, t.hasSched = parseSchedstat(b)
	}
	return t, nil
}

// cpuFreq reads scaling_cur_freq of the calibration CPU.
func (m *liveMachine) cpuFreq() (float64, bool) {
	b, err := os.ReadFile(filepath.Join(m.root, "sys/devices/system/cpu", "cpu"+strconv.Itoa(m.cpu), "cpufreq/scaling_cur_freq"))
	if err != nil {
		return 0, false
	}
	khz, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
	return khz, err == nil && khz > 0
}

// releaseThread gives the calibration thread back the CPUs it had before
// it was pinned. Until it has, the thread must stay locked: a pinned
// thread handed back to the runtime would run other goroutines on one CPU
// (and the process's main thread, which the runtime never ends, would stay
// pinned for the process's life).
func releaseThread(m *liveMachine) error {
	if err := unix.SchedSetaffinity(0, &m.old); err != nil {
		return fmt.Errorf("calibrate: give thread %d back its CPUs: %w", m.tid, err)
	}
	return nil
}
