package measure

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func cnt(raw, enabled, running uint64) perfevent.Count {
	return perfevent.Count{Raw: raw, Enabled: enabled, Running: running}
}

// window builds a Reading of three events over five threads, the way a
// window's Sub leaves it: per-thread counts and their sums.
func window() perfevent.Reading {
	threads := []perfevent.ThreadCounts{
		// tid: task-clock, cycles (not opened), cache-misses (multiplexed)
		{Tid: 100, Counts: []perfevent.Count{cnt(1000, 1000, 1000), {}, cnt(10, 1000, 500)}},
		{Tid: 101, Counts: []perfevent.Count{cnt(5000, 5000, 5000), {}, cnt(300, 5000, 2500)}},
		{Tid: 102, Counts: []perfevent.Count{cnt(7000, 7000, 7000), {}, cnt(200, 7000, 7000)}},
		{Tid: 103, Counts: []perfevent.Count{cnt(40, 40, 40), {}, cnt(1, 40, 10)}},
		{Tid: 104, Counts: []perfevent.Count{{}, {}, {}}}, // slept through the window
	}
	var sums [3]perfevent.Count
	var values [3]float64
	for _, th := range threads {
		for i, c := range th.Counts {
			sums[i] = sums[i].Add(c)
			values[i] += c.Scaled()
		}
	}
	return perfevent.Reading{
		Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "task-clock", Unit: "ns"}, Group: 1, Count: sums[0], Value: values[0], Status: perfevent.StatusCounted},
			{Event: perfevent.Event{Name: "cycles"}, Status: perfevent.StatusNotSupported, Reason: "no hardware PMU"},
			{Event: perfevent.Event{Name: "cache-misses"}, Group: 2, Count: sums[2], Value: values[2], Status: perfevent.StatusScaled},
		},
		Threads: threads,
	}
}

// byTid gives each row the role of its tid in roles.
func byTid(roles map[int]string) func(perfevent.ThreadCounts) string {
	return func(th perfevent.ThreadCounts) string { return roles[th.Tid] }
}

func TestSplitRoles(t *testing.T) {
	roles := map[int]string{100: mysqld.RoleMain, 101: mysqld.RoleConnection, 102: mysqld.RoleConnection, 104: "innodb-io"}
	got := splitRoles(window(), byTid(roles))
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
	}
	// mysqld.RoleNames order, unattributed last.
	if want := []string{"connection", "innodb-io", "main", "unattributed"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("roles %v, want %v", names, want)
	}
	conn, io, main, un := got[0], got[1], got[2], got[3]
	if conn.Threads != 2 || io.Threads != 1 || main.Threads != 1 || un.Threads != 1 {
		t.Errorf("threads: %d %d %d %d", conn.Threads, io.Threads, main.Threads, un.Threads)
	}
	// task-clock: 5000+7000 for the connections, exact.
	if c := conn.Counters[0]; c.Raw != 12000 || c.Value != 12000 || c.Status != record.StatusCounted || c.Unit != "ns" || c.Group != 1 {
		t.Errorf("connection task-clock %+v", c)
	}
	// cycles: not supported in every role, no number.
	for _, r := range got {
		if c := r.Counters[1]; c.Status != record.StatusNotSupported || c.Value != 0 || c.Raw != 0 || c.Reason != "no hardware PMU" {
			t.Errorf("%s cycles %+v", r.Name, c)
		}
	}
	// cache-misses for the connections: raw 500, enabled 12000, running
	// 9500, scaled per thread: 300 × 5000/2500 + 200.
	if c := conn.Counters[2]; c.Raw != 500 || c.Enabled != 12000 || c.Running != 9500 || c.Status != record.StatusScaled || c.Value != 800 {
		t.Errorf("connection cache-misses %+v", c)
	}
	// A role whose threads never ran: a counted 0, with the reason.
	if c := io.Counters[0]; c.Status != record.StatusCounted || c.Value != 0 || c.Reason == "" {
		t.Errorf("innodb-io task-clock %+v", c)
	}
	// Raw counts and times add up exactly; counted values too.
	total := window()
	for i, ev := range total.Events {
		var sum perfevent.Count
		var value float64
		for _, r := range got {
			c := r.Counters[i]
			sum = sum.Add(cnt(c.Raw, c.Enabled, c.Running))
			if c.Measured() {
				value += c.Value
			}
		}
		if ev.Status != perfevent.StatusNotSupported && sum != ev.Count {
			t.Errorf("%s: roles sum to %+v, total %+v", ev.Event.Name, sum, ev.Count)
		}
		if ev.Status != perfevent.StatusNotSupported && value != ev.Value {
			t.Errorf("%s: role values sum to %v, total %v", ev.Event.Name, value, ev.Value)
		}
	}
	if splitRoles(perfevent.Reading{}, nil) != nil {
		t.Error("a reading without threads (cgroup mode) has roles")
	}
}

