package procfs

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// Status is the part of /proc/PID/status (or /proc/PID/task/TID/status)
// that perfbench uses. A process's context switch counts are its main
// thread's only: the threads' own files have theirs.
type Status struct {
	// Name is the command name as the kernel prints it here (with
	// control characters escaped).
	Name  string
	State byte
	// Tgid is the process (thread group) id, Pid the thread's own id.
	Tgid, Pid, PPid int
	// Threads is the thread count of the process.
	Threads int
	// EUID is the effective user id, -1 when there is no Uid line.
	EUID int
	// CapEff is the effective capability mask; HasCapEff says whether the
	// line was there.
	CapEff    uint64
	HasCapEff bool
	// SigIgn is the mask of the signals the process ignores (bit n-1 for
	// signal n); HasSigIgn says whether the line was there.
	SigIgn    uint64
	HasSigIgn bool
	// RSSBytes is VmRSS; HasRSS is false for tasks without memory (kernel
	// threads, zombies).
	RSSBytes uint64
	HasRSS   bool
	// Voluntary and Involuntary are voluntary_ctxt_switches and
	// nonvoluntary_ctxt_switches; HasCtxt says whether the kernel printed
	// both.
	Voluntary   uint64
	Involuntary uint64
	HasCtxt     bool
	// CPUsAllowed is Cpus_allowed_list: the CPUs the task may run on, in
	// the kernel's list format ("0-3,8").
	CPUsAllowed string
}

// parseStatus parses the contents of a status file: "Key:\tvalue" lines,
// of which it keeps those Status has. A file without a Pid line is not a
// status file.
func parseStatus(b []byte) (Status, error) {
	s := Status{EUID: -1}
	var hasPid, hasVol, hasInvol bool
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		key := string(k)
		bad := func() error { return fmt.Errorf("%w: status %s is %q", errFormat, key, bytes.TrimSpace(v)) }
		num := func(max uint64) (uint64, error) {
			n, ok := parseUint(bytes.TrimSpace(v))
			if !ok || n > max {
				return 0, bad()
			}
			return n, nil
		}
		var err error
		var n uint64
		switch key {
		case "Name":
			s.Name = string(bytes.TrimPrefix(v, []byte("\t")))
		case "State":
			f := bytes.TrimSpace(v)
			if len(f) == 0 {
				return s, bad()
			}
			s.State = f[0]
		case "Tgid":
			n, err = num(math.MaxInt32)
			s.Tgid = int(n)
		case "Pid":
			n, err = num(math.MaxInt32)
			s.Pid, hasPid = int(n), true
		case "PPid":
			n, err = num(math.MaxInt32)
			s.PPid = int(n)
		case "Threads":
			n, err = num(math.MaxInt32)
			s.Threads = int(n)
		case "Uid": // real, effective, saved, file system
			f := bytes.Fields(v)
			if len(f) < 2 {
				return s, bad()
			}
			n, ok := parseUint(f[1])
			if !ok || n > math.MaxUint32 {
				return s, bad()
			}
			s.EUID = int(n)
		case "CapEff":
			n, err = strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			if err != nil {
				return s, bad()
			}
			s.CapEff, s.HasCapEff = n, true
		case "SigIgn":
			n, err = strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			if err != nil {
				return s, bad()
			}
			s.SigIgn, s.HasSigIgn = n, true
		case "VmRSS":
			kb, unit, _ := bytes.Cut(bytes.TrimSpace(v), []byte(" "))
			n, ok := parseUint(kb)
			if !ok || string(bytes.TrimSpace(unit)) != "kB" || n > math.MaxUint64/1024 {
				return s, bad()
			}
			s.RSSBytes, s.HasRSS = n*1024, true
		case "Cpus_allowed_list":
			s.CPUsAllowed = string(bytes.TrimSpace(v))
		case "voluntary_ctxt_switches":
			s.Voluntary, err = num(math.MaxUint64)
			hasVol = true
		case "nonvoluntary_ctxt_switches":
			s.Involuntary, err = num(math.MaxUint64)
			hasInvol = true
		}
		if err != nil {
			return s, err
		}
	}
	if !hasPid {
		return s, fmt.Errorf("%w: status has no Pid line", errFormat)
	}
	s.HasCtxt = hasVol && hasInvol
	return s, nil
}

// sigchld is SIGCHLD's number on Linux.
const sigchld = 17

// IgnoresChildren reports whether the process ignores SIGCHLD, so that the
// kernel reaps its children itself as they exit: their CPU time never
// reaches its cutime and cstime (SA_NOCLDWAIT, which does the same, is not
// shown in /proc).
func (s Status) IgnoresChildren() bool { return s.HasSigIgn && s.SigIgn&(1<<(sigchld-1)) != 0 }
