package suite

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fullOrder is the run order of microbenchmarks.md, written out by hand.
var fullOrder = []string{
	"point-query.pre_range=100",
	"random-points.pre_range=10",
	"random-points.pre_range=100",
	"random-points.pre_range=1000",
	"read-only.pre_range=10",
	"read-only.pre_range=100",
	"read-only.pre_range=10000",
	"points-covered-pk.pre_range=100",
	"points-notcovered-pk.pre_range=100",
	"points-covered-si.pre_range=100",
	"points-notcovered-si.pre_range=100",
	"range-covered-pk.pre_range=100",
	"range-notcovered-pk.pre_range=100",
	"range-covered-si.pre_range=100",
	"range-notcovered-si.pre_range=100",
	"update-inlist_range=100",
	"update-index_range=100",
	"update-nonindex_range=100",
	"update-one_range=100",
	"update-zipf_range=100",
	"write-only_range=10000",
	"read-write_range=10",
	"read-write_range=100",
	"point-query_range=100",
	"random-points_range=10",
	"random-points_range=100",
	"random-points_range=1000",
	"hot-points_range=100",
	"read-only_range=10",
	"read-only_range=100",
	"read-only_range=10000",
	"read-only-simple_range=1000",
	"read-only-sum_range=1000",
	"read-only-order_range=1000",
	"read-only-distinct_range=1000",
	"read-only-count_range=1000",
	"points-covered-pk_range=100",
	"points-notcovered-pk_range=100",
	"points-covered-si_range=100",
	"points-notcovered-si_range=100",
	"range-covered-pk_range=100",
	"range-notcovered-pk_range=100",
	"range-covered-si_range=100",
	"range-notcovered-si_range=100",
	"scan_range=100",
	"delete_range=100",
	"insert_range=100",
}

func labels(steps []Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Label())
	}
	return out
}

func TestFullOrder(t *testing.T) {
	got := labels(steps())
	if !reflect.DeepEqual(got, fullOrder) {
		t.Errorf("full run order:\n got %q\nwant %q", got, fullOrder)
	}
}

// TestPublished checks the 32-step subset against the row labels of the
// published tables: the 42 labels of a seed table (which predate
// read-only-*), less the 15 .pre rows, plus the five read-only-* steps.
func TestPublished(t *testing.T) {
	steps, err := Subset(subsetPublished)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 32 {
		t.Fatalf("published has %d steps, want 32", len(steps))
	}
	groups := map[Group][]string{}
	for _, s := range steps {
		groups[s.Group] = append(groups[s.Group], s.Label())
	}
	want := map[Group][]string{
		GroupPoint: {"point-query_range=100", "random-points_range=10", "random-points_range=100",
			"random-points_range=1000", "hot-points_range=100", "points-covered-pk_range=100",
			"points-notcovered-pk_range=100", "points-covered-si_range=100", "points-notcovered-si_range=100"},
		GroupRange: {"read-only_range=10", "read-only_range=100", "read-only_range=10000",
			"read-only-simple_range=1000", "read-only-sum_range=1000", "read-only-order_range=1000",
			"read-only-distinct_range=1000", "read-only-count_range=1000", "range-covered-pk_range=100",
			"range-notcovered-pk_range=100", "range-covered-si_range=100", "range-notcovered-si_range=100",
			"scan_range=100"},
		GroupWrites: {"update-inlist_range=100", "update-index_range=100", "update-nonindex_range=100",
			"update-one_range=100", "update-zipf_range=100", "write-only_range=10000",
			"read-write_range=10", "read-write_range=100", "delete_range=100", "insert_range=100"},
	}
	if !reflect.DeepEqual(groups, want) {
		t.Errorf("published groups:\n got %q\nwant %q", groups, want)
	}
}