func TestRoleLog(t *testing.T) {
	noProcess := record.Warning{Code: record.WarnRoles, Roles: []string{mysqld.RoleConnection, mysqld.RoleOther}, Text: "no PROCESS privilege"}
	l := newRoleLog(10)
	l.startOf = func(pid, tid int) uint64 { return uint64(tid) * 10 }
	// Opening: 13 is a connection thread in the server's thread cache
	// (nothing names it); 11 serves a connection.
	l.add(&mysqld.ThreadMap{Threads: []mysqld.Thread{{Tid: 10, Role: mysqld.RoleMain}, {Tid: 11, Role: mysqld.RoleConnection}, {Tid: 13, Role: mysqld.RoleOther}},
		Warnings: []record.Warning{noProcess}})
	// While the load runs: 13 serves one of its connections; 12 appears.
	l.add(&mysqld.ThreadMap{Threads: []mysqld.Thread{{Tid: 10, Role: mysqld.RoleMain}, {Tid: 11,
		Role: mysqld.RoleConnection}, {Tid: 12, Role: mysqld.RoleOther}, {Tid: 13, Role: mysqld.RoleConnection}}})
	// Closing, after the load disconnected: 11 and 13 are back in the
	// cache; 12 is named now.
	l.add(&mysqld.ThreadMap{Threads: []mysqld.Thread{{Tid: 11, Role: mysqld.RoleOther}, {Tid: 12, Role: "log"}, {Tid: 13, Role: mysqld.RoleOther}},
		Warnings: []record.Warning{noProcess}})
	for tid, want := range map[int]string{10: "main", 11: "connection", 12: "log", 13: "connection", 14: roleUnattributed} {
		if got := l.roleOf(perfevent.ThreadCounts{Tid: tid, Start: uint64(tid) * 10}); got != want {
			t.Errorf("role of %d = %q, want %q", tid, got, want)
		}
	}
	// Rows of descendants: the main thread's are connections, others'
	// their creator's role.
	if got := l.roleOf(perfevent.ThreadCounts{Tid: 10, Start: 100, Descendants: true}); got != mysqld.RoleConnection {
		t.Errorf("main's descendants: %q", got)
	}
	if got := l.roleOf(perfevent.ThreadCounts{Tid: 12, Start: 120, Descendants: true}); got != "log" {
		t.Errorf("12's descendants: %q", got)
	}
	if l.listings() != 3 || !reflect.DeepEqual(l.warnings, []record.Warning{noProcess}) {
		t.Errorf("%d listings, warnings %q", l.listings(), l.warnings)
	}
	if want := map[int]string{10: "main", 11: "connection", 12: "log", 13: "connection"}; !reflect.DeepEqual(l.all(), want) {
		t.Errorf("all: %v, want %v", l.all(), want)
	}
	if got := newRoleLog(10).roleOf(perfevent.ThreadCounts{Tid: 10}); got != mysqld.RoleMain {
		t.Errorf("leader without listings: %q", got)
	}
	// A named background role is not replaced by a later one.
	if got := preferRole("log", "innodb-io"); got != "log" {
		t.Errorf("log then innodb-io: %q", got)
	}
}

func clientRecord(start time.Time, seconds, warmup float64) *record.Record {
	r := record.New(record.KindStat)
	r.Window = record.Window{Start: start, End: start.Add(time.Duration(seconds * float64(time.Second))), Seconds: seconds, Warmup: warmup}
	r.Counters = []record.Counter{
		{Event: "task-clock", Raw: 5000, Enabled: 5000, Running: 5000, Value: 5000, Status: record.StatusCounted},
		{Event: "cycles", Status: record.StatusNotSupported},
	}
	return r
}

