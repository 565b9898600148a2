package perfevent

import "syscall"

// sysCalls is the part of the kernel the counting engine uses. The real one
// (sys_linux.go) calls perf_event_open(2), read(2), ioctl(2) and close(2);
// tests substitute a fake that fails on demand and tracks descriptors.
type sysCalls interface {
	// perfOpen is perf_event_open(attr, pid, cpu, groupFD, flags).
	perfOpen(attr *openAttr, pid, cpu, groupFD, flags int) (int, error)
	// read reads a counter (one read(2) per group leader).
	read(fd int, p []byte) (int, error)
	// eventID is ioctl(PERF_EVENT_IOC_ID): the id read(2) reports the
	// counter under.
	eventID(fd int) (uint64, error)
	close(fd int) error
	// closeAll closes fds (any order); the first error is returned, the
	// others closed all the same.
	closeAll(fds []int) error
	// pinned runs work on an OS thread bound to cpu meanwhile, or, when
	// perfbench may not run there, wherever it runs.
	pinned(cpu int, work func())
	// openHere opens attrs as one group on the calling thread, to tell
	// whether the group fits the PMU at all; the caller closes the
	// descriptors.
	openHere(attrs []openAttr) (fds []int, ok bool)
	// nofile returns the RLIMIT_NOFILE soft and hard limits; setNofile
	// raises the soft limit.
	nofile() (cur, max uint64, err error)
	setNofile(cur uint64) error
	// openFiles is how many descriptors the process has open now.
	openFiles() int
	// bootNanos is CLOCK_BOOTTIME in ns, the clock thread start times in
	// /proc are kept in.
	bootNanos() int64
}

// perf_event_open flags (include/uapi/linux/perf_event.h).
const (
	flagPIDCgroup = 1 << 2 // PERF_FLAG_PID_CGROUP: pid is a cgroup directory fd
	flagFDCloexec = 1 << 3 // PERF_FLAG_FD_CLOEXEC
)

// The errnos the engine tells apart, named once so the rest reads plainly.
var (
	errESRCH      error = syscall.ESRCH
	errEACCES     error = syscall.EACCES
	errEPERM      error = syscall.EPERM
	errEMFILE     error = syscall.EMFILE
	errENFILE     error = syscall.ENFILE
	errENOENT     error = syscall.ENOENT
	errEINVAL     error = syscall.EINVAL
	errENODEV     error = syscall.ENODEV
	errEOPNOTSUPP error = syscall.EOPNOTSUPP
	errE2BIG      error = syscall.E2BIG
	errECHILD     error = syscall.ECHILD
	errEBUSY      error = syscall.EBUSY
	errEBADF      error = syscall.EBADF
)
