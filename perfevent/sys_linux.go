package perfevent

import (
	"errors"
	"fmt"
	"runtime"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// openAttr is the perf_event_attr passed to perf_event_open.
type openAttr = unix.PerfEventAttr

// engineAttr is the attr of one counter of the engine: the event's identity
// and exclude bits (baseAttr), read_format asking for both times, the id and
// the whole group in one read, and inherit in thread mode so threads created
// by a counted thread are counted too. Counters start enabled: windows are
// deltas of reads, so there is nothing to enable or reset later.
func engineAttr(e Event, enc Encoding, inherit bool) openAttr {
	a := e.baseAttr(enc)
	a.Read_format = engineReadFormat
	if inherit {
		a.Bits |= unix.PerfBitInherit
	}
	return a
}

// attrFor is base (an engineAttr with inherit) as opened in a group of
// several events (grouped: PERF_FORMAT_GROUP) or alone, with inherit or
// without.
func attrFor(base openAttr, grouped, inherit bool) openAttr {
	if !grouped {
		base.Read_format = singleReadFormat
	}
	if !inherit {
		base.Bits &^= unix.PerfBitInherit
	}
	return base
}

// attrDisabled is a opened disabled.
func attrDisabled(a openAttr) openAttr {
	a.Bits |= unix.PerfBitDisabled
	return a
}

// attrGrouped reports whether a reads its whole group.
func attrGrouped(a openAttr) bool { return a.Read_format&formatGroup != 0 }

// realSys is sysCalls on the running kernel.
type realSys struct{}

func (realSys) perfOpen(attr *openAttr, pid, cpu, groupFD, flags int) (int, error) {
	for {
		fd, err := unix.PerfEventOpen(attr, pid, cpu, groupFD, flags)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

func (realSys) read(fd int, p []byte) (int, error) {
	for {
		n, err := unix.Read(fd, p)
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}

func (realSys) eventID(fd int) (uint64, error) {
	for {
		id, err := unix.IoctlGetUint64(fd, unix.PERF_EVENT_IOC_ID)
		if !errors.Is(err, unix.EINTR) {
			return id, err
		}
	}
}

func (realSys) close(fd int) error { return unix.Close(fd) }

// closeAll closes fds with close_range(2), one call per run of consecutive
// descriptors, which spares a system call per counter; one by one where
// the kernel has no close_range (before 5.9).
func (realSys) closeAll(fds []int) error {
	fds = slices.Clone(fds)
	slices.Sort(fds)
	var first error
	for i := 0; i < len(fds); {
		j := i
		for j+1 < len(fds) && fds[j+1] == fds[j]+1 {
			j++
		}
		if unix.CloseRange(uint(fds[i]), uint(fds[j]), 0) != nil {
			for _, fd := range fds[i : j+1] {
				if err := unix.Close(fd); err != nil && first == nil {
					first = fmt.Errorf("close descriptor %d: %w", fd, err)
				}
			}
		}
		i = j + 1
	}
	return first
}

// pinned runs work on a goroutine locked to an OS thread bound to cpu,
// and restores the thread's CPUs after; if they cannot be restored, the
// thread ends with the goroutine. Where cpu is not among the CPUs the
// thread may use, work runs unbound.
func (realSys) pinned(cpu int, work func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		var was, one unix.CPUSet
		if cpu < 0 || unix.SchedGetaffinity(0, &was) != nil || !was.IsSet(cpu) {
			runtime.UnlockOSThread()
			work()
			return
		}
		one.Set(cpu)
		if unix.SchedSetaffinity(0, &one) != nil {
			runtime.UnlockOSThread()
			work()
			return
		}
		work()
		if unix.SchedSetaffinity(0, &was) == nil {
			runtime.UnlockOSThread()
		}
	}()
	<-done
}

// openHere opens attrs as one group on the calling thread (locked to it
// meanwhile), the first as leader, and returns the descriptors it opened;
// ok is false when one failed.
func (s realSys) openHere(attrs []openAttr) (fds []int, ok bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	leader := -1
	for i := range attrs {
		fd, err := s.perfOpen(&attrs[i], 0, -1, leader, flagFDCloexec)
		if err != nil {
			return fds, false
		}
		fds = append(fds, fd)
		if leader < 0 {
			leader = fd
		}
	}
	return fds, true
}

func (realSys) nofile() (uint64, uint64, error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return 0, 0, err
	}
	return r.Cur, r.Max, nil
}

func (realSys) setNofile(cur uint64) error {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return err
	}
	r.Cur = cur
	return unix.Setrlimit(unix.RLIMIT_NOFILE, &r)
}

func (realSys) openFiles() int {
	fds, err := procfs.New("").Self().FDs()
	if err != nil {
		return 0
	}
	return len(fds)
}

func (realSys) bootNanos() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// explainOpen is the catalogue's explanation of a failed perf_event_open of
// enc, or "" when it has none.
func explainOpen(s *System, e Event, enc Encoding, err error) string {
	var oe *OpenError
	if errors.As(s.OpenError(e, enc, "", err), &oe) {
		return oe.Reason
	}
	return ""
}
