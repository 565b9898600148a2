package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
)

// RunOptions are the input, output and stop of a remote command.
type RunOptions struct {
	// Stdin is the command's input (nil: none). Secrets travel here, never
	// on the command line, which every user of the host can read in ps.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output as it comes (nil:
	// discarded). A LineWriter prefixes each line with the host's name.
	Stdout, Stderr io.Writer
	// Grace is how long the command has to exit after SIGTERM when ctx
	// ends, before everything left of it gets SIGKILL. Zero means
	// DefaultGrace.
	Grace time.Duration
}

// DefaultGrace leaves a remote perfbench time to stop the servers it
// started and write its partial Records.
const DefaultGrace = 30 * time.Second

// runDir is where a remote command's pid file lives, under the work folder.
const runDir = ".perfbench-run"

// startScript runs the command in a session of its own (setsid) whose
// leader writes its pid, so that every process the command starts can be
// found and stopped, even those that moved to a process group of their
// own. %[1]s is the work folder, %[2]s the pid file, %[3]s the command.
const startScript = `mkdir -p %[1]s/` + runDir + ` && cd %[1]s && exec setsid -w sh -c 'echo $$ >"$0"; "$@"; s=$?; rm -f "$0"; exit $s' %[2]s %[3]s`

// stopScript stops the session of a command started by startScript:
// SIGTERM to the command's process group, then SIGKILL to every process
// left in the session after the grace ticks (0.1 s each). It prints the
// pids still alive, if any. %[1]s is the work folder, %[2]s the pid file,
// %[3]d the grace ticks.
const stopScript = `cd %[1]s 2>/dev/null || exit 0
f=%[2]s
i=0
while [ ! -s "$f" ] && [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done
[ -s "$f" ] || exit 0
sid=$(cat "$f")
members() {
	for s in /proc/[0-9]*/stat; do
		read -r l <"$s" 2>/dev/null || continue
		set -- ${l##*) }
		[ "$4" = "$sid" ] && [ "$1" != Z ] && { p=${s#/proc/}; echo "${p%%/stat}"; }
	done
}
kill -TERM -"$sid" 2>/dev/null
i=0
while [ -n "$(members)" ] && [ $i -lt %[3]d ]; do sleep 0.1; i=$((i+1)); done
m=$(members)
[ -z "$m" ] || kill -KILL $m 2>/dev/null
i=0
while [ -n "$(members)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
rm -f "$f"
members`

// Run runs argv in the host's work folder, streaming its output to
// opt.Stdout and opt.Stderr, and returns when it exits. When ctx ends, the
// command gets SIGTERM, and after opt.Grace every process left of it gets
// SIGKILL (its whole session, also the processes that moved to a process
// group of their own); Run then returns an error wrapping ctx.Err().
func (c *Conn) Run(ctx context.Context, argv []string, opt RunOptions) error {
	if len(argv) == 0 {
		return fmt.Errorf("host %s: run: no command", c.Host.Name)
	}
	id, err := newID()
	if err != nil {
		return err
	}
	pidFile := runDir + "/" + id + ".pid"
	wd := Quote(c.Host.WorkDir)
	cmd := c.command(context.WithoutCancel(ctx), fmt.Sprintf(startScript, wd, pidFile, Quote(argv...)))
	cmd.Stdin = opt.Stdin
	var stderr tailWriter
	cmd.Stdout = opt.Stdout
	cmd.Stderr = io.MultiWriter(writerOrDiscard(opt.Stderr), &stderr)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("host %s: start ssh: %w", c.Host.Name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var runErr error
	select {
	case runErr = <-done:
	case <-ctx.Done():
		grace := opt.Grace
		if grace <= 0 {
			grace = DefaultGrace
		}
		stopErr := c.stop(wd, pidFile, grace)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		flush(opt.Stdout, opt.Stderr)
		if stopErr != nil {
			return fmt.Errorf("host %s: stop %s: %w (after %w)", c.Host.Name, argv[0], stopErr, ctx.Err())
		}
		return fmt.Errorf("host %s: %s stopped: %w", c.Host.Name, argv[0], ctx.Err())
	}
	flush(opt.Stdout, opt.Stderr)
	if runErr != nil {
		return c.sshError(runErr, stderr.String())
	}
	return nil
}

// stop ends the session of a command started by Run and checks that
// nothing of it is left.
func (c *Conn) stop(wd, pidFile string, grace time.Duration) error {
	ticks := int(grace / (100 * time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), grace+30*time.Second)
	defer cancel()
	out, err := c.output(ctx, fmt.Sprintf(stopScript, wd, pidFile, ticks), nil)
	if err != nil {
		return fmt.Errorf("%w; it may still be running (session in %s/%s)", err, c.Host.WorkDir, pidFile)
	}
	if left := strings.Fields(string(out)); len(left) > 0 {
		return fmt.Errorf("processes %s are still running after SIGKILL", strings.Join(left, ", "))
	}
	return nil
}

// Output runs argv in the host's work folder like Run and returns its
// standard output.
func (c *Conn) Output(ctx context.Context, argv []string, opt RunOptions) ([]byte, error) {
	var out bytes.Buffer
	opt.Stdout = &out
	err := c.Run(ctx, argv, opt)
	return out.Bytes(), err
}

// PutSecret writes data to a new file on the host that only the login user
// can read (mode 0600, under the work folder) and returns its absolute
// path. The data travels on ssh's standard input, never on a command line.
// Remove the file when done.
func (c *Conn) PutSecret(ctx context.Context, data []byte) (string, error) {
	wd := Quote(c.Host.WorkDir)
	script := fmt.Sprintf(`umask 077 && mkdir -p %[1]s/.perfbench-secrets && cd %[1]s/.perfbench-secrets && f=$(mktemp "$PWD/secret.XXXXXXXX") && cat >"$f" && echo "$f"`, wd)
	out, err := c.output(ctx, script, data)
	if err != nil {
		return "", fmt.Errorf("write a secret file: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Remove removes a file on the host.
func (c *Conn) Remove(ctx context.Context, path string) error {
	if _, err := c.output(ctx, "rm -f "+Quote(path), nil); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

func newID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a run id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func writerOrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func flush(ws ...io.Writer) {
	for _, w := range ws {
		if f, ok := w.(interface{ Flush() error }); ok {
			f.Flush()
		}
	}
}

// tailWriter keeps the last 4 KiB written, for error messages.
type tailWriter struct{ b []byte }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return string(t.b) }
