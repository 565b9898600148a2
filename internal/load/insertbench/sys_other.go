//go:build !linux

package insertbench

import (
	"errors"
	"syscall"
	"time"
)

// startSignal tells a ready driver to start its load: a signal number
// that exists everywhere (the driver runs on Linux; this only keeps
// perfbench building for reports elsewhere).
const startSignal = syscall.SIGINT

func selfCPU() (user, system time.Duration, err error) {
	return 0, 0, errors.New("the process's CPU time is only read on Linux")
}

func selfRSS() int64 { return 0 }
