package sandbox

import "syscall"

// procAttr: no process groups or parent-death signal on Windows.
func procAttr() *syscall.SysProcAttr { return nil }
