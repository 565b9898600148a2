package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testhosts"
)

func TestMain(m *testing.M) { os.Exit(testhosts.Main(m)) }

// connect opens a group and connects to the host named name of file.
func connect(t *testing.T, file, name string) (*Conn, error) {
	t.Helper()
	hosts, err := LoadHosts(file)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	})
	for _, h := range hosts {
		if h.Name == name {
			return g.Connect(context.Background(), h)
		}
	}
	t.Fatalf("no host %s in %s", name, file)
	return nil, nil
}

func mustConnect(t *testing.T, file, name string) *Conn {
	t.Helper()
	c, err := connect(t, file, name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func uname(t *testing.T, flag string) string {
	t.Helper()
	out, err := exec.Command("uname", flag).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func randomWord(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestHosts runs what a run does on a host: connect, copy perfbench, run
// commands with their output prefixed, pass secrets, pull files back.
func TestHosts(t *testing.T) {
	set := testhosts.New(t, 1)
	h1 := set.Host(t, "h1")
	c := mustConnect(t, set.HostsFile, "h1")
	if c.OS != uname(t, "-s") || c.Arch != uname(t, "-m") {
		t.Errorf("host platform %s %s, want this machine's %s %s", c.OS, c.Arch, uname(t, "-s"), uname(t, "-m"))
	}
	ctx := context.Background()

	t.Run("run", func(t *testing.T) {
		var out, errb bytes.Buffer
		stdout, stderr := NewConsole(&out).Writer("h1: "), NewConsole(&errb).Writer("h1: ")
		// hostname is the host's own (a UTS namespace per host); pwd is
		// the work folder, under the host's own home.
		err := c.Run(ctx, []string{"sh", "-c", "echo one; echo oops >&2; hostname; pwd; printf 'no newline'"},
			runOptions{Stdout: stdout, Stderr: stderr})
		if err != nil {
			t.Fatal(err)
		}
		if want := "h1: one\nh1: h1\nh1: /root/perfbench\nh1: no newline\n"; out.String() != want {
			t.Errorf("stdout %q, want %q", out.String(), want)
		}
		if errb.String() != "h1: oops\n" {
			t.Errorf("stderr %q", errb.String())
		}
		if _, err := os.Stat(filepath.Join(h1.Home, "perfbench")); err != nil {
			t.Errorf("the work folder is not in the host's home: %v", err)
		}

		err = c.Run(ctx, []string{"sh", "-c", "echo 'cannot open the file' >&2; exit 3"}, runOptions{})
		if err == nil || !strings.Contains(err.Error(), "host h1") || !strings.Contains(err.Error(), "exit status 3: cannot open the file") {
			t.Errorf("failed command: got %v", err)
		}
	})

	bin := testhosts.Perfbench(t)
	t.Run("install", func(t *testing.T) {
		in, err := c.Install(ctx, bin)
		if err != nil {
			t.Fatal(err)
		}
		local, _ := os.ReadFile(bin)
		onHost, err := os.ReadFile(filepath.Join(h1.Home, "perfbench", "bin", "perfbench"))
		if err != nil || !in.Copied || in.Path != "/root/perfbench/bin/perfbench" || in.Size != int64(len(local)) || !bytes.Equal(local, onHost) {
			t.Fatalf("install: %+v, copy identical: %v, %v", in, bytes.Equal(local, onHost), err)
		}
		again, err := c.Install(ctx, bin)
		if err != nil || again.Copied || again.Path != in.Path {
			t.Errorf("second install: %+v, %v; want no copy", again, err)
		}
		// A fresh connection finds the binary there too.
		c2 := mustConnect(t, set.HostsFile, "h1")
		if again, err := c2.Install(ctx, bin); err != nil || again.Copied {
			t.Errorf("install over a new connection: %+v, %v; want no copy", again, err)
		}

		// A binary for another architecture is refused before any copy.
		other := filepath.Join(t.TempDir(), "perfbench")
		machine, arch := elf.EM_AARCH64, "aarch64"
		if c.Arch == "aarch64" {
			machine, arch = elf.EM_X86_64, "x86_64"
		}
		writeELF(t, other, machine)
		_, err = c.Install(ctx, other)
		if !errors.Is(err, errPlatform) || !strings.Contains(err.Error(), "host h1") ||
			!strings.Contains(err.Error(), "the host is Linux "+c.Arch) || !strings.Contains(err.Error(), "built for Linux "+arch) {
			t.Errorf("binary for %s: got %v", arch, err)
		}
		if onHost2, _ := os.ReadFile(filepath.Join(h1.Home, "perfbench", "bin", "perfbench")); !bytes.Equal(onHost2, local) {
			t.Error("the refused binary replaced the installed one")
		}
	})

	// Startup files that print (bash reads ~/.bashrc for ssh commands) do
	// not confuse the probe or the copy.
	t.Run("noisy login shell", func(t *testing.T) {
		rc := filepath.Join(h1.Home, ".bashrc")
		if err := os.WriteFile(rc, []byte("echo welcome to the lab\necho motd >&2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(rc)
		os.Remove(filepath.Join(h1.Home, "perfbench", "bin", "perfbench"))
		c2 := mustConnect(t, set.HostsFile, "h1")
		if c2.OS != c.OS || c2.Arch != c.Arch || c2.WorkDir != "/root/perfbench" {
			t.Errorf("probe through a noisy shell: %q %q %q", c2.OS, c2.Arch, c2.WorkDir)
		}
		if in, err := c2.Install(ctx, bin); err != nil || !in.Copied {
			t.Errorf("install through a noisy shell: %+v, %v", in, err)
		}
		var out bytes.Buffer
		if err := c2.Run(ctx, []string{"true"}, runOptions{Stdout: &out}); err != nil || out.String() != "welcome to the lab\n" {
			t.Errorf("the shell's noise: %q, %v (want it passed on as the host printed it)", out.String(), err)
		}
	})

	t.Run("secrets", func(t *testing.T) {
		secret := "pw-" + randomWord(t)
		control := "control-" + randomWord(t)
		// Watch every command line on the machine (the hosts share its
		// processes) while the secret travels.
		var seen, controlSeen atomic.Bool
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
				for _, f := range cmdlines {
					b, _ := os.ReadFile(f)
					seen.Store(seen.Load() || bytes.Contains(b, []byte(secret)))
					controlSeen.Store(controlSeen.Load() || bytes.Contains(b, []byte(control)))
				}
			}
		}()
		// The watcher must see a word that is on a command line.
		if err := exec.Command("sh", "-c", "sleep 0.5", control).Run(); err != nil {
			t.Fatal(err)
		}

		path, err := c.PutSecret(ctx, []byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Output(ctx, []string{"sh", "-c", `stat -c %a "$1"; cat "$1"`, "sh", path}, runOptions{})
		if err != nil || string(out) != "600\n"+secret {
			t.Errorf("secret file: %q, %v; want mode 600 and the secret", out, err)
		}
		// On stdin: the remote command reads it, and lives a while.
		out, err = c.Output(ctx, []string{"sh", "-c", "read -r pw; sleep 0.5; echo ${#pw}"}, runOptions{Stdin: strings.NewReader(secret + "\n")})
		if err != nil || strings.TrimSpace(string(out)) != "19" {
			t.Errorf("secret on stdin: %q, %v", out, err)
		}
		if err := c.Remove(ctx, path); err != nil {
			t.Fatal(err)
		}
		if err := c.Run(ctx, []string{"test", "!", "-e", path}, runOptions{}); err != nil {
			t.Errorf("secret file still there after Remove: %v", err)
		}
		close(stop)
		wg.Wait()
		if !controlSeen.Load() {
			t.Fatal("the command line watcher missed the control word: it proves nothing")
		}
		if seen.Load() {
			t.Error("the secret appeared on a command line")
		}
	})

	t.Run("pull", func(t *testing.T) {
		in, err := c.Install(ctx, bin)
		if err != nil {
			t.Fatal(err)
		}
		local := t.TempDir()
		got := make(chan string, 10)
		p, err := c.Pull(ctx, in.Path, "out", local, func(rel string) { got <- rel })
		if err != nil {
			t.Fatal(err)
		}
		// Records are written to a dot file, then renamed.
		write := func(name, content string) {
			t.Helper()
			err := c.Run(ctx, []string{"sh", "-c", `mkdir -p out/records && printf %s "$2" >"out/records/.$1.tmp" && mv ` +
				`"out/records/.$1.tmp" "out/records/$1"`, "sh", name, content}, runOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
		write("a.json", `{"a":1}`)
		select {
		case rel := <-got:
			if rel != "records/a.json" {
				t.Errorf("pulled %q first, want records/a.json", rel)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("records/a.json did not come back while the pull ran")
		}
		write("b.json", `{"b":2}`)
		// A file being written (a dot name) is not pulled.
		if err := c.Run(ctx, []string{"sh", "-c", "printf x > out/records/.c.json.tmp"}, runOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(); err != nil {
			t.Fatal(err)
		}
		close(got)
		var rest []string
		for rel := range got {
			rest = append(rest, rel)
		}
		if len(rest) != 1 || rest[0] != "records/b.json" {
			t.Errorf("pulled at the end %q, want [records/b.json]", rest)
		}
		for name, want := range map[string]string{"a.json": `{"a":1}`, "b.json": `{"b":2}`} {
			if b, err := os.ReadFile(filepath.Join(local, "records", name)); err != nil || string(b) != want {
				t.Errorf("pulled %s: %q, %v", name, b, err)
			}
		}
		entries, _ := os.ReadDir(filepath.Join(local, "records"))
		if len(entries) != 2 {
			t.Errorf("pulled folder holds %d files, want 2 (no temporary file)", len(entries))
		}
	})
}

// writeELF writes the header of a Linux executable for machine.
func writeELF(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	b := make([]byte, 64)
	copy(b, "\x7fELF")
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	binary.LittleEndian.PutUint16(b[16:], uint16(elf.ET_EXEC))
	binary.LittleEndian.PutUint16(b[18:], uint16(machine))
	binary.LittleEndian.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	binary.LittleEndian.PutUint16(b[52:], 64)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestRunCancel stops a remote command with everything it started: a
// process that ignores SIGTERM, its child, and a process that moved to a
// process group of its own (as perfbench's servers do).
func TestRunCancel(t *testing.T) {
	set := testhosts.New(t, 1)
	c := mustConnect(t, set.HostsFile, "h1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	started := make(chan struct{})
	w := &signalWriter{w: &out, word: "started", signal: started}
	script := `trap "" TERM
(trap "" TERM; exec sleep 301) &
perl -e 'setpgrp; sleep 302' &
echo started
wait`
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, []string{"sh", "-c", script}, runOptions{Stdout: w, Grace: time.Second}) }()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the command ended before it was stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not start")
	}
	running := func() []string {
		var left []string
		for _, p := range set.Procs(t, "h1") {
			if !strings.HasPrefix(p.Command, "sshd:") {
				left = append(left, p.Command)
			}
		}
		return left
	}
	before := strings.Join(running(), "|")
	for _, want := range []string{"sleep 301", "sleep 302", "sh -c"} {
		if !strings.Contains(before, want) {
			t.Fatalf("before stopping, %q is not running on the host: %s", want, before)
		}
	}
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "host h1") {
		t.Errorf("Run returned %v, want the host and context.Canceled", err)
	}
	if left := running(); len(left) > 0 {
		t.Errorf("still running on the host after the stop: %q", left)
	}
}

// signalWriter closes signal once word has been written.
type signalWriter struct {
	mu     sync.Mutex
	w      *bytes.Buffer
	word   string
	signal chan struct{}
	done   bool
}

func (s *signalWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.Write(p)
	if !s.done && strings.Contains(s.w.String(), s.word) {
		s.done = true
		close(s.signal)
	}
	return len(p), nil
}

// TestConnectErrors: a host whose key is not known, one whose key
// changed, and one whose sshd is down each give a one-line error naming
// the host and what to do, and perfbench does not accept keys by itself.
func TestConnectErrors(t *testing.T) {
	set := testhosts.New(t, 3)
	known, err := os.ReadFile(set.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	// h1's key is replaced by another; h2's is left out.
	other := filepath.Join(t.TempDir(), "other")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	otherPub, err := os.ReadFile(other + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	var kh strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(known)), "\n") {
		f := strings.Fields(line)
		switch f[0] {
		case set.Host(t, "h1").Address:
			kh.WriteString(f[0] + " " + strings.Join(strings.Fields(string(otherPub))[:2], " ") + "\n")
		case set.Host(t, "h2").Address:
		default:
			kh.WriteString(line + "\n")
		}
	}
	khFile := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(khFile, []byte(kh.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	file := set.WriteHostsFile(t, khFile)
	set.StopSSHD(t, "h3")

	for _, tc := range []struct {
		host string
		is   error
		want []string
	}{
		{"h1", errHostKeyChanged, []string{"host h1 (root@" + set.Host(t, "h1").Address + "): host key changed", khFile +
			":1", "ssh-keygen -f", "accept it with: ssh -i " + set.ClientKey}},
		{"h2", errHostKeyUnknown, []string{"host h2 (root@" + set.Host(t, "h2").Address + "): unknown host key", "accept it " +
			"with: ssh -i " + set.ClientKey, "UserKnownHostsFile=" + khFile, "root@" + set.Host(t, "h2").Address + " true"}},
		{"h3", errUnreachable, []string{"host h3 (root@" + set.Host(t, "h3").Address + "): host unreachable", "Connection refused"}},
	} {
		_, err := connect(t, file, tc.host)
		if !errors.Is(err, tc.is) {
			t.Errorf("%s: got %v, want %v", tc.host, err, tc.is)
			continue
		}
		msg := err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not say %q", tc.host, msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: error is not one line: %q", tc.host, msg)
		}
	}
	if after, _ := os.ReadFile(khFile); string(after) != kh.String() {
		t.Errorf("known_hosts changed: perfbench accepted a key by itself:\n%s", after)
	}
	// With the set's own known_hosts, h1 and h2 connect; h3 does after
	// its sshd is back.
	set.StartSSHD(t, "h3")
	for _, h := range []string{"h1", "h2", "h3"} {
		if _, err := connect(t, set.HostsFile, h); err != nil {
			t.Errorf("%s with its key known: %v", h, err)
		}
	}
}

func TestArgsKeepHostKeyChecking(t *testing.T) {
	c := &Conn{Host: Host{Name: "a", Destination: "u@h", Port: 2222, Identity: "/k", SSHOptions: []string{"ProxyJump=gw",
		"BatchMode=no"}}, ssh: "ssh", ctl: "/tmp/pbssh1/c1"}
	args := c.args("-O", "exit")
	joined := strings.Join(args, " ")
	if strings.Contains(strings.ToLower(joined), "stricthostkeychecking") || strings.Contains(strings.ToLower(joined), "userknownhostsfile") {
		t.Errorf("perfbench sets host key checking itself: %s", joined)
	}
	// The user's options come first: ssh keeps the first value it reads.
	if !strings.HasPrefix(joined, "-p 2222 -i /k -o ProxyJump=gw -o BatchMode=no -o BatchMode=yes") {
		t.Errorf("args %s: the hosts file's options are not first", joined)
	}
	if !strings.HasSuffix(joined, "-o ControlPath=/tmp/pbssh1/c1 -O exit -- u@h") {
		t.Errorf("args %s", joined)
	}
}

func TestQuote(t *testing.T) {
	words := []string{"plain", "with space", "it's", `"dq" $HOME ; rm -rf / ` + "`x`", "", "a\nb", "--opt=1", "*"}
	out, err := exec.Command("sh", "-c", "printf '%s|' "+quote(words...)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(words, "|") + "|"; string(out) != want {
		t.Errorf("through sh: %q, want %q", out, want)
	}
}

func TestBinaryPlatform(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := binaryPlatform(self)
	if err != nil {
		t.Fatal(err)
	}
	if host := (platform{OS: uname(t, "-s"), Arch: uname(t, "-m")}); !p.runs(host) || p != host {
		t.Errorf("this test binary is for %v, this machine is %v", p, host)
	}
	arm := filepath.Join(t.TempDir(), "arm")
	writeELF(t, arm, elf.EM_AARCH64)
	if p, err := binaryPlatform(arm); err != nil || p != (platform{"Linux", "aarch64"}) {
		t.Errorf("arm64 header: %v, %v", p, err)
	}
	if (platform{"Linux", "aarch64"}).runs(platform{"Linux", "x86_64"}) || (platform{"Linux", "x86_64"}).runs(platform{"FreeBSD", "x86_64"}) {
		t.Error("a binary runs on a platform it was not built for")
	}
	if !(platform{"Linux", "i686"}).runs(platform{"Linux", "i586"}) {
		t.Error("a 32-bit x86 binary does not run on i586")
	}
	script := filepath.Join(t.TempDir(), "script")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	if _, err := binaryPlatform(script); err == nil {
		t.Error("a shell script has a platform")
	}
}

func TestConsole(t *testing.T) {
	var out bytes.Buffer
	con := NewConsole(&out)
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := con.Writer(name + ": ")
			for i := 0; i < 200; i++ {
				// A line in two writes, then two lines in one.
				w.Write([]byte("x" + name))
				w.Write([]byte(name + "\n" + name + name + name + "\n"))
			}
			w.Write([]byte("last"))
			w.Flush()
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3*401 {
		t.Fatalf("%d lines, want %d", len(lines), 3*401)
	}
	count := map[string]int{}
	for _, l := range lines {
		count[l]++
	}
	for _, n := range []string{"a", "b", "c"} {
		if count[n+": x"+n+n] != 200 || count[n+": "+n+n+n] != 200 || count[n+": last"] != 1 {
			t.Errorf("host %s: lines mixed: %v", n, count)
		}
	}
}