func TestApplyClient(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// Intervals of 1 s; interval i (At = i) covers [i-1, i] at 100·i qps
	// and 10·i tps.
	var ivs []record.Interval
	for i := 1; i <= 9; i++ {
		ivs = append(ivs, record.Interval{At: float64(i), QPS: 100 * float64(i), TPS: 10 * float64(i)})
	}
	c := &record.Client{Tool: "sysbench", Started: t0, Seconds: 9, Queries: 4500, Transactions: 450, Events: 450, Intervals: ivs}

	// The run inside the window: the client's totals, exact.
	r := clientRecord(at(-0.2), 9.5, 0)
	ApplyClient(r, c, opClientQueries)
	if r.Ops != (record.Ops{Source: "client.queries", Count: 4500, Per: 1, Counted: true}) || len(r.Warnings) != 0 || r.Client != c {
		t.Errorf("whole run: ops %+v warnings %v", r.Ops, r.Warnings)
	}
	if p := r.Counters[0].PerOp; p == nil || *p != 5000.0/4500 || r.Counters[1].PerOp != nil {
		t.Errorf("per op: %v %v", r.Counters[0].PerOp, r.Counters[1].PerOp)
	}
	r = clientRecord(at(-0.2), 9.5, 0)
	ApplyClient(r, c, opClientTransactions)
	if r.Ops.Count != 450 || r.Ops.Source != "client.transactions" {
		t.Errorf("transactions: %+v", r.Ops)
	}

	// A window after a warm-up, [2.5, 7]: half of interval 3 (300 qps)
	// and intervals 4 to 7 whole: 150 + 400 + 500 + 600 + 700.
	r = clientRecord(at(2.5), 4.5, 2.5)
	ApplyClient(r, c, opClientQueries)
	if r.Ops.Count != 2350 || r.Ops.Estimated || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].Text,
		"approximate") || !strings.Contains(r.Warnings[0].Text, "all of it covered by intervals") {
		t.Errorf("warm-up window: ops %+v warnings %q", r.Ops, r.Warnings)
	}
	// A window that runs past the client's run: [8, 10] with the run
	// ending at 9. Interval 9 (900) is all the client sent in it.
	r = clientRecord(at(8), 2, 8)
	ApplyClient(r, c, opClientQueries)
	if r.Ops.Count != 900 || r.Ops.Estimated || !strings.Contains(strings.Join(r.WarningTexts(), "|"), "over the 1.000 s "+
		"of the window during its run (all of it covered") {
		t.Errorf("window past the run: ops %+v warnings %q", r.Ops, r.Warnings)
	}

	// The window reaches the end of a run whose last line sysbench did
	// not print: a 6 s run with lines up to [ 5s ], a window [3, 6.02]
	// after a 3 s warm-up. The lines cover [3, 5] of the 3 s of the window
	// during the run: 67%, no count (summing would give 2 s of queries
	// for 3 s of window).
	short := &record.Client{Tool: "sysbench", Started: t0, Seconds: 6, Queries: 6000,
		Intervals: []record.Interval{{At: 1, QPS: 1000}, {At: 2, QPS: 1000}, {At: 3, QPS: 1000}, {At: 4, QPS: 1000}, {At: 5, QPS: 1000}}}
	r = clientRecord(at(3), 3.02, 3)
	ApplyClient(r, short, opClientQueries)
	if w := strings.Join(r.WarningTexts(), "|"); r.Ops.Count != 0 || r.Ops.Source != "client.queries" || r.Counters[0].PerOp != nil ||
		!strings.Contains(w, "no client.queries count") || !strings.Contains(w, "67%") || !strings.Contains(w, "--op Questions") {
		t.Errorf("67%% covered: ops %+v per op %v warnings %q", r.Ops, r.Counters[0].PerOp, r.Warnings)
	}
	// A 25 s run with lines up to [ 24s ], a window [1, 26]: the lines
	// cover 23 of its 24 s during the run (96%); the 23,000 queries are
	// scaled to the 24 s: 24,000, marked estimated.
	long := &record.Client{Tool: "sysbench", Started: t0, Seconds: 25, Queries: 25000}
	for i := 1; i <= 24; i++ {
		long.Intervals = append(long.Intervals, record.Interval{At: float64(i), QPS: 1000})
	}
	r = clientRecord(at(1), 25, 1)
	ApplyClient(r, long, opClientQueries)
	if d := r.Ops.Count - 24000; d > 1e-6 || d < -1e-6 || !r.Ops.Estimated ||
		!strings.Contains(strings.Join(r.WarningTexts(), "|"), "95.8% covered by intervals, scaled") {
		t.Errorf("96%% covered: ops %+v warnings %q", r.Ops, r.Warnings)
	}
	if p := r.Counters[0].PerOp; p == nil || *p != 5000/r.Ops.Count {
		t.Errorf("96%% covered: per op %v", p)
	}

	// Nothing to align with: no count, and a warning saying why.
	noIv := *c
	noIv.Intervals = nil
	r = clientRecord(at(2.5), 4.5, 2.5)
	ApplyClient(r, &noIv, opClientQueries)
	if r.Ops.Count != 0 || r.Ops.Source != "client.queries" || r.Counters[0].PerOp != nil ||
		!strings.Contains(strings.Join(r.WarningTexts(), "|"), "--report-interval") {
		t.Errorf("no intervals: ops %+v warnings %q", r.Ops, r.Warnings)
	}
	// Start unknown: the totals only for a window without warm-up at least
	// as long as the run, with a warning.
	noStart := *c
	noStart.Started = time.Time{}
	r = clientRecord(at(0), 9.2, 0)
	ApplyClient(r, &noStart, opClientEvents)
	if r.Ops.Count != 450 || !strings.Contains(strings.Join(r.WarningTexts(), "|"), "assumes") {
		t.Errorf("unknown start: ops %+v warnings %q", r.Ops, r.Warnings)
	}
	r = clientRecord(at(0), 5, 1)
	ApplyClient(r, &noStart, opClientEvents)
	if r.Ops.Count != 0 || len(r.Warnings) != 1 {
		t.Errorf("unknown start after a warm-up: ops %+v warnings %q", r.Ops, r.Warnings)
	}

	// A server op source is left alone.
	r = clientRecord(at(0), 9.5, 0)
	r.Ops = record.Ops{Source: "Questions", Count: 100, Per: 1}
	ApplyClient(r, c, "")
	if r.Ops.Count != 100 || r.Client != c {
		t.Errorf("server op: %+v", r.Ops)
	}
}

func TestScrubArgs(t *testing.T) {
	in := []string{"sysbench", "--mysql-password=sbtest", "--pgsql-password", "pw2", "--mysql-user=u", "perfbench",
		"--password", "x y", "--password=", "mysql", "-psecret", "run"}
	want := []string{"sysbench", "--mysql-password=***", "--pgsql-password", "***", "--mysql-user=u", "perfbench",
		"--password", "***", "--password=***", "mysql", "-p***", "run"}
	if got := ScrubArgs(in); !reflect.DeepEqual(got, want) {
		t.Errorf("ScrubArgs:\n got %q\nwant %q", got, want)
	}
	if in[1] != "--mysql-password=sbtest" {
		t.Error("ScrubArgs changed its input")
	}
}

