package perfstat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// The expected values below are typed from the fixture files in
// testdata/perfstat (see its README), not produced by this package.

func read(t *testing.T, name string, opts Options) ([]*Window, []Warning) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "perfstat", name))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Name == "" {
		opts.Name = name
	}
	ws, warns, err := parse(b, opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ws, warns
}

func total(t *testing.T, w *Window, event string) Counter {
	t.Helper()
	for _, c := range w.Totals() {
		if c.Event == event {
			return c
		}
	}
	t.Fatalf("window at line %d has no %s (events %v)", w.Line, event, w.Events())
	return Counter{}
}

type want struct {
	event   string
	value   float64
	status  record.Status
	running uint64 // 0: not checked
}

func check(t *testing.T, w *Window, wants []want) {
	t.Helper()
	for _, x := range wants {
		c := total(t, w, x.event)
		if c.Status != x.status {
			t.Errorf("line %d %s: status %q, want %q", c.Line, x.event, c.Status, x.status)
		}
		if c.Value != x.value {
			t.Errorf("line %d %s: value %v, want %v", c.Line, x.event, c.Value, x.value)
		}
		if x.running != 0 && (c.Running != x.running || !c.HasRunning) {
			t.Errorf("line %d %s: running %d (has %v), want %d", c.Line, x.event, c.Running, c.HasRunning, x.running)
		}
	}
}

func oneFile(t *testing.T, name string, opts Options) *Window {
	t.Helper()
	ws, warns := read(t, name, opts)
	if len(warns) > 0 {
		t.Errorf("unexpected warnings: %v", warns)
	}
	if len(ws) != 1 {
		t.Fatalf("got %d windows, want 1", len(ws))
	}
	return ws[0]
}

func TestDefaultText(t *testing.T) {
	w := oneFile(t, "default.txt", Options{})
	if w.Format != formatText || w.Target != "process id '11793'" || w.Elapsed != 1.002009961 || w.Truncated {
		t.Errorf("window %+v", w)
	}
	check(t, w, []want{
		{"task-clock", 974790000, record.StatusCounted, 0},
		{"context-switches", 67687, record.StatusCounted, 0},
		{"cpu-migrations", 2, record.StatusCounted, 0},
		{"page-faults", 0, record.StatusCounted, 0},
		{"cycles", 0, record.StatusNotSupported, 0},
		{"instructions", 0, record.StatusNotSupported, 0},
		{"duration_time", 15030149415, record.StatusCounted, 0},
	})
	if c := total(t, w, "task-clock"); c.Unit != "ns" || c.Metric != 0.973 || c.MetricUnit != "CPUs utilized" || c.Percent != 100 {
		t.Errorf("task-clock %+v", c)
	}
	if c := total(t, w, "context-switches"); c.Unit != "" || c.Metric != 69.437 || c.MetricUnit != "K/sec" {
		t.Errorf("context-switches %+v", c)
	}
}

func TestCSV(t *testing.T) {
	w := oneFile(t, "csv.txt", Options{})
	if w.Format != formatCSV || w.Elapsed != 0 || w.Seconds() != 0 {
		t.Errorf("window %+v", w)
	}
	check(t, w, []want{
		{"task-clock", 797380000, record.StatusCounted, 797382577},
		{"context-switches", 49405, record.StatusCounted, 797395726},
		{"cpu-migrations", 6, record.StatusCounted, 797402476},
		{"page-faults", 0, record.StatusCounted, 797413653},
		{"cycles", 0, record.StatusNotSupported, 0},
		{"instructions", 0, record.StatusNotSupported, 0},
		{"duration_time", 15044694855, record.StatusCounted, 15044694855},
	})
}

func TestJSON(t *testing.T) {
	w := oneFile(t, "json.txt", Options{})
	if w.Format != formatJSON {
		t.Errorf("format %v", w.Format)
	}
	check(t, w, []want{
		{"task-clock", 1238977920, record.StatusCounted, 1238977920},
		{"context-switches", 85587, record.StatusCounted, 1238985321},
		{"cpu-migrations", 0, record.StatusCounted, 1238979132},
		{"cycles", 0, record.StatusNotSupported, 0},
		{"instructions", 0, record.StatusNotSupported, 0},
	})
}

