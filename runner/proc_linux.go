package runner

import "syscall"

// procAttr puts a child (sysbench, a custom step's or server's command) in
// a process group of its own, so that Ctrl-C on the terminal reaches
// perfbench alone, which then ends the child in order; and has the kernel
// kill the child when the thread that started it dies, so that it does not
// outlive perfbench even when perfbench is killed. startProc keeps that
// thread alive for the child's life.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends sig to the child's process group.
func killGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// signalPid sends sig to process pid.
func signalPid(pid int, sig syscall.Signal) error {
	return syscall.Kill(pid, sig)
}
