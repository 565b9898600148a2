package insertbench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
)

// listen accepts one connection on network and hands it to serve.
func listen(t *testing.T, network string, serve func(net.Conn)) string {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}()
	return l.Addr().String()
}

func TestBlockingConn(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			// An echo server that stops answering after "hang" and
			// closes after "bye".
			hang := make(chan struct{})
			addr := listen(t, network, func(c net.Conn) {
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					switch string(buf[:n]) {
					case "hang":
						<-hang
						return
					case "bye":
						return
					}
					c.Write(buf[:n])
				}
			})
			defer close(hang)
			const timeout = 300 * time.Millisecond
			c, err := dialServer(context.Background(), network, addr, timeout)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, ok := c.(*blockingConn); !ok {
				t.Fatalf("dialServer gave a %T", c)
			}
			buf := make([]byte, 64)
			if _, err := c.Write([]byte("ping")); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Read(buf); err != nil || string(buf[:n]) != "ping" {
				t.Fatalf("echo: %q, %v", buf[:n], err)
			}

			// No answer: the read fails with a timeout, after the timeout.
			c.Write([]byte("hang"))
			t0 := time.Now()
			_, err = c.Read(buf)
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || time.Since(t0) < timeout {
				t.Errorf("read with no answer: %v after %s, want a timeout after %s", err, time.Since(t0), timeout)
			}

			// Shutdown wakes a read blocked in another goroutine.
			c.SetReadDeadline(time.Now().Add(time.Hour))
			done := make(chan error, 1)
			go func() { _, err := c.Read(buf); done <- err }()
			testenv.WaitInSyscall(t, unix.SYS_READ, c.(*blockingConn).fd)
			c.(*blockingConn).Shutdown()
			select {
			case err := <-done:
				if err != io.EOF {
					t.Errorf("read woken by Shutdown: %v, want EOF", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Shutdown did not wake a blocked read")
			}

			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := c.Read(buf); !errors.Is(err, net.ErrClosed) {
				t.Errorf("read after Close: %v, want net.ErrClosed", err)
			}
			c.(*blockingConn).Shutdown() // after Close: touches no descriptor
		})
	}
}

// The peer closing the connection is an EOF.
func TestBlockingConnPeerCloses(t *testing.T) {
	addr := listen(t, "tcp", func(c net.Conn) {})
	c, err := dialServer(context.Background(), "tcp", addr, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(make([]byte, 8)); err != io.EOF {
		t.Errorf("read after the peer closed: %v, want EOF", err)
	}
}

func TestDialServerFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if c, err := dialServer(context.Background(), "tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("dial %s with nothing listening succeeded", addr)
	}
}

// signalThread locks the calling goroutine to its thread and signals that
// thread with SIGURG (Go's preemption signal, which interrupts a system
// call waiting in the kernel) every millisecond until the returned func is
// called or for 5 s.
func signalThread() (stop func()) {
	runtime.LockOSThread()
	pid, tid := unix.Getpid(), unix.Gettid()
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		end := time.After(5 * time.Second)
		for {
			select {
			case <-done:
				return
			case <-end:
				return
			case <-tick.C:
				unix.Tgkill(pid, tid, unix.SIGURG)
			}
		}
	}()
	return func() {
		close(done)
		<-exited
		runtime.UnlockOSThread()
	}
}

