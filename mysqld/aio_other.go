//go:build !linux

package mysqld

// isAIOWait is only known on Linux.
func isAIOWait(nr int) bool { return false }

func ioWaitForTest() int { return -1 }
