package procfs

import (
	"bytes"
	"fmt"
	"math"
)

// Stat is the part of /proc/PID/stat (or /proc/PID/task/TID/stat) that
// perfbench uses. For a process, the fault counts and CPU times cover every
// thread it ever had, exited ones included; for a thread, that thread only.
type Stat struct {
	PID  int
	Comm string
	// State is the task state letter: R running, S sleeping, D disk
	// sleep, T stopped, t traced, I idle, Z zombie, X dead.
	State byte
	PPID  int
	// Session is the session id (field 6).
	Session int
	// MinFlt and MajFlt are page faults that needed no disk read and ones
	// that did.
	MinFlt uint64
	MajFlt uint64
	// UTime and STime are user and system CPU time in clock ticks
	// (ClockTicks a second).
	UTime uint64
	STime uint64
	// CUTime and CSTime are the user and system CPU time of the
	// process's reaped children (and of theirs), in clock ticks: a
	// child's time is added when it is reaped, not while it runs.
	CUTime uint64
	CSTime uint64
	// NumThreads is the thread count of the process.
	NumThreads int
	// StartTime is when the task started, in clock ticks after boot: with
	// the id it identifies a task, since ids are reused.
	StartTime uint64
	// CPU is the CPU the task last ran on (field 39, processor); -1 when
	// the line ends before it.
	CPU int
}

// Exited reports whether the task has exited: a zombie or dead.
func (s Stat) Exited() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// statFields is the number of fields parseStat needs after the command
// name: fields 3 (state) to 22 (starttime), numbered as in proc(5).
const statFields = 22 - 2

// parseStat parses the contents of a stat file. The command name may hold
// spaces, parentheses and any other byte: it runs from the first '(' to the
// last ')', since every field after it is a number or the state letter.
// Fields the kernel added after starttime are ignored, but for processor.
func parseStat(b []byte) (Stat, error) {
	var s Stat
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return s, fmt.Errorf("%w: no (comm) in stat", errFormat)
	}
	pid, ok := parseUint(bytes.TrimSpace(b[:open]))
	if !ok || pid == 0 || pid > math.MaxInt32 {
		return s, fmt.Errorf("%w: stat pid %q", errFormat, bytes.TrimSpace(b[:open]))
	}
	s.PID, s.Comm = int(pid), string(b[open+1:end])
	f := bytes.Fields(b[end+1:])
	if len(f) < statFields {
		return s, fmt.Errorf("%w: stat has %d fields after the comm, want at least %d", errFormat, len(f), statFields)
	}
	field := func(n int) []byte { return f[n-3] }
	if len(field(3)) != 1 {
		return s, fmt.Errorf("%w: stat state %q", errFormat, field(3))
	}
	s.State = field(3)[0]
	var err error
	num := func(n int, max uint64) uint64 {
		v, ok := parseUint(field(n))
		if (!ok || v > max) && err == nil {
			err = fmt.Errorf("%w: stat field %d is %q", errFormat, n, field(n))
		}
		return v
	}
	s.PPID = int(num(4, math.MaxInt32))
	s.Session = int(num(6, math.MaxInt32))
	s.MinFlt = num(10, math.MaxUint64)
	s.MajFlt = num(12, math.MaxUint64)
	s.UTime = num(14, math.MaxUint64)
	s.STime = num(15, math.MaxUint64)
	s.CUTime = num(16, math.MaxUint64)
	s.CSTime = num(17, math.MaxUint64)
	s.NumThreads = int(num(20, math.MaxInt32))
	s.StartTime = num(22, math.MaxUint64)
	s.CPU = -1
	if len(f) >= 39-2 {
		s.CPU = int(num(39, math.MaxInt32))
	}
	if err != nil {
		return Stat{}, err
	}
	return s, nil
}

// parseUint parses a decimal number of digits only (no sign), without the
// allocation of converting to a string.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
