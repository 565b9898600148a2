package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/hostinfo"
	"github.com/perfbench/perfbench/internal/remote"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "hosts",
		summary: "check the test servers of a hosts file over ssh",
		usage:   "hosts check [--binary PATH] [--timeout D] [--plan PLAN] HOSTS.toml | hosts watch [--interval D] [--heartbeat D] DIR | hosts guard [--timeout D] [--grace D] -- COMMAND... | hosts clean DIR",
		long: `hosts check connects to every host of the hosts file at once with the
system's ssh (your ~/.ssh/config, keys, agent and jump hosts apply; host
keys are checked as your ssh configuration says), copies perfbench there
unless the same binary is there already (the host must run Linux on the
binary's architecture), runs perfbench doctor there, checks that the host
has what the plan needs, and prints one line per host: ready or not, why
(what is missing and how to install it), and how long each stage took.
With --plan PLAN, what the plan needs: each version's server binary
(with the host's basedirs) or running server (its socket, pid file or
pid), sysbench for the suite's steps, and each custom step's program;
without, the installed server (or the host's basedirs) and sysbench. A
plan with [[host]] tables may stand alone: hosts check --plan PLAN. A malformed
hosts file is refused, with its line, before anything connects. Exit
status 1 when a host is not ready.

A hosts file has one [[host]] table per test server:

  [[host]]
  name = "icelake"                  # its label in progress lines and reports
  destination = "bench@10.0.0.5"    # what ssh connects to (or an alias of ~/.ssh/config)
  port = 2222                       # optional, as ssh -p
  identity = "~/.ssh/lab_ed25519"   # optional, as ssh -i
  ssh_options = ["ProxyJump=gw"]    # optional, as ssh -o
  workdir = "perfbench"             # optional: perfbench's folder on the host (under the login folder)
  datadir = "/data/perfbench"       # optional, for run --hosts: where servers keep their data (the plan's output.datadir)
  [host.basedirs]                   # optional, for run --hosts: a version's basedir on this host
  "10.11" = "/opt/mariadb-10.11.9"

The same tables may stand in a plan (perfbench run PLAN runs it on them). A
cpus key ("0-15") is the CPUs the plan's placement (split, shared or
threads) uses on that host: the plan's run.cpus there.

hosts watch DIR is what perfbench runs on a host to send back the files
written under DIR (Records as they are written): a tar stream on stdout,
until stdin ends. With --heartbeat D, stdin carries the controller's
heartbeats, and the watcher ends when D passes without one.

hosts guard -- COMMAND... is what perfbench runs on a host around the
plan's run: it runs COMMAND and stops it (SIGTERM, then SIGKILL to what is
left after --grace) when stdin ends or --timeout passes without a heartbeat
on it. When the heartbeat stops, the link is taken for lost: the watcher
and the guard also end the host's sshd process of the connection, so that
nothing of perfbench stays on the host.

hosts clean DIR is what hosts check and a campaign run on a host first: it
stops what an earlier campaign left running there from DIR's perfbench (a
guard or watcher whose heartbeat stopped, or a run that perfbench started
before heartbeats), and says what it stopped.

Examples:
  perfbench hosts check lab.toml
  perfbench hosts check --binary ./perfbench-arm64 arm-lab.toml`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			binary := fs.String("binary", "", "check: the perfbench to copy to the hosts, built for their platform (default: this one)")
			planFile := fs.String("plan", "", "check: the plan to check the hosts for (its servers, sysbench, custom steps' programs)")
			timeout := fs.Duration("timeout", 2*time.Minute, "check: how long one host may take to connect, copy and check; guard: how long to wait for a heartbeat")
			interval := fs.Duration("interval", remote.DefaultWatchInterval, "watch: how often to look for new files")
			heartbeat := fs.Duration("heartbeat", 0, "watch: end when this long passes without a heartbeat on stdin (0: wait for stdin to end)")
			grace := fs.Duration("grace", 30*time.Second, "guard: how long the command has to exit after SIGTERM")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) == 0 {
					return usagef("missing form: hosts check HOSTS.toml or hosts watch DIR")
				}
				form, args := args[0], args[1:]
				switch form {
				case "check":
					if fs.Changed("interval") || fs.Changed("heartbeat") || fs.Changed("grace") {
						return usagef("--interval and --heartbeat are for hosts watch, --grace for hosts guard")
					}
					if len(args) > 1 || len(args) == 0 && *planFile == "" {
						return usagef("hosts check takes one hosts file (or a --plan with [[host]] tables)")
					}
					if *timeout <= 0 {
						return usagef("--timeout must be positive")
					}
					file := ""
					if len(args) == 1 {
						file = args[0]
					}
					return hostsCheck(ctx, e, file, *planFile, *binary, *timeout)
				case "watch":
					if fs.Changed("binary") || fs.Changed("timeout") || fs.Changed("grace") || fs.Changed("plan") {
						return usagef("--binary, --plan and --timeout are for hosts check, --grace for hosts guard")
					}
					if len(args) != 1 {
						return usagef("hosts watch takes one folder")
					}
					if *interval <= 0 || *heartbeat < 0 {
						return usagef("--interval must be positive, --heartbeat positive or 0")
					}
					return remote.Serve(ctx, args[0], e.stdin, e.stdout, *interval, *heartbeat)
				case "clean":
					if len(args) != 1 || fs.NFlag() > 0 {
						return usagef("hosts clean takes one work folder and no flags")
					}
					return remote.Clean(args[0], e.stdout)
				case "guard":
					return hostsGuard(ctx, e, fs, args, *timeout, *grace)
				default:
					return usagef("unknown form %q: hosts check HOSTS.toml, hosts watch DIR or hosts guard -- COMMAND...", form)
				}
			}
		},
	})
}