func TestDefaultEvents(t *testing.T) {
	// No hardware PMU: the software set.
	spec, why := DefaultEvents(&perfevent.System{}, 1, nil)
	if spec != "task-clock,context-switches,cpu-migrations,page-faults" || !strings.Contains(why, "no hardware PMU") {
		t.Errorf("no PMU: %q, %q", spec, why)
	}
	// A core PMU that counts all but branch-misses.
	sys := &perfevent.System{PMUs: []*perfevent.PMU{{Name: "cpu", Type: 4, Core: true}}}
	probe := func(e perfevent.Event, pid int) error {
		if e.Name == "branch-misses" {
			return perfevent.ErrNotSupported
		}
		return nil
	}
	spec, why = DefaultEvents(sys, 1, probe)
	if spec != "cycles,instructions,cache-references,cache-misses,branches,task-clock,context-switches,cpu-migrations,page-faults" || !strings.Contains(why,
		"branch-misses") {
		t.Errorf("PMU without branch-misses: %q, %q", spec, why)
	}
	// A PMU that opens nothing.
	spec, _ = DefaultEvents(sys, 1, func(perfevent.Event, int) error { return perfevent.ErrNotSupported })
	if spec != "task-clock,context-switches,cpu-migrations,page-faults" {
		t.Errorf("PMU opening nothing: %q", spec)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s differs from the golden file; see %s.got (go test -update rewrites it)", name, path)
	}
}

