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

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/host/proc"
	"github.com/perfbench/perfbench/internal/load/sysbench"
	"github.com/perfbench/perfbench/record"
)

// Load is a load command running next to a window, as perfbench stat --
// COMMAND and every step of perfbench run start it: in a process group of
// its own, killed by the kernel if perfbench dies (package internal/host/proc,
// whose Cmd's methods it has), its output written line by line to a log of
// the caller's choice and read by sysbench's parser, so that the window's
// Record gets the client's results (Client).
type Load struct {
	*proc.Cmd
	shown    []string // the command line as Records show it
	sysbench bool     // the command is sysbench
	mu       sync.Mutex
	parser   *sysbench.Parser
}

// LoadOptions say how to start a load. The zero value starts it with its
// output discarded, unpinned, with perfbench's environment.
type LoadOptions struct {
	// Out receives the command's stdout and stderr, line by line.
	Out io.Writer
	// Env is added to the command's environment (a custom step's
	// placeholders that hold secrets).
	Env []string
	// CPUs pins the command, and what it starts, to these CPUs (none when
	// empty).
	CPUs cpuset.Set
	// Shown is the command line as logs and Records show it; nil shows
	// the command line with its passwords masked (ScrubArgs).
	Shown []string
	// Sysbench says the command is sysbench whatever its name: its
	// results are sysbench's even when it printed no banner.
	Sysbench bool
}

// StartLoad starts args[0] with args[1:] as o says. stdin is /dev/null.
// Its output goes through sysbench's parser, whatever the command: a
// script that runs sysbench reports as sysbench does.
func StartLoad(args []string, o LoadOptions) (*Load, error) {
	if len(args) == 0 {
		return nil, errors.New("start the load command: no command")
	}
	l := &Load{shown: o.Shown, sysbench: o.Sysbench || isSysbench(args[0]), parser: sysbench.NewParser()}
	if l.shown == nil {
		l.shown = ScrubArgs(args)
	}
	c, err := proc.Start(args, proc.Options{Log: o.Out, Env: o.Env, CPUs: o.CPUs, OnLine: l.line})
	if err != nil {
		return nil, fmt.Errorf("start the load command: %w", err)
	}
	l.Cmd = c
	return l, nil
}

// line feeds a line of the command's output to the parser.
func (l *Load) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parser.Line(s)
}

func isSysbench(path string) bool {
	return filepath.Base(path) == "sysbench"
}

// WaitOrStop waits for the command to exit. When ctx ends first, the
// command (and what it started) gets SIGTERM, then SIGKILL after grace.
func (l *Load) WaitOrStop(ctx context.Context, grace time.Duration) error {
	select {
	case <-l.Done():
	case <-ctx.Done():
		l.Stop(grace)
	}
	return l.Err()
}

// Client returns the command's results for the Record: sysbench's, parsed
// from its output (a command whose output is not sysbench's gets its command
// line, run time and exit status), over its whole run, warm-up included.
// The exit status is set once it has exited.
func (l *Load) Client() *record.Client {
	var c *record.Client
	if res := l.Sysbench(); res != nil {
		c = res.Client()
	} else {
		c = &record.Client{Tool: "command"}
	}
	if ended := l.Ended(); c.Seconds == 0 && !ended.IsZero() {
		c.Seconds = ended.Sub(l.Started()).Seconds()
	}
	c.Whole = true
	c.Command = l.shown
	// sysbench's clock (its run time, its interval lines) starts with its
	// threads, a moment after the command.
	c.Started = l.ClientStart()
	if !l.Running() {
		c.ExitCode = l.ExitCode()
	}
	return c
}

// ClientStart is when the load's clients started running: sysbench's
// "Threads started!", else the command's start. Warm-ups count from it, and
// so do sysbench's per-interval lines.
func (l *Load) ClientStart() time.Time {
	if at, ok := l.ThreadsStartedAt(); ok {
		return at
	}
	return l.Started()
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

// Sysbench returns sysbench's parsed output so far, nil for a command that
// is not sysbench and printed nothing of sysbench's (no banner).
func (l *Load) Sysbench() *sysbench.Result {
	res := l.Result()
	if !l.sysbench && res.Version == "" {
		return nil
	}
	return res
}

// Result is what the parser read of the command's output so far, whatever
// the command.
func (l *Load) Result() *sysbench.Result {
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