func TestCSVPerThread(t *testing.T) {
	w := oneFile(t, "csv-per-thread.txt", Options{})
	if len(w.Counters) != 45 {
		t.Errorf("%d counter lines, want 45", len(w.Counters))
	}
	nc := 0
	for _, c := range w.Counters {
		if c.Status == record.StatusNotCounted {
			nc++
		}
		if !strings.HasPrefix(c.Aggr, "mariadbd-") {
			t.Errorf("line %d: thread %q", c.Line, c.Aggr)
		}
	}
	if nc != 22 {
		t.Errorf("%d not counted lines, want 22", nc)
	}
	// 629.56 + 621.11 + 0.08 + 0.02 msec; the other threads never ran.
	check(t, w, []want{
		{"task-clock", 1250770000, record.StatusCounted, 629557633 + 621106125 + 76063 + 23726},
		{"context-switches", 45205 + 44303 + 5 + 2, record.StatusCounted, 0},
		{"cycles", 0, record.StatusNotSupported, 0},
	})
}

func TestPerThreadText(t *testing.T) {
	w := oneFile(t, "per-thread.txt", Options{})
	check(t, w, []want{{"task-clock", 1250110000, record.StatusCounted, 0}})
	found := false
	for _, c := range w.Counters {
		if c.Aggr == "mariadbd-11819" && c.Event == "context-switches" {
			found = c.Value == 43567
		}
	}
	if !found {
		t.Error("mariadbd-11819 context-switches 43567 not read")
	}
	if w.Elapsed != 1.001833998 {
		t.Errorf("elapsed %v", w.Elapsed)
	}
}

func TestPerCPU(t *testing.T) {
	w := oneFile(t, "per-cpu-csv.txt", Options{})
	check(t, w, []want{
		{"task-clock", 1202590000 + 1202640000, record.StatusCounted, 1202592235 + 1202641028},
		{"context-switches", 84304 + 32203, record.StatusCounted, 0},
		{"cycles", 0, record.StatusNotSupported, 0},
	})
	if w.Counters[0].Aggr != "CPU0" || w.Counters[1].Aggr != "CPU1" {
		t.Errorf("aggregation %q %q", w.Counters[0].Aggr, w.Counters[1].Aggr)
	}
}

func TestIntervals(t *testing.T) {
	for _, tc := range []struct {
		file       string
		n          int
		ends       []float64
		firstClock float64
		firstCS    float64
	}{
		{"interval.txt", 3, []float64{1.000564603, 2.001864043, 2.999772383}, 1211070000, 82824},
		{"interval-csv.txt", 3, []float64{1.001047874, 2.002363909, 3.001586820}, 1253300000, 87162},
		{"interval-json.txt", 2, []float64{1.000587107, 1.999719874}, 1250494990, 86620},
	} {
		ws, warns := read(t, tc.file, Options{})
		if len(warns) > 0 || len(ws) != tc.n {
			t.Fatalf("%s: %d windows, warnings %v", tc.file, len(ws), warns)
		}
		prev := 0.0
		for i, w := range ws {
			if w.Run != 1 || w.Interval != tc.ends[i] || w.Start != prev {
				t.Errorf("%s window %d: run %d interval %v start %v", tc.file, i, w.Run, w.Interval, w.Start)
			}
			prev = w.Interval
		}
		check(t, ws[0], []want{
			{"task-clock", tc.firstClock, record.StatusCounted, 0},
			{"context-switches", tc.firstCS, record.StatusCounted, 0},
			{"cycles", 0, record.StatusNotSupported, 0},
		})
	}
	ws, _ := read(t, "interval-csv.txt", Options{})
	check(t, ws[2], []want{{"task-clock", 1214470000, record.StatusCounted, 1214474736}, {"context-switches", 83731, record.StatusCounted, 1214480174}})
}

