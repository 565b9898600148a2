package insertbench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

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
// Timeouts are the kernel's, SO_RCVTIMEO and SO_SNDTIMEO, set once: a
// read or write that waits longer fails with a timeout error. Shutdown
// wakes a read or write blocked on the socket from another goroutine.
type blockingConn struct {
	// mu is held (shared) around every system call on fd, so that Close
	// never closes an fd that a read still uses (its number could be
	// reused by then).
	mu           sync.RWMutex
	fd           int
	closed       bool
	laddr, raddr net.Addr
	timeout      time.Duration // the default SO_RCVTIMEO and SO_SNDTIMEO
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

func (c *blockingConn) setTimeout(opt int, d time.Duration) error {
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

// io runs a read or write system call, retrying when a signal interrupted
// it.
func (c *blockingConn) io(op string, b []byte, call func(int, []byte) (int, error)) (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	for {
		n, err := call(c.fd, b)
		switch err {
		case nil:
			return n, nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, &net.OpError{Op: op, Net: c.raddr.Network(), Source: c.laddr, Addr: c.raddr, Err: timeoutError{op}}
		}
		return 0, &net.OpError{Op: op, Net: c.raddr.Network(), Source: c.laddr, Addr: c.raddr, Err: os.NewSyscallError(op, err)}
	}
}

func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := c.io("read", b, unix.Read)
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

func (c *blockingConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := c.io("write", b[done:], unix.Write)
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
