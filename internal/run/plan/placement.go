package plan

import (
	"fmt"
	"strings"

	"github.com/perfbench/perfbench/internal/host/cpuset"
)

// Placement modes: where the server and the load run.
const (
	// PlacementSplit runs the load on the first half of the CPUs and the
	// server on the rest (on 2 CPUs: the load on one, the server on the
	// other), so that the scheduler cannot move them onto one CPU in one
	// repeat and apart in the next.
	PlacementSplit = "split"
	// PlacementShared runs the server and the load on the same CPUs: all
	// of Placement.CPUs (cpus = "0" puts both on CPU 0).
	PlacementShared = "shared"
	// PlacementThreads runs the server and the load on the same CPUs, as
	// many as the measurement has client threads (the first of
	// Placement.CPUs): at 1 thread both on one CPU, at 2 threads on two.
	PlacementThreads = "threads"
	// PlacementNone sets no affinity: the scheduler places both.
	PlacementNone = "none"
	// PlacementCPUs is the mode of a plan that sets server_cpus or
	// client_cpus: those CPUs, as given.
	PlacementCPUs = "cpus"
)

// defaultPlacement is the mode of a plan that sets none: at 1 client
// thread the server and the load share one CPU (no wake-up crosses CPUs,
// and the scheduler has no choice to make run by run), at N threads they
// share N CPUs. Split was measured worse on a busy 2-vCPU VM: a tenth of
// the throughput at 1 thread, and repeats that agreed less.
const defaultPlacement = PlacementThreads

// Placement is where a plan's servers and loads run: [run] placement,
// cpus, server_cpus and client_cpus.
type Placement struct {
	// Mode is PlacementSplit, PlacementShared, PlacementNone or
	// PlacementCPUs.
	Mode string
	// CPUs are the CPUs the split and shared modes use; empty for all
	// those perfbench may run on where the plan runs.
	CPUs cpuset.Set
	// Server and Client are the CPUs of mode PlacementCPUs; an empty one
	// is not placed.
	Server, Client cpuset.Set
	// lines are the lines of the keys cpus, server_cpus and client_cpus
	// in the plan file, for Resolve's errors.
	lines map[string]int
}

// Resolve returns the CPUs of the server and of the load, for a
// measurement at threads client threads, on a machine where perfbench may
// run on own; an empty Set is not placed. A CPU the plan names that is not
// in own is an error.
func (pl Placement) Resolve(own cpuset.Set, threads int) (server, client cpuset.Set, err error) {
	for _, s := range []struct {
		key string
		set cpuset.Set
	}{{"cpus", pl.CPUs}, {"server_cpus", pl.Server}, {"client_cpus", pl.Client}} {
		if out := s.set.Minus(own); len(out) > 0 {
			where := ""
			if n := pl.lines[s.key]; n > 0 {
				where = fmt.Sprintf(" (line %d of the plan)", n)
			}
			return nil, nil, fmt.Errorf("%s %s%s: CPU %s is not among those perfbench may run on here (%s): name CPUs of %s", s.key, s.set, where, out, own, own)
		}
	}
	cpus := pl.CPUs
	if len(cpus) == 0 {
		cpus = own
	}
	switch pl.Mode {
	case PlacementCPUs:
		return pl.Server, pl.Client, nil
	case PlacementShared:
		return cpus, cpus, nil
	case PlacementThreads:
		n := min(max(threads, 1), len(cpus))
		return cpus[:n], cpus[:n], nil
	case PlacementSplit:
		if len(cpus) < 2 {
			return cpus, cpus, nil
		}
		half := len(cpus) / 2
		return cpus[half:], cpus[:half], nil
	}
	return nil, nil, nil
}

// cpuList is a CPU list in a plan: a string ("0-3,8") or one CPU number.
type cpuList string

func (c *cpuList) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*c = cpuList(x)
	case int64:
		*c = cpuList(fmt.Sprint(x))
	default:
		return fmt.Errorf("a CPU list is a string like \"0-3,8\" or one CPU number, not %v", v)
	}
	if *c == "" {
		*c = " " // set but empty: Parse says so
	}
	return nil
}

// placement reads [run] placement, cpus, server_cpus and client_cpus.
func (p *parser) placement(plan *Plan, r *rawRun) {
	pl := Placement{Mode: defaultPlacement, lines: map[string]int{}}
	set := func(key string, v cpuList) cpuset.Set {
		if v == "" {
			return nil
		}
		pl.lines[key] = p.lines.line("run." + key)
		s, err := cpuset.Parse(string(v))
		if err != nil {
			p.wrapf("run."+key, err, "%s %q: %v", key, strings.TrimSpace(string(v)), err)
		}
		return s
	}
	pl.CPUs = set("cpus", r.CPUs)
	pl.Server = set("server_cpus", r.ServerCPUs)
	pl.Client = set("client_cpus", r.ClientCPUs)
	explicit := r.ServerCPUs != "" || r.ClientCPUs != ""
	switch r.Placement {
	case "":
		if explicit {
			pl.Mode = PlacementCPUs
		}
	case PlacementSplit, PlacementShared, PlacementThreads, PlacementNone:
		pl.Mode = r.Placement
		if explicit {
			p.errorf("run.placement", "placement %q and server_cpus/client_cpus say two things: keep one (server_cpus and "+
				"client_cpus alone place the server and the load on those CPUs)", r.Placement)
		}
	default:
		p.errorf("run.placement", "placement %q: use %q (the load and the server on separate CPUs), %q (on the same CPUs), %q "+
			"(on the same CPUs, one per client thread) or %q (no affinity); or set server_cpus and client_cpus", r.Placement,
			PlacementSplit, PlacementShared, PlacementThreads, PlacementNone)
	}
	if r.CPUs != "" && (pl.Mode == PlacementNone || pl.Mode == PlacementCPUs) {
		with := `placement "none"`
		if pl.Mode == PlacementCPUs {
			with = "server_cpus/client_cpus"
		}
		p.errorf("run.cpus", "cpus is the CPUs placement %q, %q or %q uses; with %s it does nothing: remove it",
			PlacementSplit, PlacementShared, PlacementThreads, with)
	}
	plan.Placement = pl
}
