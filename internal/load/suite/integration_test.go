package suite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
)

// report is what the tests read from a sysbench report.
type report struct {
	queries, events, errors, reconnects float64
}

var reportFields = map[string]*regexp.Regexp{
	"queries":    regexp.MustCompile(`(?m)^\s+queries:\s+(\d+)`),
	"events":     regexp.MustCompile(`(?m)^\s+total number of events:\s+(\d+)`),
	"errors":     regexp.MustCompile(`(?m)^\s+ignored errors:\s+(\d+)`),
	"reconnects": regexp.MustCompile(`(?m)^\s+reconnects:\s+(\d+)`),
}

func parseReport(out string) (report, error) {
	var r report
	for name, re := range reportFields {
		m := re.FindStringSubmatch(out)
		if m == nil {
			return r, fmt.Errorf("sysbench report has no %s line:\n%s", name, out)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		switch name {
		case "queries":
			r.queries = v
		case "events":
			r.events = v
		case "errors":
			r.errors = v
		case "reconnects":
			r.reconnects = v
		}
	}
	return r, nil
}

// TestStepsOnMariaDB runs every step's command for one second against a
// sandbox MariaDB and checks sysbench's report: events counted, no error,
// no reconnect, and as many statements per event as the step says. The
// .pre copies run the same command line as their step (TestCommand checks
// that), so each distinct command runs once: read steps two at a time,
// write steps one after the other in run order.
func TestStepsOnMariaDB(t *testing.T) {
	sysbench := testdb.NeedSysbench(t)
	srv := testdb.Shared(t)
	root, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	scripts := t.TempDir()
	if err := WriteScripts(scripts); err != nil {
		t.Fatal(err)
	}
	o := options(t, srv)
	o.Sysbench, o.ScriptDir = sysbench, scripts
	o.Tables, o.TableSize = 2, 5000
	o.Time = time.Second

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, mk := range []func(Options) ([]string, error){CleanupCommand, PrepareCommand} {
		argv, err := mk(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := run(ctx, argv); err != nil {
			t.Fatal(err)
		}
	}

	var reads, writes []Step
	seen := map[string]bool{}
	for _, s := range steps() {
		key := s.Base() + s.Label()[len(s.Name):]
		if seen[key] {
			continue
		}
		seen[key] = true
		if s.Write {
			writes = append(writes, s)
		} else {
			reads = append(reads, s)
		}
	}
	if got := len(reads) + len(writes); got != 32 {
		t.Fatalf("%d distinct commands, want 32", got)
	}

	check := func(t *testing.T, s Step, threads int) {
		o := o
		o.Threads = threads
		argv, err := Command(s, o)
		if err != nil {
			t.Fatal(err)
		}
		out, err := run(ctx, argv)
		if err != nil {
			t.Fatal(err)
		}
		r, err := parseReport(out)
		if err != nil {
			t.Fatal(err)
		}
		if r.events <= 0 || r.errors != 0 || r.reconnects != 0 {
			t.Errorf("%s: %v events, %v errors, %v reconnects; want events and no error\n%s", s.Label(), r.events, r.errors, r.reconnects, out)
		}
		if r.queries != r.events*float64(s.QueriesPerEvent) {
			t.Errorf("%s: %v queries for %v events, want %d per event", s.Label(), r.queries, r.events, s.QueriesPerEvent)
		}
	}
	t.Run("reads", func(t *testing.T) {
		for _, s := range reads {
			t.Run(s.Label(), func(t *testing.T) {
				t.Parallel()
				check(t, s, 2)
			})
		}
	})
	t.Run("writes", func(t *testing.T) {
		for _, s := range writes {
			t.Run(s.Label(), func(t *testing.T) { check(t, s, 1) })
		}
	})

	// After the writes there are dirty pages: the post-write flush must take
	// them to zero and put the setting back.
	t.Run("flush", func(t *testing.T) {
		var before float64
		var pct string
		if err := root.QueryRow("SELECT @@GLOBAL.innodb_max_dirty_pages_pct").Scan(&pct); err != nil {
			t.Fatal(err)
		}
		if err := root.QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = " +
			"'INNODB_BUFFER_POOL_PAGES_DIRTY'").Scan(&before); err != nil {
			t.Fatal(err)
		}
		res, err := Flush(ctx, root, FlushOptions{DB: "sbtest", Tables: 2, Timeout: time.Minute})
		if err != nil {
			t.Fatalf("Flush: %v (%+v)", err, res)
		}
		t.Logf("flushed %v dirty pages in %v", before, res.Waited)
		if before == 0 {
			t.Error("no dirty page after the write steps: the flush was not exercised")
		}
		if res.DirtyPages != 0 || len(res.Warnings) != 0 {
			t.Errorf("after Flush: %+v, want 0 dirty pages and no warning", res)
		}
		var after string
		if err := root.QueryRow("SELECT @@GLOBAL.innodb_max_dirty_pages_pct").Scan(&after); err != nil {
			t.Fatal(err)
		}
		if after != pct {
			t.Errorf("innodb_max_dirty_pages_pct is %s after Flush, was %s", after, pct)
		}
	})
}

// TestScriptRejectsUnknownShape checks that a script fails loudly rather
// than running some other statement when --shape is wrong (sysbench itself
// accepts any option).
func TestScriptRejectsUnknownShape(t *testing.T) {
	sysbench := testdb.NeedSysbench(t)
	srv := testdb.Shared(t)
	scripts := t.TempDir()
	if err := WriteScripts(scripts); err != nil {
		t.Fatal(err)
	}
	o := options(t, srv)
	o.Sysbench, o.ScriptDir, o.Tables, o.TableSize, o.Threads, o.Time = sysbench, scripts, 1, 10, 1, time.Second
	s, _ := Lookup("update-one")
	s[0].Args = []string{"--shape=every-row"}
	argv, err := Command(s[0], o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = run(context.Background(), argv)
	if err == nil || !strings.Contains(err.Error(), `--shape="every-row" is not one of: inlist, one, zipf`) {
		t.Errorf("unknown shape: got %v, want the script's error", err)
	}
}

// TestZipf runs the script's zipfian generator inside sysbench and checks
// it against the distribution it claims: zeta(n, θ) equal to the exact sum,
// and the frequencies of keys 1 and 2 within 5 standard deviations of
// 1/zeta and 2^-θ/zeta.
func TestZipf(t *testing.T) {
	sysbench := testdb.NeedSysbench(t)
	dir := t.TempDir()
	if err := WriteScripts(dir); err != nil {
		t.Fatal(err)
	}
	probe := `local here = debug.getinfo(1, "S").source:match("^@(.*/)")
package.path = here .. "?.lua;" .. package.path
require("perfbench_common")
function event() end
function thread_done()
   local n, theta, draws = sysbench.opt.table_size, sysbench.opt.zipf_exp, 200000
   local g = pb.zipf(n, theta)
   local c1, c2, bad = 0, 0, 0
   for i = 1, draws do
      local k = g()
      if k == 1 then c1 = c1 + 1 elseif k == 2 then c2 = c2 + 1 end
      if k < 1 or k > n or k ~= math.floor(k) then bad = bad + 1 end
   end
   print(string.format("ZIPF %.17g %d %d %d %d", pb.zeta(n, theta), draws, c1, c2, bad))
end
`
	if err := os.WriteFile(filepath.Join(dir, "probe.lua"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n     int
		theta float64
	}{{1000, 0.8}, {2000000, 0.8}, {50000, 0.5}} {
		out, err := run(context.Background(), []string{sysbench, filepath.Join(dir, "probe.lua"),
			"--events=1", "--table_size=" + strconv.Itoa(c.n), "--zipf_exp=" + strconv.FormatFloat(c.theta, 'g', -1, 64), "run"})
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(out, "ZIPF ")
		if i < 0 {
			t.Fatalf("no ZIPF line in:\n%s", out)
		}
		var zeta, draws, c1, c2, bad float64
		if _, err := fmt.Sscanf(out[i:], "ZIPF %g %g %g %g %g", &zeta, &draws, &c1, &c2, &bad); err != nil {
			t.Fatal(err)
		}
		exact := 0.0
		for k := c.n; k >= 1; k-- {
			exact += math.Pow(float64(k), -c.theta)
		}
		if math.Abs(zeta-exact) > 1e-9*exact {
			t.Errorf("n=%d θ=%g: zeta %v, exact sum %v", c.n, c.theta, zeta, exact)
		}
		if bad != 0 {
			t.Errorf("n=%d θ=%g: %v keys outside [1, n]", c.n, c.theta, bad)
		}
		for k, got := range map[int]float64{1: c1, 2: c2} {
			p := math.Pow(float64(k), -c.theta) / exact
			mean, sd := draws*p, math.Sqrt(draws*p*(1-p))
			if math.Abs(got-mean) > 5*sd {
				t.Errorf("n=%d θ=%g: key %d drawn %v times in %v, want %.0f ± %.0f", c.n, c.theta, k, got, draws, mean, 5*sd)
			}
		}
	}
}

// globalStatus reads numeric global status variables.
func globalStatus(t *testing.T, db *sql.DB, names ...string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, n := range names {
		var name string
		var v float64
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE '"+n+"'").Scan(&name, &v); err != nil {
			t.Fatalf("status %s: %v", n, err)
		}
		out[n] = v
	}
	return out
}

// TestStatementShapes checks that the project's scripts run the statements
// they claim, through the rows the server reads per event: an in-list of R
// keys does R key lookups, a range of R rows one lookup and about R-1 next
// reads, a scan reads every row of the table (the op unit of scan).
func TestStatementShapes(t *testing.T) {
	sysbench := testdb.NeedSysbench(t)
	srv := testdb.Shared(t)
	root, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	scripts := t.TempDir()
	if err := WriteScripts(scripts); err != nil {
		t.Fatal(err)
	}
	const rows = 3000
	o := options(t, srv)
	o.Sysbench, o.ScriptDir, o.Tables, o.TableSize, o.Threads, o.Time = sysbench, scripts, 1, rows, 1, time.Second
	ctx := context.Background()
	for _, mk := range []func(Options) ([]string, error){CleanupCommand, PrepareCommand} {
		argv, _ := mk(o)
		if _, err := run(ctx, argv); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		label    string
		variable string
		lo, hi   float64 // per event
	}{
		// Random keys repeat now and then: a few lookups fewer than R.
		{"points-covered-pk_range=100", "Handler_read_key", 90, 100},
		{"random-points_range=10", "Handler_read_key", 9, 10},
		{"hot-points_range=100", "Handler_read_key", 100, 100},
		{"update-inlist_range=100", "Handler_read_key", 90, 100},
		{"range-covered-si_range=100", "Handler_read_key", 1, 1},
		{"range-covered-si_range=100", "Handler_read_next", 60, 140},
		{"scan_range=100", "Rows_read", rows, rows},
	}
	for _, c := range cases {
		s, err := Lookup(c.label)
		if err != nil {
			t.Fatal(err)
		}
		argv, err := Command(s[0], o)
		if err != nil {
			t.Fatal(err)
		}
		before := globalStatus(t, root, c.variable)
		out, err := run(ctx, argv)
		if err != nil {
			t.Fatal(err)
		}
		after := globalStatus(t, root, c.variable)
		r, err := parseReport(out)
		if err != nil {
			t.Fatal(err)
		}
		per := (after[c.variable] - before[c.variable]) / r.events
		if per < c.lo || per > c.hi {
			t.Errorf("%s: %.2f %s per event over %v events, want %v to %v", c.label, per, c.variable, r.events, c.lo, c.hi)
		}
	}
}