func TestFast(t *testing.T) {
	steps, err := Subset(subsetFast)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Group]bool{}
	for _, s := range steps {
		seen[s.Group] = true
	}
	if len(steps) < 4 || len(steps) > 8 || !seen[GroupPoint] || !seen[GroupRange] || !seen[GroupWrites] {
		t.Errorf("fast subset %q: want 4-8 steps with point, range and write steps", labels(steps))
	}
	// In run order: no read step after a write step, so no flush is needed.
	wrote := false
	for _, s := range steps {
		if s.Write {
			wrote = true
		} else if wrote {
			t.Errorf("fast subset runs read step %s after a write step", s.Label())
		}
	}
}

func TestSubsetUnknown(t *testing.T) {
	_, err := Subset("quick")
	if !errors.Is(err, errUnknownSubset) || !strings.Contains(err.Error(), "full, published, fast") {
		t.Errorf("Subset(quick) = %v, want ErrUnknownSubset listing the subsets", err)
	}
}

func TestStepFields(t *testing.T) {
	byLabel := map[string]Step{}
	for _, s := range steps() {
		if _, dup := byLabel[s.Label()]; dup {
			t.Errorf("duplicate label %s", s.Label())
		}
		byLabel[s.Label()] = s
	}
	cases := []struct {
		label    string
		group    Group
		write    bool
		ops      string
		per      float64
		script   string
		own      bool
		perEvent int
	}{
		{"point-query_range=100", GroupPoint, false, "Questions", 1, "oltp_point_select", false, 1},
		{"hot-points_range=100", GroupPoint, false, "Questions", 1, "perfbench_points.lua", true, 1},
		{"points-covered-si.pre_range=100", GroupPoint, false, "Questions", 1, "perfbench_points.lua", true, 1},
		{"read-only_range=10000", GroupRange, false, "Questions", 1, "oltp_read_only", false, 16},
		{"read-only-sum_range=1000", GroupRange, false, "Questions", 1, "oltp_read_only", false, 1},
		{"read-only-count_range=1000", GroupRange, false, "Questions", 1, "perfbench_ranges.lua", true, 1},
		{"range-notcovered-si_range=100", GroupRange, false, "Questions", 1, "perfbench_ranges.lua", true, 1},
		{"scan_range=100", GroupRange, false, "Rows_read", 1000, "perfbench_scan.lua", true, 1},
		{"update-zipf_range=100", GroupWrites, true, "Questions", 1, "perfbench_updates.lua", true, 1},
		{"write-only_range=10000", GroupWrites, true, "Questions", 1, "oltp_write_only", false, 6},
		{"read-write_range=10", GroupWrites, true, "Questions", 1, "oltp_read_write", false, 20},
		{"delete_range=100", GroupWrites, true, "Questions", 1, "oltp_delete", false, 1},
		{"insert_range=100", GroupWrites, true, "Questions", 1, "oltp_insert", false, 1},
	}
	for _, c := range cases {
		s, ok := byLabel[c.label]
		if !ok {
			t.Errorf("no step %s", c.label)
			continue
		}
		if s.Group != c.group || s.Write != c.write || s.FlushAfter != c.write || s.OpsSource != c.ops ||
			s.OpsPer != c.per || s.Script != c.script || s.Own != c.own || s.QueriesPerEvent != c.perEvent {
			t.Errorf("%s = %+v, want group %s write %v ops %s/%g script %s own %v queries/event %d",
				c.label, s, c.group, c.write, c.ops, c.per, c.script, c.own, c.perEvent)
		}
		if s.SQL == "" {
			t.Errorf("%s has no SQL description", c.label)
		}
	}
}

