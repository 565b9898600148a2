package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/importer/perfstat"
	"github.com/perfbench/perfbench/record"
)

// Expected values are typed from the fixture files under testdata/.

var fixed = func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

func ps(name string) string { return filepath.Join("..", "..", "testdata", "perfstat", name) }
func sb(name string) string { return filepath.Join("..", "..", "testdata", "sysbench", name) }

func counter(t *testing.T, r *record.Record, ev string) record.Counter {
	t.Helper()
	c, ok := r.Counter(ev)
	if !ok {
		t.Fatalf("record %s r%d has no %s", r.Step, r.Repeat, ev)
	}
	return c
}

func noProblems(t *testing.T, res *Result) {
	t.Helper()
	if len(res.Failures) > 0 || len(res.Warnings) > 0 {
		t.Fatalf("failures %v warnings %v", res.Failures, res.Warnings)
	}
}

func TestImportThreeAppendedRuns(t *testing.T) {
	res := PerfStat([]string{ps("append3.txt")}, Options{Version: "v1", Step: "point-query_range=100", Threads: 8, Ops: 1000, Now: fixed})
	noProblems(t, res)
	if len(res.Records) != 3 {
		t.Fatalf("%d records, want 3", len(res.Records))
	}
	cs := []float64{84213, 86141, 85076}
	el := []float64{1.002899728, 1.002127395, 1.002307794}
	for i, r := range res.Records {
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
		if r.Kind != record.KindImported || r.Repeat != i+1 || r.Threads != 8 || r.Window.Seconds != el[i] ||
			r.Ops != (record.Ops{Source: "given", Count: 1000, Counted: true}) {
			t.Errorf("record %d: kind %s repeat %d threads %d seconds %v ops %+v", i, r.Kind, r.Repeat, r.Threads, r.Window.Seconds, r.Ops)
		}
		c := counter(t, r, "context-switches")
		if c.Value != cs[i] || c.Raw != uint64(cs[i]) || c.Status != record.StatusCounted || c.RunningFraction() != 1 {
			t.Errorf("record %d context-switches %+v", i, c)
		}
		if r.Server == nil || r.Server.Pid != 11793 || r.Provenance.Origin["perf.target"] != "process id '11793'" || r.Source[0] != ps("append3.txt") {
			t.Errorf("record %d provenance %+v server %+v source %v", i, r.Provenance, r.Server, r.Source)
		}
	}
	if got := res.Records[1].Provenance.Origin["perf.started"]; got != "Mon Nov 30 14:30:01 2026" {
		t.Errorf("started %q", got)
	}
	if c := counter(t, res.Records[0], "task-clock"); c.Value != 1230750000 || c.Unit != "ns" {
		t.Errorf("task-clock %+v", c)
	}
}

func TestImportNotSupported(t *testing.T) {
	res := PerfStat([]string{ps("default.txt")}, Options{Version: "v", Step: "s", Ops: 1})
	for _, ev := range []string{"cycles", "instructions"} {
		c := counter(t, res.Records[0], ev)
		if c.Status != record.StatusNotSupported || c.Measured() || c.Value != 0 || c.Reason == "" {
			t.Errorf("%s: %+v", ev, c)
		}
	}
}

func TestImportMultiplexed(t *testing.T) {
	res := PerfStat([]string{ps("handmade-multiplexed.txt")}, Options{Version: "v", Step: "s", Ops: 1})
	r := res.Records[0]
	for ev, frac := range map[string]float64{"cycles": 0.625, "instructions": 0.75, "cache-misses": 0.3749} {
		c := counter(t, r, ev)
		if c.Status != record.StatusScaled || c.RunningFraction() != frac {
			t.Errorf("%s: status %s fraction %v, want %v", ev, c.Status, c.RunningFraction(), frac)
		}
	}
	c := counter(t, r, "cycles")
	// 1.002009961 s rounded to 10 µs, and 62.50% of it.
	if c.Value != 2845112930 || c.Enabled != 1002010000 || c.Running != 626256250 || c.Raw != 1778195581 {
		t.Errorf("cycles %+v", c)
	}
	if c := counter(t, r, "branch-misses"); c.Status != record.StatusNotCounted || c.Measured() {
		t.Errorf("branch-misses %+v", c)
	}
	if !strings.Contains(strings.Join(r.WarningTexts(), "\n"), "cycles ran 62.50% of the time") {
		t.Errorf("warnings %v", r.Warnings)
	}
	res = PerfStat([]string{ps("handmade-multiplexed-csv.txt")}, Options{Version: "v", Step: "s", Ops: 1, Seconds: 1})
	c = counter(t, res.Records[0], "cycles")
	if c.Running != 498370000 || c.Enabled != 797392000 || c.RunningFraction() != 0.625 || c.Raw != 1778195581 {
		t.Errorf("csv cycles %+v", c)
	}
}