// A read or write given no answer times out after its timeout even while
// signals interrupt its wait again and again (each starting the kernel's
// timeout anew if the call were just made again).
func TestBlockingConnTimeoutUnderSignals(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, op := range []string{"read", "write"} {
		t.Run(op, func(t *testing.T) {
			hang := make(chan struct{})
			defer close(hang)
			addr := listen(t, "tcp", func(c net.Conn) { <-hang }) // reads nothing, says nothing
			c, err := dialServer(context.Background(), "tcp", addr, timeout)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			buf := make([]byte, 64<<20) // more than the socket buffers hold
			stop := signalThread()
			t0 := time.Now()
			if op == "read" {
				_, err = c.Read(buf)
			} else {
				_, err = c.Write(buf)
			}
			took := time.Since(t0)
			stop()
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("%s with no answer: %v after %s, want a timeout", op, err, took)
			}
			// A write waits out the timeout once it has written part,
			// and then for the rest: twice the timeout at most. The
			// kernel counts a socket's timeout in clock ticks, the
			// first one partial: it may end up to a tick (at most 10
			// ms, HZ 100) before the timeout, measured here.
			const tick = 10 * time.Millisecond
			if took < timeout-tick || took > 2*timeout+time.Second {
				t.Errorf("%s timed out after %s, want %s to %s", op, took, timeout-tick, 2*timeout+time.Second)
			}
			// The full timeout is back for the next call.
			c.(*blockingConn).mu.RLock()
			tv, err := unix.GetsockoptTimeval(c.(*blockingConn).fd, unix.SOL_SOCKET, map[string]int{"read": unix.SO_RCVTIMEO, "write": unix.SO_SNDTIMEO}[op])
			c.(*blockingConn).mu.RUnlock()
			if err != nil || time.Duration(tv.Nano()) != timeout {
				t.Errorf("%s timeout after the call: %v, %v, want %s", op, time.Duration(tv.Nano()), err, timeout)
			}
		})
	}
}

// Bytes written and read under a storm of signals (interrupted and
// partial system calls) arrive whole and in order, both ways.
func TestBlockingConnBytesUnderSignals(t *testing.T) {
	const size = 8 << 20
	data := make([]byte, size)
	rand.NewChaCha8([32]byte{1}).Read(data)
	// The peer reads size bytes, answers their digest, then sends data.
	addr := listen(t, "unix", func(c net.Conn) {
		got := make([]byte, size)
		if _, err := io.ReadFull(c, got); err != nil {
			return
		}
		sum := sha256.Sum256(got)
		c.Write(sum[:])
		c.Write(data)
	})
	c, err := dialServer(context.Background(), "unix", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stop := signalThread()
	defer stop()
	// Writes of odd sizes, as packets are.
	for b := data; len(b) > 0; {
		n := min(len(b), 1+len(b)%65521)
		if k, err := c.Write(b[:n]); err != nil || k != n {
			t.Fatalf("write of %d bytes: %d, %v", n, k, err)
		}
		b = b[n:]
	}
	var sum [32]byte
	if _, err := io.ReadFull(c, sum[:]); err != nil {
		t.Fatal(err)
	}
	if sum != sha256.Sum256(data) {
		t.Fatal("the peer got other bytes than were written")
	}
	got := make([]byte, size)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("read other bytes than the peer sent")
	}
}

// The load's goroutines, which keep their P while they wait on the
// server (see blockingConn), get a P each and one more for the rest of the
// process, however few the process had; it has as many again after.
func TestLoadGetsProcs(t *testing.T) {
	want := map[string]int{"l.i0": 3, "l.x": 3, "l.i1": 6, "l.i2": 6, "qr100": 9, "qp1000": 9}
	for name, n := range want {
		o := DefaultOptions(mustStep(t, name))
		o.Tables = 3
		if got := o.waiters(); got != n {
			t.Errorf("%s with 3 tables: %d goroutines wait on the server, want %d", name, got, n)
		}
	}

	srv := testdb.Shared(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const tables, rows = 3, 3_000
	o := DefaultOptions(mustStep(t, "l.i0"))
	o.Tables, o.Table, o.Rows = tables, "procs", rows
	var during int
	o.AtStart = func(time.Time) { during = runtime.GOMAXPROCS(0) }
	res, err := runStep(context.Background(), loadConfig(srv), o)
	if err != nil {
		t.Fatal(err)
	}
	if during != tables+1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("GOMAXPROCS 1 before, %d during the load, %d after; want %d during, 1 after", during, runtime.GOMAXPROCS(0), tables+1)
	}
	if res.Inserted != tables*rows {
		t.Errorf("%d rows inserted, want %d", res.Inserted, tables*rows)
	}
	for _, w := range res.Warnings { // rows lost: ids after the step not as counted
		if w != "no full second of load: no p50/p99" {
			t.Errorf("warning: %s", w)
		}
	}
}
