package mysqld

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Proc reads process information from /proc under Root, the root of the
// file system ("/" when empty), through internal/host/procfs. Tests point Root
// at a directory they build, whose proc folder stands for /proc.
type Proc struct{ Root string }

func (p Proc) fs() procfs.FS { return procfs.New(p.Root) }

// Process is a process as seen in /proc.
type Process struct {
	Pid  int
	Comm string
	// Exe is the path of the executable (the target of /proc/PID/exe,
	// without the " (deleted)" suffix); empty when it cannot be read (not
	// root, or a kernel thread).
	Exe string
	// Deleted is true when the executable file was replaced or removed
	// after the process started (an upgrade under a running server).
	Deleted bool
	// Sockets are the unix socket paths the process listens on, and Ports
	// the TCP ports (IPv4 and IPv6), both sorted.
	Sockets []string
	Ports   []int
}

// serverNames are the executable names of MySQL-family servers.
var serverNames = []string{"mariadbd", "mysqld"}

func isServerName(name string) bool {
	for _, n := range serverNames {
		if name == n || strings.HasPrefix(name, n+"-") {
			return true
		}
	}
	return false
}

// IsServer reports whether the process runs mysqld or mariadbd (also
// "mysqld-debug" and the like): by the executable's name when it is known,
// else by the command name.
func (p Process) IsServer() bool {
	if p.Exe != "" {
		return isServerName(filepath.Base(p.Exe))
	}
	return isServerName(p.Comm)
}

// Describe returns "pid 1234 /usr/sbin/mariadbd port 3306 socket /run/mysqld/mysqld.sock".
func (p Process) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d", p.Pid)
	switch {
	case p.Exe != "":
		b.WriteString(" " + p.Exe)
		if p.Deleted {
			b.WriteString(" (deleted)")
		}
	case p.Comm != "":
		b.WriteString(" " + p.Comm)
	}
	for _, port := range p.Ports {
		fmt.Fprintf(&b, " port %d", port)
	}
	for _, s := range p.Sockets {
		b.WriteString(" socket " + s)
	}
	return b.String()
}

// Process returns what /proc says about pid, including its listening
// sockets (read from the process's own network namespace).
func (p Proc) Process(pid int) (Process, error) {
	pr, err := p.basic(pid)
	if err != nil {
		return pr, err
	}
	inodes, _ := p.socketInodes(pid)
	if len(inodes) > 0 {
		pr.Ports = p.listeningPorts(inodes, pid)
		pr.Sockets = p.listeningUnix(inodes, pid)
	}
	return pr, nil
}

// basic reads comm and exe. A process that does not exist is
// procfs.ErrGone.
func (p Proc) basic(pid int) (Process, error) {
	pr := Process{Pid: pid}
	proc := p.fs().Proc(pid)
	comm, err := proc.Comm()
	if err != nil {
		if errors.Is(err, procfs.ErrGone) {
			return pr, fmt.Errorf("read process %d: %w", pid, procfs.ErrGone)
		}
		return pr, fmt.Errorf("read process %d: %w", pid, err)
	}
	pr.Comm = strings.TrimRight(comm, "\n")
	if exe, deleted, err := proc.Exe(); err == nil {
		pr.Exe, pr.Deleted = exe, deleted
	}
	return pr, nil
}

// Servers lists the running mysqld/mariadbd processes, by pid.
func (p Proc) Servers() ([]Process, error) {
	pids, err := p.fs().PIDs()
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, pid := range pids {
		pr, err := p.basic(pid)
		if err != nil || !pr.IsServer() {
			continue
		}
		if full, err := p.Process(pid); err == nil {
			pr = full
		}
		out = append(out, pr)
	}
	return out, nil
}

// socketInodes returns the inodes of the sockets pid has open.
func (p Proc) socketInodes(pid int) (map[uint64]bool, error) {
	proc := p.fs().Proc(pid)
	fds, err := proc.FDs()
	if err != nil {
		return nil, err
	}
	inodes := map[uint64]bool{}
	for _, fd := range fds {
		l, err := proc.FDTarget(fd)
		if err != nil {
			continue
		}
		if s, ok := strings.CutPrefix(l, "socket:["); ok {
			if n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				inodes[n] = true
			}
		}
	}
	return inodes, nil
}

