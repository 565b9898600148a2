package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/perfbench/perfbench/internal/cpuset"
	"github.com/perfbench/perfbench/internal/proc"
	"github.com/perfbench/perfbench/record"
	"github.com/perfbench/perfbench/sysbench"
)

// Load is a load command running next to a window (perfbench stat --
// COMMAND): its output goes to a writer of the caller's choice, and, when
// the command is sysbench, through sysbench's parser. It runs as the step
// runner's loads do (package internal/proc): in a process group of its own,
// and killed by the kernel if perfbench dies.
type Load struct {
	cmd    *proc.Cmd
	args   []string
	mu     sync.Mutex // guards parser, fed from the output's reader
	parser *sysbench.Parser
}

// startLoad starts args[0] with args[1:], its stdout and stderr written to
// out line by line. stdin is /dev/null.
func startLoad(args []string, out io.Writer) (*Load, error) {
	return StartLoadOn(args, out, nil)
}

// StartLoadOn is startLoad with the command, and what it starts, pinned
// to cpus (none when empty).
func StartLoadOn(args []string, out io.Writer, cpus cpuset.Set) (*Load, error) {
	if len(args) == 0 {
		return nil, errors.New("start the load command: no command")
	}
	l := &Load{args: args}
	o := proc.Options{Log: out, CPUs: cpus}
	if isSysbench(args[0]) {
		l.parser = sysbench.NewParser()
		o.OnLine = func(line string) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.parser.Line(line)
		}
	}
	c, err := proc.Start(args, o)
	if err != nil {
		return nil, fmt.Errorf("start the load command: %w", err)
	}
	l.cmd = c
	return l, nil
}

func isSysbench(path string) bool {
	return filepath.Base(path) == "sysbench"
}

// Pid is the command's process id.
func (l *Load) Pid() int { return l.cmd.Pid() }

// Done is closed when the command has exited and its output is read.
func (l *Load) Done() <-chan struct{} { return l.cmd.Done() }

// Wait waits for the command to exit. When ctx ends first, the command (and
// what it started) gets SIGTERM, then SIGKILL after grace.
func (l *Load) Wait(ctx context.Context, grace time.Duration) error {
	select {
	case <-l.cmd.Done():
	case <-ctx.Done():
		l.cmd.Stop(grace)
	}
	return l.cmd.Err()
}

// Stop ends the command (and what it started) now: SIGTERM, then SIGKILL
// after grace.
func (l *Load) Stop(grace time.Duration) { l.cmd.Stop(grace) }

// ExitCode is the command's exit status (-1 when it was killed by a signal
// or has not exited).
func (l *Load) ExitCode() int { return l.cmd.ExitCode() }

// Client returns the command's results for the Record: sysbench's, parsed
// from its output, or for another command its command line, run time and
// exit status. Call it after the command exited.
func (l *Load) Client() *record.Client {
	var c *record.Client
	if res := l.Sysbench(); res != nil {
		c = res.Client()
	} else {
		c = &record.Client{Tool: "command"}
	}
	if ended := l.cmd.Ended(); c.Seconds == 0 && !ended.IsZero() {
		c.Seconds = ended.Sub(l.cmd.Started()).Seconds()
	}
	c.Command = ScrubArgs(l.args)
	// sysbench's clock (its run time, its interval lines) starts with its
	// threads, a moment after the command.
	c.Started = l.cmd.Started()
	if at, ok := l.cmd.ThreadsStartedAt(); ok && l.parser != nil {
		c.Started = at
	}
	c.ExitCode = l.ExitCode()
	return c
}

// SysbenchTest returns the test a sysbench command line runs
// ("oltp_point_select" for sysbench --threads=2 oltp_point_select run, and for
// sysbench /usr/share/sysbench/oltp_point_select.lua run), or "" when args is
// not a sysbench command or names no test.
func SysbenchTest(args []string) string {
	if len(args) == 0 || !isSysbench(args[0]) {
		return ""
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			continue // sysbench's options are --name=value
		}
		switch a {
		case "prepare", "run", "cleanup", "help", "warmup", "prewarm":
			return ""
		}
		return strings.TrimSuffix(filepath.Base(a), ".lua")
	}
	return ""
}

// Sysbench returns sysbench's parsed output (nil for another command).
func (l *Load) Sysbench() *sysbench.Result {
	if l.parser == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
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
