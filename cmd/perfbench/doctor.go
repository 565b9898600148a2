package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/perfbench/perfbench/internal/calibrate"
	"github.com/perfbench/perfbench/internal/host/hostinfo"
	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "doctor",
		summary: "check whether and how well perfbench can count on this machine",
		usage:   "doctor [--pid N] [-e EVENTS] [--calibrate] [--format text|json]",
		long: `Checks the kernel, privileges, perf_event_paranoid, the hardware PMU and its
counter budget, the NMI watchdog, virtualization, the open-file limit and
tracefs. Each line gives a verdict (ok, warn, fail), what was found, and the
fix. With --pid the limit is checked against that process's threads and a
counter is test-opened on it; with -e the events are test-opened too.

With --calibrate it runs a built-in loop whose instructions and cycles per
iteration are known, on one thread pinned to one CPU, and checks the
counters against it: with a hardware PMU, instructions per iteration
(within 1%), cycles against the loop and the core's clock, and that a group
of the PMU's full counter budget does not multiplex; on every machine,
task-clock against the thread's CPU time in /proc (within 2%) and
context-switches against its switches in /proc. It takes
a few seconds and ends with a verdict: counts here can be
trusted, or why not.

Exit status 0 when perfbench can count (with --calibrate: when no check
failed), 1 when it cannot count at all (or not the given process).

Examples:
  perfbench doctor
  perfbench doctor --pid $(pidof mariadbd) -e cycles,instructions,task-clock
  perfbench doctor --calibrate`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			format := fs.String("format", "text", "output format: text or json")
			pid := fs.Int("pid", 0, "process to be measured: size the descriptor estimate by its threads and test-open a counter on it")
			events := fs.StringP("events", "e", "", "events to test-open and to size the descriptor estimate (perf stat -e syntax)")
			calib := fs.Bool("calibrate", false, "instead of the checks, count a built-in loop of known cost and check the counters against it (a few seconds)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if *format != "text" && *format != "json" {
					return usagef("--format must be text or json, not %q", *format)
				}
				if *pid < 0 {
					return usagef("--pid must be positive")
				}
				if *calib && (*pid != 0 || *events != "") {
					return usagef("--calibrate counts its own loop: drop --pid and -e")
				}
				h, err := hostinfo.Read(sysRoot)
				if err != nil {
					return err
				}
				var rep hostinfo.Report
				if *calib {
					if rep, err = calibrate.Run(ctx, h, calibrate.Options{Root: sysRoot}); err != nil {
						return err
					}
				} else {
					rep = hostinfo.Doctor(h, hostinfo.DoctorOptions{Pid: *pid, Events: *events})
				}
				if *format == "json" {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					if err := enc.Encode(rep); err != nil {
						return err
					}
				} else if err := rep.WriteText(e.stdout); err != nil {
					return err
				}
				if !rep.Usable {
					fmt.Fprintf(e.stderr, "perfbench doctor: %s; see the fail lines\n", rep.Conclusion)
					return errSilent
				}
				return nil
			}
		},
	})
}
