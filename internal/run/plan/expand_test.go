package plan

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/load/suite"
)

const twoVersions = `
[run]
compare = "windows"
repeats = 2
threads = [1, 2]
[steps]
list = ["point-query", "update-one", "delete", "scan"]
[steps.override.scan]
threads = [1]
[[version]]
label = "A"
basedir = "installed"
[[version]]
label = "B"
host = "127.0.0.1"
port = 3306
`

func actions(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, string(it.Action)+" "+it.ID)
	}
	return out
}

func TestExpandInterleaved(t *testing.T) {
	p := mustParse(t, twoVersions)
	items := p.Expand()
	want := []string{
		"start start/A/r1",
		"load load/A",
		"measure A/point-query_range=100/t1/r1",
		"measure A/point-query_range=100/t2/r1",
		"measure A/update-one_range=100/t1/r1",
		"measure A/update-one_range=100/t2/r1",
		"measure A/delete_range=100/t1/r1",
		"measure A/delete_range=100/t2/r1",
		"flush flush/A/scan_range=100/t1/r1",
		"measure A/scan_range=100/t1/r1",
		"stop stop/A/r1",
		"load load/B",
		"measure B/point-query_range=100/t1/r1",
		"measure B/point-query_range=100/t2/r1",
		"measure B/update-one_range=100/t1/r1",
		"measure B/update-one_range=100/t2/r1",
		"measure B/delete_range=100/t1/r1",
		"measure B/delete_range=100/t2/r1",
		"flush flush/B/scan_range=100/t1/r1",
		"measure B/scan_range=100/t1/r1",
		// Repeat 2: the data is not loaded again, and the first read step
		// follows repeat 1's writes, so it is flushed first.
		"start start/A/r2",
		"measure A/point-query_range=100/t1/r2",
		"measure A/point-query_range=100/t2/r2",
		"measure A/update-one_range=100/t1/r2",
		"measure A/update-one_range=100/t2/r2",
		"measure A/delete_range=100/t1/r2",
		"measure A/delete_range=100/t2/r2",
		"flush flush/A/scan_range=100/t1/r2",
		"measure A/scan_range=100/t1/r2",
		"stop stop/A/r2",
		"measure B/point-query_range=100/t1/r2",
		"measure B/point-query_range=100/t2/r2",
		"measure B/update-one_range=100/t1/r2",
		"measure B/update-one_range=100/t2/r2",
		"measure B/delete_range=100/t1/r2",
		"measure B/delete_range=100/t2/r2",
		"flush flush/B/scan_range=100/t1/r2",
		"measure B/scan_range=100/t1/r2",
	}
	if got := actions(items); !reflect.DeepEqual(got, want) {
		t.Errorf("Expand:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := Measurements(items); n != 28 {
		t.Errorf("Measurements = %d, want 2 versions × 2 repeats × (3 steps × 2 threads + 1)", n)
	}
	for _, it := range items {
		if it.Action == ActionMeasure && (it.Step == nil || it.Version == nil || it.Threads == 0 || it.Repeat == 0) {
			t.Errorf("measurement %s lacks fields: %+v", it.ID, it)
		}
		if it.Action == ActionFlush && (it.Before != strings.TrimPrefix(it.ID, "flush/") || it.Step.Write) {
			t.Errorf("flush %+v", it)
		}
	}
}

func TestExpandAllRunning(t *testing.T) {
	p := mustParse(t, strings.Replace(twoVersions, "repeats = 2", "repeats = 2\nservers = \"all-running\"", 1))
	got := actions(p.Expand())
	var lifecycle []string
	for _, a := range got {
		if strings.HasPrefix(a, "start") || strings.HasPrefix(a, "stop") || strings.HasPrefix(a, "load") {
			lifecycle = append(lifecycle, a)
		}
	}
	want := []string{"start start/A/r1", "load load/A", "load load/B", "stop stop/A"}
	if !reflect.DeepEqual(lifecycle, want) {
		t.Errorf("lifecycle %q, want %q", lifecycle, want)
	}
	if got[len(got)-1] != "stop stop/A" {
		t.Errorf("last item %q, want the stop", got[len(got)-1])
	}
}

func TestExpandNoLoad(t *testing.T) {
	p := mustParse(t, strings.Replace(twoVersions, "[steps]", "[data]\nload = false\n[steps]", 1))
	for _, a := range actions(p.Expand()) {
		if strings.HasPrefix(a, "load") {
			t.Errorf("%s with load = false", a)
		}
	}
}

func TestPending(t *testing.T) {
	p := mustParse(t, twoVersions)
	items := p.Expand()

	// Nothing done: everything runs.
	if got := Pending(items, func(Item) bool { return false }, nil); !reflect.DeepEqual(actions(got), actions(items)) {
		t.Error("Pending with nothing done changed the list")
	}
	// Everything done: nothing runs, not even a start.
	if got := Pending(items, func(Item) bool { return true }, nil); len(got) != 0 {
		t.Errorf("Pending with everything done: %q", actions(got))
	}

	// Repeat 1 done for both versions and A's repeat 2 point queries: the
	// rest of A's repeat 2 runs between its start and stop, B's repeat 2
	// runs, no load runs again.
	done := func(it Item) bool {
		return it.Repeat == 1 || strings.HasPrefix(it.ID, "A/point-query")
	}
	want := []string{
		"start start/A/r2",
		"measure A/update-one_range=100/t1/r2",
		"measure A/update-one_range=100/t2/r2",
		"measure A/delete_range=100/t1/r2",
		"measure A/delete_range=100/t2/r2",
		"flush flush/A/scan_range=100/t1/r2",
		"measure A/scan_range=100/t1/r2",
		"stop stop/A/r2",
		"measure B/point-query_range=100/t1/r2",
		"measure B/point-query_range=100/t2/r2",
		"measure B/update-one_range=100/t1/r2",
		"measure B/update-one_range=100/t2/r2",
		"measure B/delete_range=100/t1/r2",
		"measure B/delete_range=100/t2/r2",
		"flush flush/B/scan_range=100/t1/r2",
		"measure B/scan_range=100/t1/r2",
	}
	if got := actions(Pending(items, done, nil)); !reflect.DeepEqual(got, want) {
		t.Errorf("Pending:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// --only scan: each scan keeps its flush, the loads (nothing measured
	// yet) and the starts and stops around it.
	only := func(it Item) bool { return it.Step.Suite.Name == "scan" }
	want = []string{
		"start start/A/r1", "load load/A", "flush flush/A/scan_range=100/t1/r1", "measure A/scan_range=100/t1/r1", "stop stop/A/r1",
		"load load/B", "flush flush/B/scan_range=100/t1/r1", "measure B/scan_range=100/t1/r1",
		"start start/A/r2", "flush flush/A/scan_range=100/t1/r2", "measure A/scan_range=100/t1/r2", "stop stop/A/r2",
		"flush flush/B/scan_range=100/t1/r2", "measure B/scan_range=100/t1/r2",
	}
	if got := actions(Pending(items, nil, only)); !reflect.DeepEqual(got, want) {
		t.Errorf("Pending for --only scan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSysbenchOptions(t *testing.T) {
	p := mustParse(t, `
[run]
warmup = "3s"
duration = "20s"
interval = "2s"
[data]
tables = 4
table_size = 5000
extra_args = ["--mysql-ignore-errors=all"]
[steps]
list = ["hot-points"]
[steps.override.hot-points]
threads = [8]
extra_args = ["--percentile=99"]
[[version]]
label = "a"
socket = "/s"
`)
	it := p.Expand()[1] // after the load
	if it.Action != ActionMeasure {
		t.Fatalf("item %+v", it)
	}
	o := p.SysbenchOptions(it, suite.Options{Socket: "/run/s.sock", ScriptDir: "/lua", Tail: time.Second, ConfigFile: "/tmp/c"})
	argv, err := suite.Command(*it.Step.Suite, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sysbench", "/lua/perfbench_points.lua", "--db-driver=mysql", "--mysql-socket=/run/s.sock",
		"--mysql-user=sbtest", "--config-file=/tmp/c", "--mysql-db=sbtest", "--tables=4", "--table-size=5000",
		"--rand-type=uniform", "--threads=8", "--time=24", "--events=0", "--report-interval=2", "--range_size=100",
		"--shape=hot-points", "--mysql-ignore-errors=all", "--percentile=99", "run"}
	if !reflect.DeepEqual(argv, want) {
		t.Errorf("argv:\n got %q\nwant %q", argv, want)
	}
	load := p.Expand()[0]
	lo := p.SysbenchOptions(load, suite.Options{Socket: "/run/s.sock", ConfigFile: "/tmp/c"})
	argv, err = suite.PrepareCommand(lo)
	if err != nil || argv[len(argv)-1] != "prepare" || !strings.Contains(strings.Join(argv, " "), "--tables=4 --table-size=5000") {
		t.Errorf("prepare %q, %v", argv, err)
	}
}
