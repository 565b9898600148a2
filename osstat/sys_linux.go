package osstat

import (
	"io/fs"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// errESRCH is what reading /proc of a task that is exiting can return.
var errESRCH error = unix.ESRCH

// statDev returns the device number of the file system holding path.
func statDev(path string) (major, minor uint32, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, 0, err
	}
	dev := uint64(st.Dev)
	return unix.Major(dev), unix.Minor(dev), nil
}

var clockTicks = sync.OnceValue(func() float64 {
	const atClkTck = 17 // AT_CLKTCK in <elf.h>
	if auxv, err := unix.Auxv(); err == nil {
		for _, kv := range auxv {
			if kv[0] == atClkTck && kv[1] > 0 {
				return float64(kv[1])
			}
		}
	}
	return 100
})

// ClockTicks returns the rate of the clock ticks /proc reports CPU times in
// (USER_HZ, sysconf(_SC_CLK_TCK)): the AT_CLKTCK the kernel gave this
// process, 100 if it gave none.
func ClockTicks() float64 { return clockTicks() }

// processCPUClock reads the CPU-time clock of process pid (the clock id
// clock_getcpuclockid(3) makes of a pid, CPUCLOCK_SCHED): the run time of
// all its threads, exited ones included. false if it cannot be read.
func processCPUClock(pid int) (time.Duration, bool) {
	const cpuClockSched = 2
	clock := int32(^uint32(pid)<<3) | cpuClockSched
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// readProcFile reads a small /proc file with plain open, read and close.
// os.ReadFile also registers the descriptor with the runtime's poller and
// toggles O_NONBLOCK (four more system calls per file, which /proc files do
// not need); a server with 2,000 threads means 4,000 such files per read.
func readProcFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 2048)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
