package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/perfbench/perfbench/perfevent"
	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "events",
		summary: "list the perf events perfbench knows and whether each opens on this machine",
		usage:   "events [--format text|json] [--all] [--tracepoints]",
		long: `Lists the generic hardware, cache and software events (perf's names), and the
PMU events found under /sys/bus/event_source/devices/*/events, each with its
perf_event_attr type and config words. Every event is opened on perfbench
itself and closed at once: "supported" says whether that worked here, and
"reason" why not (no hardware PMU, permission, ...). Exit status 0 even when
events are unsupported.

--all adds the other spellings perf accepts (cs, faults, cpu-cycles, ...) as
lines of their own. --tracepoints adds every tracepoint in tracefs, each
opened too: the kernel waits about 30 ms when a tracepoint counter closes, so
this takes a minute or more (progress on stderr).

Examples:
  perfbench events
  perfbench events --format json | jq '.[] | select(.supported | not) | .name'`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			format := fs.String("format", "text", "output format: text or json")
			all := fs.Bool("all", false, "also list the alias spellings perf accepts, one per line")
			tps := fs.Bool("tracepoints", false, "also list every tracepoint in tracefs (slow: about 30 ms each)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if *format != "text" && *format != "json" {
					return usagef("--format must be text or json, not %q", *format)
				}
				sys, err := perfevent.LoadSystem(sysRoot)
				if err != nil {
					return err
				}
				opt := perfevent.ListOptions{All: *all, Tracepoints: *tps}
				if *tps {
					opt.Progress = func(done, total int) {
						if done%200 == 0 {
							fmt.Fprintf(e.stderr, "perfbench events: probing tracepoints: %d of %d\n", done, total)
						}
					}
				}
				list, err := sys.Events(opt)
				if err != nil {
					return err
				}
				for _, w := range sys.Warnings {
					fmt.Fprintln(e.stderr, "perfbench events: warning:", w)
				}
				if *format == "json" {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(list)
				}
				return perfevent.WriteEventsText(e.stdout, list)
			}
		},
	})
}

// sysRoot is the root sysfs, procfs and tracefs are read under; tests point
// it at fixture trees.
var sysRoot = "/"
