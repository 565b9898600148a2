package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/perfbench/perfbench/internal/load/insertbench"
	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/record"
)

// insertRun is one measurement of an insert-benchmark step: perfbench's
// own driver (package insertbench), run as a process of its own
// (perfbench insert-driver), is the load, and the window is its load
// exactly: the counters are attached before its clients connect, the
// window opens before its first operation (the driver waits for it) and
// closes when its last operation ended. l steps run until their rows are
// in, q steps for their duration.
type insertRun struct {
	sr   *stepRun
	opts insertbench.Options
}

// driverStopGrace is how long an interrupted driver has to stop its load
// and report what it did before it is killed.
const driverStopGrace = 10 * time.Second

// runInsert measures an insert-benchmark step on a running server.
func (r *runner) runInsert(ctx context.Context, sr *stepRun) *record.Record {
	s := sr.s
	ir := &insertRun{sr: sr, opts: *sr.st.Insert}
	log, err := createOut(sr.logPath)
	if err != nil {
		return failed(sr.newRecord(), "create the load's log: %v", err)
	}
	defer log.Close()
	exe, err := os.Executable()
	if err != nil {
		return failed(sr.newRecord(), "find perfbench's executable to run the insert driver: %v", err)
	}

	sess, rec := sr.open(ctx)
	if rec != nil {
		return rec
	}
	defer sess.Close()

	// The server and the driver go where a sysbench step of these
	// threads would put the server and sysbench.
	s.placeServer(sr.it.Threads)
	_, client := r.place.at(sr.it.Threads)

	cfg := ir.config()
	fmt.Fprintf(log, "# insert-benchmark step %s: %d tables, user %s on %s %s\n", ir.opts.Step.Name, ir.opts.Tables, cfg.User, cfg.Net, cfg.Addr)
	drv, err := insertbench.StartDriver([]string{exe, insertbench.DriverCommand}, cfg, ir.opts, client, log)
	if err != nil {
		return failed(sr.newRecord(), "%v", err)
	}
	// Ctrl-C reaches perfbench alone: it stops the driver, which reports
	// what it did.
	stopped := make(chan struct{})
	defer func() { <-stopped }()
	dctx, stopDriver := context.WithCancel(ctx)
	defer stopDriver()
	go func() {
		defer close(stopped)
		select {
		case <-dctx.Done():
			drv.Stop(driverStopGrace)
		case <-drv.Exited():
		}
	}()

	// The driver connects and prepares, then waits for the window to open
	// before its first operation.
	select {
	case <-drv.Ready():
	case <-drv.Exited():
	case <-ctx.Done():
	}
	select {
	case <-drv.Ready():
	default:
		// The driver ended before its load started: nothing to measure.
		stopDriver()
		_, derr := drv.Wait()
		rec := failed(sr.newRecord(), "%v", derr)
		if ctx.Err() != nil {
			rec.Error = "interrupted before the window opened: nothing was measured"
		} else if s.down(ctx) {
			r.crashed(rec, s)
		}
		fmt.Fprintf(log, "%s\n", rec.Error)
		return rec
	}
	s.placed = r.observePlacement(s, client, drv.Pid())
	return ir.window(ctx, sess, drv, stopDriver, log)
}

