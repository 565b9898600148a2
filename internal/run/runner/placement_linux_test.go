package runner

import (
	"fmt"
	"testing"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

// checkPlacement checks that a measured Record says where its server and
// load ran, and that the kernel's lists, read while the load ran, are the
// CPUs perfbench pinned them to: every thread of the server included.
func checkPlacement(t *testing.T, id string, r *record.Record) {
	t.Helper()
	pl := r.Provenance.Placement
	if pl == nil {
		t.Errorf("%s: no placement in the provenance", id)
		return
	}
	if pl.Client != "" && pl.ClientAllowed != pl.Client {
		t.Errorf("%s: the load was pinned to %q but the kernel says %q", id, pl.Client, pl.ClientAllowed)
	}
	if pl.Server != "" && (pl.ServerAllowed != pl.Server || pl.ServerThreadsElsewhere != 0) {
		t.Errorf("%s: the server was pinned to %q but the kernel says %q (%d threads elsewhere)", id, pl.Server, pl.ServerAllowed, pl.ServerThreadsElsewhere)
	}
	if pl.ServerAllowed == "" || pl.ClientAllowed == "" {
		t.Errorf("%s: placement %+v: where the server or the load ran was not read", id, pl)
	}
	if pl.Mode == plan.PlacementNone && (pl.Server != "" || pl.Client != "") {
		t.Errorf("%s: placement none, yet %+v", id, pl)
	}
}

// TestPlacementSplitPins runs a plan with placement split on a machine of
// two CPUs or more: the server and the load are pinned to different CPUs,
// as the plan says, and the Records say so.
func TestPlacementSplitPins(t *testing.T) {
	needTools(t)
	own, err := cpuset.Own()
	if err != nil {
		t.Fatal(err)
	}
	p := parsePlan(t, `
name = "split"
[run]
warmup = "1s"
duration = "2s"
placement = "split"
events = ["task-clock"]
[data]
table_size = 1000
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`)
	_, _, _, recs := runOK(t, p)
	r := recs["a/point-query_range=100/t1/r1"] // version/step/threads/repeat
	if r == nil {
		t.Fatalf("no Record: %v", recs)
	}
	checkMeasured(t, "a", r)
	pl := r.Provenance.Placement
	if pl == nil {
		t.Fatal("no placement")
	}
	wantServer, wantClient := own[len(own)/2:], own[:len(own)/2]
	if len(own) < 2 {
		wantServer, wantClient = own, own
	}
	if pl.Mode != plan.PlacementSplit || pl.Server != wantServer.String() || pl.Client != wantClient.String() {
		t.Errorf("placement %+v, want split, server %s, load %s (of %s)", pl, wantServer, wantClient, own)
	}
}

// TestPlacementThreads runs a plan with placement threads at 1 and 2
// client threads: the server (started before both) and the load share
// one CPU at 1 thread and two at 2, every thread of the server moved
// between the measurements, and the Records say so.
func TestPlacementThreads(t *testing.T) {
	needTools(t)
	own, err := cpuset.Own()
	if err != nil {
		t.Fatal(err)
	}
	if len(own) < 2 {
		testenv.Skip(t, "one CPU only: 1 and 2 threads would run on the same CPU", "run on a machine of 2 CPUs or more")
	}
	p := parsePlan(t, `
name = "threads"
[run]
warmup = "1s"
duration = "2s"
threads = [1, 2]
placement = "threads"
servers = "all-running"
events = ["task-clock"]
[data]
table_size = 1000
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`)
	_, _, _, recs := runOK(t, p)
	for _, th := range []int{1, 2} {
		id := fmt.Sprintf("a/point-query_range=100/t%d/r1", th) // version/step/threads/repeat
		r := recs[id]
		if r == nil {
			t.Fatalf("no Record of %s: %v", id, recs)
		}
		checkMeasured(t, id, r)
		want := own[:th].String()
		if pl := r.Provenance.Placement; pl == nil || pl.Mode != plan.PlacementThreads || pl.Server != want || pl.Client != want {
			t.Errorf("%s: placement %+v, want threads, server and load on %s", id, pl, want)
		}
	}
}
