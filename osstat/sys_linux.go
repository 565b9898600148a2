package osstat

import (
	"sync"

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
