package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Problems connecting to a host. Errors wrap one of them and name the host.
var (
	// errUnreachable: ssh could not connect (refused, timed out, no route,
	// name not resolved) or the connection dropped.
	errUnreachable = errors.New("host unreachable")
	// errHostKeyUnknown: the host's key is in no known_hosts file and the
	// ssh configuration asks for strict checking.
	errHostKeyUnknown = errors.New("unknown host key")
	// errHostKeyChanged: the host presented another key than the one known.
	errHostKeyChanged = errors.New("host key changed")
	// errAuth: the host refused the login.
	errAuth = errors.New("login refused")
	// errPlatform: the host's OS or architecture cannot run the binary.
	errPlatform = errors.New("platform mismatch")
)

// controlPersist is how long an idle shared connection stays open. Every
// command of a run goes through it; when it has closed, the next command
// opens another.
const controlPersist = 60 * time.Second

// A lost link is noticed by ssh's keepalive: with no answer from the host
// for keepAlive, ssh asks, and after keepAliveCount questions unanswered
// it gives the connection up; lostAfter is the most that takes.
const (
	keepAlive      = 5 * time.Second
	keepAliveCount = 3
	// lostAfter bounds how long a cut link goes unnoticed here.
	lostAfter = keepAlive * (keepAliveCount + 1)
)

// Group holds the shared connections of a run and the private folder of
// their control sockets.
type Group struct {
	dir string
	ssh string

	mu    sync.Mutex
	conns []*Conn
	n     int
}

// NewGroup makes the private folder for the control sockets. Close the
// group when done.
func NewGroup() (*Group, error) {
	ssh, err := exec.LookPath("ssh")
	if err != nil {
		return nil, fmt.Errorf("find ssh: %w; install the OpenSSH client (apt-get install openssh-client)", err)
	}
	// A short path: a unix socket path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "pbssh")
	if err != nil {
		return nil, fmt.Errorf("make the folder for ssh control sockets: %w", err)
	}
	return &Group{dir: dir, ssh: ssh}, nil
}

// Conn is the shared connection to one host.
type Conn struct {
	Host Host
	// OS and Arch are the host's uname -s and uname -m.
	OS, Arch string
	// WorkDir is the host's work folder as an absolute path, if it
	// existed when connecting.
	WorkDir string

	ssh        string
	ctl        string
	installSum string // sha256 of WorkDir/bin/perfbench when connecting
}

// probe is the first command on a host: its platform, its work folder and
// the installed perfbench's checksum, in one round trip, after a marker
// line (a login shell's startup files may print before).
const probe = `echo ` + probeMark + `; uname -s; uname -m; cd %s 2>/dev/null && pwd && sha256sum bin/perfbench 2>/dev/null; true`

const probeMark = "perfbench-probe"

// Connect opens the shared connection to h (ssh with ControlMaster) and
// reads the host's platform. Host keys are checked as the user's ssh
// configuration says; a connection problem wraps one of the Err* values.
func (g *Group) Connect(ctx context.Context, h Host) (*Conn, error) {
	g.mu.Lock()
	g.n++
	c := &Conn{Host: h, ssh: g.ssh, ctl: fmt.Sprintf("%s/c%d", g.dir, g.n)}
	g.conns = append(g.conns, c)
	g.mu.Unlock()

	out, err := c.output(ctx, fmt.Sprintf(probe, quote(h.WorkDir)), nil)
	if err != nil {
		return nil, err
	}
	_, after, _ := strings.Cut(string(out), probeMark+"\n")
	lines := strings.Split(strings.TrimSpace(after), "\n")
	if len(lines) < 2 {
		return nil, fmt.Errorf("host %s: read uname -s and -m: got %q", h.Name, out)
	}
	c.OS, c.Arch = strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1])
	if len(lines) >= 3 {
		c.WorkDir = strings.TrimSpace(lines[2])
	}
	if len(lines) >= 4 {
		c.installSum, _, _ = strings.Cut(lines[3], " ")
	}
	return c, nil
}

// Close ends every shared connection and removes the control sockets'
// folder.
func (g *Group) Close() error {
	g.mu.Lock()
	conns := g.conns
	g.conns = nil
	g.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
		}()
	}
	wg.Wait()
	return os.RemoveAll(g.dir)
}

