//go:build !linux

package insertbench

import (
	"errors"
	"time"
)

func selfCPU() (user, system time.Duration, err error) {
	return 0, 0, errors.New("the process's CPU time is only read on Linux")
}

func selfRSS() int64 { return 0 }
