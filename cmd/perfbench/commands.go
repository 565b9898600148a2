package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/perfbench/perfbench/internal/textdist"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfbench/perfbench/internal/load/insertbench"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// env is what a subcommand may touch of the outside world. Tests build one
// with buffers.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// args is perfbench's whole command line, for provenance.
	args []string
}

// command is one subcommand. setup registers its flags on fs and returns the
// function that runs once the flags are parsed; keeping the two apart lets a
// test inspect every flag of every command without running anything.
type command struct {
	name    string
	summary string
	// usage is the synopsis after "perfbench ", for example
	// "stat [flags] [-- COMMAND [ARGS]]".
	usage string
	// long is printed under the synopsis by --help.
	long  string
	setup func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error
}

// commands lists the subcommands; each lives in a file of its own.
var commands = []*command{}

func register(c *command) { commands = append(commands, c) }

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// usageError is an error in how perfbench was called (exit status 2).
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, args: append([]string{"perfbench"}, args...)}
	if len(args) == 0 {
		printTopUsage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		if len(args) > 1 {
			if c := lookup(args[1]); c != nil {
				fs := newFlagSet(c)
				c.setup(fs)
				printUsage(stdout, c, fs)
				return exitOK
			}
			fmt.Fprintf(stderr, "perfbench: unknown command %q\n", args[1])
			return exitUsage
		}
		printTopUsage(stdout)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "perfbench", versionString())
		return exitOK
	case insertbench.DriverCommand:
		// Hidden: perfbench run starts it for an insert-benchmark step.
		return insertbench.DriverMain(ctx, args[1:], stdout, stderr)
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(stderr, "perfbench: unknown command %q%s; run 'perfbench help'\n", name, suggestCommand(name))
		return exitUsage
	}
	fs := newFlagSet(c)
	runFn := c.setup(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printUsage(stdout, c, fs)
			return exitOK
		}
		fmt.Fprintf(stderr, "perfbench %s: %v; run 'perfbench %s --help'\n", c.name, err, c.name)
		return exitUsage
	}
	err := runFn(ctx, e, fs.Args())
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		// A form of a command (import perf-stat) names its own help.
		help := c.name
		var h interface{ HelpCommand() string }
		if errors.As(err, &h) {
			help = h.HelpCommand()
		}
		fmt.Fprintf(stderr, "perfbench %s: %v; run 'perfbench %s --help'\n", c.name, err, help)
		return exitUsage
	}
	if errors.Is(err, errSilent) {
		return exitFailure
	}
	fmt.Fprintf(stderr, "perfbench %s: %v\n", c.name, oneLine(err.Error()))
	return exitFailure
}

// errSilent is returned by a command that has already explained its failure
// on stderr and only needs the exit status.
var errSilent = errors.New("failed")

func newFlagSet(c *command) *pflag.FlagSet {
	fs := pflag.NewFlagSet("perfbench "+c.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(true)
	fs.SortFlags = true
	return fs
}

func printTopUsage(w io.Writer) {
	fmt.Fprintf(w, "perfbench measures MySQL-family servers with Linux perf_event counters, per query,\nand compares "+
		"server versions.\n\nUsage:\n  perfbench COMMAND [flags] [args]\n\nCommands:\n")
	cs := append([]*command(nil), commands...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "version", "print perfbench's version")
	fmt.Fprintf(w, "\nRun 'perfbench COMMAND --help' for a command's flags.\n")
}

func printUsage(w io.Writer, c *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage: perfbench %s\n\n%s\n", c.usage, c.summary)
	if c.long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.long, "\n"))
	}
	if fs.HasFlags() {
		fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
	}
}

func suggestCommand(name string) string {
	best, bestD := "", 3
	for _, c := range commands {
		if d := textdist.Distance(name, c.name); d < bestD {
			best, bestD = c.name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// oneLine folds a multi-line error into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