func TestWriteText(t *testing.T) {
	perOp := func(v float64) *float64 { return &v }
	r := record.New(record.KindStat)
	r.Window = record.Window{Seconds: 10, Warmup: 2}
	r.Server = &record.Server{Pid: 4121, Version: "10.11.6-MariaDB"}
	r.Ops = record.Ops{Source: "Questions", Count: 200000, Per: 1, Counted: true}
	r.Counters = []record.Counter{
		{Event: "cycles", Group: 1, Raw: 4e9, Enabled: 1e10, Running: 1e10, Value: 4e9, Status: record.StatusCounted, PerOp: perOp(20000)},
		{Event: "instructions", Group: 1, Raw: 5e9, Enabled: 1e10, Running: 1e10, Value: 5e9, Status: record.StatusCounted, PerOp: perOp(25000)},
		{Event: "cache-misses", Group: 2, Raw: 2.5e6, Enabled: 1e10, Running: 5e9, Value: 5e6, Status: record.StatusScaled, PerOp: perOp(25)},
		{Event: "LLC-load-misses", Status: record.StatusNotSupported, Reason: "the PMU does not have this event"},
		{Event: "task-clock", Raw: 9e9, Enabled: 9e9, Running: 9e9, Value: 9e9, Status: record.StatusCounted, Unit: "ns", PerOp: perOp(45000)},
		{Event: "context-switches", Raw: 210000, Enabled: 9e9, Running: 9e9, Value: 210000, Status: record.StatusCounted, PerOp: perOp(1.05)},
		{Event: "major-faults", Enabled: 9e9, Status: record.StatusNotCounted, Reason: "enabled but never scheduled on the PMU"},
		{Event: "cpu-migrations", Raw: 4, Enabled: 9e9, Running: 9e9, Value: 4, Status: record.StatusCounted, PerOp: perOp(2e-05)},
		{Event: "page-faults", Raw: 0, Enabled: 9e9, Running: 9e9, Value: 0, Status: record.StatusCounted, PerOp: perOp(0)},
	}
	r.Roles = []record.Role{
		{Name: "connection", Threads: 2, Counters: []record.Counter{
			{Event: "cycles", Value: 3e9, Status: record.StatusCounted}, {Event: "instructions", Value: 4e9, Status: record.StatusCounted},
			{Event: "cache-misses", Value: 4e6, Raw: 2e6, Enabled: 8e9, Running: 4e9, Status: record.StatusScaled},
			{Event: "LLC-load-misses", Status: record.StatusNotSupported},
			{Event: "task-clock", Value: 8e9, Status: record.StatusCounted}, {Event: "context-switches", Value: 200000, Status: record.StatusCounted},
			{Event: "major-faults", Status: record.StatusNotCounted},
			{Event: "cpu-migrations", Value: 3, Status: record.StatusCounted}, {Event: "page-faults", Value: 0, Status: record.StatusCounted},
		}},
		{Name: "other-background", Threads: 11, Counters: []record.Counter{
			{Event: "cycles", Value: 1e9, Status: record.StatusCounted}, {Event: "instructions", Value: 1e9, Status: record.StatusCounted},
			{Event: "cache-misses", Value: 1e6, Raw: 5e5, Enabled: 2e9, Running: 1e9, Status: record.StatusScaled},
			{Event: "LLC-load-misses", Status: record.StatusNotSupported},
			{Event: "task-clock", Value: 1e9, Status: record.StatusCounted}, {Event: "context-switches", Value: 10000, Status: record.StatusCounted},
			{Event: "major-faults", Status: record.StatusNotCounted},
			{Event: "cpu-migrations", Value: 1, Status: record.StatusCounted}, {Event: "page-faults", Value: 0, Status: record.StatusCounted},
		}},
	}
	// Planned every 3 s; the second interval lasted 7 s (> 4.5 s): a stall.
	r.Series = []record.Point{
		{T: 3, Seconds: 3, Ops: 90000, CPUSeconds: 4.4, Counters: map[string]float64{"cycles": 1.9e9, "instructions": 2.4e9,
			"cache-misses": 2.4e6, "task-clock": 4.4e9, "context-switches": 100000, "cpu-migrations": 1, "page-faults": 0}},
		{T: 10, Seconds: 7, Ops: 110000, CPUSeconds: 4.6, Counters: map[string]float64{"cycles": 2.1e9, "instructions": 2.6e9,
			"cache-misses": 2.6e6, "task-clock": 4.6e9, "context-switches": 110000, "cpu-migrations": 3, "page-faults": 0}},
	}
	r.Warnings = []record.Warning{{Code: record.WarnMultiplexed, Events: []string{"cache-misses"}, Text: "cache-misses was " +
		"multiplexed: counted 50.0% of the time, value scaled"}}
	var b bytes.Buffer
	if err := WriteText(&b, r, TextOptions{Interval: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// Hand-checked facts, independent of the layout.
	for _, want := range []string{
		"ops: 200,000 Questions (20,000/s)",
		"IPC 1.250 instructions per cycle",                                 // 5e9 / 4e9
		"cache-misses MPKI 1.000 per 1,000 instructions (from multiplexed", // 1000 × 5e6 / 5e9
		"<not supported>",
		"<not counted>",
		"scaled (running 50.0%)",
		"9,000,000,000 ns",
		"warning: cache-misses was multiplexed",
		"0.00002000", // 4 / 200,000, decimal like its neighbours
		"ends at (s)",
		"7.000 (stall)",
		"(stall): the interval lasted more than 1.5x the planned 3 s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "LLC-load-misses MPKI") || strings.Contains(out, "major-faults MPKI") {
		t.Errorf("a ratio of an unmeasured event was printed:\n%s", out)
	}
	if strings.Contains(out, "e-0") || strings.Contains(out, "3.000 (stall)") {
		t.Errorf("exponent notation, or a regular interval flagged:\n%s", out)
	}
	golden(t, "text.golden", b.Bytes())
}

// TestWriteTextOps: the op line tells a count of 0 from no count.
func TestWriteTextOps(t *testing.T) {
	for _, c := range []struct {
		name    string
		ops     record.Ops
		outcome record.Outcome
		warn    string
		want    string
	}{
		{"idle server", record.Ops{Source: "Questions", Per: 1, Counted: true}, record.OutcomeOK, "", "ops: 0 Questions in the window: no per-op values"},
		{"variable gone", record.Ops{Source: "Com_select", Per: 1}, record.OutcomeOK, "no op count: the server has no " +
			"Com_select at the window's end", "ops: Com_select not counted (see the warnings): no per-op values"},
		{"client short", record.Ops{Source: "client.queries", Per: 1}, record.OutcomeOK, "no client.queries count for the " +
			"window: ...", "ops: client.queries not counted (see the warnings): no per-op values"},
		{"failed", record.Ops{}, record.OutcomeFailed, "", "ops: not counted (the window failed): no per-op values"},
		{"plain process", record.Ops{}, record.OutcomeOK, "", "ops: none (no connection to the server): no per-op values"},
	} {
		r := record.New(record.KindStat)
		r.Window.Seconds = 2
		r.Ops, r.Outcome = c.ops, c.outcome
		if c.warn != "" {
			r.Warnings = []record.Warning{{Code: record.WarnOpsNotCounted, Text: c.warn}}
		}
		var b bytes.Buffer
		if err := WriteText(&b, r, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "\n"+c.want+"\n") {
			t.Errorf("%s: want %q in\n%s", c.name, c.want, b.String())
		}
	}
}

func TestPerOpFormat(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 25000: "25,000", 12345.6: "12,346", 250: "250.0", 25: "25.000", 1.05: "1.050",
		0.5: "0.5000", 0.04764: "0.04764", 4.764e-4: "0.0004764", 2.027e-05: "0.00002027", -0.25: "-0.2500",
	} {
		if got := perOp(v); got != want {
			t.Errorf("perOp(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestApplyClientCutShort: a client stopped before its final report has no
// totals; its intervals give no count either when they leave a fifth of its
// run out. Never a zero total.
func TestApplyClientCutShort(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := &record.Client{Tool: "sysbench", Started: t0, Seconds: 2.5, ExitCode: -1,
		Intervals: []record.Interval{{At: 1, QPS: 1000}, {At: 2, QPS: 3000}}}
	r := clientRecord(t0.Add(-10*time.Millisecond), 2.52, 0)
	ApplyClient(r, c, opClientQueries)
	// [0, 1] at 1000 and [1, 2] at 3000; the last half second has no line:
	// 80% of the run covered.
	if r.Ops.Count != 0 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].Text, "cover only 80%") {
		t.Errorf("ops %+v warnings %q", r.Ops, r.Warnings)
	}
}

// TestClientGaps: interval lines further apart than 1.5 times the usual
// spacing are a stall of the client or the machine.
func TestClientGaps(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	c := &record.Client{Tool: "sysbench", Started: t0, Seconds: 9}
	for _, s := range []float64{1, 2, 3, 6, 7, 8, 9} {
		c.Intervals = append(c.Intervals, record.Interval{At: s, QPS: 100})
	}
	r := clientRecord(at(2), 5, 2)
	ApplyClient(r, c, "")
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].Text, "jump [3s] to [6s] where they come every 1 s") {
		t.Errorf("gap in the window: %q", r.Warnings)
	}
	// The same gap before the window opened: nothing to say.
	r = clientRecord(at(6.5), 2, 6.5)
	ApplyClient(r, c, "")
	if len(r.Warnings) != 0 {
		t.Errorf("gap before the window: %q", r.Warnings)
	}
	// Regular lines (the last one short: the run's end) are no gap.
	even := &record.Client{Tool: "sysbench", Started: t0, Seconds: 4.5, Intervals: []record.Interval{{At: 1}, {At: 2}, {At: 3}, {At: 4}, {At: 4.5}}}
	if g := clientGaps(even, at(0), at(5)); g != nil {
		t.Errorf("regular lines: %q", g)
	}
}

func TestStallWarnings(t *testing.T) {
	// The window of the report: planned 2 s, lasted 3.89 s; its first 1 s
	// interval ended at 3.89 s.
	pts := []record.Point{{T: 3.89, Seconds: 3.89}, {T: 3.891, Seconds: 0.001}}
	got := stallWarnings(2*time.Second, 3.891, time.Second, pts, ownReading{})
	if len(got) != 2 || !strings.HasPrefix(got[0], "the window lasted 3.89 s for a planned 2 s: the machine or the server "+
		"stalled; numbers per second are unreliable, numbers per op are still counted") ||
		!strings.Contains(got[1], "1 series interval of a planned 1 s lasted over 1.5x that (3.89 s ending at 3.89 s)") {
		t.Errorf("stalled window: %q", got)
	}
	// Over the plan by more than 25% but not 0.5 s, or by 0.5 s but not
	// 25%: no warning. Intervals up to 1.5× the plan: none.
	for _, c := range []struct {
		planned time.Duration
		secs    float64
	}{{time.Second, 1.4}, {10 * time.Second, 12.4}, {10 * time.Second, 10.6}, {0, 50}} {
		if got := stallWarnings(c.planned, c.secs, 0, nil, ownReading{}); got != nil {
			t.Errorf("planned %s lasted %.1f s: %q", c.planned, c.secs, got)
		}
	}
	if got := stallWarnings(2*time.Second, 2.6, 0, nil, ownReading{}); len(got) != 1 {
		t.Errorf("planned 2 s lasted 2.6 s: %q", got)
	}
	pts = []record.Point{{T: 1, Seconds: 1}, {T: 2.5, Seconds: 1.5}, {T: 4.1, Seconds: 1.6}, {T: 6, Seconds: 1.9}, {T: 8,
		Seconds: 2}, {T: 10, Seconds: 2}, {T: 10.2, Seconds: 0.2}}
	got = stallWarnings(0, 10.2, time.Second, pts, ownReading{})
	if len(got) != 1 || !strings.HasPrefix(got[0], "4 series intervals") || !strings.Contains(got[0], "(1.60 s ending at "+
		"4.10 s, 1.90 s ending at 6.00 s, 2.00 s ending at 8.00 s and 1 more)") {
		t.Errorf("long intervals: %q", got)
	}
}

// A window that perfbench's own reading kept open past its plan says so,
// not that the machine stalled; an overrun its reading does not explain is
// still a stall.
func TestStallWarningsOwnReading(t *testing.T) {
	// Planned 0.2 s, lasted 0.45 s; the reads after the start counters
	// took 0.41 s (0.21 s past the plan), those before the end counters
	// 0.02 s: 0.23 s of the 0.25 s over.
	own := ownReading{startTook: 410 * time.Millisecond, beforeEnd: 20 * time.Millisecond, threads: 5001}
	got := stallWarnings(200*time.Millisecond, 0.45, 0, nil, own)
	want := "the window lasted 0.45 s for a planned 0.2 s: perfbench's own reading kept it open 0.23 s longer (the reads " +
		"after its start counters (/proc of 5001 threads among them) took 0.41 s, the reads before its end counters 0.02 s); " +
		"numbers per second are unreliable, numbers per op are still counted"
	if len(got) != 1 || got[0] != want {
		t.Errorf("own reading:\n got %q\nwant %q", got, want)
	}
	// 3 s planned, 17.2 s lasted: a start edge of 16 s explains it; one
	// of 1 s does not (0 s late), so the machine stalled.
	got = stallWarnings(3*time.Second, 17.2, 0, nil, ownReading{startTook: 16 * time.Second, beforeEnd: 100 * time.Millisecond})
	if len(got) != 1 || !strings.Contains(got[0], "perfbench's own reading kept it open 13.10 s longer") || strings.Contains(got[0], "stalled") {
		t.Errorf("16 s start edge: %q", got)
	}
	got = stallWarnings(3*time.Second, 17.2, 0, nil, ownReading{startTook: time.Second})
	if len(got) != 1 || !strings.Contains(got[0], "the machine or the server stalled") {
		t.Errorf("1 s start edge: %q", got)
	}
	// 10% over: nothing, whatever read it.
	if got := stallWarnings(200*time.Millisecond, 0.22, 0, nil, own); got != nil {
		t.Errorf("0.22 s of 0.2 s: %q", got)
	}
	// The first 1 s interval lasted 2.5 s while the start's reads took
	// 2.4 s: said once, not counted as a stall.
	pts := []record.Point{{T: 2.5, Seconds: 2.5}, {T: 3.5, Seconds: 1}}
	got = stallWarnings(0, 3.5, time.Second, pts, ownReading{startTook: 2400 * time.Millisecond})
	if len(got) != 1 || got[0] != "the first series interval of a planned 1 s lasted 2.50 s: perfbench's own reading at "+
		"the window's start took 2.40 s; that point's numbers per second are unreliable" {
		t.Errorf("first interval: %q", got)
	}
}

// A role whose threads ran while a hardware event was never scheduled on the
// PMU has no count for it: not counted, never a 0.
func TestSplitRolesNeverScheduled(t *testing.T) {
	r := perfevent.Reading{
		Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "instructions"}, Group: 1, Count: cnt(900, 2000, 1000), Value: 1800, Status: perfevent.StatusScaled},
		},
		Threads: []perfevent.ThreadCounts{
			{Tid: 1, Counts: []perfevent.Count{cnt(900, 1000, 1000)}},
			{Tid: 2, Counts: []perfevent.Count{cnt(0, 1000, 0)}},
		},
	}
	roles := map[int]string{1: mysqld.RoleConnection, 2: mysqld.RoleMain}
	got := splitRoles(r, byTid(roles))
	if len(got) != 2 {
		t.Fatalf("%d roles", len(got))
	}
	if c := got[0].Counters[0]; got[0].Name != "connection" || c.Status != record.StatusCounted || c.Value != 900 {
		t.Errorf("%s %+v", got[0].Name, c)
	}
	if c := got[1].Counters[0]; got[1].Name != "main" || c.Status != record.StatusNotCounted || c.Value != 0 || c.Reason == "" {
		t.Errorf("%s %+v", got[1].Name, c)
	}
}

