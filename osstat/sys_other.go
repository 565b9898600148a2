//go:build !linux

package osstat

import (
	"errors"
	"os"
	"time"
)

// errESRCH never matches outside Linux.
var errESRCH = errors.New("no such process")

func statDev(path string) (major, minor uint32, err error) {
	return 0, 0, errNotSupported
}

// ClockTicks returns 100, the USER_HZ of Linux on every common architecture.
func ClockTicks() float64 { return 100 }

func processCPUClock(pid int) (time.Duration, bool) { return 0, false }

// readProcFile reads a file.
func readProcFile(path string) ([]byte, error) { return os.ReadFile(path) }
