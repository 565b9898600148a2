//go:build !linux && !windows

package sandbox

import "syscall"

// procAttr keeps the server out of the terminal's process group. Without a
// parent-death signal, only a cancelled context or Stop ends the server.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