// Close ends the shared connection (ssh -O exit). Commands still running
// over it are cut.
func (c *Conn) Close() error {
	if _, err := os.Stat(c.ctl); err != nil {
		return nil // never opened, or closed after ControlPersist
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.ssh, c.args("-O", "exit")...)
	cmd.SysProcAttr = sysProcAttr()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("host %s: close the shared ssh connection: %w: %s", c.Host.Name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// args builds ssh's arguments: the host's own options first (ssh keeps the
// first value it reads of an option, so they win over perfbench's
// defaults), then the shared connection, then extra and the destination.
// perfbench never changes how host keys are checked.
func (c *Conn) args(extra ...string) []string {
	h := c.Host
	a := c.Host.userArgs()
	a = append(a,
		"-o", "BatchMode=yes", // no password or passphrase prompts from concurrent hosts
		"-o", "ConnectTimeout=15",
		"-o", "ServerAliveInterval="+strconv.Itoa(int(keepAlive/time.Second)),
		"-o", "ServerAliveCountMax="+strconv.Itoa(keepAliveCount),
		"-o", "ControlMaster=auto",
		"-o", "ControlPersist="+strconv.Itoa(int(controlPersist/time.Second)),
		"-o", "ControlPath="+c.ctl,
	)
	a = append(a, extra...)
	return append(a, "--", h.Destination)
}

// userArgs are the ssh options the hosts file gives.
func (h Host) userArgs() []string {
	var a []string
	if h.Port > 0 {
		a = append(a, "-p", strconv.Itoa(h.Port))
	}
	if h.Identity != "" {
		a = append(a, "-i", h.Identity)
	}
	for _, o := range h.SSHOptions {
		a = append(a, "-o", o)
	}
	return a
}

// command returns the ssh command that runs script on the host; ending
// ctx kills the local ssh.
func (c *Conn) command(ctx context.Context, script string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.ssh, append(c.args(), script)...)
	cmd.SysProcAttr = sysProcAttr()
	// Do not wait for the stdin copy forever when ssh has gone.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// output runs a short script on the host and returns its stdout; stdin is
// its input (nil: none).
func (c *Conn) output(ctx context.Context, script string, stdin []byte) ([]byte, error) {
	cmd := c.command(ctx, script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("host %s: %w", c.Host.Name, ctx.Err())
		}
		return nil, c.sshError(err, stderr.String())
	}
	return stdout.Bytes(), nil
}

var (
	offendingRE = regexp.MustCompile(`Offending \S+ key in (\S+):(\d+)`)
	removeRE    = regexp.MustCompile(`(?m)^\s*(ssh-keygen -f .* -R .*)$`)
)

// sshError explains the failure of an ssh command in one line, naming the
// host: exit status 255 is ssh's own (connection, host key, login);
// another is the remote command's.
func (c *Conn) sshError(err error, stderr string) error {
	h := c.Host
	who := fmt.Sprintf("host %s (%s)", h.Name, h.Destination)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return fmt.Errorf("%s: run ssh: %w", who, err)
	}
	tail := lastLine(stderr)
	if ee.ExitCode() != 255 {
		if tail == "" {
			return fmt.Errorf("%s: remote command failed: %w", who, err)
		}
		return fmt.Errorf("%s: remote command failed: %w: %s", who, err, tail)
	}
	accept := "ssh " + quote(h.userArgs()...)
	if accept != "ssh " {
		accept += " "
	}
	accept += quote(h.Destination) + " true"
	switch {
	case strings.Contains(stderr, "REMOTE HOST IDENTIFICATION HAS CHANGED") || strings.Contains(stderr, "has changed and you have requested strict checking"):
		where := "your known_hosts"
		if m := offendingRE.FindStringSubmatch(stderr); m != nil {
			where = m[1] + ":" + m[2]
		}
		remove := "ssh-keygen -R ADDRESS"
		if m := removeRE.FindStringSubmatch(stderr); m != nil {
			remove = strings.TrimSpace(m[1])
		}
		return fmt.Errorf("%s: %w: it differs from the key in %s; if the host was reinstalled, remove the old key (%s), then "+
			"check the new key's fingerprint and accept it with: %s",
			who, errHostKeyChanged, where, remove, accept)
	case strings.Contains(stderr, "Host key verification failed"):
		return fmt.Errorf("%s: %w: no known_hosts file has a key for it; check its fingerprint and accept it with: %s", who, errHostKeyUnknown, accept)
	case strings.Contains(stderr, "Permission denied"):
		return fmt.Errorf("%s: %w (%s): check the identity file, your ssh agent (ssh-add -l) and the host's authorized_keys; "+
			"perfbench runs ssh with BatchMode=yes (no password prompts)", who, errAuth, tail)
	case tail == "":
		return fmt.Errorf("%s: %w: ssh exited with status 255", who, errUnreachable)
	default:
		return fmt.Errorf("%s: %w: %s", who, errUnreachable, tail)
	}
}

// lastLine is the last non-empty line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// quote quotes words for a POSIX shell on the host and joins them with
// spaces.
func quote(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = quoteWord(w)
	}
	return strings.Join(q, " ")
}

var safeWordRE = regexp.MustCompile(`^[A-Za-z0-9_./=:@%+,-]+$`)

func quoteWord(w string) string {
	if safeWordRE.MatchString(w) {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
