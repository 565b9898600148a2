//go:build !linux

package runner

import (
	"os"
	"syscall"
)

// procAttr: no parent-death signal outside Linux; a cancelled run still
// ends its children.
func procAttr() *syscall.SysProcAttr { return nil }

func killGroup(pid int, sig syscall.Signal) error { return signalPid(pid, sig) }

func signalPid(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Signal(sig)
}

func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}
