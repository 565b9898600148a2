package osstat

import (
	"time"

	"golang.org/x/sys/unix"
)

// statDev returns the device number of the file system holding path.
func statDev(path string) (major, minor uint32, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, 0, err
	}
	dev := uint64(st.Dev)
	return unix.Major(dev), unix.Minor(dev), nil
}

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