func TestImportOpsFromSysbench(t *testing.T) {
	res := PerfStat([]string{ps("append3.txt")}, Options{Version: "v", Step: "s", Sysbench: sb("oltp_point_select.t1.p99.txt")})
	if len(res.Failures) > 0 || len(res.Records) != 3 {
		t.Fatalf("failures %v, %d records", res.Failures, len(res.Records))
	}
	r := res.Records[0]
	want := 31982 / 2.0011 * 1.002899728 // queries / total time × perf window
	if r.Ops.Source != "client.queries" || math.Abs(r.Ops.Count-want) > 1e-6 || !r.Ops.Estimated {
		t.Errorf("ops %+v, want %v, marked estimated", r.Ops, want)
	}
	if r.Client == nil || !r.Client.Whole || r.Client.Queries != 31982 || r.Threads != 1 || len(r.Source) != 2 {
		t.Errorf("client %+v threads %d source %v", r.Client, r.Threads, r.Source)
	}
}

func TestImportEventsDiffer(t *testing.T) {
	res := PerfStat([]string{ps("append-events-differ.txt")}, Options{Version: "v", Step: "s", Ops: 1})
	if len(res.Records) != 2 || len(res.Failures) > 0 {
		t.Fatalf("%d records, failures %v", len(res.Records), res.Failures)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, ps("append-events-differ.txt")+":11: events differ between runs") {
		t.Errorf("warnings %q", w)
	}
	if len(res.Records[1].Warnings) == 0 {
		t.Error("the second run's Record does not carry the warning")
	}
}

