package mysqld

import "golang.org/x/sys/unix"

// isAIOWait reports whether a thread blocked in system call nr waits for
// asynchronous IO completions: the thread that reaps InnoDB's libaio or
// io_uring requests.
func isAIOWait(nr int) bool {
	switch nr {
	case unix.SYS_IO_GETEVENTS, unix.SYS_IO_PGETEVENTS, unix.SYS_IO_URING_ENTER:
		return true
	}
	return false
}

// ioWaitForTest is a system call number isAIOWait accepts.
func ioWaitForTest() int { return unix.SYS_IO_URING_ENTER }
