package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/remote"
	"github.com/perfbench/perfbench/internal/run/plan"
)

// hostsRun is a campaign's hosts (of --hosts or of the plan's [[host]]
// tables) and the run's flags.
type hostsRun struct {
	hosts       []remote.Host
	binary, out string
	resume      bool
	only        []string
}

// loadRunHosts reads the hosts of perfbench run: those of the hosts file
// when one is given, else the plan's [[host]] tables (none: the plan runs
// here). A plan with [[host]] tables and --hosts too is a usage error.
// Problems in the tables are printed with their lines.
func loadRunHosts(e *env, planFile, hostsFile string) ([]remote.Host, error) {
	data, err := os.ReadFile(planFile)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	hosts, err := remote.PlanHosts(planFile, data)
	if err == nil && hostsFile != "" {
		if len(hosts) > 0 {
			return nil, usagef("plan %s has [[host]] tables (line %d) and --hosts %s names hosts too: remove the tables or leave "+
				"out --hosts", planFile, hosts[0].Line, hostsFile)
		}
		hosts, err = remote.LoadHosts(hostsFile)
	}
	var es remote.Errors
	if errors.As(err, &es) {
		for _, he := range es {
			fmt.Fprintf(e.stderr, "perfbench run: %v\n", he)
		}
		return nil, errSilent
	}
	return hosts, err
}

// runHosts runs plan p on hosts (a campaign), prints one line per host as
// it ends and a summary, and fails naming each host that failed and why.
func runHosts(ctx context.Context, e *env, p *plan.Plan, o hostsRun) error {
	hosts := o.hosts
	var err error
	for _, name := range o.only {
		if !planHasStep(p, name) {
			return usagef("--only %s: no such step in plan %s", name, p.File)
		}
	}
	if o.binary == "" {
		if o.binary, err = os.Executable(); err != nil {
			return fmt.Errorf("find perfbench's own binary to copy: %w; give one with --binary", err)
		}
	}
	out := o.out
	if out == "" {
		out = p.OutDir
	}
	if out, err = filepath.Abs(out); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	console := remote.NewConsole(e.stderr)
	width := 0
	for _, h := range hosts {
		width = max(width, len(h.Name))
	}
	fmt.Fprintf(e.stderr, "perfbench run: %s on %d hosts (%s); output in %s\n", p.Name, len(hosts), hostNames(hosts), out)
	c := &remote.Campaign{Hosts: hosts, Binary: o.binary, Plan: p, Out: out, Resume: o.resume, Only: o.only, Console: console}
	start := time.Now()
	results, err := c.Run(ctx, func(r remote.HostResult) {
		console.Writer("").Write([]byte(hostLine(r, width)))
	})
	if err != nil {
		return err
	}
	var failed []string
	for _, r := range results {
		if r.Err != nil {
			failed = append(failed, r.Host.Name)
		}
	}
	fmt.Fprintf(e.stderr, "perfbench run: %d of %d hosts ok in %.1f s; Records in %s\n",
		len(results)-len(failed), len(results), time.Since(start).Seconds(), filepath.Join(out, "records"))
	if len(failed) == 0 {
		return nil
	}
	for _, r := range results {
		if r.Err != nil {
			fmt.Fprintf(e.stderr, "perfbench run: host %s failed: %s\n", r.Host.Name, oneLine(r.Err.Error()))
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintf(e.stderr, "perfbench run: interrupted; run again with --resume to finish\n")
	} else {
		fmt.Fprintf(e.stderr, "perfbench run: run again with --resume to finish %s\n", strings.Join(failed, ", "))
	}
	return errSilent
}

// hostLine is the line printed when a host's part ends.
func hostLine(r remote.HostResult, width int) string {
	counts := fmt.Sprintf("%d ok, %d failed, %d partial", r.OK, r.Failed, r.Partial)
	if r.Lost > 0 {
		counts += fmt.Sprintf(" (%d recorded failed here: not brought back)", r.Lost)
	}
	if r.Err != nil {
		return fmt.Sprintf("%-*s  fail  %s; %s\n", width, r.Host.Name, counts, oneLine(r.Err.Error()))
	}
	return fmt.Sprintf("%-*s  done  %s; started in %.2f s, done in %.1f s\n", width, r.Host.Name, counts, r.Started.Seconds(), r.Elapsed.Seconds())
}

func hostNames(hosts []remote.Host) string {
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	return strings.Join(names, ", ")
}

// planHasStep says whether an --only entry names a step of p.
func planHasStep(p *plan.Plan, name string) bool {
	for i := range p.Steps {
		if remote.StepSelected(&p.Steps[i], []string{name}) {
			return true
		}
	}
	return false
}
