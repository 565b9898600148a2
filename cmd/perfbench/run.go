package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/internal/run/runner"
)

func init() {
	register(&command{
		name:    "run",
		summary: "run a benchmark plan: start servers, load data, measure every step with counters attached, write Records",
		usage:   "run PLAN [--out DIR] [--resume] [--only STEP,...] [--pmu-budget N] [--hosts HOSTS.toml [--binary PATH]]",
		long:    runHelp,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			out := fs.String("out", "", "output folder (default: the plan's output.dir, else <plan name>-results)")
			resume := fs.Bool("resume", false, "skip the measurements that have ok Records in the output folder")
			only := fs.StringSlice("only", nil, "run only these steps: names (every range), labels or custom step names, comma-separated or repeated")
			hosts := fs.String("hosts", "", "run the plan on the test servers of this hosts file, all at once")
			binary := fs.String("binary", "", "with hosts: the perfbench to copy to the hosts, built for their platform (default: this one)")
			budget := fs.Int("pmu-budget", 0, "events a repeat counts besides task-clock; more are counted in rotation, one "+
				"group a repeat (default: the plan's run.pmu_budget, else the PMU's counters)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) == 0 {
					return usagef("no plan given: perfbench run PLAN")
				}
				steps := *only
				if len(args) > 1 {
					if len(steps) == 0 {
						return usagef("unexpected argument %q (one plan per run)", args[1])
					}
					// "--only a b": the words after PLAN are more steps.
					steps = append(steps, args[1:]...)
				}
				p, err := plan.Load(args[0])
				if err != nil {
					var es plan.Errors
					if errors.As(err, &es) {
						for _, pe := range es {
							fmt.Fprintf(e.stderr, "perfbench run: %v\n", pe)
						}
						return errSilent
					}
					return err
				}
				if *budget < 0 || *budget > plan.MaxPMUBudget {
					return usagef("--pmu-budget %d: give 1 to %d events a repeat", *budget, plan.MaxPMUBudget)
				}
				campaign, err := loadRunHosts(e, args[0], *hosts)
				if err != nil {
					return err
				}
				if len(campaign) > 0 && *budget > 0 {
					return usagef("--pmu-budget is not passed to the hosts of a campaign: set pmu_budget in the plan's [run] instead")
				}
				if len(campaign) > 0 {
					return runHosts(ctx, e, p, hostsRun{hosts: campaign, binary: *binary, out: *out, resume: *resume, only: steps})
				}
				if *binary != "" {
					return usagef("--binary is for a campaign (--hosts or [[host]] tables in the plan)")
				}
				o := runner.Options{
					Out:       *out,
					Resume:    *resume,
					Only:      steps,
					Progress:  e.stderr,
					Command:   e.args,
					Perfbench: versionString(),
					PMUBudget: *budget,
				}
				if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
					o.Terminal = true
					if w, _, err := term.GetSize(int(f.Fd())); err == nil {
						o.Width = w
					}
				}
				_, err = runner.Run(ctx, p, o)
				switch {
				case errors.Is(err, runner.ErrUnknownStep):
					return usagef("%v", err)
				case errors.Is(err, runner.ErrStepsFailed), errors.Is(err, runner.ErrInterrupted), errors.Is(err, runner.ErrRecordsNotWritten):
					// The summary on stderr has said it all.
					return errSilent
				}
				return err
			}
		},
	})
}

// runHelp is perfbench run --help's text after the usage line.
const runHelp = `PLAN is a TOML benchmark plan (see examples/plans/ and 'go doc ./internal/run/plan'):
server versions × steps × thread counts × repeats. For each version perfbench
starts the server (or finds a running one), loads the data once, and for each
step opens counters on every thread of the server, starts the load, waits out
the warm-up, measures the window (counters, SHOW GLOBAL STATUS, /proc, the data
directory's disk, a per-second series) and writes one Record. Repeats
interleave versions (A B A B ...). Run it as root.

The output folder (--out, else the plan's output.dir):
  records/   one Record per measurement (JSON), written when it ends
  logs/      the load's output next to each Record's name, data loads, servers
  profiles/  pprof profiles of the steps the plan samples (profile = 99): see
             perfbench profile
  scripts/   the Lua scripts of the steps stock sysbench cannot run
  servers/   each managed server's data directory, socket and error log
             (in the plan's output.datadir instead when it gives one)

A failed measurement (the server crashed, sysbench failed, counters could not
be opened) is written with outcome failed and the reason, and the plan goes on;
a server that died is started again before the next step. The exit status is
then 1. Ctrl-C or SIGTERM stops the load, writes what was measured marked
partial, stops every server perfbench started and exits with status 1.

A measurement counts once its Record is written and read back. A Record that
cannot be written (a full disk) is kept in a temporary folder, named in the
summary, and the exit status is 1: free space, then --resume measures it again.

--resume runs only what has no ok Record yet: failed and partial measurements
run again (their earlier Records move to records/.replaced/, as do files there
that are not their measurement's Record: a newer schema, a truncated file),
and servers keep their data directories so the data is not loaded again.
Without --resume a run replaces nothing. To start over, remove the output
folder; to load the data again, remove servers/.

One run at a time per output folder: .perfbench.lock holds the running
perfbench's pid, and a second run into the folder exits at once naming it.

When the events do not fit the PMU budget, they are not multiplexed inside
each window: each repeat counts one group of them, repeat r group (r-1) mod G,
with task-clock (and cycles and instructions, when asked for) in every group,
and the report gives each event's value from the repeats that counted it.
The budget is the core PMU's general-purpose counters (perfbench doctor prints
them; without enough repeats for every group the events multiplex as before),
or N with --pmu-budget N (or pmu_budget in the plan's [run]): then every event
but task-clock counts against N, software ones included, and a group no
repeat reaches is a warning in every Record.

--hosts HOSTS.toml runs the plan on the test servers of a hosts file (see
perfbench hosts --help) instead of here, on every host at once: perfbench is
copied there and checked (as hosts check does), the plan is copied there and
run, each host's progress lines are printed with its name before them, and
its Records and logs come back as they are written, into records/HOST/ and
hosts/HOST/ of the output folder. A host that cannot be reached or is lost
during its run leaves the others running; the measurements it did not bring
back are recorded failed with the reason, and --resume runs them there.
A plan with [[host]] tables (the keys of a hosts file) runs on those hosts
the same way without --hosts; giving --hosts too is a usage error. Each host
runs a copy of the plan without the [[host]] tables, with that host's
basedirs and datadir (the plan's output.datadir); cpus is refused for now.

Examples:
  perfbench run examples/plans/smoke.toml --out /tmp/smoke
  perfbench run examples/plans/smoke.toml --hosts lab.toml --out /tmp/lab
  perfbench run plan.toml --out results --resume
  perfbench run plan.toml --out results --only point-query,read-only_range=100
  perfbench report results/records`
