package runner

import (
	"fmt"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

// placement is where this run puts the servers and the loads: the plan's
// placement and the CPUs perfbench may run on here.
type placement struct {
	mode string
	pl   plan.Placement
	own  cpuset.Set
}

// at returns the CPUs of the server and of the load of a measurement at
// threads client threads; an empty Set is not pinned. The plan's CPUs
// were checked against this machine's by resolvePlacement.
func (p placement) at(threads int) (server, client cpuset.Set) {
	if p.mode == plan.PlacementNone {
		return nil, nil
	}
	server, client, _ = p.pl.Resolve(p.own, threads)
	return server, client
}

// resolvePlacement checks the plan's placement against the CPUs perfbench
// may run on.
func (r *runner) resolvePlacement() error {
	pl := r.plan.Placement
	r.place = placement{mode: pl.Mode, pl: pl}
	if pl.Mode == plan.PlacementNone || pl.Mode == "" {
		r.place.mode = plan.PlacementNone
		return nil
	}
	own, err := cpuset.Own()
	if err != nil {
		return fmt.Errorf("placement %s: %w", pl.Mode, err)
	}
	server, client, err := pl.Resolve(own, 1)
	if err != nil {
		return err
	}
	r.place.own = own
	if pl.Mode == plan.PlacementSplit && len(server) > 0 && server.Equal(client) {
		fmt.Fprintf(r.opts.Progress, "perfbench run: placement split: only CPU %s here, so the server and the load share it\n", server)
	}
	return nil
}

// placeServer moves a managed server to the CPUs of a measurement at
// threads client threads, when they are not those it has (placement
// threads): every thread it has, and those it creates later inherit them.
func (s *server) placeServer(threads int) {
	if s.v.Managed == nil || s.r.place.mode != plan.PlacementThreads {
		return
	}
	want, _ := s.r.place.at(threads)
	if want.Equal(s.cpus) {
		return
	}
	if _, err := cpuset.PinProcess(s.pid, want); err != nil {
		s.notes = append(s.notes, fmt.Sprintf("the server could not be moved to CPUs %s: %v", want, err))
		return
	}
	s.cpus = want
}

// pinRunning pins a running server perfbench did not start, when the plan
// names its CPUs (server_cpus): every thread it has now; the threads it
// creates later inherit the affinity. Split and shared do not move a
// server someone else runs.
func (s *server) pinRunning() {
	r := s.r
	want, _ := r.place.at(1)
	if r.place.mode != plan.PlacementCPUs || len(want) == 0 {
		return
	}
	s.cpus = nil
	n, err := cpuset.PinProcess(s.pid, want)
	if err != nil {
		s.notes = append(s.notes, fmt.Sprintf("the server could not be pinned to CPUs %s: %v", want, err))
		return
	}
	s.cpus = want
	r.prog.printf("perfbench run: pinned %s (pid %d, %d threads) to CPUs %s", s.v.Label, s.pid, n, want)
}

// observePlacement reads where the server and the load may run, once the
// load runs: what the kernel says, next to what perfbench set.
func (r *runner) observePlacement(s *server, client cpuset.Set, loadPid int) *record.Placement {
	pl := r.placement(s, client)
	o := cpuset.Observe(s.pid, loadPid)
	if o.Server != nil {
		pl.ServerAllowed, pl.ServerThreadsElsewhere = o.Server.String(), o.ServerElsewhere
	}
	if o.Load != nil {
		pl.ClientAllowed = o.Load.String()
	}
	return pl
}

// placement is the Record's placement of what perfbench set for a
// server and its load, without observations.
func (r *runner) placement(s *server, client cpuset.Set) *record.Placement {
	return &record.Placement{Mode: r.place.mode, Server: s.cpus.String(), Client: client.String()}
}

// placementWarning says when the kernel's lists differ from what
// perfbench set: the CPUs were taken away (a cgroup cpuset, another tool)
// or a server thread escaped.
func placementWarning(pl *record.Placement) string {
	switch {
	case pl.Server != "" && pl.ServerAllowed != "" && pl.ServerAllowed != pl.Server:
		return fmt.Sprintf("the server was pinned to CPUs %s but may run on %s", pl.Server, pl.ServerAllowed)
	case pl.ServerThreadsElsewhere > 0 && pl.Server != "":
		return fmt.Sprintf("%d threads of the server may run on other CPUs than %s", pl.ServerThreadsElsewhere, pl.Server)
	case pl.Client != "" && pl.ClientAllowed != "" && pl.ClientAllowed != pl.Client:
		return fmt.Sprintf("the load was pinned to CPUs %s but may run on %s", pl.Client, pl.ClientAllowed)
	}
	return ""
}

// recordPlacement sets the Record's placement: what the step observed
// once its load ran, else what perfbench set; and a warning when the
// kernel's lists are not what perfbench set.
func (r *runner) recordPlacement(rec *record.Record, s *server, threads int) {
	pl := s.placed
	if pl == nil {
		_, client := r.place.at(threads)
		pl = r.placement(s, client)
	}
	rec.Provenance.Placement = pl
	if w := placementWarning(pl); w != "" {
		rec.Warnf(record.WarnGeneral, "%s", w)
	}
}

// serverCPUs are the CPUs a managed server starts on.
func serverCPUs(r *runner) cpuset.Set {
	cpus, _ := r.place.at(1)
	return cpus
}
