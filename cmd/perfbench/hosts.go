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
	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "hosts",
		summary: "check the test servers of a hosts file over ssh",
		usage:   "hosts check [--binary PATH] [--timeout D] HOSTS.toml | hosts watch [--interval D] DIR",
		long: `hosts check connects to every host of the hosts file at once with the
system's ssh (your ~/.ssh/config, keys, agent and jump hosts apply; host
keys are checked as your ssh configuration says), copies perfbench there
unless the same binary is there already (the host must run Linux on the
binary's architecture), runs perfbench doctor there, and prints one line
per host: ready or not, why, and how long each stage took. A malformed
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
until stdin ends.

Examples:
  perfbench hosts check lab.toml
  perfbench hosts check --binary ./perfbench-arm64 arm-lab.toml`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			binary := fs.String("binary", "", "check: the perfbench to copy to the hosts, built for their platform (default: this one)")
			timeout := fs.Duration("timeout", 2*time.Minute, "check: how long one host may take to connect, copy and check")
			interval := fs.Duration("interval", remote.DefaultWatchInterval, "watch: how often to look for new files")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) == 0 {
					return usagef("missing form: hosts check HOSTS.toml or hosts watch DIR")
				}
				form, args := args[0], args[1:]
				switch form {
				case "check":
					if fs.Changed("interval") {
						return usagef("--interval is for hosts watch")
					}
					if len(args) != 1 {
						return usagef("hosts check takes one hosts file")
					}
					if *timeout <= 0 {
						return usagef("--timeout must be positive")
					}
					return hostsCheck(ctx, e, args[0], *binary, *timeout)
				case "watch":
					if fs.Changed("binary") || fs.Changed("timeout") {
						return usagef("--binary and --timeout are for hosts check")
					}
					if len(args) != 1 {
						return usagef("hosts watch takes one folder")
					}
					if *interval <= 0 {
						return usagef("--interval must be positive")
					}
					return remote.Serve(ctx, args[0], e.stdin, e.stdout, *interval)
				default:
					return usagef("unknown form %q: hosts check HOSTS.toml or hosts watch DIR", form)
				}
			}
		},
	})
}

func hostsCheck(ctx context.Context, e *env, file, binary string, timeout time.Duration) error {
	hosts, err := remote.LoadHosts(file)
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
	ready := remote.Prepare(ctx, g, hosts, binary)
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
	if r.Err != nil {
		fmt.Fprintf(w, "%-*s  fail   %s\n", width, r.Host.Name, oneLine(r.Err.Error()))
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
	fmt.Fprintf(w, "%-*s  ready  %s %s; %s; doctor: %s; ready in %.2f s (connect %.2f s, copy %.2f s, doctor %.2f s)\n",
		width, r.Host.Name, r.Conn.OS, r.Conn.Arch, copied, verdict,
		r.Elapsed.Seconds(), r.Connect.Seconds(), r.Copy.Seconds(), r.Check.Seconds())
}
