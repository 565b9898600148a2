package mysqld

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Hand-encoded /proc/net lines (x86-64, little-endian): 127.0.0.1 is
// 0100007F, port 3306 is 0CEA, 3307 is 0CEB, 33060 is 8124; ::1 is three
// zero words and 01000000; state 0A is LISTEN, 01 ESTABLISHED.
const netTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0
   1: 00000000:0CEB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1002 1 0000000000000000 100 0 0 10 0
   2: 0100007F:0CEA 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 20 4 30 10 -1
`

const netTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:8124 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1004 1 0000000000000000 100 0 0 10 0
`

const netUnix = `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 2001 /run/mysqld/mysqld.sock
0000000000000000: 00000002 00000000 00010000 0001 01 2002 /tmp/other.sock
0000000000000000: 00000003 00000000 00000000 0001 03 2003 /run/mysqld/mysqld.sock
0000000000000000: 00000002 00000000 00010000 0001 01 2004 @abstract
0000000000000000: 00000003 00000000 00000000 0001 03 2005
`

func TestParseNetTCP(t *testing.T) {
	socks, err := parseNetTCP(strings.NewReader(netTCP))
	if err != nil {
		t.Fatal(err)
	}
	want := []tcpSocket{
		{IP: net.IPv4(127, 0, 0, 1).To4(), Port: 3306, Listen: true, Inode: 1001},
		{IP: net.IPv4(0, 0, 0, 0).To4(), Port: 3307, Listen: true, Inode: 1002},
		{IP: net.IPv4(127, 0, 0, 1).To4(), Port: 3306, Listen: false, Inode: 1003},
	}
	if !reflect.DeepEqual(socks, want) {
		t.Errorf("tcp:\n got %+v\nwant %+v", socks, want)
	}
	socks, err = parseNetTCP(strings.NewReader(netTCP6))
	if err != nil {
		t.Fatal(err)
	}
	if len(socks) != 1 || !socks[0].IP.Equal(net.IPv6loopback) || socks[0].Port != 33060 || !socks[0].Listen {
		t.Errorf("tcp6 = %+v, want [::1]:33060 listening", socks)
	}
	if _, err := parseNetTCP(strings.NewReader("h\n 0: ZZ:0CEA 0:0 0A 0 0 0 0 0 1001\n")); err == nil {
		t.Error("bad address: no error")
	}
}

func TestParseNetUnix(t *testing.T) {
	socks, err := parseNetUnix(strings.NewReader(netUnix))
	if err != nil {
		t.Fatal(err)
	}
	want := []unixSocket{
		{Path: "/run/mysqld/mysqld.sock", Listen: true, Inode: 2001},
		{Path: "/tmp/other.sock", Listen: true, Inode: 2002},
		{Path: "/run/mysqld/mysqld.sock", Listen: false, Inode: 2003},
		{Path: "@abstract", Listen: true, Inode: 2004},
		{Path: "", Listen: false, Inode: 2005},
	}
	if !reflect.DeepEqual(socks, want) {
		t.Errorf("unix:\n got %+v\nwant %+v", socks, want)
	}
}

// fakeProc builds a root tree whose proc folder stands for /proc.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc {
	root := t.TempDir()
	f := &fakeProc{t, root}
	f.write("net/tcp", netTCP)
	f.write("net/tcp6", netTCP6)
	f.write("net/unix", netUnix)
	return f
}