// netFile reads net/NAME in the network namespace of process pid (0 for
// perfbench's own: /proc/net/NAME).
func (p Proc) netFile(pid int, name string) ([]byte, error) {
	if pid == 0 {
		return p.fs().ReadFile("net/" + name)
	}
	return p.fs().Proc(pid).ReadFile("net/" + name)
}

func (p Proc) listeningPorts(inodes map[uint64]bool, pid int) []int {
	seen := map[int]bool{}
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := p.netFile(pid, f)
		if err != nil {
			continue
		}
		socks, _ := parseNetTCP(bytes.NewReader(b))
		for _, s := range socks {
			if s.Listen && inodes[s.Inode] {
				seen[s.Port] = true
			}
		}
	}
	var ports []int
	for port := range seen {
		ports = append(ports, port)
	}
	sort.Ints(ports)
	return ports
}

func (p Proc) listeningUnix(inodes map[uint64]bool, pid int) []string {
	b, err := p.netFile(pid, "unix")
	if err != nil {
		return nil
	}
	socks, _ := parseNetUnix(bytes.NewReader(b))
	var paths []string
	for _, s := range socks {
		if s.Listen && inodes[s.Inode] && s.Path != "" && !strings.HasPrefix(s.Path, "@") {
			paths = append(paths, s.Path)
		}
	}
	sort.Strings(paths)
	return paths
}

// tcpSocket is one line of /proc/net/tcp or tcp6.
type tcpSocket struct {
	IP     net.IP
	Port   int
	Listen bool
	Inode  uint64
}

// parseNetTCP parses /proc/net/tcp or /proc/net/tcp6 (local address, state
// and inode of each socket).
func parseNetTCP(r io.Reader) ([]tcpSocket, error) {
	var out []tcpSocket
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue // header
		}
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		addr, port, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		ip, err := parseProcIP(addr)
		if err != nil {
			return out, fmt.Errorf("parse /proc/net/tcp address %q: %w", f[1], err)
		}
		pn, err := strconv.ParseUint(port, 16, 16)
		if err != nil {
			return out, fmt.Errorf("parse /proc/net/tcp port %q: %w", f[1], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return out, fmt.Errorf("parse /proc/net/tcp inode %q: %w", f[9], err)
		}
		out = append(out, tcpSocket{IP: ip, Port: int(pn), Listen: f[3] == "0A", Inode: inode})
	}
	return out, sc.Err()
}

// parseProcIP decodes the kernel's hex address: 32-bit words printed in host
// byte order.
func parseProcIP(s string) (net.IP, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(b) != 4 && len(b) != 16 {
		return nil, fmt.Errorf("%d bytes", len(b))
	}
	ip := make(net.IP, len(b))
	for i := 0; i < len(b); i += 4 {
		w := binary.BigEndian.Uint32(b[i:])
		binary.NativeEndian.PutUint32(ip[i:], w)
	}
	return ip, nil
}

// unixSocket is one line of /proc/net/unix.
type unixSocket struct {
	Path   string
	Listen bool
	Inode  uint64
}

