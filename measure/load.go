package measure

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/perfbench/perfbench/record"
	"github.com/perfbench/perfbench/sysbench"
)

// Load is a load command running next to a window (perfbench stat --
// COMMAND): its output goes to a writer of the caller's choice, and, when
// the command is sysbench, through sysbench's parser.
type Load struct {
	cmd     *exec.Cmd
	args    []string
	started time.Time
	ended   time.Time
	done    chan struct{}
	waitErr error
	parser  *sysbench.Parser
}

// StartLoad starts args[0] with args[1:], its stdout and stderr written to
// out line by line. stdin is /dev/null.
func StartLoad(args []string, out io.Writer) (*Load, error) {
	if len(args) == 0 {
		return nil, errors.New("start the load command: no command")
	}
	l := &Load{args: args, done: make(chan struct{})}
	l.cmd = exec.Command(args[0], args[1:]...)
	if isSysbench(args[0]) {
		l.parser = sysbench.NewParser()
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start the load command %s: %w", args[0], err)
	}
	l.cmd.Stdout, l.cmd.Stderr = pw, pw
	l.started = time.Now()
	if err := l.cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("start the load command: %w", err)
	}
	pw.Close()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		br := bufio.NewReader(pr)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				io.WriteString(out, line)
				if l.parser != nil {
					l.parser.Line(strings.TrimRight(line, "\r\n"))
				}
			}
			if err != nil {
				pr.Close()
				return
			}
		}
	}()
	go func() {
		l.waitErr = l.cmd.Wait()
		l.ended = time.Now()
		<-copied
		close(l.done)
	}()
	return l, nil
}

func isSysbench(path string) bool {
	return filepath.Base(path) == "sysbench"
}

// Done is closed when the command has exited and its output is read.
func (l *Load) Done() <-chan struct{} { return l.done }

// Wait waits for the command to exit. When ctx ends first, the command gets
// SIGTERM, then SIGKILL after grace.
func (l *Load) Wait(ctx context.Context, grace time.Duration) error {
	select {
	case <-l.done:
		return l.waitErr
	case <-ctx.Done():
	}
	l.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-l.done:
	case <-t.C:
		l.cmd.Process.Kill()
		<-l.done
	}
	return l.waitErr
}

// ExitCode is the command's exit status (-1 when it was killed by a signal
// or has not exited).
func (l *Load) ExitCode() int {
	if l.cmd.ProcessState == nil {
		return -1
	}
	return l.cmd.ProcessState.ExitCode()
}

// Client returns the command's results for the Record: sysbench's, parsed
// from its output, or for another command its command line, run time and
// exit status. Call it after the command exited.
func (l *Load) Client() *record.Client {
	var c *record.Client
	if l.parser != nil {
		res := l.parser.Result()
		c = res.Client()
	} else {
		c = &record.Client{Tool: "command"}
	}
	if c.Seconds == 0 && !l.ended.IsZero() {
		c.Seconds = l.ended.Sub(l.started).Seconds()
	}
	c.Command = ScrubArgs(l.args)
	c.Started = l.started
	c.ExitCode = l.ExitCode()
	return c
}

// Sysbench returns sysbench's parsed output (nil for another command).
func (l *Load) Sysbench() *sysbench.Result {
	if l.parser == nil {
		return nil
	}
	return l.parser.Result()
}

// ScrubArgs returns a copy of a command line with passwords replaced by
// "***": the values of options whose name contains "password" (--mysql-password=x,
// --pgsql-password x, --password=x) and of mysql's -pSECRET.
func ScrubArgs(args []string) []string {
	out := make([]string, len(args))
	hideNext := false
	for i, a := range args {
		switch {
		case hideNext:
			out[i] = "***"
			hideNext = false
			continue
		case strings.HasPrefix(a, "-"):
			name, _, hasValue := strings.Cut(a, "=")
			if strings.Contains(strings.ToLower(name), "password") {
				if hasValue {
					out[i] = name + "=***"
				} else {
					out[i] = a
					hideNext = i+1 < len(args) && !strings.HasPrefix(args[i+1], "-")
				}
				continue
			}
			if len(a) > 2 && strings.HasPrefix(a, "-p") && !strings.HasPrefix(a, "--") && i > 0 {
				out[i] = "-p***"
				continue
			}
		}
		out[i] = a
	}
	return out
}
