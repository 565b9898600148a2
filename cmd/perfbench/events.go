package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/perfevent/metric"
	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "events",
		summary: "list the perf events perfbench knows and whether each opens on this machine",
		usage:   "events [--format text|json] [--all] [--tracepoints] [--metrics [--cpuid CPUID]]",
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

--metrics lists instead the metric set of this machine's CPU: TopDown level
1 and 2 (Intel TMA, AMD pipeline utilization, Arm topdown) and the
architectural metrics (IPC, cache MPKI, branch and TLB miss rates), each
with the events it reads and whether it can be computed here, then each
event with its encoding and whether it opens here. The definitions are
perf's (tools/perf/pmu-events of the Linux release the line "from" names).
--cpuid shows another CPU's set, as PERF_CPUID does for perf:
GenuineIntel-6-8F-0, AuthenticAMD-25-11-0, 0x00000000410fd0c0.

Examples:
  perfbench events
  perfbench events --format json | jq '.[] | select(.supported | not) | .name'
  perfbench events --metrics --cpuid GenuineIntel-6-8F-0`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			format := fs.String("format", "text", "output format: text or json")
			all := fs.Bool("all", false, "also list the alias spellings perf accepts, one per line")
			tps := fs.Bool("tracepoints", false, "also list every tracepoint in tracefs (slow: about 30 ms each)")
			metrics := fs.Bool("metrics", false, "list the metric set of this CPU (TopDown and architectural metrics) and which can be computed here")
			cpuid := fs.String("cpuid", "", "with --metrics: show the set of this perf cpuid string instead of this machine's (like PERF_CPUID)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if *format != "text" && *format != "json" {
					return usagef("--format must be text or json, not %q", *format)
				}
				if *cpuid != "" && !*metrics {
					return usagef("--cpuid goes with --metrics")
				}
				sys, err := perfevent.LoadSystem(sysRoot)
				if err != nil {
					return err
				}
				if *metrics {
					return listMetrics(e, sys, *cpuid, *format)
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

// listMetrics prints the metric set of cpuid (this machine's when empty).
func listMetrics(e *env, sys *perfevent.System, cpuid, format string) error {
	own := cpuid == ""
	if own {
		var err error
		if cpuid, err = perfevent.ReadCPUID(sysRoot); err != nil {
			return err
		}
	} else if !strings.HasPrefix(cpuid, "0x") && strings.Count(cpuid, "-") < 2 {
		return usagef("--cpuid %q is not a perf cpuid string: write VENDOR-FAMILY-MODEL-STEPPING as GenuineIntel-6-8F-0 "+
			"(family decimal, model and stepping hex), or an arm64 MIDR as 0x00000000410fd0c0", cpuid)
	}
	s := metric.Lookup(cpuid)
	if s == nil {
		var names []string
		for _, x := range metric.Sets() {
			names = append(names, x.Name)
		}
		msg := fmt.Sprintf("perfbench has no metric set for cpu %s (it has: %s)", cpuid, strings.Join(names, ", "))
		if own {
			fmt.Fprintln(e.stdout, msg)
			return nil
		}
		return fmt.Errorf("%s; check the --cpuid spelling (perf prints model and stepping in hex without leading zeros: AuthenticAMD-25-1-0)", msg)
	}
	r := metric.Check(s, cpuid, sys.HasHardwarePMU(), openReason(sys, sys.Probe))
	if format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return r.WriteText(e.stdout)
}

// openReason says why the events of a spelling do not open on sys, probed
// with probe: why it does not parse there, or the first event's reason for
// failing to open; "" when every one opens.
func openReason(sys *perfevent.System, probe func(perfevent.Event) error) func(spelling string) string {
	return func(spelling string) string {
		l, err := perfevent.Parse(spelling, sys)
		if err != nil {
			return strings.TrimPrefix(err.Error(), fmt.Sprintf("event %q: ", spelling))
		}
		for _, e := range l.Events {
			if err := probe(e); err != nil {
				var oe *perfevent.OpenError
				if errors.As(err, &oe) {
					return oe.Reason
				}
				return err.Error()
			}
		}
		return ""
	}
}

// sysRoot is the root sysfs, procfs and tracefs are read under; tests point
// it at fixture trees.
var sysRoot = "/"
