// Package testhosts gives tests test servers on this machine, reachable
// over ssh: each host is a network namespace with a veth pair to this one
// (addresses in 10.213.0.0/16, nothing leaves the machine), its own sshd on
// port 22, its own host key, host name and home folder. They are made and
// removed by scripts/testhosts.sh, which the README documents for use by
// hand.
//
//	set := testhosts.New(t, 3) // removed by t.Cleanup
//	hosts, err := remote.LoadHosts(set.HostsFile)
//
// The hosts share the rest with this machine: the filesystem outside the
// home folders, the process IDs, the users and the installed programs.
//
// When ip, sshd or root privileges are missing the tests skip, naming what
// to install; where integration tests are required they fail instead (see
// package testenv).
package testhosts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/testenv"
)

// Set is a set of test hosts.
type Set struct {
	// Dir holds the state: keys, sshd configurations, the hosts' homes.
	Dir string
	// HostsFile is a perfbench hosts file naming every host, with the
	// client key and KnownHosts.
	HostsFile string
	// KnownHosts has every host's key; ClientKey is authorized on all.
	KnownHosts, ClientKey string
	Hosts                 []Host

	script string
}

// Host is one test host.
type Host struct {
	Name      string // h1, h2, ...
	Namespace string
	Address   string
	// Home is the folder that is the login user's home on the host.
	Home string
}

const install = "iproute2 openssh-server openssh-client util-linux"

// need skips (or fails, see testenv.Skip) when test hosts cannot be made
// here.
func need(t testing.TB) {
	t.Helper()
	testenv.NeedRoot(t, "making test hosts (network namespaces)")
	for _, bin := range []string{"ip", "ssh", "ssh-keygen", "unshare", "/usr/sbin/sshd"} {
		testenv.NeedBinary(t, bin, install)
	}
}

// New makes n test hosts and removes them (their namespaces, veths and
// every process in them) in t.Cleanup.
func New(t testing.TB, n int) *Set {
	t.Helper()
	need(t)
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	s := &Set{Dir: t.TempDir(), script: filepath.Join(root, "scripts", "testhosts.sh")}
	if out, err := exec.Command(s.script, "up", strconv.Itoa(n), s.Dir).CombinedOutput(); err != nil {
		exec.Command(s.script, "down", s.Dir).Run()
		t.Fatalf("make %d test hosts: %v: %s", n, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(s.script, "down", s.Dir).CombinedOutput(); err != nil {
			t.Errorf("remove the test hosts: %v: %s", err, out)
		}
	})
	s.HostsFile = filepath.Join(s.Dir, "hosts.toml")
	s.KnownHosts = filepath.Join(s.Dir, "known_hosts")
	s.ClientKey = filepath.Join(s.Dir, "client_key")
	b, err := os.ReadFile(filepath.Join(s.Dir, "hosts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("hosts.txt line %q", line)
		}
		s.Hosts = append(s.Hosts, Host{Name: f[0], Namespace: f[1], Address: f[2], Home: f[3]})
	}
	if len(s.Hosts) != n {
		t.Fatalf("made %d test hosts, want %d", len(s.Hosts), n)
	}
	return s
}

