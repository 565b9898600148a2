package perfevent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// clockTick is the unit of the start time in /proc/PID/task/TID/stat: 1/USER_HZ
// seconds, and USER_HZ is 100 on every Linux architecture perf runs on.
const clockTick = 10_000_000 // ns

// procDir is the proc folder under root ("/" when root is empty).
func procDir(root string) string {
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, "proc")
}

// listThreads returns the thread ids under <root>/proc/PID/task, sorted, with
// pid itself (the thread-group leader) first when it is listed. A process
// that does not exist is ErrNoProcess.
func listThreads(root string, pid int) ([]int, error) {
	dir := filepath.Join(procDir(root), strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errESRCH) {
			return nil, fmt.Errorf("pid %d: %w", pid, errNoProcess)
		}
		return nil, fmt.Errorf("list threads of pid %d: %w", pid, err)
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil && tid > 0 {
			tids = append(tids, tid)
		}
	}
	if len(tids) == 0 {
		// A zombie: the directory is there, the threads are gone.
		return nil, fmt.Errorf("pid %d has no threads left (it is exiting): %w", pid, errNoProcess)
	}
	sort.Slice(tids, func(i, j int) bool {
		if (tids[i] == pid) != (tids[j] == pid) {
			return tids[i] == pid
		}
		return tids[i] < tids[j]
	})
	return tids, nil
}

// processExists reports whether <root>/proc/PID is there.
func processExists(root string, pid int) bool {
	_, err := os.Stat(filepath.Join(procDir(root), strconv.Itoa(pid)))
	return err == nil
}

// threadExiting reports whether thread tid of pid is gone or exiting: its
// /proc entry is missing or its state is zombie or dead. A thread on its way
// out makes perf_event_open fail with EINVAL on a group member after its
// leader opened; the entry goes within milliseconds, so it is polled for a
// little while.
func threadExiting(root string, pid, tid int) bool {
	path := filepath.Join(procDir(root), strconv.Itoa(pid), "task", strconv.Itoa(tid), "stat")
	for try := 0; try < 10; try++ {
		b, err := os.ReadFile(path)
		if err != nil {
			return true
		}
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			if f := bytes.Fields(b[i+1:]); len(f) > 0 && (f[0][0] == 'Z' || f[0][0] == 'X') {
				return true
			}
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// threadStartTick returns the start time of thread tid of pid, in clock ticks
// since boot (field 22 of /proc/PID/task/TID/stat).
func threadStartTick(root string, pid, tid int) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(procDir(root), strconv.Itoa(pid), "task", strconv.Itoa(tid), "stat"))
	if err != nil {
		return 0, err
	}
	return parseStatStartTime(b)
}

// parseStatStartTime returns field 22 (starttime) of a /proc/.../stat line.
// The second field, the command name in parentheses, may hold spaces and
// parentheses itself, so fields are counted from the last ')'.
func parseStatStartTime(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse stat: no command field")
	}
	fields := bytes.Fields(b[i+1:])
	// fields[0] is field 3 (state); starttime is field 22.
	const idx = 22 - 3
	if len(fields) <= idx {
		return 0, fmt.Errorf("parse stat: %d fields after the command, need %d", len(fields), idx+1)
	}
	v, err := strconv.ParseUint(string(fields[idx]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse stat: starttime %q: %w", fields[idx], err)
	}
	return v, nil
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

// lastPID reads <root>/proc/sys/kernel/ns_last_pid, the last pid handed out
// in this pid namespace; 0 when it cannot be read.
func lastPID(root string) int {
	b, err := os.ReadFile(filepath.Join(procDir(root), "sys/kernel/ns_last_pid"))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
