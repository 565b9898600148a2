package main

import (
	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/record"
)

// checkCPUs parses --cpus: a CPU list of those perfbench may run on, and
// only with a command to run.
func (a *statArgs) checkCPUs() error {
	if a.cpusFlag == "" {
		return nil
	}
	if len(a.command) == 0 {
		return usagef("--cpus pins the command after --, and there is none")
	}
	set, err := cpuset.Parse(a.cpusFlag)
	if err != nil {
		return usagef("--cpus %q: %v", a.cpusFlag, err)
	}
	own, err := cpuset.Own()
	if err != nil {
		return err
	}
	if out := set.Minus(own); len(out) > 0 {
		return usagef("--cpus %s: CPU %s is not among those perfbench may run on here (%s)", set, out, own)
	}
	a.cpus = set
	return nil
}

// observePlacement is the Record's placement of perfbench stat: the CPUs
// the command was pinned to (none without --cpus), and where the kernel
// says the server and the command may run, read as the command starts.
func observePlacement(cpus cpuset.Set, serverPid, loadPid int) *record.Placement {
	pl := &record.Placement{Mode: "none"}
	if len(cpus) > 0 {
		pl.Mode, pl.Client = "cpus", cpus.String()
	}
	o := cpuset.Observe(serverPid, loadPid)
	if o.Server != nil {
		pl.ServerAllowed, pl.ServerThreadsElsewhere = o.Server.String(), o.ServerElsewhere
	}
	if o.Load != nil {
		pl.ClientAllowed = o.Load.String()
	}
	return pl
}
