package main

import (
	"context"
	"fmt"
	"time"

	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
	"github.com/spf13/pflag"
)

// defaultStatEvents are counted when -e is not given: the software events
// every Linux machine has, VMs included.
const defaultStatEvents = "task-clock,context-switches,cpu-migrations,page-faults"

func init() {
	register(&command{
		name:    "stat",
		summary: "count perf events on every thread of a running process over a window",
		usage:   "stat --pid PID [-e EVENTS] [--duration D] [--interval I] [--format text|json]",
		long: `Attaches counters to every thread of process PID (with inheritance, so threads
it creates are counted too and threads that exit keep their counts), waits
--duration (or until Ctrl-C, which ends the window early: what was measured
is printed and marked partial), reads, and prints for each event the total,
the rate per second and the status: counted, scaled (multiplexed, with the
fraction of time it ran), <not counted> or <not supported> with the reason.

EVENTS is a perf-style list: generic, cache and software events by perf's
names, pmu/term=value/ and pmu/alias/, rNNNN, tracepoints, :ukh modifiers and
{...} groups. Default: ` + defaultStatEvents + `.

--format json prints a stat Record (counters with raw value, time enabled,
time running, scaled value and status).

Examples:
  perfbench stat --pid $(pidof mariadbd) --duration 10s
  perfbench stat --pid 4121 -e '{cycles,instructions},cache-misses' --duration 30s --interval 1s
  perfbench stat --pid 4121 --duration 10s --format json > stat.json`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			pid := fs.Int("pid", 0, "process to count (all its threads)")
			events := fs.StringP("events", "e", defaultStatEvents, "events to count, perf-style list")
			duration := fs.Duration("duration", 0, "length of the window; 0 counts until Ctrl-C")
			interval := fs.Duration("interval", 0, "also print (text) or record (json) every interval, e.g. 1s")
			format := fs.String("format", "text", "output format: text or json")
			cgroup := fs.Bool("cgroup", false, "count per CPU, filtered by the process's cgroup v2 (every process in that cgroup; needs root or CAP_PERFMON)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if *pid <= 0 {
					return usagef("--pid is required (the process to count)")
				}
				if *format != "text" && *format != "json" {
					return usagef("--format must be text or json, not %q", *format)
				}
				if *duration < 0 || *interval < 0 {
					return usagef("--duration and --interval cannot be negative")
				}
				return runStat(ctx, e, statArgs{pid: *pid, events: *events, duration: *duration, interval: *interval, json: *format == "json", cgroup: *cgroup})
			}
		},
	})
}

type statArgs struct {
	pid                int
	events             string
	duration, interval time.Duration
	json, cgroup       bool
}

func runStat(ctx context.Context, e *env, a statArgs) error {
	sys, err := perfevent.LoadSystem("/")
	if err != nil {
		return err
	}
	list, err := perfevent.Parse(a.events, sys)
	if err != nil {
		return err
	}
	opts := perfevent.StatOptions{
		Attach: perfevent.Options{Groups: list.Groups, System: sys, Cgroup: a.cgroup},
		Window: perfevent.WindowOptions{Duration: a.duration, Interval: a.interval},
		OnAttach: func(at *perfevent.Attachment) {
			until := "until Ctrl-C"
			if a.duration > 0 {
				until = fmt.Sprintf("for %s (Ctrl-C ends early)", a.duration)
			}
			where := fmt.Sprintf("%d threads", len(at.Threads()))
			if a.cgroup {
				where = "its cgroup"
			}
			what := fmt.Sprintf("%d events", len(list.Events))
			if len(list.Events) == 1 {
				what = "1 event"
			}
			fmt.Fprintf(e.stderr, "perfbench stat: counting %s on %s of pid %d %s\n", what, where, a.pid, until)
		},
	}
	if a.interval > 0 && !a.json {
		elapsed := 0.0
		opts.Window.OnInterval = func(d perfevent.Reading) {
			elapsed += d.Seconds()
			perfevent.WriteIntervalText(e.stdout, elapsed, d)
		}
	}
	w, err := perfevent.Stat(ctx, a.pid, list.Events, opts)
	if err != nil {
		return err
	}
	if w.Partial {
		fmt.Fprintf(e.stderr, "perfbench stat: interrupted after %.3f s: partial window\n", w.Total.Seconds())
	}
	if !a.json {
		if a.interval > 0 {
			fmt.Fprintln(e.stdout)
		}
		return w.WriteText(e.stdout)
	}
	r := w.Record()
	r.Provenance.Perfbench = Version()
	r.Provenance.Command = e.args
	r.Provenance.Written = time.Now().UTC()
	r.Provenance.Hostname = r.Host
	r.Provenance.PerfEventParanoid = sys.Paranoid
	r.Provenance.PMUs = sys.PMUNames()
	b, err := record.Marshal(r)
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(b)
	return err
}