func TestAppendedRuns(t *testing.T) {
	ws, warns := read(t, "append3.txt", Options{})
	if len(warns) > 0 || len(ws) != 3 {
		t.Fatalf("%d windows, warnings %v", len(ws), warns)
	}
	cs := []float64{84213, 86141, 85076}
	el := []float64{1.002899728, 1.002127395, 1.002307794}
	started := []string{"Mon Nov 30 14:30:00 2026", "Mon Nov 30 14:30:01 2026", "Mon Nov 30 14:30:02 2026"}
	for i, w := range ws {
		if w.Run != i+1 || w.Elapsed != el[i] || w.Started != started[i] {
			t.Errorf("run %d: %+v", i+1, w)
		}
		check(t, w, []want{{"context-switches", cs[i], record.StatusCounted, 0}, {"cycles", 0, record.StatusNotSupported, 0}})
	}
	ws, warns = read(t, "append3-csv.txt", Options{})
	if len(warns) > 0 || len(ws) != 3 {
		t.Fatalf("csv: %d windows, warnings %v", len(ws), warns)
	}
	for i, v := range []float64{60128, 33698, 44774} {
		check(t, ws[i], []want{{"context-switches", v, record.StatusCounted, 0}})
	}
	check(t, ws[0], []want{{"task-clock", 878170000, record.StatusCounted, 878174001}})
}

func TestLocales(t *testing.T) {
	w := oneFile(t, "locale-de_DE.txt", Options{})
	if w.Elapsed != 1.002087706 {
		t.Errorf("de_DE elapsed %v", w.Elapsed)
	}
	check(t, w, []want{
		{"task-clock", 603200000, record.StatusCounted, 0},      // 603,20 msec
		{"context-switches", 38461, record.StatusCounted, 0},    // 38.461
		{"duration_time", 15031315590, record.StatusCounted, 0}, // 15.031.315.590
		{"instructions", 0, record.StatusNotSupported, 0},
	})
	if c := total(t, w, "context-switches"); c.Metric != 63.762 {
		t.Errorf("de_DE metric %v", c.Metric)
	}
	w = oneFile(t, "locale-en_US.txt", Options{})
	if w.Elapsed != 1.007323680 {
		t.Errorf("en_US elapsed %v", w.Elapsed)
	}
	check(t, w, []want{
		{"task-clock", 1140850000, record.StatusCounted, 0},     // 1,140.85 msec
		{"context-switches", 77451, record.StatusCounted, 0},    // 77,451
		{"duration_time", 15109855200, record.StatusCounted, 0}, // 15,109,855,200
	})
	w = oneFile(t, "locale-de_DE-csv.txt", Options{})
	check(t, w, []want{
		{"task-clock", 866540000, record.StatusCounted, 866543070}, // 866,54;msec
		{"context-switches", 60330, record.StatusCounted, 866536350},
	})
	// Forcing the wrong decimal separator reads grouping as decimals: the
	// option is obeyed.
	ws, warns := read(t, "locale-de_DE.txt", Options{Decimal: '.'})
	check(t, ws[0], []want{{"context-switches", 38.461, record.StatusCounted, 0}})
	if !hasWarning(warns, 10, "two decimal separators") {
		t.Errorf("15.031.315.590 read with '.' as decimal separator: warnings %v", warns)
	}
}

func TestRepeats(t *testing.T) {
	w := oneFile(t, "repeat.txt", Options{})
	if w.Repeats != 3 || w.Command != "sleep 0.2" || w.Elapsed != 0.20460 || w.ElapsedVariance != 0.54 {
		t.Errorf("window %+v", w)
	}
	check(t, w, []want{{"task-clock", 760000, record.StatusCounted, 0}, {"page-faults", 77, record.StatusCounted, 0}})
	if c := total(t, w, "context-switches"); !c.HasVariance || c.Variance != 392.99 {
		t.Errorf("context-switches variance %v", c.Variance)
	}
	if c := total(t, w, "cpu-migrations"); c.HasVariance {
		t.Errorf("cpu-migrations has variance %v; perf printed none", c.Variance)
	}
	w = oneFile(t, "repeat-csv.txt", Options{})
	check(t, w, []want{{"task-clock", 890000, record.StatusCounted, 889868}, {"page-faults", 76, record.StatusCounted, 889868}})
	if c := total(t, w, "context-switches"); c.Variance != 700 {
		t.Errorf("csv context-switches variance %v", c.Variance)
	}
}