// TestGroupOf: the one rule for the group of a step name or label, the
// suite's or not (imported labels, custom steps), used by run for the
// steps of a plan and by report for Records that carry no group.
func TestGroupOf(t *testing.T) {
	for label, want := range map[string]Group{
		"point-query.pre_range=100":  GroupPoint,
		"points-covered-pk_range=10": GroupPoint,
		"random-points.pre_range=10": GroupPoint,
		"hot-points_range=100":       GroupPoint,
		"read-only_range=10":         GroupRange,
		"scan_range=100":             GroupRange,
		"update-one_range=100":       GroupWrites,
		"write-only_range=10000":     GroupWrites,
		"read-write_range=10":        GroupWrites,
		"delete_range=100":           GroupWrites,
		"insert":                     GroupWrites,
		"my-custom-step":             GroupRange,
		// By its name alone a checkpoint is a point query: a plan gives
		// such a step its group (Record.Group).
		"checkpoint": GroupPoint,
		// sysbench's own test names keep their underscores.
		"oltp_update_index":           GroupWrites,
		"oltp_update_non_index":       GroupWrites,
		"oltp_delete":                 GroupWrites,
		"oltp_insert":                 GroupWrites,
		"oltp_read_write":             GroupWrites,
		"oltp_write_only":             GroupWrites,
		"oltp_update_index_range=100": GroupWrites,
		"oltp_point_select":           GroupPoint,
		"select_random_points":        GroupPoint,
		"oltp_read_only":              GroupRange,
		"select_random_ranges":        GroupRange,
		// A step that writes rows is a write step however its name is
		// spelt; a parameter is not the name.
		"bulk_insert":           GroupWrites,
		"bulk-insert":           GroupWrites,
		"bulk.insert":           GroupWrites,
		"bulk_insert_rows=1000": GroupWrites,
		"points_write=1":        GroupPoint,
		// Insert-benchmark labels, imported copies included.
		"l.i0": GroupInsert, "l.x": GroupInsert, "l.i1": GroupInsert, "l.i2": GroupInsert,
		"qr100": GroupInsert, "qp500": GroupInsert, "q1000.1": GroupInsert,
	} {
		if got := GroupOf(label); got != want {
			t.Errorf("GroupOf(%s) = %s, want %s", label, got, want)
		}
	}
}

// TestGroupRank: tables print point, range, writes, any group this version
// does not know, then the insert benchmark.
func TestGroupRank(t *testing.T) {
	order := []Group{GroupPoint, GroupRange, GroupWrites, Group("checkpoints"), GroupInsert}
	for i := 1; i < len(order); i++ {
		if order[i-1].Rank() >= order[i].Rank() {
			t.Errorf("%s (rank %d) does not come before %s (rank %d)", order[i-1], order[i-1].Rank(), order[i], order[i].Rank())
		}
	}
}

func TestStepName(t *testing.T) {
	for label, want := range map[string]string{
		"oltp_read_only.pre_range=10_pk=1": "oltp_read_only",
		"read-only.pre_range=100":          "read-only",
		"scan_range=100":                   "scan",
		"l.i0":                             "l.i0",
		"q1000.1":                          "q1000.1",
	} {
		if got := StepName(label); got != want {
			t.Errorf("StepName(%s) = %q, want %q", label, got, want)
		}
	}
}

func TestLookup(t *testing.T) {
	got, err := Lookup("random-points")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"random-points_range=10", "random-points_range=100", "random-points_range=1000"}; !reflect.DeepEqual(labels(got), want) {
		t.Errorf("Lookup(random-points) = %q, want %q", labels(got), want)
	}
	got, err = Lookup("read-write_range=100")
	if err != nil || len(got) != 1 || got[0].Range != 100 {
		t.Errorf("Lookup(read-write_range=100) = %v, %v", labels(got), err)
	}
	_, err = Lookup("pont-query")
	if !errors.Is(err, errUnknownStep) || !strings.Contains(err.Error(), "did you mean point-query?") {
		t.Errorf("Lookup(pont-query) = %v, want ErrUnknownStep suggesting point-query", err)
	}
	_, err = Lookup("completely-different")
	if !errors.Is(err, errUnknownStep) || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Lookup(completely-different) = %v, want ErrUnknownStep without a suggestion", err)
	}
}

func TestStepsAreCopies(t *testing.T) {
	a := steps()
	a[0].Args[0] = "changed"
	a[0].Name = "changed"
	if b := steps(); b[0].Name == "changed" || b[0].Args[0] == "changed" {
		t.Error("modifying the result of Steps changed the catalogue")
	}
}

