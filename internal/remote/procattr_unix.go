//go:build unix

package remote

import "syscall"

// sysProcAttr puts a local ssh in a process group of its own, so that
// Ctrl-C on the terminal reaches perfbench alone, which then stops the
// remote command over another ssh (an ssh killed by the Ctrl-C would leave
// the remote command running, since without a terminal it gets no hangup).
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