func TestMultiplexed(t *testing.T) {
	w := oneFile(t, "handmade-multiplexed.txt", Options{})
	check(t, w, []want{
		{"cycles", 2845112930, record.StatusScaled, 0},
		{"instructions", 1964031208, record.StatusScaled, 0},
		{"cache-misses", 12345678, record.StatusScaled, 0},
		{"branch-misses", 0, record.StatusNotCounted, 0},
		{"L1-icache-loads", 0, record.StatusNotSupported, 0},
		{"task-clock", 974790000, record.StatusCounted, 0},
	})
	for ev, pct := range map[string]float64{"cycles": 62.50, "instructions": 75.00, "cache-misses": 37.49, "task-clock": 100} {
		if c := total(t, w, ev); c.Percent != pct || c.HasRunning || c.Enabled() != 0 {
			t.Errorf("%s: percent %v has running %v", ev, c.Percent, c.HasRunning)
		}
	}
	if c := total(t, w, "instructions"); c.Metric != 0.69 || c.MetricUnit != "insn per cycle" {
		t.Errorf("instructions metric %v %q", c.Metric, c.MetricUnit)
	}
	w = oneFile(t, "handmade-multiplexed-csv.txt", Options{})
	check(t, w, []want{
		{"cycles", 2845112930, record.StatusScaled, 498370000},
		{"instructions", 1964031208, record.StatusScaled, 598044000},
		{"branch-misses", 0, record.StatusNotCounted, 0},
		{"L1-icache-loads", 0, record.StatusNotSupported, 0},
	})
	// 498370000 ns ran at 62.50% of 797392000 ns enabled.
	if c := total(t, w, "cycles"); c.Enabled() != 797392000 {
		t.Errorf("cycles enabled %d, want 797392000", c.Enabled())
	}
}

func TestEventsDifferBetweenRuns(t *testing.T) {
	ws, warns := read(t, "append-events-differ.txt", Options{})
	if len(warns) > 0 || len(ws) != 2 {
		t.Fatalf("%d windows, warnings %v", len(ws), warns)
	}
	if a, b := strings.Join(ws[0].Events(), ","), strings.Join(ws[1].Events(), ","); a != "task-clock,context-switches" || b != "task-clock,page-faults" {
		t.Errorf("events %s / %s", a, b)
	}
	if ws[1].Line != 11 {
		t.Errorf("second run starts at line %d, want 11", ws[1].Line)
	}
}