func TestSysbenchTest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sysbench", "oltp_point_select", "--threads=2", "run"}, "oltp_point_select"},
		{[]string{"/usr/bin/sysbench", "--threads=2", "--mysql-password=x", "/usr/share/sysbench/oltp_read_only.lua", "run"}, "oltp_read_only"},
		{[]string{"sysbench", "--threads=2", "run"}, ""},
		{[]string{"mysqlslap", "oltp_point_select"}, ""},
		{nil, ""},
	} {
		if got := SysbenchTest(c.args); got != c.want {
			t.Errorf("SysbenchTest(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestRoleLogReusedTid: a thread that exited gave its tid to a new thread;
// the new thread does not take the dead one's role, nor the dead one the
// new one's.
func TestRoleLogReusedTid(t *testing.T) {
	l := newRoleLog(10)
	start := map[int]uint64{11: 500}
	l.startOf = func(pid, tid int) uint64 { return start[tid] }
	// Tid 11 serves a connection, then exits; a log thread gets tid 11.
	l.add(&mysqld.ThreadMap{Threads: []mysqld.Thread{{Tid: 11, Role: mysqld.RoleConnection}}})
	start[11] = 900
	l.add(&mysqld.ThreadMap{Threads: []mysqld.Thread{{Tid: 11, Role: "log"}}})
	if got := l.roleOf(perfevent.ThreadCounts{Tid: 11, Start: 500}); got != mysqld.RoleConnection {
		t.Errorf("the first thread 11: %q", got)
	}
	if got := l.roleOf(perfevent.ThreadCounts{Tid: 11, Start: 900}); got != "log" {
		t.Errorf("the second thread 11: %q", got)
	}
	// A thread 11 that started at another time was never listed.
	if got := l.roleOf(perfevent.ThreadCounts{Tid: 11, Start: 700}); got != roleUnattributed {
		t.Errorf("an unlisted thread 11: %q", got)
	}
}

// TestSplitRolesDescendants: the main thread counted twice has its own row
// and its descendants' (the connections it created inside the window); the
// roles add up to the total.
func TestSplitRolesDescendants(t *testing.T) {
	r := perfevent.Reading{
		Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "task-clock", Unit: "ns"}, Count: cnt(10100, 10100, 10100), Value: 10100, Status: perfevent.StatusCounted},
		},
		Threads: []perfevent.ThreadCounts{
			{Tid: 10, Counts: []perfevent.Count{cnt(100, 100, 100)}},
			{Tid: 10, Descendants: true, Counts: []perfevent.Count{cnt(9000, 9000, 9000)}},
			{Tid: 12, Counts: []perfevent.Count{cnt(1000, 1000, 1000)}},
		},
	}
	l := newRoleLog(10)
	l.startOf = func(pid, tid int) uint64 { return 0 }
	l.add(&mysqld.ThreadMap{Threads: []mysqld.Thread{{Tid: 10, Role: mysqld.RoleMain}, {Tid: 12, Role: "log"}}})
	got := splitRoles(r, l.roleOf)
	want := map[string][2]float64{"connection": {0, 9000}, "log": {1, 1000}, "main": {1, 100}}
	for _, role := range got {
		if w, ok := want[role.Name]; !ok || float64(role.Threads) != w[0] || role.Counters[0].Value != w[1] {
			t.Errorf("role %s: %d threads, %+v", role.Name, role.Threads, role.Counters[0])
		}
	}
	if len(got) != 3 {
		t.Errorf("roles %+v", got)
	}
	// An unknown count is unknown in every role, with the reason.
	r.Events[0].Status, r.Events[0].Missing, r.Events[0].Reason = perfevent.StatusNotCounted, "at the start of the window: ...", "at the start of the window: ..."
	for _, role := range splitRoles(r, l.roleOf) {
		if c := role.Counters[0]; c.Status != record.StatusNotCounted || c.Value != 0 || c.Raw != 0 || c.Reason != r.Events[0].Missing {
			t.Errorf("role %s with an unknown count: %+v", role.Name, c)
		}
	}
}

