package insertbench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// blockingConn is a connection to the server over a socket in blocking
// mode. A client waits for each answer in read(2) rather than in Go's
// network poller: one write and one read per statement, instead of a
// write, a read that finds nothing yet, a wait in epoll, a second read,
// and the goroutine parked and woken in between, which on a server that
// answers in tens of µs costs the client about as much CPU as the
// statement's own work.
//
// The reads and writes are raw system calls, which Go's scheduler does
// not see: the goroutine keeps its P while its thread sleeps in the
// kernel. Through Go's own system call entry, sysmon takes the P of a
// goroutine waiting for the server (after 20 µs when no P is idle, after
// 10 ms otherwise), hands it to another thread and goes back to polling
// every 20 µs: in l.i0 that was 38% of the driver's CPU samples (perf
// record of BenchmarkDriverCPU). A process with such connections needs a P for
// each goroutine that waits on one and one more for everything else
// (see raiseProcs): a goroutine waiting for a P would otherwise wait
// until sysmon preempts one of those (every 10 ms).
//
// Timeouts are the kernel's, SO_RCVTIMEO and SO_SNDTIMEO, set once: a
// read or write that waits longer fails with a timeout error. A signal
// (sysmon preempts a goroutine that has run 10 ms by signalling its
// thread) ends the wait early, and the call is made again for the time
// left. Shutdown wakes a read or write blocked on the socket from another
// goroutine.
type blockingConn struct {
	// mu is held (shared) around every system call on fd, so that Close
	// never closes an fd that a read still uses (its number could be
	// reused by then).
	mu           sync.RWMutex
	fd           int
	closed       bool
	laddr, raddr net.Addr
	timeout      time.Duration // the default SO_RCVTIMEO and SO_SNDTIMEO
	// rcvTimeout and sndTimeout are SO_RCVTIMEO and SO_SNDTIMEO as set
	// (ns).
	rcvTimeout, sndTimeout atomic.Int64
}

// kernelTimeouts tells that connections time out by themselves (runStep does
// not give the driver read and write timeouts).
const kernelTimeouts = true

// dialServer connects to addr with Go's dialer (its name resolution and
// ctx), then takes the socket over in blocking mode with timeout as its
// read and write timeout.
func dialServer(ctx context.Context, network, addr string, timeout time.Duration) (net.Conn, error) {
	var d net.Dialer
	gc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	sc, ok := gc.(syscall.Conn)
	if !ok {
		gc.Close()
		return nil, fmt.Errorf("connect to %s %s: not a socket", network, addr)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		gc.Close()
		return nil, err
	}
	fd, dupErr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, dupErr = unix.Dup(int(s)) }); err != nil {
		gc.Close()
		return nil, err
	}
	if dupErr != nil {
		gc.Close()
		return nil, os.NewSyscallError("dup", dupErr)
	}
	c := &blockingConn{fd: fd, laddr: gc.LocalAddr(), raddr: gc.RemoteAddr(), timeout: timeout}
	// The non-blocking flag belongs to the open socket, which Go's
	// descriptor shares: clear it once that one is closed (the dup keeps
	// the socket open).
	gc.Close()
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	for _, opt := range []int{unix.SO_RCVTIMEO, unix.SO_SNDTIMEO} {
		if err := c.setTimeout(opt, timeout); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	return c, nil
}

// setTimeout sets the kernel's timeout opt (SO_RCVTIMEO or SO_SNDTIMEO)
// of the connection to d.
func (c *blockingConn) setTimeout(opt int, d time.Duration) error {
	d = max(d, time.Microsecond)
	if err := c.kernelTimeout(opt, d); err != nil {
		return err
	}
	if opt == unix.SO_RCVTIMEO {
		c.rcvTimeout.Store(int64(d))
	} else {
		c.sndTimeout.Store(int64(d))
	}
	return nil
}

func (c *blockingConn) timeoutOf(opt int) time.Duration {
	if opt == unix.SO_RCVTIMEO {
		return time.Duration(c.rcvTimeout.Load())
	}
	return time.Duration(c.sndTimeout.Load())
}

// kernelTimeout sets opt to d, at least 1 µs (0 would be no timeout).
func (c *blockingConn) kernelTimeout(opt int, d time.Duration) error {
	tv := unix.NsecToTimeval(max(d, time.Microsecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, &tv); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	return nil
}

// timeoutError is a read or write that waited past its timeout.
type timeoutError struct{ op string }

func (e timeoutError) Error() string   { return e.op + ": no answer within the timeout" }
func (e timeoutError) Timeout() bool   { return true }
func (e timeoutError) Temporary() bool { return true }

// io runs a read or write system call (trap) on b, not empty, as a raw
// system call. A signal interrupts a wait (EINTR); the call is then made
// again with the kernel's timeout (opt) cut to the time left, so that a
// call given no answer times out after its timeout even when signals keep
// coming, and the timeout is set back after.
func (c *blockingConn) io(op string, trap uintptr, opt int, b []byte) (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	timeout := c.timeoutOf(opt)
	var start time.Time
	for {
		n, _, errno := unix.RawSyscall(trap, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if errno == unix.EINTR {
			if start.IsZero() {
				start = time.Now()
			}
			if left := timeout - time.Since(start); left > 0 {
				if err := c.kernelTimeout(opt, left); err != nil {
					return 0, c.opError(op, err)
				}
				continue
			}
			errno = unix.EAGAIN // out of time
		}
		if !start.IsZero() {
			if err := c.kernelTimeout(opt, timeout); err != nil {
				return 0, c.opError(op, err)
			}
		}
		switch errno {
		case 0:
			return int(n), nil
		case unix.EAGAIN:
			return 0, c.opError(op, timeoutError{op})
		}
		return 0, c.opError(op, os.NewSyscallError(op, errno))
	}
}

func (c *blockingConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.raddr.Network(), Source: c.laddr, Addr: c.raddr, Err: err}
}

func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := c.io("read", unix.SYS_READ, unix.SO_RCVTIMEO, b)
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

func (c *blockingConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := c.io("write", unix.SYS_WRITE, unix.SO_SNDTIMEO, b[done:])
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// Shutdown ends the connection's traffic both ways: a read or write
// blocked on it returns at once. The descriptor stays open until Close.
func (c *blockingConn) Shutdown() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.closed {
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
	}
}

func (c *blockingConn) Close() error {
	c.Shutdown() // wakes a read in another goroutine, which holds mu
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return unix.Close(c.fd)
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.laddr }
func (c *blockingConn) RemoteAddr() net.Addr { return c.raddr }

// SetDeadline and its two kin set the kernel's timeouts to the time left
// until t (back to the default for a zero t). The driver calls them only
// when given read or write timeouts of its own, which runStep does not.
func (c *blockingConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *blockingConn) SetReadDeadline(t time.Time) error {
	return c.setTimeout(unix.SO_RCVTIMEO, c.until(t))
}

func (c *blockingConn) SetWriteDeadline(t time.Time) error {
	return c.setTimeout(unix.SO_SNDTIMEO, c.until(t))
}

func (c *blockingConn) until(t time.Time) time.Duration {
	if t.IsZero() {
		return c.timeout
	}
	return time.Until(t)
}
