// Command perfbench attaches Linux perf_event counters to a running MySQL-family
// server during each benchmark step, normalizes them per query, compares
// server versions and writes the tables users publish. Run "perfbench help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// freshProcess is set by main, before any command runs: the process is
// perfbench itself (not a test calling run), and its heap is still
// next to empty, so a command may shape it (see hugeheap.Advise).
var freshProcess bool

func main() {
	freshProcess = true
	args := hideSecrets(os.Args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	unwatch := watchSignals(ctx, args[1:], os.Stderr, os.Exit)
	code := run(ctx, args[1:], os.Stdin, os.Stdout, os.Stderr)
	unwatch()
	stop()
	os.Exit(code)
}