func fixture(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "perfstat", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hasWarning(warns []Warning, line int, sub string) bool {
	for _, w := range warns {
		if w.Line == line && strings.Contains(w.Msg, sub) {
			return true
		}
	}
	return false
}

func TestBadInput(t *testing.T) {
	def := fixture(t, "default.txt")
	// Truncated before "seconds time elapsed".
	cut := def[:strings.Index(def, "       15030149415")]
	ws, warns, err := parse([]byte(cut), Options{Name: "cut.txt"})
	if err != nil || len(ws) != 1 || !ws[0].Truncated {
		t.Fatalf("truncated: %d windows, err %v", len(ws), err)
	}
	if !hasWarning(warns, 9, "seconds time elapsed") || !strings.HasPrefix(warns[0].String(), "cut.txt:9: ") {
		t.Errorf("truncated: warnings %v", warns)
	}
	// Cut in the middle of a -x line: the cut line is not trusted.
	csv := fixture(t, "csv.txt")
	ws, warns, _ = parse([]byte(csv[:strings.Index(csv, "0,,page-faults")+5]), Options{Name: "c"})
	if len(ws) != 1 || !ws[0].Truncated || !hasWarning(warns, 4, "middle of a line") {
		t.Errorf("cut line: %d windows, warnings %v", len(ws), warns)
	}
	// Mixed formats: -x lines inside a text run.
	mixed := strings.Replace(def, "                 2      cpu-migrations", "2,,cpu-migrations,1000,100.00,,\n                 2      cpu-migrations", 1)
	ws, warns, _ = parse([]byte(mixed), Options{Name: "m"})
	if len(ws) != 1 || !hasWarning(warns, 6, "mixed formats") {
		t.Errorf("mixed: %d windows, warnings %v", len(ws), warns)
	}
	check(t, ws[0], []want{{"cpu-migrations", 2, record.StatusCounted, 0}})
	// Not UTF-8.
	bad := strings.Replace(def, "                 0      page-faults", "\xff\xfe\x00garbage\n                 0      page-faults", 1)
	ws, warns, _ = parse([]byte(bad), Options{Name: "b"})
	if len(ws) != 1 || !hasWarning(warns, 7, "not UTF-8") {
		t.Errorf("non-UTF-8: %d windows, warnings %v", len(ws), warns)
	}
	// A line that is not perf output.
	junk := strings.Replace(def, "                 0      page-faults", "hello world\n                 0      page-faults", 1)
	_, warns, _ = parse([]byte(junk), Options{Name: "j"})
	if !hasWarning(warns, 7, "not a perf stat line") {
		t.Errorf("junk: warnings %v", warns)
	}
	// A line longer than MaxLine.
	long := strings.Replace(def, "                 0      page-faults", strings.Repeat("x", 500)+"\n                 0      page-faults", 1)
	ws, warns, _ = parse([]byte(long), Options{Name: "l", MaxLine: 200})
	if len(ws) != 1 || !hasWarning(warns, 7, "longer than 200 bytes") {
		t.Errorf("long line: %d windows, warnings %v", len(ws), warns)
	}
	check(t, ws[0], []want{{"page-faults", 0, record.StatusCounted, 0}})
	// Not perf output at all.
	sb, _ := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sysbench", "oltp_read_only.t1.nopct.txt"))
	_, _, err = parse(sb, Options{Name: "sb.txt"})
	if !errors.Is(err, ErrNoCounters) || !strings.Contains(err.Error(), "sb.txt") {
		t.Errorf("sysbench output read as perf stat: %v", err)
	}
	// Empty input is no windows and no error.
	if ws, _, err := parse(nil, Options{}); len(ws) != 0 || err != nil {
		t.Errorf("empty input: %d windows, %v", len(ws), err)
	}
}

// TestNotPerfOutput: text that only resembles a counter line ("1 times)")
// is not read as one, and a file of such text is refused whole.
func TestNotPerfOutput(t *testing.T) {
	line := "(last message repeated 1 times)"
	if _, _, ok := parseTextLine(line); ok {
		t.Errorf("%q read as a counter line", line)
	}
	lua := "FATAL: `thread_init' function failed: ./broken.lua:1: attempt to index local 'x' (a nil value)\n" +
		line + "\nFATAL: Thread initialization failed!\n"
	ws, _, err := parse([]byte(lua), Options{Name: "lua.txt"})
	if len(ws) != 0 || !errors.Is(err, ErrNoCounters) || !strings.HasPrefix(err.Error(), "lua.txt: not perf stat output: ") {
		t.Errorf("%d windows, err %v", len(ws), err)
	}
	// A file of only non-perf text (sysbench's output of a failed run).
	sb, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sysbench", "lua-fatal.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err = parse(sb, Options{Name: "lua-fatal.txt"})
	if len(ws) != 0 || !errors.Is(err, ErrNoCounters) {
		t.Errorf("lua-fatal.txt: %d windows, err %v", len(ws), err)
	}
	// Inside real output, the line is skipped with a warning and the
	// counters around it are kept.
	def := fixture(t, "default.txt")
	junk := strings.Replace(def, "                 0      page-faults", line+"\n                 0      page-faults", 1)
	ws, warns, err := parse([]byte(junk), Options{Name: "j"})
	if err != nil || len(ws) != 1 || !hasWarning(warns, 7, "not a perf stat line") || len(ws[0].Counters) != 7 {
		t.Fatalf("%d windows, err %v, warnings %v", len(ws), err, warns)
	}
	check(t, ws[0], []want{{"page-faults", 0, record.StatusCounted, 0}, {"cpu-migrations", 2, record.StatusCounted, 0}})
}

func TestEventNames(t *testing.T) {
	for _, ev := range []string{
		"task-clock", "L1-dcache-load-misses", "duration_time", "inst_retired.any", "UNC_M_CAS_COUNT.RD",
		"cycles:u", "cycles:ppp", "instructions:ukhG", "r003c", "r01c2:u",
		"sched:sched_switch", "syscalls:sys_enter_pread64", "probe_mariadbd:dispatch_command__return", "mem:0x401000:rw",
		"cpu/event=0x3c,umask=0x00/", "cpu/cycles/u", "cpu_core/instructions/", "power/energy-pkg/", "msr/tsc/", "cpu/mem-loads,ldlat=30/P",
	} {
		if !eventLike(ev) {
			t.Errorf("%q is not taken as an event name", ev)
		}
		line := "        1,234      " + ev + "   # 1.0 /sec"
		if r, _, ok := parseTextLine(line); !ok || r.c.Event != ev || r.value != "1,234" {
			t.Errorf("%q: ok %v, %+v", line, ok, r)
		}
	}
	for _, s := range []string{"times)", "(a", "1", "12abc", "", "<not", "sec.)", "-x", "'x'", "cpu/cycles", "events:", "a b", "ä"} {
		if eventLike(s) {
			t.Errorf("%q taken as an event name", s)
		}
	}
	// What perf prints before a counter when it splits counts.
	for _, line := range []string{
		"CPU1   84304  context-switches",
		"S0-D0-C1   2   84304   context-switches",
		"S0   2   84304   context-switches",
		"N0   2   84304   context-switches",
		"S0-D0-L3-ID0   2   84304   context-switches",
		"Web Content-4121   84304   context-switches",
		"1.000564603   CPU1   84304   context-switches",
	} {
		if r, _, ok := parseTextLine(line); !ok || r.c.Event != "context-switches" || r.value != "84304" || r.c.Aggr == "" {
			t.Errorf("%q: ok %v, %+v", line, ok, r)
		}
	}
	for _, line := range []string{
		"message repeated 1 times",
		"lost 3 events",
		"Threads started 2 threads",
		"1.000564603 lost 3 events",
	} {
		if r, _, ok := parseTextLine(line); ok {
			t.Errorf("%q read as a counter: %+v", line, r)
		}
		if c, _, ok, _ := parseCSVLine(strings.ReplaceAll(line, " ", ","), ","); ok {
			t.Errorf("%q read as a -x counter: %+v", line, c)
		}
	}
}

// repeatReader yields block n times without holding more than one copy.
type repeatReader struct {
	block  []byte
	n, off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.block[r.off:])
	r.off += k
	if r.off == len(r.block) {
		r.off = 0
		r.n--
	}
	return k, nil
}

