package perfevent

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// clockTick is the unit of the start time in /proc/PID/task/TID/stat: 1/USER_HZ
// seconds, and USER_HZ is 100 on every Linux architecture perf runs on.
const clockTick = 10_000_000 // ns

// listThreads returns the thread ids of process pid under root (the
// entries of <root>/proc/PID/task), sorted, with pid itself (the
// thread-group leader) first when it is listed. A process that does not
// exist, or has no threads left, is procfs.ErrGone.
func listThreads(root string, pid int) ([]int, error) {
	tids, err := procfs.New(root).Proc(pid).Tasks()
	if err != nil {
		if errors.Is(err, procfs.ErrGone) {
			return nil, err
		}
		return nil, fmt.Errorf("list threads of pid %d: %w", pid, err)
	}
	sort.Slice(tids, func(i, j int) bool {
		if (tids[i] == pid) != (tids[j] == pid) {
			return tids[i] == pid
		}
		return tids[i] < tids[j]
	})
	return tids, nil
}

// processGone reports whether process pid is gone under root: no
// <root>/proc/PID/task any more, or no thread in it.
func processGone(root string, pid int) bool {
	_, err := procfs.New(root).Proc(pid).Tasks()
	return errors.Is(err, procfs.ErrGone)
}

// threadExiting reports whether thread tid of pid is gone or exiting: its
// /proc entry is missing or cannot be read, or its state is zombie or
// dead. A thread on its way out makes perf_event_open fail with EINVAL on
// a group member after its leader opened; the entry goes within
// milliseconds, so it is polled for a little while.
func threadExiting(root string, pid, tid int) bool {
	t := procfs.New(root).Proc(pid).Task(tid)
	for try := 0; try < 10; try++ {
		if t.Alive() != nil {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// threadStartTick returns the start time of thread tid of pid, in clock ticks
// since boot (field 22 of /proc/PID/task/TID/stat).
func threadStartTick(root string, pid, tid int) (uint64, error) {
	st, err := threadStat(root, pid, tid)
	return st.StartTime, err
}

// threadStat reads /proc/PID/task/TID/stat under root: the thread's start
// time and the CPU it last ran on among the rest.
func threadStat(root string, pid, tid int) (procfs.Stat, error) {
	return procfs.New(root).Proc(pid).Task(tid).Stat()
}

// threadOrigin is what the rescan concludes about a thread that was not in
// the listing counters were attached from.
type threadOrigin int

const (
	// originMissed: created before any counter of the process was open,
	// so no counted thread created it: it must be attached.
	originMissed threadOrigin = iota
	// originInherited: created after every thread then alive had
	// counters, so its creator was counted and it carries inherited
	// counters: attaching it again would count it twice.
	originInherited
	// originAmbiguous: created while counters were being opened; whether
	// its creator had counters yet cannot be told from the start time.
	originAmbiguous
)

func (o threadOrigin) String() string {
	switch o {
	case originMissed:
		return "missed"
	case originInherited:
		return "inherited"
	}
	return "ambiguous"
}

// attachMarks are the two instants the rescan classifies new threads
// against, each in two clocks: the moment just before the first counter of
// the process was opened, and the moment after which every thread then known
// had counters ("covered").
type attachMarks struct {
	// firstOpen and covered are CLOCK_BOOTTIME ns, the clock of thread
	// start times in /proc.
	firstOpen, covered int64
	// pidFirst and pidCovered are /proc/sys/kernel/ns_last_pid at those
	// moments: the last pid (or tid) the kernel handed out. 0 when it
	// could not be read.
	pidFirst, pidCovered int
}

// classify places a new thread against the marks: by its tid when pid
// allocation did not wrap since pidFirst (pidNow is ns_last_pid read after
// the listing the thread was found in; tids are handed out in increasing
// order until they wrap, and a thread's inherited counters are copied in
// clone(2) just before its tid is allocated), else, or when the tid falls
// between the marks, by its start time, whose resolution is a 10 ms tick.
func (m attachMarks) classify(tid int, startTick uint64, pidNow int) threadOrigin {
	if m.pidFirst > 0 && m.pidFirst <= m.pidCovered && m.pidCovered <= pidNow {
		switch {
		case tid <= m.pidFirst:
			return originMissed
		case tid > m.pidCovered:
			return originInherited
		}
	}
	return classifyThread(startTick, m.firstOpen, m.covered)
}

// classifyThread places a thread started at tick start (ticks since boot)
// against the attach: firstOpen is the boot-clock instant (ns) just before
// the first counter of the process was opened, covered the instant after
// which every live thread of the process had counters. The start time has
// a resolution of one tick, so a thread is missed only if its whole tick
// ends before firstOpen, inherited only if its tick begins at or after
// covered.
func classifyThread(start uint64, firstOpen, covered int64) threadOrigin {
	lo := int64(start) * clockTick
	hi := lo + clockTick
	switch {
	case hi <= firstOpen:
		return originMissed
	case lo >= covered:
		return originInherited
	}
	return originAmbiguous
}

// lastPID reads kernel.ns_last_pid under root, the last pid handed out
// in this pid namespace; 0 when it cannot be read.
func lastPID(root string) int {
	n, err := procfs.New(root).SysctlInt("kernel.ns_last_pid")
	if err != nil || n < 0 {
		return 0
	}
	return n
}