// parseNetUnix parses /proc/net/unix.
func parseNetUnix(r io.Reader) ([]unixSocket, error) {
	var out []unixSocket
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) < 7 {
			continue
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err != nil {
			return out, fmt.Errorf("parse /proc/net/unix flags %q: %w", f[3], err)
		}
		inode, err := strconv.ParseUint(f[6], 10, 64)
		if err != nil {
			return out, fmt.Errorf("parse /proc/net/unix inode %q: %w", f[6], err)
		}
		s := unixSocket{Inode: inode, Listen: flags&0x10000 != 0} // __SO_ACCEPTCON
		if len(f) >= 8 {
			s.Path = f[7]
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// errNoListener means no process of this machine listens on the address.
var errNoListener = errors.New("no process listens there")

// ListenerOf returns the pid of the process listening on TCP port with an
// address that accepts connections to ip: ip itself, or a wildcard (0.0.0.0,
// ::) of the same family or IPv6 (which also accepts IPv4). A nil ip matches
// any address.
func (p Proc) ListenerOf(ip net.IP, port int) (int, error) {
	var exact, wild []uint64
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := p.netFile(0, f)
		if err != nil {
			continue
		}
		socks, err := parseNetTCP(bytes.NewReader(b))
		if err != nil {
			return 0, err
		}
		for _, s := range socks {
			if !s.Listen || s.Port != port {
				continue
			}
			switch {
			case ip == nil || s.IP.Equal(ip):
				exact = append(exact, s.Inode)
			case s.IP.IsUnspecified():
				wild = append(wild, s.Inode)
			case ip.IsLoopback() && s.IP.IsLoopback() && (ip.To4() == nil) == (s.IP.To4() == nil):
				wild = append(wild, s.Inode)
			}
		}
	}
	addr := net.JoinHostPort(fmt.Sprint(ip), strconv.Itoa(port))
	if ip == nil {
		addr = "port " + strconv.Itoa(port)
	}
	want := map[uint64]bool{}
	for _, n := range append(exact, wild...) {
		want[n] = true
	}
	if len(want) == 0 {
		return 0, fmt.Errorf("find the process listening on %s: %w on this machine (perfbench measures a local server: run it "+
			"on the server's host)", addr, errNoListener)
	}
	pids, err := p.fs().PIDs()
	if err != nil {
		return 0, err
	}
	var owners []int
	for _, pid := range pids {
		inodes, err := p.socketInodes(pid)
		if err != nil {
			continue
		}
		for n := range inodes {
			if want[n] {
				owners = append(owners, pid)
				break
			}
		}
	}
	switch len(owners) {
	case 0:
		return 0, fmt.Errorf("find the process listening on %s: a socket listens but no process's file descriptors hold it "+
			"(not root, or another pid namespace)", addr)
	case 1:
		return owners[0], nil
	}
	// Several processes share the socket (a forked child keeps it):
	// prefer a server.
	for _, pid := range owners {
		if pr, err := p.basic(pid); err == nil && pr.IsServer() {
			return pid, nil
		}
	}
	return owners[0], nil
}

// Tgid returns the thread group (process) id of thread tid.
func (p Proc) Tgid(tid int) (int, error) {
	st, err := p.fs().Proc(tid).Status()
	if err != nil {
		if errors.Is(err, procfs.ErrGone) {
			return 0, fmt.Errorf("read thread %d: %w", tid, procfs.ErrGone)
		}
		return 0, fmt.Errorf("read thread %d: %w", tid, err)
	}
	return st.Tgid, nil
}

// Threads lists the thread ids of pid, sorted.
func (p Proc) Threads(pid int) ([]int, error) {
	tids, err := p.fs().Proc(pid).Tasks()
	if err != nil {
		if errors.Is(err, procfs.ErrGone) {
			return nil, fmt.Errorf("list threads of %d: %w", pid, procfs.ErrGone)
		}
		return nil, fmt.Errorf("list threads of %d: %w", pid, err)
	}
	return tids, nil
}

// ThreadComm returns the name of thread tid of pid (/proc/PID/task/TID/comm).
func (p Proc) ThreadComm(pid, tid int) (string, error) {
	c, err := p.fs().Proc(pid).Task(tid).Comm()
	return strings.TrimRight(c, "\n"), err
}

// ThreadSyscall returns the system call number thread tid of pid is blocked
// in, or -1 when it is running (/proc/PID/task/TID/syscall; root only).
func (p Proc) ThreadSyscall(pid, tid int) (int, error) {
	b, err := p.fs().Proc(pid).Task(tid).ReadFile("syscall")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 || f[0] == "running" {
		return -1, nil
	}
	return strconv.Atoi(f[0])
}
