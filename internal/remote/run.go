package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// runOptions are the input, output and stop of a remote command.
type runOptions struct {
	// Stdin is the command's input (nil: none). Secrets travel here, never
	// on the command line, which every user of the host can read in ps.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output as it comes (nil:
	// discarded). A LineWriter prefixes each line with the host's name.
	Stdout, Stderr io.Writer
	// Grace is how long the command has to exit after SIGTERM when ctx
	// ends, before everything left of it gets SIGKILL. Zero means
	// defaultGrace.
	Grace time.Duration
	// Guard, when set, is the path of perfbench on the host: the command
	// then runs under perfbench hosts guard, which stops it when the
	// controller's heartbeat stops (the link dropped) or its connection
	// closes (see guard.go). Stdin must be nil then: it carries the
	// heartbeat.
	Guard string
}

// defaultGrace leaves a remote perfbench time to stop the servers it
// started and write its partial Records.
const defaultGrace = 30 * time.Second

// sessionMark starts the line a remote command's session leader writes
// to stderr first, with its pid (the session's id); Run takes the line out.
const sessionMark = "perfbench-session:"

// startScript runs the command in a session of its own (setsid), whose id
// it announces on stderr, so that every process the command starts can be
// found and stopped, also those that moved to a process group of their
// own. %[1]s is the work folder, %[2]s the command.
const startScript = `mkdir -p %[1]s && cd %[1]s && exec setsid -w sh -c 'echo "` + sessionMark + `$$" >&2; exec "$@"' sh %[2]s`

// stopScript stops the session %[1]d: SIGTERM to its leader's process
// group (the command's), then SIGKILL to every process left in the session
// after %[2]d ticks of 0.1 s. It prints the pids still alive, if any, and
// exits 0 (a process that ends while the script reads /proc is no error).
const stopScript = `sid=%[1]d
members() {
	for s in /proc/[0-9]*/stat; do
		read -r l 2>/dev/null <"$s" || continue
		set -- ${l##*) }
		[ "$4" = "$sid" ] && [ "$1" != Z ] && { p=${s#/proc/}; echo "${p%%/stat}"; }
	done
	return 0
}
kill -TERM -"$sid" 2>/dev/null
i=0
while [ -n "$(members)" ] && [ $i -lt %[2]d ]; do sleep 0.1; i=$((i+1)); done
m=$(members)
[ -z "$m" ] || kill -KILL $m 2>/dev/null
i=0
while [ -n "$(members)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
members`

// Run runs argv in the host's work folder, streaming its output to
// opt.Stdout and opt.Stderr, and returns when it exits. When ctx ends, the
// command gets SIGTERM, and after opt.Grace every process left of it gets
// SIGKILL (its whole session, also the processes that moved to a process
// group of their own); Run then returns an error wrapping ctx.Err().
func (c *Conn) Run(ctx context.Context, argv []string, opt runOptions) error {
	if len(argv) == 0 {
		return fmt.Errorf("host %s: run: no command", c.Host.Name)
	}
	name := argv[0]
	var beats io.WriteCloser
	if opt.Guard != "" {
		if opt.Stdin != nil {
			return fmt.Errorf("host %s: run %s: a guarded command's input is the heartbeat", c.Host.Name, name)
		}
		grace := opt.Grace
		if grace <= 0 {
			grace = defaultGrace
		}
		argv = append([]string{opt.Guard, "hosts", "guard", "--timeout", heartbeatTimeout.String(), "--grace", grace.String(), "--"}, argv...)
	}
	cmd := c.command(context.WithoutCancel(ctx), fmt.Sprintf(startScript, quote(c.Host.WorkDir), quote(argv...)))
	if opt.Guard != "" {
		var err error
		if beats, err = cmd.StdinPipe(); err != nil {
			return fmt.Errorf("host %s: run %s: %w", c.Host.Name, name, err)
		}
	} else {
		cmd.Stdin = opt.Stdin
	}
	cmd.Stdout = opt.Stdout
	session := &sessionWriter{w: writerOrDiscard(opt.Stderr), sid: make(chan int, 1)}
	cmd.Stderr = session
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("host %s: start ssh: %w", c.Host.Name, err)
	}
	if beats != nil {
		stop := heartbeats(beats)
		defer stop()
	}
	var runErr error
	exited := make(chan struct{})
	go func() {
		runErr = cmd.Wait()
		close(exited)
	}()

	select {
	case <-exited:
	case <-ctx.Done():
		stopErr := c.stopSession(session.sid, exited, opt.Grace)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		flush(opt.Stdout, session)
		if stopErr != nil {
			return fmt.Errorf("host %s: stop %s: %w (after %w)", c.Host.Name, name, stopErr, ctx.Err())
		}
		return fmt.Errorf("host %s: %s stopped: %w", c.Host.Name, name, ctx.Err())
	}
	flush(opt.Stdout, session)
	if runErr != nil {
		return c.sshError(runErr, session.tail.String())
	}
	return nil
}

