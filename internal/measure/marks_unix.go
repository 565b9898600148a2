//go:build unix

package measure

import (
	"os"
	"syscall"
)

// lockFile takes f's lock, exclusive or shared, without waiting: an error
// when another open file holds it.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	return syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
}