// TestInheritedNote: threads started inside the window make a roles
// warning about their roles, and about the connection role when the main
// thread may have created some that are not connections.
func TestInheritedNote(t *testing.T) {
	for _, c := range []struct {
		inside map[string]int
		roles  []string
		text   string
		others bool // the text says some are not connections
	}{
		{map[string]int{}, nil, "", false},
		{map[string]int{mysqld.RoleConnection: 3}, []string{"connection"}, "3 threads started inside the window (connection 3): ", false},
		{map[string]int{"innodb-purge": 1, "zz": 2}, []string{"innodb-purge", "zz", "connection"}, "3 threads started inside " +
			"the window (innodb-purge 1, zz 2): ", true},
		{map[string]int{roleUnattributed: 1, mysqld.RoleConnection: 1}, []string{"connection", "unattributed"}, "2 threads " +
			"started inside the window (connection 1, unattributed 1): ", true},
	} {
		w, ok := inheritedNote(c.inside)
		code := record.Code("")
		if ok {
			code = record.WarnRoles
		}
		if ok != (c.text != "") || w.Code != code || !reflect.DeepEqual(w.Roles, c.roles) || !strings.HasPrefix(w.Text, c.text) ||
			strings.Contains(w.Text, "of them are not connections") != c.others {
			t.Errorf("%v: %v %+v, want roles %q, text starting %q", c.inside, ok, w, c.roles, c.text)
		}
	}
}