// stopSession waits for the command's session to be announced (ssh and
// the login shell may still be starting), then stops it and checks that
// nothing of it is left. A command that ends meanwhile needs no stop.
func (c *Conn) stopSession(sid <-chan int, exited <-chan struct{}, grace time.Duration) error {
	if grace <= 0 {
		grace = defaultGrace
	}
	var id int
	select {
	case id = <-sid:
	case <-exited:
		return nil
	case <-time.After(time.Minute):
		return errors.New("the command did not start within a minute; it may start and run still")
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace+30*time.Second)
	defer cancel()
	out, err := c.output(ctx, fmt.Sprintf(stopScript, id, int(grace/(100*time.Millisecond))), nil)
	if err != nil {
		return fmt.Errorf("%w; it may still be running (session %d)", err, id)
	}
	if left := strings.Fields(string(out)); len(left) > 0 {
		return fmt.Errorf("processes %s are still running after SIGKILL", strings.Join(left, ", "))
	}
	return nil
}

// sessionWriter passes a command's stderr on, taking out the line that
// announces its session and sending the session's id on sid. It keeps the
// end of the stderr for error messages.
type sessionWriter struct {
	w     io.Writer
	sid   chan int
	found bool
	line  []byte // a partial line, until the announcement is found
	tail  tailWriter
}

func (s *sessionWriter) Write(p []byte) (int, error) {
	if s.found {
		return len(p), s.pass(p)
	}
	s.line = append(s.line, p...)
	for !s.found {
		i := bytes.IndexByte(s.line, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := s.line[:i+1]
		s.line = s.line[i+1:]
		if id, ok := strings.CutPrefix(strings.TrimSpace(string(line)), sessionMark); ok {
			if n, err := strconv.Atoi(id); err == nil {
				s.found = true
				s.sid <- n
				continue
			}
		}
		if err := s.pass(line); err != nil {
			return 0, err
		}
	}
	rest := s.line
	s.line = nil
	return len(p), s.pass(rest)
}

func (s *sessionWriter) pass(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	s.tail.Write(p)
	_, err := s.w.Write(p)
	return err
}

// Flush passes on a partial line held back and flushes the writer below.
func (s *sessionWriter) Flush() error {
	rest := s.line
	s.line = nil
	err := s.pass(rest)
	flush(s.w)
	return err
}

// Output runs argv in the host's work folder like Run and returns its
// standard output.
func (c *Conn) Output(ctx context.Context, argv []string, opt runOptions) ([]byte, error) {
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
	wd := quote(c.Host.WorkDir)
	script := fmt.Sprintf(`umask 077 && mkdir -p %[1]s/.perfbench-secrets && cd %[1]s/.perfbench-secrets && f=$(mktemp `+
		`"$PWD/secret.XXXXXXXX") && cat >"$f" && echo "$f"`, wd)
	out, err := c.output(ctx, script, data)
	if err != nil {
		return "", fmt.Errorf("write a secret file: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Remove removes a file on the host.
func (c *Conn) Remove(ctx context.Context, path string) error {
	if _, err := c.output(ctx, "rm -f "+quote(path), nil); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
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