func TestCommand(t *testing.T) {
	o := Options{
		ScriptDir: "/tmp/pb", Host: "127.0.0.1", Port: 3306, User: "sbtest", Password: "secret", ConfigFile: "/tmp/pb.cfg", DB: "sbtest",
		Tables: 8, TableSize: 1000000, Threads: 4,
		Warmup: 5 * time.Second, Time: 600 * time.Second, Tail: 500 * time.Millisecond,
		ReportInterval: time.Second, Extra: []string{"--mysql-ignore-errors=all"},
	}
	step := func(label string) Step {
		s, err := Lookup(label)
		if err != nil {
			t.Fatal(err)
		}
		return s[0]
	}
	conn := []string{"--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=3306", "--mysql-user=sbtest",
		"--config-file=/tmp/pb.cfg", "--mysql-db=sbtest", "--tables=8", "--table-size=1000000", "--rand-type=uniform"}
	run := []string{"--threads=4", "--time=606", "--events=0", "--report-interval=1"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		label string
		want  []string
	}{
		{"point-query_range=100", cat([]string{"sysbench", "oltp_point_select"}, conn, run,
			[]string{"--range_size=100", "--skip_trx=on", "--mysql-ignore-errors=all", "run"})},
		{"read-only-order_range=1000", cat([]string{"sysbench", "oltp_read_only"}, conn, run,
			[]string{"--range_size=1000", "--skip_trx=on", "--point_selects=0", "--simple_ranges=0",
				"--sum_ranges=0", "--order_ranges=1", "--distinct_ranges=0", "--mysql-ignore-errors=all", "run"})},
		{"random-points_range=1000", cat([]string{"sysbench", "/tmp/pb/perfbench_points.lua"}, conn, run,
			[]string{"--range_size=1000", "--shape=random-points", "--mysql-ignore-errors=all", "run"})},
		{"scan_range=100", cat([]string{"sysbench", "/tmp/pb/perfbench_scan.lua"}, conn, run,
			[]string{"--range_size=100", "--mysql-ignore-errors=all", "run"})},
		{"write-only_range=10000", cat([]string{"sysbench", "oltp_write_only"}, conn, run,
			[]string{"--range_size=10000", "--mysql-ignore-errors=all", "run"})},
	}
	for _, c := range cases {
		got, err := Command(step(c.label), o)
		if err != nil {
			t.Errorf("%s: %v", c.label, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Command(%s):\n got %q\nwant %q", c.label, got, c.want)
		}
	}

	// A password without its option file is refused: it would have to go
	// on the command line.
	o.ConfigFile = ""
	if _, err := Command(step("point-query_range=100"), o); !errors.Is(err, errOptions) || !strings.Contains(err.Error(), "never on the command line") {
		t.Errorf("a password without an option file: %v", err)
	}
	o.ConfigFile = "/tmp/pb.cfg"

	// The .pre copy runs exactly what its step runs.
	pre, _ := Command(step("read-only.pre_range=10"), o)
	post, _ := Command(step("read-only_range=10"), o)
	if !reflect.DeepEqual(pre, post) {
		t.Errorf(".pre command differs:\n%q\n%q", pre, post)
	}
}

func TestCommandSocketAndDefaults(t *testing.T) {
	s, _ := Lookup("delete")
	got, err := Command(s[0], Options{Sysbench: "/opt/sb/bin/sysbench", Socket: "/run/m.sock", Tables: 1, TableSize: 10, Threads: 1,
		Time: 1500 * time.Millisecond, RandType: "pareto", Histogram: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/opt/sb/bin/sysbench", "oltp_delete", "--db-driver=mysql", "--mysql-socket=/run/m.sock",
		"--tables=1", "--table-size=10", "--rand-type=pareto", "--threads=1", "--time=2", "--events=0",
		"--histogram=on", "--range_size=100", "run"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestCommandErrors(t *testing.T) {
	pq, _ := Lookup("point-query")
	hp, _ := Lookup("hot-points")
	ok := Options{ScriptDir: "/x", Tables: 1, TableSize: 10, Threads: 1, Time: time.Second}
	cases := []struct {
		name string
		step Step
		mod  func(*Options)
		want string
	}{
		{"no tables", pq[0], func(o *Options) { o.Tables = 0 }, "tables is 0"},
		{"no rows", pq[0], func(o *Options) { o.TableSize = 0 }, "table size is 0"},
		{"no threads", pq[0], func(o *Options) { o.Threads = 0 }, "threads is 0"},
		{"no time", pq[0], func(o *Options) { o.Time = 0 }, "measured time is 0s"},
		{"negative warmup", pq[0], func(o *Options) { o.Warmup = -time.Second }, "must not be negative"},
		{"sub-second interval", pq[0], func(o *Options) { o.ReportInterval = 500 * time.Millisecond }, "whole number of seconds"},
		{"zipfian", pq[0], func(o *Options) { o.RandType = "zipfian" }, "no --rand-type=zipfian"},
		{"bad rand", pq[0], func(o *Options) { o.RandType = "normal" }, "not one of uniform, gaussian, special, pareto"},
		{"no script dir", hp[0], func(o *Options) { o.ScriptDir = "" }, "WriteScripts"},
	}
	for _, c := range cases {
		o := ok
		c.mod(&o)
		_, err := Command(c.step, o)
		if !errors.Is(err, errOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want ErrOptions with %q", c.name, err, c.want)
		}
	}
}

func TestPrepareCleanup(t *testing.T) {
	o := Options{Socket: "/s", User: "u", Tables: 4, TableSize: 100, Threads: 16, Extra: []string{"--mysql_storage_engine=rocksdb"}}
	got, err := PrepareCommand(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sysbench", "oltp_read_write", "--db-driver=mysql", "--mysql-socket=/s", "--mysql-user=u",
		"--tables=4", "--table-size=100", "--rand-type=uniform", "--threads=4", "--mysql_storage_engine=rocksdb", "prepare"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prepare:\n got %q\nwant %q", got, want)
	}
	got, _ = CleanupCommand(o)
	want[len(want)-1] = "cleanup"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cleanup:\n got %q\nwant %q", got, want)
	}
	if _, err := PrepareCommand(Options{Tables: 1}); !errors.Is(err, errOptions) {
		t.Errorf("prepare without rows: %v, want ErrOptions", err)
	}
}

func TestRedact(t *testing.T) {
	in := []string{"sysbench", "--mysql-password=hunter2", "--mysql_password=x", "--mysql-user=u"}
	got := redact(in)
	want := []string{"sysbench", "--mysql-password=***", "--mysql_password=***", "--mysql-user=u"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	if in[1] != "--mysql-password=hunter2" {
		t.Error("Redact modified its argument")
	}
}

func TestWriteScripts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lua")
	if err := WriteScripts(dir); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range scriptNames() {
		names[n] = true
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || len(b) == 0 {
			t.Errorf("script %s not written: %v", n, err)
		}
	}
	if !names["perfbench_common.lua"] {
		t.Error("the shared module perfbench_common.lua is not among the scripts")
	}
	for _, s := range steps() {
		if s.Own && !names[s.Script] {
			t.Errorf("step %s runs %s, which is not embedded", s.Label(), s.Script)
		}
		if s.Own {
			b, _ := script(s.Script)
			for _, a := range s.Args {
				if shape, ok := strings.CutPrefix(a, "--shape="); ok && !strings.Contains(string(b), `"`+shape+`"`) {
					t.Errorf("step %s: %s has no shape %q", s.Label(), s.Script, shape)
				}
			}
		}
	}
}

func TestAnalyzeSQL(t *testing.T) {
	if got, want := analyzeSQL("sbtest", 3), "ANALYZE TABLE `sbtest`.sbtest1, `sbtest`.sbtest2, `sbtest`.sbtest3"; got != want {
		t.Errorf("AnalyzeSQL = %q, want %q", got, want)
	}
	if got, want := analyzeSQL("", 1), "ANALYZE TABLE sbtest1"; got != want {
		t.Errorf("AnalyzeSQL = %q, want %q", got, want)
	}
}
