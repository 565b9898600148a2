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
		usage:   "events [--format text|json] [--all]",
		long: `Lists the generic hardware, cache and software events (perf's names), and the
PMU events found under /sys/bus/event_source/devices/*/events, each with its
perf_event_attr type and config words. Every event is opened on perfbench
itself and closed at once: "supported" says whether that worked here, and
"reason" why not (no hardware PMU, permission, ...). Exit status 0 even when
events are unsupported.

--all adds the other spellings perf accepts (cs, faults, cpu-cycles, ...) as
lines of their own, and every tracepoint in tracefs.

Examples:
  perfbench events
  perfbench events --format json | jq '.[] | select(.supported | not) | .name'`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			format := fs.String("format", "text", "output format: text or json")
			all := fs.Bool("all", false, "also list alias spellings and every tracepoint")
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
				list, err := sys.Events(perfevent.ListOptions{All: *all})
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
