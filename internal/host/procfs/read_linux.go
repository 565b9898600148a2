package procfs

import (
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// errESRCH is what reading the /proc entry of a task that is being
// released returns.
var errESRCH error = unix.ESRCH

// readFile reads a /proc file with plain open, read and close: os.ReadFile
// also registers the descriptor with the runtime's poller and toggles
// O_NONBLOCK, four more system calls per file, which /proc files do not
// need.
func readFile(path string) ([]byte, error) {
	fd, err := open(path, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 2048)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// readDirNames lists a folder with open, getdents and close, for the same
// reason; "." and ".." are left out.
func readDirNames(path string) ([]string, error) {
	fd, err := open(path, unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: path, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

func open(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

func readlink(path string) (string, error) { return os.Readlink(path) }

var clockTicks = sync.OnceValue(func() int {
	const atClkTck = 17 // AT_CLKTCK in <elf.h>
	if auxv, err := unix.Auxv(); err == nil {
		for _, kv := range auxv {
			if kv[0] == atClkTck && kv[1] > 0 {
				return int(kv[1])
			}
		}
	}
	return 100
})

// ClockTicks returns the rate of the clock ticks /proc gives CPU and start
// times in (USER_HZ, sysconf(_SC_CLK_TCK)): the AT_CLKTCK the kernel gave
// this process, 100 when it gave none.
func ClockTicks() int { return clockTicks() }
