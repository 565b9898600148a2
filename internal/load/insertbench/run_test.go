package insertbench

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/mysqld/sandbox"
	"github.com/perfbench/perfbench/record"
)

func TestMain(m *testing.M) {
	// The test binary is the driver's executable too (StartDriver).
	if len(os.Args) > 1 && os.Args[1] == DriverCommand {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := DriverMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(testdb.Main(m))
}

// loadConfig reaches srv's load database over TCP as its load user, as a
// benchmark client would.
func loadConfig(srv *sandbox.Server) *mysql.Config {
	c := mysql.NewConfig()
	c.Net = "tcp"
	c.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port))
	c.User, c.Passwd, c.DBName = srv.User, srv.Password, srv.Database
	return c
}

// status reads the server's global status counters through root.
func status(t *testing.T, db *sql.DB) map[string]float64 {
	t.Helper()
	rows, err := db.Query("SHOW GLOBAL STATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]float64{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			m[k] = f
		}
	}
	return m
}

func count(t *testing.T, db *sql.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// stepRun runs one step and checks what holds for every step: the
// statements the server executed (its status counters, read before and
// after) are the histograms' counts, and the rows it deleted are the
// deletes counted.
func stepRun(t *testing.T, srv *sandbox.Server, root *sql.DB, o Options) *Result {
	t.Helper()
	var s0, s1 map[string]float64
	o.AtStart = func(time.Time) { s0 = status(t, root) }
	o.AtEnd = func(time.Time) { s1 = status(t, root) }
	res, err := runStep(context.Background(), loadConfig(srv), o)
	if err != nil {
		t.Fatalf("%s: %v", o.Step.Name, err)
	}
	for _, w := range res.Warnings {
		// The small l steps here take less than a second.
		if !(w == "no full second of load: no p50/p99" && o.Step.Kind != Query) {
			t.Errorf("%s: warning: %s", o.Step.Name, w)
		}
	}
	d := func(k string) int64 { return int64(s1[k] - s0[k]) }
	var stmts int64
	for _, kind := range []string{record.OpInsert, record.OpDelete, record.OpQuery} {
		h := res.Histograms[kind]
		if h == nil {
			continue
		}
		stmts += h.Count()
		var n int64
		for _, c := range h.Counts {
			n += c
		}
		if n != h.Count() || (h.Count() > 0) != (h.Max > 0) {
			t.Errorf("%s: %s histogram: %v, max %s", o.Step.Name, kind, h.Counts, h.Max)
		}
	}
	hc := func(kind string) int64 {
		if h := res.Histograms[kind]; h != nil {
			return h.Count()
		}
		return 0
	}
	t.Logf("%s: %.2fs, %d rows inserted, %d deleted, %d queries; server: Com_insert %d, Com_delete %d, Com_stmt_execute %d, Handler_delete %d",
		o.Step.Name, res.Seconds, res.Inserted, res.Deleted, res.Queries, d("Com_insert"), d("Com_delete"), d("Com_stmt_execute"), d("Handler_delete"))
	if d("Com_insert") != hc(record.OpInsert) || d("Com_delete") != hc(record.OpDelete) || d("Com_stmt_execute") != stmts {
		t.Errorf("%s: the server executed %d INSERTs, %d DELETEs, %d prepared statements; the histograms count %d, %d, %d",
			o.Step.Name, d("Com_insert"), d("Com_delete"), d("Com_stmt_execute"), hc(record.OpInsert), hc(record.OpDelete), stmts)
	}
	if d("Handler_delete") != res.Deleted {
		t.Errorf("%s: the server deleted %d rows, %d counted", o.Step.Name, d("Handler_delete"), res.Deleted)
	}
	// Rows per statement.
	if h := res.Histograms[record.OpInsert]; h != nil && o.Step.Kind != Load {
		if want := h.Count() * int64(o.RowsPerCommit); res.Inserted != want {
			t.Errorf("%s: %d rows inserted by %d statements of %d rows", o.Step.Name, res.Inserted, h.Count(), o.RowsPerCommit)
		}
	}
	// The series adds up to the totals.
	var sum counts
	for _, p := range res.Series {
		sum.Inserts += p.Inserts
		sum.Deletes += p.Deletes
		sum.Queries += p.Queries
	}
	if sum != (counts{res.Inserted, res.Deleted, res.Queries}) {
		t.Errorf("%s: the series sums to %+v, the totals are %d, %d, %d", o.Step.Name, sum, res.Inserted, res.Deleted, res.Queries)
	}
	return res
}

// lateClock wakes its sleepers late by as much as it says.
type lateClock struct{ late time.Duration }

func (lateClock) Now() time.Time { return time.Now() }

func (l lateClock) SleepUntil(ctx context.Context, t time.Time) error {
	return realClock{}.SleepUntil(ctx, t.Add(l.late))
}

// checkPercentiles checks p50 and p99 against the per-client rates of the
// full seconds of the series: p50 is one of them with at least half the
// seconds at or above it and at least half at or below; p99 is one of
// them with at least 99% of the seconds (rounded) at or above it.
func checkPercentiles(t *testing.T, res *Result) {
	t.Helper()
	kind := res.Step.Main()
	var rates []float64
	for _, p := range res.Series {
		for _, c := range p.Clients {
			if c.Full {
				rates = append(rates, float64(c.of(kind))/p.Seconds)
			}
		}
	}
	n := len(rates)
	if n == 0 || n != res.RateSeconds {
		t.Fatalf("%s: %d full client-seconds in the series, the result says %d", res.Step.Name, n, res.RateSeconds)
	}
	var ge50, le50, ge99 int
	var is50, is99 bool
	for _, r := range rates {
		if r >= res.P50 {
			ge50++
		}
		if r <= res.P50 {
			le50++
		}
		if r >= res.P99 {
			ge99++
		}
		is50 = is50 || r == res.P50
		is99 = is99 || r == res.P99
	}
	if !is50 || !is99 || 2*ge50 < n || 2*le50 < n || ge99 < int(math.Round(0.99*float64(n))) {
		t.Errorf("%s: p50 %v, p99 %v disagree with the %d per-client rates %v", res.Step.Name, res.P50, res.P99, n, rates)
	}
}

// TestSequence runs a small benchmark: l.i0, l.x, l.i1, l.i2, qr100,
// qp100 on two tables.
func TestSequence(t *testing.T) {
	srv := testdb.Shared(t)
	root, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	root.SetMaxOpenConns(1)
	if _, err := root.Exec("USE " + srv.Database); err != nil {
		t.Fatal(err)
	}
	const tables, rows = 2, 20_000
	opts := func(name string) Options {
		o := DefaultOptions(mustStep(t, name))
		o.Tables, o.Table = tables, "seq"
		return o
	}

	o := opts("l.i0")
	o.Rows = rows
	res := stepRun(t, srv, root, o)
	if res.Inserted != tables*rows || res.RowsAfter != tables*rows || res.Histograms[record.OpInsert].Count() != tables*rows/100 {
		t.Errorf("l.i0: %d rows in %d statements, %d after; want %d in %d", res.Inserted,
			res.Histograms[record.OpInsert].Count(), res.RowsAfter, tables*rows, tables*rows/100)
	}
	for i := 1; i <= tables; i++ {
		if n := count(t, root, "seq"+strconv.Itoa(i)); n != rows {
			t.Errorf("l.i0: table seq%d has %d rows, want %d", i, n, rows)
		}
	}

	res = stepRun(t, srv, root, opts("l.x"))
	if res.RowsIndexed != tables*rows || res.Tables[0].IndexSeconds <= 0 || len(res.Histograms) != 0 || !math.IsNaN(res.P50) {
		t.Errorf("l.x: %d rows indexed, %v s for seq1, histograms %v, p50 %v", res.RowsIndexed, res.Tables[0].IndexSeconds, res.Histograms, res.P50)
	}
	var nidx int
	if err := root.QueryRow("SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = " +
		"DATABASE() AND TABLE_NAME = 'seq2'").Scan(&nidx); err != nil || nidx != 4 {
		t.Errorf("l.x: seq2 has %d indexes (%v), want the primary key and 3", nidx, err)
	}

	// The queue keeps its size: as many rows after l.i1 and l.i2 as before.
	for _, name := range []string{"l.i1", "l.i2"} {
		o = opts(name)
		o.Rows = 2_000
		before := count(t, root, "seq1") + count(t, root, "seq2")
		res = stepRun(t, srv, root, o)
		after := count(t, root, "seq1") + count(t, root, "seq2")
		if before != tables*rows || after != before || res.RowsBefore != before || res.RowsAfter != after ||
			res.Inserted != tables*2_000 || res.Deleted != res.Inserted {
			t.Errorf("%s: %d rows before, %d after (result: %d, %d); %d inserted, %d deleted", name, before, after,
				res.RowsBefore, res.RowsAfter, res.Inserted, res.Deleted)
		}
		if want := int64(tables * 2_000 / o.RowsPerCommit); res.Histograms[record.OpDelete].Count() != want {
			t.Errorf("%s: %d deletes, want %d", name, res.Histograms[record.OpDelete].Count(), want)
		}
	}

	// qr100: the writers keep 100 inserts/s per client in every full
	// second, and the queries read 10 rows each.
	o = opts("qr100")
	o.Duration = 6 * time.Second
	before := count(t, root, "seq1") + count(t, root, "seq2")
	res = stepRun(t, srv, root, o)
	if after := count(t, root, "seq1") + count(t, root, "seq2"); after != before || res.RowsAfter != before {
		t.Errorf("qr100: %d rows before, %d after (result %d)", before, after, res.RowsAfter)
	}
	full := 0
	for _, p := range res.Series {
		if !p.Full {
			continue
		}
		full++
		for i, c := range p.Clients {
			if r := float64(c.Inserts) / p.Seconds; math.Abs(r-100) > 2 {
				t.Errorf("qr100: client %d inserted %.1f rows/s in the second ending at %.3f s, want 100 ± 2%%", i+1, r, p.T)
			}
		}
	}
	if full < 5 || res.Queries == 0 || res.BelowTarget() || res.TargetInsertsPerSecond != 200 {
		t.Errorf("qr100: %d full seconds, %d queries, %.1f inserts/s of %v (below target: %v)", full, res.Queries,
			res.PerSecond(record.OpInsert), res.TargetInsertsPerSecond, res.BelowTarget())
	}
	if res.QueryRows < res.Queries*10*99/100 || res.QueryRows > res.Queries*10 {
		t.Errorf("qr100: %d rows from %d range queries of 10", res.QueryRows, res.Queries)
	}
	checkPercentiles(t, res)
	t.Logf("qr100: %.0f queries/s, p50 %.0f p99 %.0f per client, %.1f inserts/s, driver CPU %s per query",
		res.PerSecond(record.OpQuery), res.P50, res.P99, res.PerSecond(record.OpInsert), res.DriverCPUPerOp())

	// A sampler that wakes late (as under -race on a busy machine) does
	// not move rows from one second to the next: each second holds the
	// rows whose inserts ended in it. The late clock delays the writers'
	// batches as much, so each second still holds one batch of 100.
	o = opts("qr100")
	o.Duration = 3 * time.Second
	o.clock = lateClock{150 * time.Millisecond}
	res = stepRun(t, srv, root, o)
	full = 0
	for _, p := range res.Series {
		if !p.Full {
			continue
		}
		full++
		for i, c := range p.Clients {
			if r := float64(c.Inserts) / p.Seconds; r != 100 {
				t.Errorf("qr100, late ticks: client %d inserted %.1f rows/s in the second ending at %.3f s, want 100", i+1, r, p.T)
			}
		}
	}
	if full != 3 {
		t.Errorf("qr100, late ticks: %d full seconds in %.2f s, want 3", full, res.Seconds)
	}

	// qp100: point queries find the rows they look up.
	o = opts("qp100")
	o.Duration = 3 * time.Second
	res = stepRun(t, srv, root, o)
	if res.Queries == 0 || res.QueryRows < res.Queries*10*95/100 || res.QueryRows > res.Queries*10 {
		t.Errorf("qp100: %d rows from %d point queries of 10 ids", res.QueryRows, res.Queries)
	}

	// A target the machine cannot reach is reported below target.
	o = opts("qr100000")
	o.Duration = 3 * time.Second
	res = stepRun(t, srv, root, o)
	if !res.BelowTarget() || res.TargetInsertsPerSecond != 200_000 || res.PerSecond(record.OpInsert) >= 0.95*200_000 {
		t.Errorf("qr100000: %.0f inserts/s of a target of %v: below target %v", res.PerSecond(record.OpInsert), res.TargetInsertsPerSecond, res.BelowTarget())
	}

	// A q step on tables that do not exist fails before any load.
	o = opts("qr100")
	o.Table, o.Duration = "nosuch", time.Second
	_, err = runStep(context.Background(), loadConfig(srv), o)
	var se *stateError
	if !errors.As(err, &se) || se.Table != "nosuch1" {
		t.Errorf("qr100 without tables: %v, want a *StateError for nosuch1", err)
	}
	// l.x on tables that have the indexes fails likewise.
	_, err = runStep(context.Background(), loadConfig(srv), opts("l.x"))
	if !errors.As(err, &se) || !strings.Contains(se.Problem, "secondary indexes already") {
		t.Errorf("l.x twice: %v, want a *StateError", err)
	}
}

// A server that dies or hangs mid-step fails the step with the statement
// and the reason, within the statement timeout, and keeps what was
// measured until then.
func TestServerFailsMidStep(t *testing.T) {
	srv := testdb.New(t, testdb.Options{})
	const timeout = 3 * time.Second
	o := DefaultOptions(mustStep(t, "l.i0"))
	o.Rows, o.Table, o.StatementTimeout = 100_000_000, "dead", timeout

	// Hung: SIGSTOP. No answer comes; the statement's deadline ends it.
	t.Cleanup(func() { syscall.Kill(srv.Pid, syscall.SIGCONT) })
	var failAt atomic.Int64 // unix ns
	since := func() time.Duration { return time.Since(time.Unix(0, failAt.Load())) }
	o.AtStart = func(time.Time) {
		time.AfterFunc(time.Second, func() { failAt.Store(time.Now().UnixNano()); syscall.Kill(srv.Pid, syscall.SIGSTOP) })
	}
	res, err := runStep(context.Background(), loadConfig(srv), o)
	took := since()
	t.Logf("hung server: %v after %s", err, took)
	if err == nil || !strings.Contains(err.Error(), "no answer within the statement timeout (3s") || !strings.Contains(err.Error(), "insert ids") {
		t.Errorf("hung server: %v, want a statement timeout on an insert", err)
	}
	if took > timeout+3*time.Second {
		t.Errorf("hung server: runStep returned %s after the server stopped, the statement timeout is %s", took, timeout)
	}
	if res == nil || res.Inserted == 0 || res.Histograms[record.OpInsert].Count() == 0 {
		t.Errorf("hung server: the rows inserted before were lost: %+v", res)
	}
	if err := syscall.Kill(srv.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	// Dead: SIGKILL. The connections break at once.
	o.AtStart = func(time.Time) {
		time.AfterFunc(time.Second, func() { failAt.Store(time.Now().UnixNano()); srv.Kill() })
	}
	res, err = runStep(context.Background(), loadConfig(srv), o)
	took = since()
	t.Logf("killed server: %v after %s", err, took)
	if err == nil || !strings.Contains(err.Error(), "insert ids") || !strings.Contains(err.Error(), "the connection broke") {
		t.Errorf("killed server: %v, want the insert that failed and why", err)
	}
	if took > timeout {
		t.Errorf("killed server: runStep returned %s after the kill, the statement timeout is %s", took, timeout)
	}
	if res == nil || res.Inserted == 0 {
		t.Errorf("killed server: the rows inserted before were lost: %+v", res)
	}
}

// Ctrl-C stops a step at once and says so.
func TestInterrupt(t *testing.T) {
	srv := testdb.Shared(t)
	o := DefaultOptions(mustStep(t, "l.i0"))
	o.Rows, o.Table = 100_000_000, "intr"
	ctx, cancel := context.WithCancel(context.Background())
	o.AtStart = func(time.Time) { time.AfterFunc(500*time.Millisecond, cancel) }
	res, err := runStep(ctx, loadConfig(srv), o)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("runStep = %v, want an interruption", err)
	}
	if res == nil || res.Inserted == 0 || res.Seconds <= 0 {
		t.Errorf("what was measured before the interruption was lost: %+v", res)
	}
}