// window measures the window of a ready driver's load and decides the
// step's outcome; stopDriver interrupts the driver.
func (ir *insertRun) window(ctx context.Context, sess session, drv *insertbench.Driver, stopDriver func(), log *os.File) *record.Record {
	sr := ir.sr
	r, s := sr.r, sr.s
	// The window closes when the driver's last operation ended, or when
	// the driver or the server exits.
	wctx, stopWatch := context.WithCancel(ctx)
	loadEnd := make(chan struct{})
	go func() {
		select {
		case <-drv.Ended():
		case <-drv.Exited():
		case <-s.exited(wctx):
		case <-wctx.Done():
			return
		}
		close(loadEnd)
	}()
	var once sync.Once
	var startErr error
	var opened atomic.Bool
	rec, merr := sess.Measure(ctx, measure.WindowSpec{Done: loadEnd, Opened: func(time.Time) {
		once.Do(func() { startErr = drv.Start(); opened.Store(startErr == nil) })
	}})
	stopWatch()
	if !opened.Load() || merr != nil {
		stopDriver() // the window never opened, or failed: stop the driver
	}
	res, derr := drv.Wait()
	if rec == nil {
		rec = sr.newRecord()
		if merr == nil {
			merr = errors.New("no record")
		}
	}
	once.Do(func() {}) // startErr is set from here on
	if merr == nil && startErr != nil {
		merr = startErr
	}
	ir.apply(rec, res)
	ir.log(log, rec, res, derr)

	switch {
	case ctx.Err() != nil:
		if rec.Outcome == record.OutcomeOK {
			rec.Outcome = record.OutcomePartial
		}
		if rec.Error == "" {
			rec.Error = fmt.Sprintf("interrupted after %.1f s of the step", rec.Window.Seconds)
		}
	case !s.running() || (derr != nil && s.down(ctx)):
		r.crashed(rec, s)
		if derr != nil {
			rec.Error += "\nthe driver: " + derr.Error()
		}
	case merr != nil:
		failed(rec, "measure the window: %v", merr)
	case derr != nil:
		failed(rec, "%v (output in %s)", derr, sr.logPath)
	}
	return rec
}

// config is how the driver reaches the server: the plan's account and
// database, on the server's socket or TCP port.
func (ir *insertRun) config() *mysql.Config {
	sr := ir.sr
	d := sr.r.plan.Data
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = d.User, d.Password, d.DB
	c := sr.s.conn
	switch {
	case c.Socket != "":
		cfg.Net, cfg.Addr = "unix", c.Socket
	default:
		host := c.Host
		if host == "" || host == "localhost" {
			host = "127.0.0.1"
		}
		cfg.Net, cfg.Addr = "tcp", fmt.Sprintf("%s:%d", host, c.Port)
	}
	return cfg
}

// apply sets the driver's results on rec: the Record's insert fields, the
// client (the driver) with its per-second lines, and the op count (the
// step's main operations).
func (ir *insertRun) apply(rec *record.Record, res *insertbench.Result) {
	sr := ir.sr
	if res == nil {
		return
	}
	main := res.Step.Main()
	in := &record.Insert{
		Inserts:                float64(res.Inserted),
		Queries:                float64(res.Queries),
		TargetInsertsPerSecond: res.TargetInsertsPerSecond,
		Histograms:             map[string][]record.Bucket{},
		MaxSeconds:             map[string]float64{},
	}
	if res.Step.Kind == insertbench.Index {
		in.Inserts = float64(res.RowsIndexed)
	}
	if !math.IsNaN(res.P50) {
		in.P50, in.P99 = res.P50, res.P99
	}
	for kind, h := range res.Histograms {
		in.Histograms[kind] = h.Buckets()
		in.MaxSeconds[kind] = h.Max.Seconds()
		if kind == main {
			in.Histogram = h.Buckets()
			in.MaxOpSeconds = h.Max.Seconds()
		}
	}
	in.RowsBefore, in.RowsAfter = float64(res.RowsBefore), float64(res.RowsAfter)
	in.DriverCPUSeconds = (res.DriverUser + res.DriverSystem).Seconds()
	in.DriverPeakRSSBytes = float64(res.DriverPeakRSSBytes)
	in.DBGBLogical, in.DBGBDir = ir.sizes(rec)
	rec.Insert = in

	events := float64(res.Inserted)
	switch res.Step.Kind {
	case insertbench.Query:
		events = float64(res.Queries)
	case insertbench.Index:
		events = float64(res.RowsIndexed)
	}
	c := &record.Client{
		Tool:    "insert-benchmark",
		Command: []string{"perfbench", "insert-benchmark", res.Step.Name},
		Started: res.Start,
		Seconds: res.Seconds,
		Queries: float64(res.Queries),
		Inserts: float64(res.Inserted),
		Events:  events,
	}
	for _, p := range res.Series {
		if p.Seconds <= 0 {
			continue
		}
		iv := record.Interval{At: p.T, Threads: res.Clients,
			QPS: p.Rate(record.OpQuery), Writes: p.Rate(record.OpInsert), Other: p.Rate(record.OpDelete)}
		iv.TPS = iv.Writes
		if main == record.OpQuery {
			iv.TPS = iv.QPS
		}
		c.Intervals = append(c.Intervals, iv)
	}
	sr.r.applyClient(rec, sr.st, c)
	for _, w := range res.Warnings {
		rec.Warnf(record.WarnGeneral, "%s", w)
	}
}

