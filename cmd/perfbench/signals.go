package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalGrace is how long a command may take to stop after SIGINT or
// SIGTERM before perfbench exits without it: a command blocked in a read,
// a write or a wait that its context does not reach (a full pipe on
// stdout, a server that does not answer) does not keep the user waiting.
// Commands that stop what they started (the servers of a run, the
// processes on hosts) get longer, and so do stat and profile, for which
// Ctrl-C is the planned end of the window: then they read the window's
// end (each statement within its deadline), symbolize and write what
// they measured. A second signal ends any command at once.
func signalGrace(command string) time.Duration {
	switch command {
	case "run", "demo", "hosts":
		return 60 * time.Second
	case "stat", "profile":
		return 30 * time.Second
	}
	return 1500 * time.Millisecond
}

// exitInterrupted is the exit status of a command ended by the watchdog
// (128 + SIGINT, as a shell reports it).
const exitInterrupted = 130

// watchSignals exits the process (through exit) when the command args
// (perfbench's arguments, the command first) has not returned within its
// signalGrace of the end of ctx (SIGINT or SIGTERM), or at a second
// signal. Call the function it returns when the command has returned.
func watchSignals(ctx context.Context, args []string, stderr io.Writer, exit func(int)) (stop func()) {
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	grace := signalGrace(name)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(again)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
			fmt.Fprintf(stderr, "perfbench %s: interrupted, and it did not stop within %s of the signal: exiting without it\n", name, grace)
		case <-again:
			fmt.Fprintf(stderr, "perfbench %s: interrupted twice: exiting now\n", name)
		}
		exit(exitInterrupted)
	}()
	return func() {
		close(done)
		<-stopped
	}
}
