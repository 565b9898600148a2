package mysqld

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Sentinel errors of Find.
var (
	// errNotServer means the process does not run mysqld or mariadbd
	// (Target.Force accepts it anyway).
	errNotServer = errors.New("not a mysqld or mariadbd process")
	// errNoServer means no server process is running.
	errNoServer = errors.New("no mysqld or mariadbd process is running")
	// errManyServers means several servers run and the target did not say
	// which one.
	errManyServers = errors.New("several servers are running")
	// errUnreachable means nothing answers on the socket or address.
	errUnreachable = errors.New("no server answers there")
	// errMismatch means two ways of naming the server (a pid and a
	// socket, say) lead to different processes.
	errMismatch = errors.New("the target flags name different processes")
)

// finder resolves a Target to a process. The zero value reads /proc and
// connects to unix sockets for real.
type finder struct {
	Proc Proc
	// SocketPid returns the pid listening on a unix socket; nil means
	// the package's SocketPid (SO_PEERCRED).
	SocketPid func(ctx context.Context, path string) (int, error)
}

// Found is the server process a Target resolved to.
type Found struct {
	Process
	// By says how it was found, for messages: "--pid", "pid file
	// /run/mysqld/mysqld.pid", "socket /tmp/s.sock", "listener of
	// 127.0.0.1:3306", "only server running".
	By string
}

// Find resolves t to the server process with the real /proc.
func Find(ctx context.Context, t Target) (*Found, error) { return finder{}.Find(ctx, t) }

// Find resolves t: Pid, else PidFile, else the process behind Socket, else
// the listener of Host:Port, else the only server running. When both a pid
// and a socket or port are given, they must lead to the same process. A
// process that is not mysqld or mariadbd is refused unless t.Force.
func (f finder) Find(ctx context.Context, t Target) (*Found, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	var (
		pid int
		by  string
	)
	switch {
	case t.Pid != 0:
		pid, by = t.Pid, "--pid"
	case t.PidFile != "":
		p, err := readPidFile(t.PidFile)
		if err != nil {
			return nil, err
		}
		pid, by = p, "pid file "+t.PidFile
	}

	// The socket or the port, when given, also name a process.
	var (
		netPid int
		netBy  string
	)
	switch {
	case t.Socket != "":
		p, err := f.socketPid(ctx, t.Socket)
		if err != nil {
			if pid == 0 {
				return nil, err
			}
			// Connecting later will fail with its own message; the
			// pid is what the counters attach to.
		} else {
			netPid, netBy = p, "socket "+t.Socket
		}
	case t.Port != 0 || (t.Host != "" && t.Host != "localhost"):
		ip, port, err := tcpAddr(t)
		if err != nil {
			return nil, err
		}
		p, err := f.Proc.ListenerOf(ip, port)
		if err != nil {
			if pid == 0 {
				return nil, err
			}
		} else {
			netPid, netBy = p, "listener of "+net.JoinHostPort(ip.String(), strconv.Itoa(port))
		}
	}
	switch {
	case pid != 0 && netPid != 0 && pid != netPid:
		return nil, fmt.Errorf("find the server: %w: %s gives pid %d but %s is pid %d", errMismatch, by, pid, netBy, netPid)
	case pid == 0 && netPid != 0:
		pid, by = netPid, netBy
	}

	if pid == 0 {
		servers, err := f.Proc.Servers()
		if err != nil {
			return nil, fmt.Errorf("find the server: %w", err)
		}
		switch len(servers) {
		case 0:
			return nil, fmt.Errorf("find the server: %w; start it, or point at it with --pid, --pid-file, --socket or --port", errNoServer)
		case 1:
			return &Found{Process: servers[0], By: "only server running"}, nil
		}
		var list []string
		for _, s := range servers {
			list = append(list, s.Describe())
		}
		return nil, fmt.Errorf("find the server: %w (%s); choose one with --pid, --socket or --port", errManyServers, strings.Join(list, "; "))
	}

	p, err := f.Proc.Process(pid)
	if err != nil {
		if errors.Is(err, procfs.ErrGone) {
			if strings.HasPrefix(by, "pid file") {
				return nil, fmt.Errorf("find the server: %s names pid %d, which is not running (a stale pid file?): %w", by, pid, procfs.ErrGone)
			}
			return nil, fmt.Errorf("find the server: pid %d (%s) is not running: %w", pid, by, procfs.ErrGone)
		}
		return nil, fmt.Errorf("find the server: %w", err)
	}
	if !p.IsServer() && !t.Force {
		what := p.Comm
		if p.Exe != "" {
			what = p.Exe
		}
		return nil, fmt.Errorf("find the server: pid %d (%s) runs %s: %w; pass --force to measure it anyway", pid, by, what, errNotServer)
	}
	return &Found{Process: p, By: by}, nil
}

func (f finder) socketPid(ctx context.Context, path string) (int, error) {
	if f.SocketPid != nil {
		return f.SocketPid(ctx, path)
	}
	return SocketPid(ctx, path)
}

// tcpAddr returns the address a TCP target names. An empty host or
// "localhost" with a port means 127.0.0.1.
func tcpAddr(t Target) (net.IP, int, error) {
	port := t.Port
	if port == 0 {
		port = 3306
	}
	host := t.Host
	if host == "" || host == "localhost" {
		return net.IPv4(127, 0, 0, 1), port, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip, port, nil
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return nil, 0, fmt.Errorf("find the server: resolve --host %s: %w", host, err)
	}
	for _, ip := range ips {
		if ip.To4() != nil {
			return ip, port, nil
		}
	}
	return ips[0], port, nil
}

func readPidFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("read pid file %s: %w (is the server running? check --pid-file)", path, err)
		}
		return 0, fmt.Errorf("read pid file %s: %w", path, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("read pid file %s: %q is not a process id", path, strings.TrimSpace(string(b)))
	}
	return pid, nil
}

// unreachable wraps a dial error so that callers can test errUnreachable,
// with a hint when nothing listens.
func unreachable(err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: connection refused (is the server running?): %w", errUnreachable, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: no such socket file (is the server running? check the path): %w", errUnreachable, err)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return fmt.Errorf("%w: %w", errUnreachable, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: timed out: %w", errUnreachable, err)
	}
	return err
}
