package main

import (
	"bytes"
	"context"
	"strings"
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
