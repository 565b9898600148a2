package runner

import (
	"fmt"

	"github.com/perfbench/perfbench/internal/cpuset"
	"github.com/perfbench/perfbench/plan"
	"github.com/perfbench/perfbench/record"
)

// placement is where this run puts the servers and the loads: the plan's
// placement resolved on this machine. An empty Set is not pinned.
type placement struct {
	mode           string
	server, client cpuset.Set
}

// resolvePlacement resolves the plan's placement against the CPUs
// perfbench may run on.
func (r *runner) resolvePlacement() error {
	pl := r.plan.Placement
	r.place = placement{mode: pl.Mode}
	if pl.Mode == plan.PlacementNone || pl.Mode == "" {
		r.place.mode = plan.PlacementNone
		return nil
	}
	own, err := cpuset.Own()
	if err != nil {
		return fmt.Errorf("placement %s: %w", pl.Mode, err)
	}
	if r.place.server, r.place.client, err = pl.Resolve(own); err != nil {
		return err
	}
	if pl.Mode == plan.PlacementSplit && len(r.place.server) > 0 && r.place.server.Equal(r.place.client) {
		fmt.Fprintf(r.opts.Progress, "perfbench run: placement split: only CPU %s here, so the server and the load share it\n", r.place.server)
	}
	return nil
}

// pinRunning pins a running server perfbench did not start, when the plan
// names its CPUs (server_cpus): every thread it has now; the threads it
// creates later inherit the affinity. Split and shared do not move a
// server someone else runs.
func (s *server) pinRunning() {
	r := s.r
	if r.place.mode != plan.PlacementCPUs || len(r.place.server) == 0 {
		return
	}
	s.cpus = nil
	n, err := cpuset.PinProcess(s.pid, r.place.server)
	if err != nil {
		s.notes = append(s.notes, fmt.Sprintf("the server could not be pinned to CPUs %s: %v", r.place.server, err))
		return
	}
	s.cpus = r.place.server
	r.prog.printf("perfbench run: pinned %s (pid %d, %d threads) to CPUs %s", s.v.Label, s.pid, n, r.place.server)
}

// observePlacement reads where the server and the load may run, once the
// load runs: what the kernel says, next to what perfbench set.
func (r *runner) observePlacement(s *server, loadPid int) *record.Placement {
	pl := r.placement(s)
	if set, others, err := cpuset.Allowed(s.pid); err == nil {
		pl.ServerAllowed, pl.ServerThreadsElsewhere = set.String(), others
	}
	if loadPid > 0 {
		if set, _, err := cpuset.Allowed(loadPid); err == nil {
			pl.ClientAllowed = set.String()
		}
	}
	return pl
}

// placement is the Record's placement of what perfbench set for a
// server and its load, without observations.
func (r *runner) placement(s *server) *record.Placement {
	return &record.Placement{Mode: r.place.mode, Server: s.cpus.String(), Client: r.place.client.String()}
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
func (r *runner) recordPlacement(rec *record.Record, s *server) {
	pl := s.placed
	if pl == nil {
		pl = r.placement(s)
	}
	rec.Provenance.Placement = pl
	if w := placementWarning(pl); w != "" {
		rec.Warnf(record.WarnGeneral, "%s", w)
	}
}