// TestWasInterrupted: ctx ending interrupts a window only before its
// planned end (Duration not reached, Done not closed first); a window with
// no planned end ends by ctx as planned.
func TestWasInterrupted(t *testing.T) {
	done := make(chan struct{})
	for _, c := range []struct {
		name                        string
		ctxDone, doneFirst, partial bool
		w                           WindowSpec
		want                        bool
	}{
		{"ctx not done", false, false, false, WindowSpec{Duration: time.Second}, false},
		{"duration cut short", true, false, true, WindowSpec{Duration: time.Second}, true},
		{"duration reached, then ctx", true, false, false, WindowSpec{Duration: time.Second}, false},
		{"load ended first", true, true, false, WindowSpec{Done: done}, false},
		{"ctx before the load ended", true, false, false, WindowSpec{Done: done}, true},
		{"no planned end", true, false, false, WindowSpec{}, false},
	} {
		if got := wasInterrupted(c.ctxDone, c.doneFirst, c.w, c.partial); got != c.want {
			t.Errorf("%s: interrupted %v, want %v", c.name, got, c.want)
		}
	}
}

// TestApplyClientPer: a client op source with a per ("client.queries/10")
// is counted in the client's units and divided once, with the values per
// op.
func TestApplyClientPer(t *testing.T) {
	start := time.Unix(1000, 0)
	r := record.New(record.KindStat)
	r.Window = record.Window{Start: start.Add(-time.Second), End: start.Add(5 * time.Second), Seconds: 6}
	r.Counters = []record.Counter{{Event: "task-clock", Raw: 4e9, Enabled: 1, Running: 1, Value: 4e9, Status: record.StatusCounted}}
	c := &record.Client{Tool: "sysbench", Started: start, Seconds: 4, Queries: 2000}
	ApplyClient(r, c, "client.queries/10")
	// 2,000 queries inside the window, 10 to an op: 200 ops, 2e7 ns each.
	if r.Ops.Source != "client.queries" || r.Ops.Per != 10 || !r.Ops.Counted || r.Ops.Count != 200 {
		t.Fatalf("ops %+v, want 200 of 10 client.queries", r.Ops)
	}
	if p := r.Counters[0].PerOp; p == nil || *p != 2e7 {
		t.Errorf("task-clock per op %v, want 2e7", p)
	}
	if IsClientOp("client.queries/0") || IsClientOp("client.rows/2") || !IsClientOp("client.events/2.5") {
		t.Error("IsClientOp: a per of 0, an unknown count, or a fractional per read wrong")
	}
}

// TestWriteTextKernelCPU: perfbench stat prints the window's CPU time by
// the kernel's accounting, per op, what it leaves out, and task-clock's
// distance to it in percent and per context switch (hand-computed: 9.09 s
// against 9 s is 1.0% above, 90 ms over 210,000 switches 0.43 µs each).
func TestWriteTextKernelCPU(t *testing.T) {
	r := record.New(record.KindStat)
	r.Window = record.Window{Seconds: 10}
	r.Ops = record.Ops{Source: "Questions", Count: 200000, Per: 1, Counted: true}
	r.Counters = []record.Counter{{Event: "task-clock", Raw: 9.09e9, Enabled: 9.09e9, Running: 9.09e9, Value: 9.09e9, Status: record.StatusCounted, Unit: "ns"}}
	r.KernelCPU = &record.KernelCPU{Source: record.KernelCPUCgroup, Seconds: 9, Low: 8.99, High: 9.01, ContextSwitches: 210000, GapPerSwitch: 90e6 / 210000 / 1e3}
	var b strings.Builder
	if err := WriteText(&b, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "CPU 9,000 ms by the kernel's accounting (the cgroup's cpu.stat usage_usec), 45.000 µs per Questions; " +
		"task-clock 1.0% above it (+0.43 µs a context switch)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("text:\n%s\nwant the line %q", b.String(), want)
	}
	r.KernelCPU = &record.KernelCPU{Source: record.KernelCPUProcess, Seconds: 9.5, LeavesOut: record.KernelCPUNotWaited}
	r.Ops = record.Ops{}
	b.Reset()
	if err := WriteText(&b, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want = "CPU 9,500 ms by the kernel's accounting (the process's CPU clock and its children's), leaving out the children " +
		"not waited for; task-clock 4.3% below it\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("text:\n%s\nwant the line %q", b.String(), want)
	}
}