func TestImportEventGroups(t *testing.T) {
	// One event group per window, as the legacy scripts measured: two files
	// cut from default.txt, each with its own events.
	def, err := os.ReadFile(ps("default.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var a, b []string
	for _, l := range strings.Split(string(def), "\n") {
		switch {
		case strings.Contains(l, "cycles") || strings.Contains(l, "instructions") || strings.Contains(l, "duration_time"):
		case strings.Contains(l, "task-clock") || strings.Contains(l, "context-switches"):
			a = append(a, l)
		case strings.Contains(l, "migrations") || strings.Contains(l, "page-faults"):
			b = append(b, l)
		default:
			a, b = append(a, l), append(b, l)
		}
	}
	dir := t.TempDir()
	fa, fb := filepath.Join(dir, "g1"), filepath.Join(dir, "g2")
	os.WriteFile(fa, []byte(strings.Join(a, "\n")), 0o644)
	os.WriteFile(fb, []byte(strings.Join(b, "\n")), 0o644)
	res := PerfStat([]string{fa, fb}, Options{Version: "v", Step: "s", Ops: 1})
	if len(res.Records) != 1 || len(res.Failures) > 0 {
		t.Fatalf("%d records, failures %v", len(res.Records), res.Failures)
	}
	r := res.Records[0]
	if len(r.Counters) != 4 || counter(t, r, "context-switches").Group != 1 || counter(t, r, "page-faults").Group != 2 {
		t.Errorf("counters %+v", r.Counters)
	}
	if !strings.Contains(strings.Join(r.WarningTexts(), "\n"), "mix windows") {
		t.Errorf("warnings %v", r.Warnings)
	}
}

func TestImportIntervals(t *testing.T) {
	res := PerfStat([]string{ps("interval-csv.txt")}, Options{Version: "v", Step: "s", Threads: 1, Ops: 1})
	noProblems(t, res)
	if len(res.Records) != 1 {
		t.Fatalf("%d records", len(res.Records))
	}
	r := res.Records[0]
	if c := counter(t, r, "context-switches"); c.Value != 87162+58803+83731 || c.Running != 1253280039+907361455+1214480174 {
		t.Errorf("context-switches %+v", c)
	}
	if r.Window.Seconds != 3.001586820 || len(r.Series) != 3 || r.Series[2].Counters["context-switches"] != 83731 || r.Series[1].T != 2.002363909 {
		t.Errorf("window %v series %+v", r.Window.Seconds, r.Series)
	}
	if _, ok := r.Series[0].Counters["cycles"]; ok {
		t.Error("a not supported event has a value in the series")
	}
}

func TestImportSysbench(t *testing.T) {
	res := Sysbench([]string{filepath.Join("..", "..", "testdata", "import-dir", "base", "sb.o.point-query.range100.pk1")}, Options{})
	noProblems(t, res)
	r := res.Records[0]
	if r.Version != "base" || r.Step != "point-query_range=100" || r.Threads != 1 || r.Window.Seconds != 3.0004 ||
		r.Ops != (record.Ops{Source: "client.queries", Count: 113350, Counted: true}) || r.Client.Queries != 113350 || r.Client.Whole {
		t.Errorf("record %+v", r)
	}
	res = Sysbench([]string{sb("interrupted.txt"), sb("lua-fatal.txt")}, Options{Version: "v", Step: "s"})
	if len(res.Records) != 2 || len(res.Failures) > 0 {
		t.Fatalf("%d records, failures %v", len(res.Records), res.Failures)
	}
	if r := res.Records[0]; r.Outcome != record.OutcomePartial || r.Window.Seconds != 2 || len(r.Client.Intervals) != 2 || r.Repeat != 1 {
		t.Errorf("interrupted %+v", r)
	}
	if r := res.Records[1]; r.Outcome != record.OutcomeFailed || !strings.Contains(r.Error, "Thread initialization failed") || r.Repeat != 2 {
		t.Errorf("fatal %+v", r)
	}
	// No labels and a name that does not tell them.
	res = Sysbench([]string{sb("interrupted.txt")}, Options{})
	if len(res.Failures) != 1 || !errors.Is(res.Failures[0], errNoLabel) {
		t.Errorf("failures %v", res.Failures)
	}
}

func TestImportDir(t *testing.T) {
	res := Dir(filepath.Join("..", "..", "testdata", "import-dir"), DirOptions{Options: Options{Now: fixed}})
	if len(res.Failures) > 0 || len(res.Records) != 4 {
		t.Fatalf("%d records, failures %v warnings %v", len(res.Records), res.Failures, res.Warnings)
	}
	type key struct {
		v   string
		rep int
		cs  float64
		sec float64
	}
	want := []key{{"base", 1, 34603, 1.001574806}, {"base", 2, 28263, 1.002581804}, {"new", 1, 36532, 1.001812135}, {"new", 2, 43096, 1.000582945}}
	for i, r := range res.Records {
		w := want[i]
		if r.Version != w.v || r.Repeat != w.rep || r.Step != "point-query_range=100" || r.Threads != 1 || r.Window.Seconds != w.sec {
			t.Errorf("record %d: %s %s r%d t%d %v", i, r.Version, r.Step, r.Repeat, r.Threads, r.Window.Seconds)
		}
		if c := counter(t, r, "context-switches"); c.Value != w.cs {
			t.Errorf("record %d: context-switches %v", i, c.Value)
		}
		if r.Client == nil || r.Ops.Source != "client.queries" || r.Provenance.Origin["file.pk"] != "1" {
			t.Errorf("record %d: client %v ops %+v origin %v", i, r.Client, r.Ops, r.Provenance.Origin)
		}
	}
	// base: 113350 queries in 3.0004 s.
	if got, want := res.Records[0].Ops.Count, 113350/3.0004*1.001574806; math.Abs(got-want) > 1e-6 {
		t.Errorf("base ops %v, want %v", got, want)
	}
	// Another naming scheme.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "8.0.39"), 0o755)
	copyFile(t, ps("append3.txt"), filepath.Join(dir, "8.0.39", "point-query.r100.s1.perf"))
	n, err := NewNaming(`^(?P<version>[^/]+)/(?P<step>[a-z.-]+)\.r(?P<range>\d+)\.s(?P<sample>\d+)\.perf$`)
	if err != nil {
		t.Fatal(err)
	}
	res = Dir(dir, DirOptions{Options: Options{Ops: 10}, Naming: n})
	if len(res.Records) != 3 || res.Records[2].Version != "8.0.39" || res.Records[2].Step != "point-query_range=100" || res.Records[2].Repeat != 3 {
		t.Errorf("pattern: %d records, failures %v", len(res.Records), res.Failures)
	}
	if _, err := NewNaming(`(?P<x>a)`); !errors.Is(err, errBadPattern) {
		t.Errorf("pattern without step: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImportFailuresGoOn(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.txt")
	res := PerfStat([]string{missing, sb("oltp_read_only.t1.nopct.txt"), ps("append3.txt")}, Options{Version: "v", Step: "s", Ops: 1})
	if len(res.Records) != 3 || len(res.Failures) != 2 {
		t.Fatalf("%d records, failures %v", len(res.Records), res.Failures)
	}
	if !strings.Contains(res.Failures[0].Error(), "nope.txt") || !errors.Is(res.Failures[1], perfstat.ErrNoCounters) ||
		!strings.Contains(res.Failures[1].Error(), "oltp_read_only.t1.nopct.txt") {
		t.Errorf("failures %v", res.Failures)
	}
	// Truncated text: the run is kept as partial.
	b, _ := os.ReadFile(ps("default.txt"))
	cut := filepath.Join(t.TempDir(), "cut.txt")
	os.WriteFile(cut, b[:strings.Index(string(b), "seconds time")-20], 0o644)
	res = PerfStat([]string{cut}, Options{Version: "v", Step: "s", Ops: 1})
	if len(res.Records) != 1 || res.Records[0].Outcome != record.OutcomePartial || !strings.Contains(strings.Join(res.Warnings, "\n"), "cut.txt:") {
		t.Errorf("truncated: %d records, warnings %v", len(res.Records), res.Warnings)
	}
}

// TestNotPerfStatRefused: sysbench output of a failed run, whose
// "(last message repeated 1 times)" once read as a counter "times)", is
// refused whole: one failure naming the file, no Record, no line warnings.
func TestNotPerfStatRefused(t *testing.T) {
	for _, name := range []string{"lua-fatal.txt", "oltp_read_only.t1.nopct.txt"} {
		res := PerfStat([]string{sb(name)}, Options{Version: "v", Step: "s", Ops: 100})
		if len(res.Records) != 0 || len(res.Failures) != 1 || len(res.Warnings) != 0 {
			t.Fatalf("%s: %d records, failures %v, warnings %v", name, len(res.Records), res.Failures, res.Warnings)
		}
		if err := res.Failures[0]; !errors.Is(err, perfstat.ErrNoCounters) || !strings.Contains(err.Error(), name+": not perf stat output") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestWrite(t *testing.T) {
	res := PerfStat([]string{ps("append3.txt")}, Options{Version: "v1", Step: "point-query_range=100", Threads: 8, Ops: 1000, Now: fixed})
	dir := t.TempDir()
	write := func(force bool) (int, []error) {
		w := &Writer{Dir: dir, Force: force}
		var errs []error
		for _, r := range res.Records {
			if err := w.Write(r); err != nil {
				errs = append(errs, err)
			}
		}
		return w.Written, errs
	}
	if n, errs := write(false); n != 3 || len(errs) > 0 {
		t.Fatal(n, errs)
	}
	loaded, problems, err := record.Load([]string{dir}, false)
	if err != nil || len(problems) > 0 || len(loaded) != 3 {
		t.Fatalf("load: %d records, %v %v", len(loaded), problems, err)
	}
	if c, _ := loaded[2].Record.Counter("context-switches"); c.Value != 85076 || loaded[2].Record.Repeat != 3 {
		t.Errorf("read back %+v", loaded[2].Record)
	}
	n, errs := write(false)
	if n != 0 || len(errs) != 3 || !strings.Contains(errs[0].Error(), "file exists") {
		t.Errorf("second write: %d written, %v", n, errs)
	}
	if n, errs := write(true); n != 3 || len(errs) > 0 {
		t.Errorf("forced write: %d written, %v", n, errs)
	}
}

// TestImportThreads: with --ops and nothing that says the thread count, the
// Records keep 0 (unknown) and the import says so once; a perf stat run of a
// sysbench command gives its --threads.
func TestImportThreads(t *testing.T) {
	res := PerfStat([]string{ps("append3.txt")}, Options{Version: "v1", Step: "s", Ops: 1000})
	if len(res.Records) != 3 || len(res.Failures) > 0 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "3 of 3 records have no thread count") {
		t.Fatalf("%d records, failures %v, warnings %q", len(res.Records), res.Failures, res.Warnings)
	}
	for _, r := range res.Records {
		if r.Threads != 0 {
			t.Errorf("repeat %d: threads %d, want 0 (unknown)", r.Repeat, r.Threads)
		}
	}
	dir := t.TempDir()
	run := func(target string) *Result {
		path := filepath.Join(dir, "perf.txt")
		text := "\n Performance counter stats for '" + target + "':\n\n" +
			"          1,230.75 msec task-clock                #    1.227 CPUs utilized\n" +
			"            84,213      context-switches          #   68.424 K/sec\n\n" +
			"       1.002899728 seconds time elapsed\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return PerfStat([]string{path}, Options{Version: "v1", Step: "s", Ops: 1000})
	}
	for target, want := range map[string]int{
		"sysbench oltp_point_select --threads=8 --time=10 run": 8,
		"/usr/bin/sysbench --num-threads=4 oltp.lua run":       4,
		"sysbench oltp_point_select run":                       1, // sysbench's default
		"sleep 10":                                             0,
	} {
		res := run(target)
		if len(res.Records) != 1 || res.Records[0].Threads != want || (want == 0) != (len(res.Warnings) == 1) {
			t.Errorf("%q: records %d, threads %v, warnings %q; want threads %d", target, len(res.Records), func() int {
				if len(res.Records) > 0 {
					return res.Records[0].Threads
				}
				return -1
			}(), res.Warnings, want)
		}
	}
}

// emptyPidHeader is perf stat output whose header names a process with an
// empty id: once a slice out of range in the importer.
const emptyPidHeader = "\n Performance counter stats for process id ':\n\n 683.59 msec task-clock\n"

// TestImportEmptyPidHeader: the run is imported (without a server pid), by
// the perf-stat form and by the dir form.
func TestImportEmptyPidHeader(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "v1"), 0o755)
	path := filepath.Join(dir, "v1", "sb.perf.hw.point-query.range100.pk1.1")
	if err := os.WriteFile(path, []byte(emptyPidHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(form string, res *Result) {
		t.Helper()
		if len(res.Records) != 1 || len(res.Failures) != 0 {
			t.Fatalf("%s: %d records, failures %v", form, len(res.Records), res.Failures)
		}
		r := res.Records[0]
		if c := counter(t, r, "task-clock"); c.Value != 683590000 || r.Server != nil || r.Provenance.Origin["perf.target"] != "process id '" {
			t.Errorf("%s: task-clock %+v, server %+v, origin %v", form, c, r.Server, r.Provenance.Origin)
		}
	}
	check("perf-stat", PerfStat([]string{path}, Options{Version: "v1", Step: "s", Ops: 1}))
	check("dir", Dir(dir, DirOptions{Options: Options{Ops: 1}}))
	for target, want := range map[string]int{"process id '4121'": 4121, "process id ''": 0, "process id '": 0, "process id '-3'": 0, "'sleep 1'": 0} {
		if got := targetPid(target); got != want {
			t.Errorf("targetPid(%q) = %d, want %d", target, got, want)
		}
	}
}

// TestImportEmptyFile: an empty file is a failure naming it, not a
// successful import of nothing.
func TestImportEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := PerfStat([]string{path}, Options{Version: "v", Step: "s", Ops: 1})
	if len(res.Records) != 0 || len(res.Failures) != 1 || !errors.Is(res.Failures[0], errEmpty) || !strings.Contains(res.Failures[0].Error(), "empty.txt") {
		t.Errorf("%d records, failures %v", len(res.Records), res.Failures)
	}
}

// intervalText is a perf stat -I run of n one-second intervals in text
// form: task-clock every interval, context-switches n-i, and page-faults
// <not counted> in interval 2.
func intervalText(n int) string {
	var b strings.Builder
	b.WriteString("#           time             counts unit events\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%16.9f %18s msec task-clock\n", float64(i), "100.00")
		fmt.Fprintf(&b, "%16.9f %18d      context-switches\n", float64(i), n-i)
		pf := "1"
		if i == 2 {
			pf = "<not counted>"
		}
		fmt.Fprintf(&b, "%16.9f %18s      page-faults\n", float64(i), pf)
	}
	return b.String()
}

// TestImportSeriesMerged: a -I run with more intervals than MaxSeries has
// them merged into at most MaxSeries points whose counts add up to the
// run's; an event missing from one interval is missing from its point.
func TestImportSeriesMerged(t *testing.T) {
	defer func(m int) { maxSeries = m }(maxSeries)
	maxSeries = 10
	path := filepath.Join(t.TempDir(), "interval.txt")
	const n = 25
	if err := os.WriteFile(path, []byte(intervalText(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := PerfStat([]string{path}, Options{Version: "v", Step: "s", Ops: 1, Threads: 1})
	if len(res.Records) != 1 || len(res.Failures) > 0 {
		t.Fatalf("%d records, failures %v", len(res.Records), res.Failures)
	}
	r := res.Records[0]
	// 25 intervals, 3 to a point: 8 points of 3 and one of 1.
	if len(r.Series) != 9 || r.Series[0].Seconds != 3 || r.Series[0].T != 3 || r.Series[8].Seconds != 1 || r.Series[8].T != 25 {
		t.Fatalf("series %+v", r.Series)
	}
	var cs, tc float64
	for _, p := range r.Series {
		cs += p.Counters["context-switches"]
		tc += p.Counters["task-clock"]
	}
	if want := float64(n * (n - 1) / 2); cs != want || counter(t, r, "context-switches").Value != want || tc != n*100e6 {
		t.Errorf("context-switches: series sum %v, total %v, want %v; task-clock series sum %v", cs, counter(t, r, "context-switches").Value, want, tc)
	}
	if r.Series[0].Counters["context-switches"] != 24+23+22 {
		t.Errorf("first point %v", r.Series[0].Counters)
	}
	if _, ok := r.Series[0].Counters["page-faults"]; ok || r.Series[1].Counters["page-faults"] != 3 {
		t.Errorf("page-faults: not counted in interval 2, so absent from point 1: %v / %v", r.Series[0].Counters, r.Series[1].Counters)
	}
	if !strings.Contains(strings.Join(r.WarningTexts(), "\n"), "the 25 intervals of perf stat run 1 are merged 3 at a time into 9 series points") {
		t.Errorf("warnings %q", r.Warnings)
	}
	// At the limit nothing is merged.
	maxSeries = n
	r = PerfStat([]string{path}, Options{Version: "v", Step: "s", Ops: 1, Threads: 1}).Records[0]
	if len(r.Series) != n || r.Series[4].Counters["context-switches"] != n-5 {
		t.Errorf("unmerged series: %d points", len(r.Series))
	}
}

// TestImportStreams: with a Sink, the memory an import holds does not grow
// with its input: the live heap after 20,000 appended runs is within a few
// MB of the live heap after 2,000 (holding the Records took about 3 KB each).
func TestImportStreams(t *testing.T) {
	block, err := os.ReadFile(ps("default.txt"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	path := filepath.Join(t.TempDir(), "big.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		f.Write(block)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var heapAt [2]uint64
	calls := 0
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	res := PerfStat([]string{path}, Options{Version: "v", Step: "s", Ops: 1, Threads: 1, Sink: func(r *record.Record) error {
		calls++
		switch calls {
		case n / 10:
			heapAt[0] = live()
		case n:
			heapAt[1] = live()
		}
		if r.Repeat != calls {
			return fmt.Errorf("record %d has repeat %d", calls, r.Repeat)
		}
		return nil
	}})
	if calls != n || res.Count != n || len(res.Records) != 0 || len(res.Failures) != 0 {
		t.Fatalf("%d sink calls, count %d, %d records kept, failures %v", calls, res.Count, len(res.Records), res.Failures)
	}
	if grew := int64(heapAt[1]) - int64(heapAt[0]); grew > 8<<20 {
		t.Errorf("live heap grew by %d KB between run %d and run %d (%d → %d KB): the import holds its runs", grew>>10, n/10, n, heapAt[0]>>10, heapAt[1]>>10)
	}
}

// FuzzImportPerfStat: whatever the file holds (headers especially), the
// import does not panic, and every Record it builds is valid, names a
// positive pid or none, and survives encoding and decoding.
func FuzzImportPerfStat(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "perfstat", "*.txt"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(emptyPidHeader))
	for _, h := range []string{"process id '", "process id ''", "process id '12", "thread id '7'", "'", "''", "'sleep 1' (3 runs)", "system wide"} {
		f.Add([]byte("\n Performance counter stats for " + h + ":\n\n 683.59 msec task-clock\n\n 1.0 seconds time elapsed\n"))
	}
	defer func(o func(string) (io.ReadCloser, error)) { openFile = o }(openFile)
	var input []byte
	openFile = func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(input)), nil }
	f.Fuzz(func(t *testing.T, data []byte) {
		input = data
		res := PerfStat([]string{"fuzz.txt"}, Options{Version: "v", Step: "s", Ops: 1})
		if res.Count != len(res.Records) {
			t.Fatalf("count %d, %d records", res.Count, len(res.Records))
		}
		for _, r := range res.Records {
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			if r.Server != nil && r.Server.Pid <= 0 {
				t.Fatalf("server pid %d from target %q", r.Server.Pid, r.Provenance.Origin["perf.target"])
			}
			if len(r.Series) > maxSeries {
				t.Fatalf("%d series points", len(r.Series))
			}
			b, err := record.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := record.Parse(b); err != nil {
				t.Fatalf("record does not read back: %v", err)
			}
		}
		if len(data) == 0 && len(res.Failures) != 1 {
			t.Fatalf("empty input: failures %v", res.Failures)
		}
	})
}

// perf stat prints an event as the user spelled it: the Record keys it by
// its canonical name, in the totals, the series and the multiplexing
// warning, so that it compares with Records measured under the other
// spelling.
func TestImportCanonicalNames(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	totals := write("totals.csv", "797.38,msec,task-clock,797382577,100.00,0.795,CPUs utilized\n"+
		"49405,,cs,797395726,100.00,61.959,K/sec\n"+
		"2845112930,,cpu-cycles,498370000,62.50,3.568,GHz\n")
	r := PerfStat([]string{totals}, Options{Version: "v", Step: "s", Ops: 1, Seconds: 1}).Records[0]
	var names []string
	for _, c := range r.Counters {
		names = append(names, c.Event)
	}
	if !slices.Equal(names, []string{"task-clock", "context-switches", "cycles"}) {
		t.Errorf("counters %q", names)
	}
	i := slices.IndexFunc(r.Warnings, func(w record.Warning) bool { return w.Code == record.WarnMultiplexed })
	if i < 0 || !slices.Equal(r.Warnings[i].Events, []string{"cycles"}) || !strings.HasPrefix(r.Warnings[i].Text, "cpu-cycles ran 62.50% of the time") {
		t.Errorf("warnings %+v", r.Warnings)
	}

	series := write("interval.csv", "     1.001047874,87162,,cs,1253280039,100.00,69.546,K/sec\n"+
		"     2.002095748,87000,,cs,1253280039,100.00,69.546,K/sec\n")
	r = PerfStat([]string{series}, Options{Version: "v", Step: "s", Ops: 1}).Records[0]
	if len(r.Series) != 2 || r.Series[0].Counters["context-switches"] != 87162 || len(r.Series[0].Counters) != 1 || r.Counters[0].Event != "context-switches" {
		t.Errorf("series %+v counters %+v", r.Series, r.Counters)
	}
}
