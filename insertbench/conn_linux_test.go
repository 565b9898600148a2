package insertbench

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"
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
			time.Sleep(50 * time.Millisecond)
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
