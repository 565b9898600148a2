//go:build !unix

package remote

import "syscall"

// sysProcAttr: no process groups here.
func sysProcAttr() *syscall.SysProcAttr { return nil }
