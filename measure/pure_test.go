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
	for _, th := range threads {
		for i, c := range th.Counts {
			sums[i] = sums[i].Add(c)
		}
	}
	return perfevent.Reading{
		Events: []perfevent.EventCount{
			{Event: perfevent.Event{Name: "task-clock", Unit: "ns"}, Group: 1, Count: sums[0], Value: sums[0].Scaled(), Status: perfevent.StatusCounted},
			{Event: perfevent.Event{Name: "cycles"}, Status: perfevent.StatusNotSupported, Reason: "no hardware PMU"},
			{Event: perfevent.Event{Name: "cache-misses"}, Group: 2, Count: sums[2], Value: sums[2].Scaled(), Status: perfevent.StatusScaled},
		},
		Threads: threads,
	}
}

func TestSplitRoles(t *testing.T) {
	roles := map[int]string{100: mysqld.RoleMain, 101: mysqld.RoleConnection, 102: mysqld.RoleConnection, 104: mysqld.RoleInnoDBIO}
	got := SplitRoles(window(), func(tid int) string { return roles[tid] })
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
	// 9500: scaled 500 × 12000 / 9500.
	if c := conn.Counters[2]; c.Raw != 500 || c.Enabled != 12000 || c.Running != 9500 || c.Status != record.StatusScaled || c.Value != 500*12000.0/9500 {
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
		if ev.Status == perfevent.StatusCounted && value != ev.Value {
			t.Errorf("%s: role values sum to %v, total %v", ev.Event.Name, value, ev.Value)
		}
	}
	if SplitRoles(perfevent.Reading{}, nil) != nil {
		t.Error("a reading without threads (cgroup mode) has roles")
	}
}

