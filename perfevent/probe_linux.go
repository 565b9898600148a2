package perfevent

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// Probe tells whether e can be counted here: it opens every encoding of e on
// this process, disabled, and closes it again. It returns nil, or an
// *OpenError that wraps ErrNotSupported or ErrPermission and says why.
func (s *System) Probe(e Event) error { return s.ProbePid(e, 0) }

// ProbePid is Probe on process pid (0: this process). The counters are
// opened disabled and closed at once: the process is not disturbed.
func (s *System) ProbePid(e Event, pid int) error {
	target := "this process"
	if pid > 0 {
		target = fmt.Sprintf("pid %d", pid)
	}
	if len(e.Encodings) == 0 {
		return &OpenError{Event: e.Name, Target: target, Reason: "the event has no encoding", Err: unix.EINVAL, Kind: ErrNotSupported}
	}
	for _, enc := range e.Encodings {
		attr := e.baseAttr(enc)
		attr.Bits |= unix.PerfBitDisabled
		attr.Read_format = unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING
		fd, err := unix.PerfEventOpen(&attr, pid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			return s.OpenError(e, enc, target, err)
		}
		unix.Close(fd)
	}
	return nil
}

// OpenError explains an error of perf_event_open for encoding enc of event e
// opened on target ("tid 4187 of pid 4121"). Permission errors name
// perf_event_paranoid and the privilege needed; ENOENT on a machine without
// a hardware PMU says so.
func (s *System) OpenError(e Event, enc Encoding, target string, err error) error {
	oe := &OpenError{Event: e.Name, PMU: enc.PMU, Target: target, Err: err}
	var errno unix.Errno
	if !errors.As(err, &errno) {
		oe.Reason = err.Error()
		return oe
	}
	name := unix.ErrnoName(errno)
	hw := e.Kind == KindHardware || e.Kind == KindCache || e.Kind == KindRaw
	switch errno {
	case unix.EACCES, unix.EPERM:
		oe.Kind = ErrPermission
		if euid() == 0 {
			oe.Reason = fmt.Sprintf("permission denied even to root (%s): the kernel refuses this event here (lockdown, a security module, or a container's seccomp policy)", name)
		} else {
			oe.Reason = "permission denied (" + s.permissionHint(e) + ")"
		}
	case unix.ENOENT:
		oe.Kind = ErrNotSupported
		switch {
		case hw && !s.HasHardwarePMU():
			oe.Reason = "not supported: this machine has no hardware PMU (ENOENT; usual in a VM without a virtual PMU)"
		case hw:
			oe.Reason = fmt.Sprintf("not supported: the CPU's PMU (%s) has no such event (ENOENT)", enc.PMU)
		case e.Kind == kindTracepoint:
			oe.Reason = "not supported: the kernel has no such tracepoint (ENOENT)"
		default:
			oe.Reason = fmt.Sprintf("not supported: PMU %s (type %d) does not take this config (ENOENT)", enc.PMU, enc.Type)
		}
	case unix.EOPNOTSUPP:
		oe.Kind = ErrNotSupported
		oe.Reason = fmt.Sprintf("not supported: PMU %s cannot count this way (EOPNOTSUPP)%s", enc.PMU, modifierHint(e))
	case unix.EINVAL:
		oe.Kind = ErrNotSupported
		oe.Reason = fmt.Sprintf("not supported: PMU %s rejects this event (EINVAL: a config bit, modifier or per-task counting it does not have)%s", enc.PMU, modifierHint(e))
	case unix.ENODEV:
		oe.Kind = ErrNotSupported
		oe.Reason = fmt.Sprintf("not supported: PMU %s is not available for this CPU or task (ENODEV)", enc.PMU)
	case unix.ESRCH:
		oe.Reason = "no such process (ESRCH): it exited or never existed"
	case unix.EMFILE, unix.ENFILE:
		oe.Reason = fmt.Sprintf("too many open files (%s): raise the limit with ulimit -n (each thread needs one descriptor per event)", name)
	case unix.EBUSY:
		oe.Reason = "the PMU is busy (EBUSY): another user holds its counters exclusively"
	default:
		oe.Reason = fmt.Sprintf("%v (%s)", errno, name)
	}
	return oe
}

// permissionHint says what perf_event_paranoid allows and what is needed.
func (s *System) permissionHint(e Event) string {
	if s == nil || s.Paranoid == nil {
		return "perf_event_paranoid unknown; " + refusedFix()
	}
	p := *s.Paranoid
	var b strings.Builder
	fmt.Fprintf(&b, "perf_event_paranoid=%d; %s", p, refusedFix())
	switch {
	case p >= 3:
		b.WriteString(", or lower it: sysctl kernel.perf_event_paranoid=2")
	case p == 2 && !e.Modifiers.ExcludeKernel:
		b.WriteString(", or count user space only with :u")
	}
	return b.String()
}

func modifierHint(e Event) string {
	m := e.Modifiers
	if m.ExcludeUser || m.ExcludeKernel || m.ExcludeHV || m.ExcludeIdle || m.ExcludeGuest || m.ExcludeHost {
		return "; this PMU may not filter by privilege level: try without the modifiers"
	}
	return ""
}