func (f *fakeProc) write(rel, text string) {
	p := filepath.Join(f.root, "proc", rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) link(rel, target string) {
	p := filepath.Join(f.root, "proc", rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.Symlink(target, p); err != nil {
		f.t.Fatal(err)
	}
}

// process adds pid running exe with socket inodes open; its network
// namespace is the same as perfbench's (its net/ files are copies).
func (f *fakeProc) process(pid int, comm, exe string, inodes ...int) {
	d := strconv.Itoa(pid)
	f.write(d+"/comm", comm+"\n")
	f.write(d+"/status", fmt.Sprintf("Name:\t%s\nTgid:\t%d\nPid:\t%d\n", comm, pid, pid))
	if exe != "" {
		f.link(d+"/exe", exe)
	}
	os.MkdirAll(filepath.Join(f.root, "proc", d, "fd"), 0o755)
	f.link(d+"/fd/0", "/dev/null")
	for i, n := range inodes {
		f.link(fmt.Sprintf("%s/fd/%d", d, i+3), fmt.Sprintf("socket:[%d]", n))
	}
	f.write(d+"/net/tcp", netTCP)
	f.write(d+"/net/tcp6", netTCP6)
	f.write(d+"/net/unix", netUnix)
}

// thread adds thread tid to process pid.
func (f *fakeProc) thread(pid, tid int, comm string) {
	f.write(fmt.Sprintf("%d/task/%d/comm", pid, tid), comm+"\n")
	f.write(fmt.Sprintf("%d/status", tid), fmt.Sprintf("Name:\t%s\nTgid:\t%d\nPid:\t%d\n", comm, pid, tid))
}

func TestProcServers(t *testing.T) {
	f := newFakeProc(t)
	f.process(100, "mariadbd", "/usr/sbin/mariadbd", 1001, 2001)
	f.process(200, "mysqld", "/opt/mysql-8.0.39/bin/mysqld (deleted)", 1002, 1004, 2002)
	f.process(300, "sleep", "/usr/bin/sleep")
	f.process(400, "mysqld_safe", "/usr/bin/dash")
	p := Proc{Root: f.root}
	servers, err := p.Servers()
	if err != nil {
		t.Fatal(err)
	}
	want := []Process{
		{Pid: 100, Comm: "mariadbd", Exe: "/usr/sbin/mariadbd", Sockets: []string{"/run/mysqld/mysqld.sock"}, Ports: []int{3306}},
		{Pid: 200, Comm: "mysqld", Exe: "/opt/mysql-8.0.39/bin/mysqld", Deleted: true, Sockets: []string{"/tmp/other.sock"}, Ports: []int{3307, 33060}},
	}
	if !reflect.DeepEqual(servers, want) {
		t.Errorf("servers:\n got %+v\nwant %+v", servers, want)
	}
	if got := want[1].Describe(); got != "pid 200 /opt/mysql-8.0.39/bin/mysqld (deleted) port 3307 port 33060 socket /tmp/other.sock" {
		t.Errorf("Describe = %q", got)
	}
}

func TestProcListenerOf(t *testing.T) {
	f := newFakeProc(t)
	f.process(100, "mariadbd", "/usr/sbin/mariadbd", 1001)
	f.process(200, "mysqld", "/usr/sbin/mysqld", 1002, 1004)
	p := Proc{Root: f.root}
	for _, tc := range []struct {
		ip   net.IP
		port int
		pid  int
	}{
		{net.IPv4(127, 0, 0, 1), 3306, 100},
		{nil, 3306, 100},
		{net.IPv4(127, 0, 0, 1), 3307, 200}, // 0.0.0.0 accepts it
		{net.IPv4(10, 1, 2, 3), 3307, 200},
		{net.IPv6loopback, 33060, 200},
	} {
		pid, err := p.ListenerOf(tc.ip, tc.port)
		if err != nil || pid != tc.pid {
			t.Errorf("ListenerOf(%v, %d) = %d, %v; want %d", tc.ip, tc.port, pid, err, tc.pid)
		}
	}
	// 3306 listens on 127.0.0.1 only: not on 10.1.2.3.
	if _, err := p.ListenerOf(net.IPv4(10, 1, 2, 3), 3306); !errors.Is(err, errNoListener) {
		t.Errorf("3306 on 10.1.2.3: err = %v, want ErrNoListener", err)
	}
	if _, err := p.ListenerOf(net.IPv4(127, 0, 0, 1), 4000); !errors.Is(err, errNoListener) {
		t.Errorf("port 4000: err = %v, want ErrNoListener", err)
	}
}

func TestProcTgidThreads(t *testing.T) {
	f := newFakeProc(t)
	f.process(100, "mariadbd", "/usr/sbin/mariadbd")
	f.thread(100, 100, "mariadbd")
	f.thread(100, 105, "mariadbd")
	f.thread(100, 103, "ib_io_rd-1")
	p := Proc{Root: f.root}
	if g, err := p.Tgid(105); err != nil || g != 100 {
		t.Errorf("Tgid(105) = %d, %v", g, err)
	}
	if _, err := p.Tgid(999); !errors.Is(err, procfs.ErrGone) {
		t.Errorf("Tgid(999): %v", err)
	}
	tids, err := p.Threads(100)
	if err != nil || !reflect.DeepEqual(tids, []int{100, 103, 105}) {
		t.Errorf("Threads = %v, %v", tids, err)
	}
	if c, _ := p.ThreadComm(100, 103); c != "ib_io_rd-1" {
		t.Errorf("ThreadComm = %q", c)
	}
}

func TestFind(t *testing.T) {
	f := newFakeProc(t)
	f.process(100, "mariadbd", "/usr/sbin/mariadbd", 1001, 2001)
	f.process(300, "sleep", "/usr/bin/sleep")
	pidFile := filepath.Join(t.TempDir(), "mysqld.pid")
	os.WriteFile(pidFile, []byte("100\n"), 0o644)
	stale := filepath.Join(t.TempDir(), "stale.pid")
	os.WriteFile(stale, []byte("555\n"), 0o644)
	garbage := filepath.Join(t.TempDir(), "garbage.pid")
	os.WriteFile(garbage, []byte("mysqld\n"), 0o644)

	socketPid := func(ctx context.Context, path string) (int, error) {
		switch path {
		case "/run/mysqld/mysqld.sock":
			return 100, nil
		case "/tmp/sleep.sock":
			return 300, nil
		}
		return 0, fmt.Errorf("connect to socket %s: %w", path, errUnreachable)
	}
	fd := finder{Proc: Proc{Root: f.root}, SocketPid: socketPid}
	ctx := context.Background()

	ok := []struct {
		t  Target
		by string
	}{
		{Target{Pid: 100}, "--pid"},
		{Target{PidFile: pidFile}, "pid file " + pidFile},
		{Target{Socket: "/run/mysqld/mysqld.sock"}, "socket /run/mysqld/mysqld.sock"},
		{Target{Port: 3306}, "listener of 127.0.0.1:3306"},
		{Target{Host: "127.0.0.1", Port: 3306}, "listener of 127.0.0.1:3306"},
		{Target{}, "only server running"},
		{Target{Pid: 100, Socket: "/run/mysqld/mysqld.sock"}, "--pid"},
		// The pid names the process; a dead socket is for the
		// connection to report.
		{Target{Pid: 100, Socket: "/dead.sock"}, "--pid"},
	}
	for _, tc := range ok {
		got, err := fd.Find(ctx, tc.t)
		if err != nil {
			t.Errorf("Find(%+v): %v", tc.t, err)
			continue
		}
		if got.Pid != 100 || got.By != tc.by || got.Exe != "/usr/sbin/mariadbd" || !reflect.DeepEqual(got.Sockets, []string{"/run/mysqld/mysqld.sock"}) {
			t.Errorf("Find(%+v) = %+v", tc.t, got)
		}
	}

	bad := []struct {
		t        Target
		sentinel error
		text     string
	}{
		{Target{Pid: 300}, errNotServer, "pid 300 (--pid) runs /usr/bin/sleep: not a mysqld or mariadbd process; pass --force"},
		{Target{Socket: "/tmp/sleep.sock"}, errNotServer, "runs /usr/bin/sleep"},
		{Target{Pid: 555}, procfs.ErrGone, "pid 555 (--pid) is not running"},
		{Target{PidFile: stale}, procfs.ErrGone, "names pid 555, which is not running (a stale pid file?)"},
		{Target{Socket: "/dead.sock"}, errUnreachable, "/dead.sock"},
		{Target{Port: 4000}, errNoListener, "127.0.0.1:4000"},
		{Target{Pid: 300, Socket: "/run/mysqld/mysqld.sock"}, errMismatch, "--pid gives pid 300 but socket /run/mysqld/mysqld.sock is pid 100"},
		{Target{Pid: 100, PidFile: pidFile}, errUsage, "not both"},
	}
	for _, tc := range bad {
		_, err := fd.Find(ctx, tc.t)
		if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("Find(%+v) error = %v; want %v containing %q", tc.t, err, tc.sentinel, tc.text)
		}
	}
	if _, err := fd.Find(ctx, Target{PidFile: garbage}); err == nil || !strings.Contains(err.Error(), `"mysqld" is not a process id`) {
		t.Errorf("garbage pid file: %v", err)
	}

	// --force accepts a process that is not a server.
	got, err := fd.Find(ctx, Target{Pid: 300, Force: true})
	if err != nil || got.Pid != 300 {
		t.Errorf("Find(--pid 300 --force) = %+v, %v", got, err)
	}

	// Several servers: an error listing them.
	f.process(200, "mysqld", "/opt/mysql/bin/mysqld", 1002)
	_, err = fd.Find(ctx, Target{})
	if !errors.Is(err, errManyServers) || !strings.Contains(err.Error(), "pid 100 /usr/sbin/mariadbd port 3306 socket "+
		"/run/mysqld/mysqld.sock; pid 200 /opt/mysql/bin/mysqld port 3307") || !strings.Contains(err.Error(), "choose one with --pid") {
		t.Errorf("two servers: %v", err)
	}

	// None.
	empty := newFakeProc(t)
	empty.process(300, "sleep", "/usr/bin/sleep")
	_, err = finder{Proc: Proc{Root: empty.root}}.Find(ctx, Target{})
	if !errors.Is(err, errNoServer) {
		t.Errorf("no server: %v", err)
	}
}

func TestIsServer(t *testing.T) {
	for _, tc := range []struct {
		p    Process
		want bool
	}{
		{Process{Exe: "/usr/sbin/mariadbd"}, true},
		{Process{Exe: "/usr/sbin/mysqld"}, true},
		{Process{Exe: "/opt/x/bin/mysqld-debug"}, true},
		{Process{Exe: "/usr/bin/mysqld_safe"}, false},
		{Process{Exe: "/usr/bin/dash", Comm: "mysqld"}, false},
		{Process{Comm: "mariadbd"}, true},
		{Process{Comm: "mysqldump"}, false},
		{Process{Exe: "/tmp/go-build1/b001/mysqld.test"}, false},
	} {
		if got := tc.p.IsServer(); got != tc.want {
			t.Errorf("IsServer(%+v) = %v", tc.p, got)
		}
	}
}
