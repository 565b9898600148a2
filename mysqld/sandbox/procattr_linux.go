package sandbox

import "syscall"

// procAttr keeps the server out of the terminal's process group, so that
// Ctrl-C reaches perfbench, which then shuts the server down cleanly; and
// has the kernel SIGTERM the server when the thread that started it dies:
// that thread stays locked for the server's life (see start), so this fires
// when perfbench itself dies, even by SIGKILL.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