// TestLargeStream reads 20,000 appended runs (about 10 MB of text) one
// window at a time.
func TestLargeStream(t *testing.T) {
	block := []byte("# started on Mon Nov 30 14:30:03 2026\n\n" + fixture(t, "csv.txt"))
	const n = 20000
	sc := NewScanner(&repeatReader{block: block, n: n}, Options{Name: "big"})
	count := 0
	for sc.Scan() {
		count++
		if w := sc.Window(); w.Run != count || len(w.Counters) != 7 {
			t.Fatalf("window %d: run %d, %d counters", count, w.Run, len(w.Counters))
		}
	}
	if sc.Err() != nil || count != n || len(sc.Warnings()) != 0 {
		t.Errorf("%d windows, err %v, warnings %d", count, sc.Err(), len(sc.Warnings()))
	}
}

// Fuzzing ---------------------------------------------------------------------

func seeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "perfstat", "*.txt"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
}

// FuzzScanner: never panics; every number is finite; statuses are perf's;
// a counter without a value has value 0; percentages are percentages; line
// numbers are within the input.
func FuzzScanner(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ws, warns, _ := parse(data, Options{Name: "fuzz"})
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, w := range ws {
			for _, v := range []float64{w.Interval, w.Start, w.Elapsed, w.ElapsedVariance, w.User, w.Sys, w.Seconds()} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("window at line %d has a non-finite number", w.Line)
				}
			}
			if w.Line < 1 || w.EndLine > lines || w.Line > w.EndLine {
				t.Fatalf("window lines %d-%d outside 1-%d", w.Line, w.EndLine, lines)
			}
			for _, cs := range [][]Counter{w.Counters, w.Totals()} {
				for _, c := range cs {
					if math.IsNaN(c.Value) || math.IsInf(c.Value, 0) || c.Value < 0 || math.IsNaN(c.Metric) || math.IsInf(c.Metric, 0) {
						t.Fatalf("%s: value %v metric %v", c.Event, c.Value, c.Metric)
					}
					if c.Percent < 0 || c.Percent > 100 || math.IsNaN(c.Percent) {
						t.Fatalf("%s: percent %v", c.Event, c.Percent)
					}
					switch c.Status {
					case record.StatusCounted, record.StatusScaled:
					case record.StatusNotCounted, record.StatusNotSupported:
						if c.Value != 0 {
							t.Fatalf("%s %s has value %v", c.Event, c.Status, c.Value)
						}
					default:
						t.Fatalf("%s: status %q", c.Event, c.Status)
					}
					if c.Event == "" {
						t.Fatal("counter without an event")
					}
				}
			}
		}
		for _, w := range warns {
			if w.Line < 0 || w.Line > lines {
				t.Fatalf("warning line %d outside 1-%d: %s", w.Line, lines, w)
			}
		}
	})
}

