package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"
)

// runCLI runs perfbench with args and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// runCLIWatched is runCLI with the command's stderr written to w, which the
// test reads while the command runs; it returns the exit code and stdout.
func runCLIWatched(t *testing.T, w *stderrWatch, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, w)
	return code, out.String()
}

// stderrWatch is a command's stderr that a test watches: seen is closed
// once a line starting with prefix has been written.
type stderrWatch struct {
	prefix string
	seen   chan struct{}
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

func watchStderr(prefix string) *stderrWatch {
	return &stderrWatch{prefix: prefix, seen: make(chan struct{})}
}

func (w *stderrWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.closed && strings.Contains("\n"+w.buf.String(), "\n"+w.prefix) {
		w.closed = true
		close(w.seen)
	}
	return len(p), nil
}

// String is what was written so far.
func (w *stderrWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestEveryFlagHasHelp(t *testing.T) {
	if len(commands) == 0 {
		t.Fatal("no commands registered")
	}
	for _, c := range commands {
		if c.summary == "" || c.usage == "" {
			t.Errorf("command %s has no summary or usage line", c.name)
		}
		fs := newFlagSet(c)
		c.setup(fs)
		fs.VisitAll(func(f *pflag.Flag) {
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("perfbench %s --%s has no help text", c.name, f.Name)
			}
		})
	}
}

func TestHelpOnEveryCommand(t *testing.T) {
	for _, c := range commands {
		code, out, _ := runCLI(t, c.name, "--help")
		if code != exitOK {
			t.Errorf("perfbench %s --help: exit %d", c.name, code)
		}
		if !strings.HasPrefix(out, "Usage: perfbench "+c.name) {
			t.Errorf("perfbench %s --help printed %q", c.name, out)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	code, out, errs := runCLI(t, "nosuchcommand")
	if code != exitUsage || out != "" || !strings.Contains(errs, `unknown command "nosuchcommand"`) {
		t.Errorf("got exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if strings.Count(errs, "\n") != 1 {
		t.Errorf("error is not one line: %q", errs)
	}
}

func TestNoArgsPrintsUsage(t *testing.T) {
	code, _, errs := runCLI(t)
	if code != exitUsage || !strings.Contains(errs, "Commands:") {
		t.Errorf("got exit %d, stderr %q", code, errs)
	}
}
