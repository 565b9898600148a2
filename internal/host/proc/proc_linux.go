package proc

import "syscall"

// sysProcAttr puts the command in a process group of its own and has the
// kernel SIGKILL it when the thread that started it dies (Start keeps that
// thread for the command's life, so this fires when perfbench dies).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends sig to the process group of leader pid.
func killGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

func signal(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// Pause stops process pid (SIGSTOP): every thread of it, until Resume.
func Pause(pid int) error { return syscall.Kill(pid, syscall.SIGSTOP) }

// Resume lets a paused process run again (SIGCONT).
func Resume(pid int) error { return syscall.Kill(pid, syscall.SIGCONT) }