// sizes returns the database's logical size (data and indexes as the
// server counts them) and the data directory's size on disk, GB (2^30
// bytes), at the end of the step; 0 for what could not be read.
func (ir *insertRun) sizes(rec *record.Record) (logical, dir float64) {
	const gb = 1 << 30
	sr := ir.sr
	if db, err := sql.Open("mysql", ir.config().FormatDSN()); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var n sql.NullFloat64
		err := db.QueryRowContext(ctx, "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()").Scan(&n)
		cancel()
		db.Close()
		if err == nil && n.Valid {
			logical = n.Float64 / gb
		} else if err != nil {
			rec.Warnf(record.WarnGeneral, "the database's size was not read: %v", err)
		}
	}
	if d := sr.s.datadir; d != "" {
		var sum int64
		err := filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil // a file removed meanwhile
			}
			if fi, err := e.Info(); err == nil {
				sum += fi.Size()
			}
			return nil
		})
		if err == nil {
			dir = float64(sum) / gb
		}
	}
	return logical, dir
}

// log writes the driver's summary to the step's log and the run's
// progress: its rates, and its own CPU per operation next to the
// server's.
func (ir *insertRun) log(log *os.File, rec *record.Record, res *insertbench.Result, err error) {
	if res == nil {
		return
	}
	sr := ir.sr
	line := fmt.Sprintf("%s: %d rows inserted, %d deleted, %d queries in %.2f s", res.Step.Name, res.Inserted, res.Deleted, res.Queries, res.Seconds)
	if t := res.TargetInsertsPerSecond; t > 0 {
		line += fmt.Sprintf("; %.0f inserts/s of a target of %.0f", res.PerSecond(record.OpInsert), t)
		if res.BelowTarget() {
			line += " (below 95%: not sustained)"
		}
	}
	fmt.Fprintln(log, line)
	if l := driverLine(res.Step.Name, rec); l != "" {
		fmt.Fprintln(log, l)
		sr.r.prog.printf("perfbench run: %s", l)
	}
	if err != nil {
		fmt.Fprintf(log, "error: %v\n", err)
	}
}

// driverLine says, from step's rec, the driver's CPU per operation next to the
// server's (the op count: rows inserted, queries, rows indexed) and both
// one's memory; "" without an op count.
func driverLine(step string, rec *record.Record) string {
	in, ops := rec.Insert, rec.Ops.Count
	if in == nil || ops <= 0 {
		return ""
	}
	drv, srv, ratio := "not measured", "not measured", ""
	if in.DriverCPUSeconds > 0 {
		drv = fmt.Sprintf("%.2f µs", in.DriverCPUSeconds/ops*1e6)
	}
	rss := "server RSS not measured"
	if rec.OS != nil {
		cpu := rec.OS.UserSeconds + rec.OS.SystemSeconds
		srv = fmt.Sprintf("%.2f µs", cpu/ops*1e6)
		if in.DriverCPUSeconds > 0 && cpu > 0 {
			ratio = fmt.Sprintf(" (driver/server %.0f%%)", 100*in.DriverCPUSeconds/cpu)
		}
		rss = fmt.Sprintf("server RSS %.1f MB", rec.OS.RSSBytes/(1<<20))
	}
	return fmt.Sprintf("%s: CPU per operation: the insert driver %s, the server %s%s; driver peak RSS %.1f MB, %s",
		step, drv, srv, ratio, in.DriverPeakRSSBytes/(1<<20), rss)
}