// Host returns the host named name.
func (s *Set) Host(t testing.TB, name string) Host {
	t.Helper()
	for _, h := range s.Hosts {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("no test host %s", name)
	return Host{}
}

// StopSSHD stops a host's sshd (sessions already open stay); StartSSHD
// starts it again.
func (s *Set) StopSSHD(t testing.TB, name string) {
	t.Helper()
	if out, err := exec.Command(s.script, "stop", s.Dir, name).CombinedOutput(); err != nil {
		t.Fatalf("stop sshd of %s: %v: %s", name, err, out)
	}
}

// StartSSHD starts a host's sshd again after StopSSHD.
func (s *Set) StartSSHD(t testing.TB, name string) {
	t.Helper()
	if out, err := exec.Command(s.script, "start", s.Dir, name).CombinedOutput(); err != nil {
		t.Fatalf("start sshd of %s: %v: %s", name, err, out)
	}
}

// CutLink brings down the host's veth on this machine's side: the link
// is cut as a pulled cable cuts it (no reset reaches either side);
// MendLink brings it up again.
func (s *Set) CutLink(t testing.TB, name string) {
	t.Helper()
	s.link(t, name, "down")
}

// MendLink brings a link cut by CutLink up again.
func (s *Set) MendLink(t testing.TB, name string) {
	t.Helper()
	s.link(t, name, "up")
}

func (s *Set) link(t testing.TB, name, state string) {
	t.Helper()
	// The veth's end here has the namespace's name (testhosts.sh).
	if out, err := exec.Command("ip", "link", "set", s.Host(t, name).Namespace, state).CombinedOutput(); err != nil {
		t.Fatalf("set the link of %s %s: %v: %s", name, state, err, out)
	}
}

// Hide makes a program or file missing on one host: an empty file that
// cannot be run is mounted over path in the host's mount namespace (the
// other hosts and this machine keep it), until the host's sshd restarts.
func (s *Set) Hide(t testing.TB, name, path string) {
	t.Helper()
	pid, err := os.ReadFile(filepath.Join(s.Dir, name, "sshd.pid"))
	if err != nil {
		t.Fatalf("hide %s on %s: %v", path, name, err)
	}
	empty := filepath.Join(s.Dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("nsenter", "-t", strings.TrimSpace(string(pid)), "-m", "mount", "--bind", empty, path).CombinedOutput()
	if err != nil {
		t.Fatalf("hide %s on %s: %v: %s", path, name, err, out)
	}
}

// Logins counts the logins a host's sshd accepted (from its log).
func (s *Set) Logins(t testing.TB, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, name, "sshd.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "Accepted publickey for ")
}

// Proc is a process running in a host's namespace.
type Proc struct {
	Pid     int
	Command string // its command line, arguments separated by spaces
}

// Procs lists the processes running in a host's network namespace
// (zombies, which run nothing, are left out).
func (s *Set) Procs(t testing.TB, name string) []Proc {
	t.Helper()
	h := s.Host(t, name)
	out, err := exec.Command("ip", "netns", "pids", h.Namespace).Output()
	if err != nil {
		t.Fatalf("list the processes of %s: %v", name, err)
	}
	var ps []Proc
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		p := procfs.New("").Proc(pid)
		if p.Alive() != nil {
			continue // gone, or a zombie
		}
		cmd, _ := p.ReadFile("cmdline")
		ps = append(ps, Proc{Pid: pid, Command: strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
	}
	return ps
}

var build struct {
	sync.Mutex
	dir, path string
}

// Perfbench returns a perfbench binary built from this tree, to copy to
// test hosts. It is built once per test binary when the package's TestMain
// calls Main (which removes it), else into t.TempDir() each time.
func Perfbench(t testing.TB) string {
	t.Helper()
	build.Lock()
	defer build.Unlock()
	if build.path != "" {
		return build.path
	}
	dir := build.dir
	if dir == "" {
		dir = t.TempDir()
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path := filepath.Join(dir, "perfbench")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", path, "./cmd/perfbench")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build perfbench: %v: %s", err, out)
	}
	if build.dir != "" {
		build.path = path
	}
	return path
}

// Main runs the tests, keeping one perfbench binary (see Perfbench) for
// all of them and removing it at the end:
//
//	func TestMain(m *testing.M) { os.Exit(testhosts.Main(m)) }
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "pbtest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	build.dir = dir
	return m.Run()
}

// moduleRoot is the folder of go.mod above the working directory (a test's
// is its package's folder).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find the perfbench tree: no go.mod above the working directory")
		}
		dir = parent
	}
}

// WriteHostsFile writes a hosts file for the hosts named (all when none
// is), checking host keys against knownHosts instead of the set's
// KnownHosts (a test's own: with a host left out or a wrong key). It
// returns the file's path.
func (s *Set) WriteHostsFile(t testing.TB, knownHosts string, names ...string) string {
	t.Helper()
	if len(names) == 0 {
		for _, h := range s.Hosts {
			names = append(names, h.Name)
		}
	}
	var b strings.Builder
	for _, n := range names {
		h := s.Host(t, n)
		fmt.Fprintf(&b, "[[host]]\nname = %q\ndestination = %q\nidentity = %q\nssh_options = [%q, %q, %q]\n\n",
			h.Name, "root@"+h.Address, s.ClientKey,
			"UserKnownHostsFile="+knownHosts, "GlobalKnownHostsFile=/dev/null", "IdentitiesOnly=yes")
	}
	path := filepath.Join(t.TempDir(), "hosts.toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
