//go:build !linux

package proc

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr: no process group or parent-death signal outside Linux; a
// cancelled run still ends its commands.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup signals the command alone: it has no group of its own.
func killGroup(pid int, sig syscall.Signal) error { return signal(pid, sig) }

func signal(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Signal(sig)
}

// errNoPause: processes are paused with SIGSTOP, on Linux only.
var errNoPause = errors.New("pausing a process needs Linux (SIGSTOP)")

// Pause stops process pid: Linux only.
func Pause(int) error { return errNoPause }

// Resume lets a paused process run again: Linux only.
func Resume(int) error { return errNoPause }
