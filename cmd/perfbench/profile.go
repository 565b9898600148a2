package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/profile/pprofout"
	"github.com/perfbench/perfbench/internal/profile/profdiff"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "profile",
		summary: "compare sampled profiles per operation across versions, or sample a process",
		usage: "profile [--base VERSION] [--top N] [--out DIR] RECORD|DIR|PROFILE...\n       perfbench profile --pid PID " +
			"[--duration D] [--freq F] [--event E] --output FILE",
		long: `With Records (files, or folders walked for them) whose window was sampled
(Record.Profile), or pprof files written by perfbench, it prints for each step
and version the functions with the most samples per 1,000 operations (flat:
in the function; cum: in it and what it calls), and for each version the
functions that grew most against the base version. Repeats of a step and
version are pooled. With --out it also writes, per step, folded stacks and
an SVG flame graph per version, and a differential flame graph per version
against the base (shaped like the version, red where it grew per operation,
blue where it shrank).

With --pid it samples that process (every thread, including threads created
while it runs) until --duration or Ctrl-C, and writes a pprof profile that go
tool pprof reads; such a profile has no operation count and no thread roles:
naming roles needs a connection to the server, so its samples' role label is
"unattributed" (perfbench stat --profile and perfbench run label roles). Each
sample carries its thread's name (label comm, what /proc/PID/task/TID/comm
says: MySQL 8.0.27 and later name their threads, MariaDB does not) and id
(label tid): go tool pprof -tags shows them, -tagfocus=comm=NAME keeps one.
stderr lists the samples by thread name.

Examples:
  perfbench profile runs/ --base 10.11.6 --out flame/
  perfbench profile runs/10.11.6/point-query.json runs/11.4.2/point-query.json
  perfbench profile --pid $(pidof mariadbd) --duration 10s --freq 999 --output cpu.pb.gz
  go tool pprof -top -diff_base=a/profile.pb.gz b/profile.pb.gz`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			var a profileArgs
			fs.StringVar(&a.base, "base", "", "version to compare the others with (default: the first version read)")
			fs.IntVar(&a.top, "top", 15, "functions per table")
			fs.StringVar(&a.outDir, "out", "", "also write folded stacks and SVG flame graphs under this folder")
			fs.IntVar(&a.pid, "pid", 0, "sample this process instead of reporting")
			fs.DurationVar(&a.duration, "duration", 0, "with --pid: how long to sample; 0 samples until Ctrl-C")
			fs.IntVar(&a.freq, "freq", perfevent.DefaultSampleFreq, "with --pid: samples per second per CPU")
			fs.StringVar(&a.event, "event", "", "with --pid: event to sample (default cpu-clock; cycles where the CPU has a PMU)")
			fs.StringVar(&a.output, "output", "", "with --pid: the profile file to write")
			fs.StringVar(&a.label, "label", "", "with --pid: version label kept in the profile, for reports")
			fs.StringVar(&a.step, "step", "", "with --pid: step label kept in the profile, for reports")
			return func(ctx context.Context, e *env, args []string) error {
				if a.pid != 0 {
					if len(args) > 0 {
						return usagef("--pid samples a process: no files to report on (%q)", args[0])
					}
					if a.output == "" {
						return usagef("--pid needs --output FILE")
					}
					if a.freq <= 0 || a.duration < 0 {
						return usagef("--freq must be positive and --duration not negative")
					}
					return sampleProcess(ctx, e, &a)
				}
				if len(args) == 0 {
					return usagef("give Records, folders or profile files to report on, or --pid to sample")
				}
				if a.top <= 0 {
					return usagef("--top must be positive")
				}
				return reportProfiles(e, &a, args)
			}
		},
	})
}

type profileArgs struct {
	base, outDir, event, output, label, step string
	top, pid, freq                           int
	duration                                 time.Duration
}

func reportProfiles(e *env, a *profileArgs, paths []string) error {
	in, notes, err := profdiff.Load(paths)
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "perfbench profile: %s\n", n)
	}
	if err != nil {
		return err
	}
	c, err := profdiff.Compare(in, profdiff.Options{Base: a.base, Top: a.top})
	if err != nil {
		if errors.Is(err, profdiff.ErrNoProfiles) {
			return err
		}
		return usagef("%v", err)
	}
	if err := c.WriteText(e.stdout); err != nil {
		return err
	}
	if a.outDir != "" {
		files, err := c.WriteFiles(a.outDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "perfbench profile: wrote %d files under %s\n", len(files), a.outDir)
	}
	return nil
}

func sampleProcess(ctx context.Context, e *env, a *profileArgs) error {
	f := pprofout.Flags{Freq: a.freq, Event: a.event}
	var sys *perfevent.System
	if a.event != "" {
		var err error
		if sys, err = perfevent.LoadSystem("/"); err != nil {
			return err
		}
	}
	opts, err := f.SampleOptions(sys)
	if err != nil {
		return usagef("%v", err)
	}
	if err := procfs.New(sysRoot).Proc(a.pid).Alive(); err != nil {
		return fmt.Errorf("%w: nothing to sample; give the pid of a running process", err)
	}
	w, err := pprofout.Start(a.pid, opts)
	if err != nil {
		return err
	}
	until := "until Ctrl-C"
	if a.duration > 0 {
		until = fmt.Sprintf("for %s (Ctrl-C ends early)", a.duration)
	}
	fmt.Fprintf(e.stderr, "perfbench profile: sampling pid %d at %d Hz per CPU %s\n", a.pid, a.freq, until)
	var deadline <-chan time.Time
	if a.duration > 0 {
		t := time.NewTimer(a.duration)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-ctx.Done():
	case <-deadline:
	}
	res, err := w.Finish(a.output, pprofout.Options{Version: a.label, Step: a.step})
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.stderr, "perfbench profile: warning: %s\n", w)
	}
	if len(res.Comms) > 0 {
		var parts []string
		for i, c := range res.Comms {
			if i == 8 {
				parts = append(parts, fmt.Sprintf("%d more", len(res.Comms)-i))
				break
			}
			name := c.Comm
			if name == "" {
				name = "(name not read)"
			}
			parts = append(parts, fmt.Sprintf("%s %d (%.0f%%)", name, c.Samples, 100*float64(c.Samples)/float64(max(res.Samples, 1))))
		}
		fmt.Fprintf(e.stderr, "perfbench profile: samples by thread name (no roles without a server connection): %s\n", strings.Join(parts, ", "))
	}
	st := res.Stats
	fmt.Fprintf(e.stderr, "perfbench profile: %d samples (%d in the executable, %.0f%% of them named; %d in the kernel) written to %s\n",
		res.Samples, st.Exe, 100*st.ExeNamedFraction(), st.Kernel, strings.TrimSpace(res.Path))
	return nil
}