// renderCSV writes a counter back in perf's -x layout.
func renderCSV(ts string, c Counter, sep string) string {
	v := strconvF(c.Value)
	switch c.Status {
	case record.StatusNotCounted:
		v = notCounted
	case record.StatusNotSupported:
		v = notSupported
	}
	f := []string{}
	if ts != "" {
		f = append(f, ts)
	}
	if c.Aggr != "" {
		f = append(f, c.Aggr)
	}
	f = append(f, v, c.Unit, c.Event)
	if c.HasVariance {
		f = append(f, strconvF(c.Variance)+"%")
	}
	run := ""
	if c.HasRunning {
		run = fmt.Sprint(c.Running)
	}
	f = append(f, run, strconvF(c.Percent), "", "")
	return strings.Join(f, sep)
}

func strconvF(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// FuzzCSVLine: a -x line that parses, written back in perf's layout, parses
// to the same values.
func FuzzCSVLine(f *testing.F) {
	for _, name := range []string{"csv.txt", "csv-per-thread.txt", "interval-csv.txt", "repeat-csv.txt", "per-cpu-csv.txt", "handmade-multiplexed-csv.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "perfstat", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, ts, ok, err := parseCSVLine(line, ",")
		if !ok || err != nil {
			return
		}
		if strings.Contains(c.Aggr, ",") || strings.Contains(c.Event, ",") || strings.Contains(c.Unit, ",") {
			return
		}
		again := renderCSV(ts, c, ",")
		c2, ts2, ok2, err2 := parseCSVLine(again, ",")
		if !ok2 || err2 != nil {
			t.Fatalf("%q re-rendered as %q: ok %v err %v", line, again, ok2, err2)
		}
		c.Metric, c.MetricUnit = 0, ""
		c2.Metric, c2.MetricUnit = 0, ""
		if c2 != c || ts2 != ts {
			t.Fatalf("%q -> %q:\n got %+v %q\nwant %+v %q", line, again, c2, ts2, c, ts)
		}
	})
}