// hostsGuard is hosts guard -- COMMAND...: the remote side of a
// campaign's run on a host (see remote.Guard).
func hostsGuard(ctx context.Context, e *env, fs *pflag.FlagSet, args []string, timeout, grace time.Duration) error {
	if fs.Changed("binary") || fs.Changed("interval") || fs.Changed("heartbeat") || fs.Changed("plan") {
		return usagef("--binary and --plan are for hosts check, --interval and --heartbeat for hosts watch")
	}
	if len(args) == 0 {
		return usagef("hosts guard takes a command to run: hosts guard -- COMMAND...")
	}
	if timeout <= 0 || grace <= 0 {
		return usagef("--timeout and --grace must be positive")
	}
	code, err := remote.Guard(ctx, args, e.stdin, e.stdout, e.stderr, timeout, grace)
	if err != nil {
		return err
	}
	if code != 0 {
		return errSilent // the command has said why
	}
	return nil
}

func hostsCheck(ctx context.Context, e *env, file, planFile, binary string, timeout time.Duration) error {
	var p *plan.Plan
	var hosts []remote.Host
	var err error
	if planFile != "" {
		if p, err = plan.Load(planFile); err != nil {
			return fmt.Errorf("read the plan: %w", err)
		}
	}
	if file != "" {
		hosts, err = remote.LoadHosts(file)
	} else if hosts, err = loadRunHosts(e, planFile, ""); err == nil && len(hosts) == 0 {
		return usagef("plan %s has no [[host]] tables: give a hosts file", planFile)
	}
	if err != nil {
		var es remote.Errors
		if errors.As(err, &es) {
			for _, he := range es {
				fmt.Fprintf(e.stderr, "perfbench hosts: %v\n", he)
			}
			return errSilent
		}
		return err
	}
	if binary == "" {
		if binary, err = os.Executable(); err != nil {
			return fmt.Errorf("find perfbench's own binary to copy: %w; give one with --binary", err)
		}
	}
	g, err := remote.NewGroup()
	if err != nil {
		return err
	}
	defer g.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ready := remote.Prepare(ctx, g, hosts, binary, p)
	width := 0
	for _, h := range hosts {
		width = max(width, len(h.Name))
	}
	failed := 0
	for _, r := range ready {
		if r.Err != nil {
			failed++
		}
		writeReady(e.stdout, r, width)
	}
	if failed > 0 {
		fmt.Fprintf(e.stderr, "perfbench hosts: %d of %d hosts not ready\n", failed, len(ready))
		return errSilent
	}
	return nil
}

// writeReady prints one host's line of hosts check.
func writeReady(w io.Writer, r remote.Ready, width int) {
	cleaned := ""
	if len(r.Cleaned) > 0 {
		cleaned = "; cleaned up: " + strings.Join(r.Cleaned, "; ")
	}
	if r.Err != nil {
		fmt.Fprintf(w, "%-*s  fail   %s%s\n", width, r.Host.Name, oneLine(r.Err.Error()), cleaned)
		return
	}
	copied := "perfbench there already"
	if r.Installed.Copied {
		copied = fmt.Sprintf("perfbench copied (%.1f MB)", float64(r.Installed.Size)/1e6)
	}
	verdict := "can count"
	var warns []string
	for _, c := range r.Doctor.Checks {
		if c.Verdict == hostinfo.Warn {
			warns = append(warns, c.Name)
		}
	}
	if len(warns) > 0 {
		verdict += ", warn: " + strings.Join(warns, ", ")
	}
	fmt.Fprintf(w, "%-*s  ready  %s %s; %s; doctor: %s; ready in %.2f s (connect %.2f s, copy %.2f s, doctor %.2f s)%s\n",
		width, r.Host.Name, r.Conn.OS, r.Conn.Arch, copied, verdict,
		r.Elapsed.Seconds(), r.Connect.Seconds(), r.Copy.Seconds(), r.Check.Seconds(), cleaned)
}
