package measure

import (
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// exitWatch notes when a process exits: its pidfd (Linux 5.3 and later)
// becomes readable when the process has exited, which a goroutine waits
// for. A nil exitWatch (no pidfd) knows nothing.
type exitWatch struct {
	pidfd, wake int // wake: an eventfd that ends the wait
	base        time.Time
	after       atomic.Int64 // ns after base that the exit was seen; 0: not yet
	done        chan struct{}
}

// watchExit starts watching process pid; nil when its pidfd cannot be
// opened (an older kernel, or the process is gone).
func watchExit(pid int) *exitWatch {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil
	}
	ev, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(fd)
		return nil
	}
	w := &exitWatch{pidfd: fd, wake: ev, base: time.Now(), done: make(chan struct{})}
	go w.wait()
	return w
}

func (w *exitWatch) wait() {
	defer close(w.done)
	fds := []unix.PollFd{{Fd: int32(w.pidfd), Events: unix.POLLIN}, {Fd: int32(w.wake), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return
		case fds[0].Revents != 0:
			w.after.Store(max(int64(time.Since(w.base)), 1))
			return
		case fds[1].Revents != 0:
			return
		}
	}
}

// exited returns when the process was seen to exit; false while it runs,
// or when nothing watches it.
func (w *exitWatch) exited() (time.Time, bool) {
	if w == nil {
		return time.Time{}, false
	}
	d := w.after.Load()
	if d == 0 {
		return time.Time{}, false
	}
	return w.base.Add(time.Duration(d)), true
}

// close stops the watch.
func (w *exitWatch) close() {
	if w == nil {
		return
	}
	unix.Write(w.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	<-w.done
	unix.Close(w.pidfd)
	unix.Close(w.wake)
}
