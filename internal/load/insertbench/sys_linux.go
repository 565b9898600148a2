package insertbench

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// startSignal tells a ready driver to start its load.
const startSignal = syscall.SIGUSR1

// selfCPU returns the user and system CPU time of this process (every
// thread: the clients' goroutines and whatever else runs in it).
func selfCPU() (user, system time.Duration, err error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, err
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), nil
}

// selfRSS returns this process's resident memory in bytes, 0 when it
// cannot be read.
func selfRSS() int64 {
	b, err := procfs.New("").Self().ReadFile("statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
