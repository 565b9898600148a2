//go:build !linux

package osstat

import "time"

func statDev(path string) (major, minor uint32, err error) {
	return 0, 0, errNotSupported
}

func processCPUClock(pid int) (time.Duration, bool) { return 0, false }