func TestMergeRoles(t *testing.T) {
	start := &mysqld.ThreadMap{Threads: []mysqld.Thread{{Tid: 10, Role: mysqld.RoleMain}, {Tid: 11, Role: mysqld.RoleConnection}}}
	end := &mysqld.ThreadMap{Threads: []mysqld.Thread{{Tid: 11, Role: mysqld.RoleOther}, {Tid: 12, Role: mysqld.RoleLog}}}
	f := mergeRoles(10, start, end)
	// The start listing wins (the role the thread had when its counters
	// were read first); the end listing adds threads the start lacked.
	for tid, want := range map[int]string{10: "main", 11: "connection", 12: "log", 13: RoleUnattributed} {
		if got := f(tid); got != want {
			t.Errorf("role of %d = %q, want %q", tid, got, want)
		}
	}
	if got := mergeRoles(10, nil, nil)(10); got != mysqld.RoleMain {
		t.Errorf("leader without listings: %q", got)
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
	ApplyClient(r, c, OpClientQueries)
	if r.Ops != (record.Ops{Source: "client.queries", Count: 4500, Per: 1}) || len(r.Warnings) != 0 || r.Client != c {
		t.Errorf("whole run: ops %+v warnings %v", r.Ops, r.Warnings)
	}
	if p := r.Counters[0].PerOp; p == nil || *p != 5000.0/4500 || r.Counters[1].PerOp != nil {
		t.Errorf("per op: %v %v", r.Counters[0].PerOp, r.Counters[1].PerOp)
	}
	r = clientRecord(at(-0.2), 9.5, 0)
	ApplyClient(r, c, OpClientTransactions)
	if r.Ops.Count != 450 || r.Ops.Source != "client.transactions" {
		t.Errorf("transactions: %+v", r.Ops)
	}

	// A window after a warm-up, [2.5, 7]: half of interval 3 (300 qps)
	// and intervals 4 to 7 whole: 150 + 400 + 500 + 600 + 700.
	r = clientRecord(at(2.5), 4.5, 2.5)
	ApplyClient(r, c, OpClientQueries)
	if r.Ops.Count != 2350 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "approximate") || !strings.Contains(r.Warnings[0], "100% of the window") {
		t.Errorf("warm-up window: ops %+v warnings %q", r.Ops, r.Warnings)
	}
	// A window that runs past the client's last interval: [8, 10] is half
	// covered, interval 9 whole (900).
	r = clientRecord(at(8), 2, 8)
	ApplyClient(r, c, OpClientQueries)
	if r.Ops.Count != 900 || !strings.Contains(strings.Join(r.Warnings, "|"), "50% of the window") {
		t.Errorf("window past the run: ops %+v warnings %q", r.Ops, r.Warnings)
	}

	// Nothing to align with: no count, and a warning saying why.
	noIv := *c
	noIv.Intervals = nil
	r = clientRecord(at(2.5), 4.5, 2.5)
	ApplyClient(r, &noIv, OpClientQueries)
	if r.Ops.Count != 0 || r.Ops.Source != "client.queries" || r.Counters[0].PerOp != nil || !strings.Contains(strings.Join(r.Warnings, "|"), "--report-interval") {
		t.Errorf("no intervals: ops %+v warnings %q", r.Ops, r.Warnings)
	}
	// Start unknown: the totals only for a window without warm-up at least
	// as long as the run, with a warning.
	noStart := *c
	noStart.Started = time.Time{}
	r = clientRecord(at(0), 9.2, 0)
	ApplyClient(r, &noStart, OpClientEvents)
	if r.Ops.Count != 450 || !strings.Contains(strings.Join(r.Warnings, "|"), "assumes") {
		t.Errorf("unknown start: ops %+v warnings %q", r.Ops, r.Warnings)
	}
	r = clientRecord(at(0), 5, 1)
	ApplyClient(r, &noStart, OpClientEvents)
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
	in := []string{"sysbench", "--mysql-password=sbtest", "--pgsql-password", "pw2", "--mysql-user=u", "perfbench", "--password", "x y", "--password=", "mysql", "-psecret", "run"}
	want := []string{"sysbench", "--mysql-password=***", "--pgsql-password", "***", "--mysql-user=u", "perfbench", "--password", "***", "--password=***", "mysql", "-p***", "run"}
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
	if spec != "cycles,instructions,cache-references,cache-misses,branches,task-clock,context-switches,cpu-migrations,page-faults" || !strings.Contains(why, "branch-misses") {
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
	r.Ops = record.Ops{Source: "Questions", Count: 200000, Per: 1}
	r.Counters = []record.Counter{
		{Event: "cycles", Group: 1, Raw: 4e9, Enabled: 1e10, Running: 1e10, Value: 4e9, Status: record.StatusCounted, PerOp: perOp(20000)},
		{Event: "instructions", Group: 1, Raw: 5e9, Enabled: 1e10, Running: 1e10, Value: 5e9, Status: record.StatusCounted, PerOp: perOp(25000)},
		{Event: "cache-misses", Group: 2, Raw: 2.5e6, Enabled: 1e10, Running: 5e9, Value: 5e6, Status: record.StatusScaled, PerOp: perOp(25)},
		{Event: "LLC-load-misses", Status: record.StatusNotSupported, Reason: "the PMU does not have this event"},
		{Event: "task-clock", Raw: 9e9, Enabled: 9e9, Running: 9e9, Value: 9e9, Status: record.StatusCounted, Unit: "ns", PerOp: perOp(45000)},
		{Event: "context-switches", Raw: 210000, Enabled: 9e9, Running: 9e9, Value: 210000, Status: record.StatusCounted, PerOp: perOp(1.05)},
		{Event: "major-faults", Enabled: 9e9, Status: record.StatusNotCounted, Reason: "enabled but never scheduled on the PMU"},
	}
	r.Roles = []record.Role{
		{Name: "connection", Threads: 2, Counters: []record.Counter{
			{Event: "cycles", Value: 3e9, Status: record.StatusCounted}, {Event: "instructions", Value: 4e9, Status: record.StatusCounted},
			{Event: "cache-misses", Value: 4e6, Raw: 2e6, Enabled: 8e9, Running: 4e9, Status: record.StatusScaled}, {Event: "LLC-load-misses", Status: record.StatusNotSupported},
			{Event: "task-clock", Value: 8e9, Status: record.StatusCounted}, {Event: "context-switches", Value: 200000, Status: record.StatusCounted},
			{Event: "major-faults", Status: record.StatusNotCounted},
		}},
		{Name: "other-background", Threads: 11, Counters: []record.Counter{
			{Event: "cycles", Value: 1e9, Status: record.StatusCounted}, {Event: "instructions", Value: 1e9, Status: record.StatusCounted},
			{Event: "cache-misses", Value: 1e6, Raw: 5e5, Enabled: 2e9, Running: 1e9, Status: record.StatusScaled}, {Event: "LLC-load-misses", Status: record.StatusNotSupported},
			{Event: "task-clock", Value: 1e9, Status: record.StatusCounted}, {Event: "context-switches", Value: 10000, Status: record.StatusCounted},
			{Event: "major-faults", Status: record.StatusNotCounted},
		}},
	}
	r.Series = []record.Point{
		{T: 5, Seconds: 5, Ops: 90000, CPUSeconds: 4.4, Counters: map[string]float64{"cycles": 1.9e9, "instructions": 2.4e9, "cache-misses": 2.4e6, "task-clock": 4.4e9, "context-switches": 100000}},
		{T: 10, Seconds: 5, Ops: 110000, CPUSeconds: 4.6, Counters: map[string]float64{"cycles": 2.1e9, "instructions": 2.6e9, "cache-misses": 2.6e6, "task-clock": 4.6e9, "context-switches": 110000}},
	}
	r.Warnings = []string{"cache-misses was multiplexed: counted 50.0% of the time, value scaled"}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
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
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "LLC-load-misses MPKI") || strings.Contains(out, "major-faults MPKI") {
		t.Errorf("a ratio of an unmeasured event was printed:\n%s", out)
	}
	golden(t, "text.golden", b.Bytes())
}

// TestApplyClientCutShort: a client stopped before its final report has no
// totals; its intervals give the count, never a zero total.
func TestApplyClientCutShort(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := &record.Client{Tool: "sysbench", Started: t0, Seconds: 2.5, ExitCode: -1,
		Intervals: []record.Interval{{At: 1, QPS: 1000}, {At: 2, QPS: 3000}}}
	r := clientRecord(t0.Add(-10*time.Millisecond), 2.52, 0)
	ApplyClient(r, c, OpClientQueries)
	// [0, 1] at 1000 and [1, 2] at 3000; the last half second has no line.
	if r.Ops.Count != 4000 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "approximate") {
		t.Errorf("ops %+v warnings %q", r.Ops, r.Warnings)
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
	got := SplitRoles(r, func(tid int) string { return roles[tid] })
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
