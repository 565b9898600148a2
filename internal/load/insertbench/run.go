package insertbench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/perfbench/perfbench/record"
)

// Result is what a step measured. Rates are over Seconds, from the first
// operation to the end of the last.
//
// Its numbers go to the Record's insert fields: Inserted to inserts (for
// l.x: RowsIndexed), Queries to queries, P50/P99 to p50/p99,
// Histograms[kind].Buckets() to histograms and their Max to max_seconds,
// the main kind's (Step.Main) to histogram and max_op_seconds,
// TargetInsertsPerSecond to target_inserts_per_second; Series to the
// Record's per-second series.
type Result struct {
	Step    Step
	Clients int
	// RowsPerCommit and Rate are the step's options.
	RowsPerCommit int
	Rate          int

	// Start and End bound the load: the instant before the first
	// operation and the one after the last ended.
	Start, End time.Time
	Seconds    float64

	// Inserted and Deleted are rows; Queries are queries run and
	// QueryRows the rows they returned. RowsIndexed is, for l.x, the rows
	// of the tables the indexes were built over.
	Inserted, Deleted  int64
	Queries, QueryRows int64
	RowsIndexed        int64

	// Histograms holds the response times by kind of operation (record.OpInsert:
	// one INSERT of RowsPerCommit rows; record.OpDelete: one DELETE; record.OpQuery: one
	// query), for the kinds the step runs.
	Histograms map[string]*Histogram

	// Series is the load second by second.
	Series []Point
	// P50 and P99 are percentiles of the per-client per-second rates of
	// the step's main operation (see ratePercentiles), from RateSeconds
	// client-seconds; NaN when there was none (l.x, a load shorter than
	// a second).
	P50, P99    float64
	RateSeconds int

	// TargetInsertsPerSecond is Rate summed over the clients (q steps).
	TargetInsertsPerSecond float64

	// RowsBefore and RowsAfter are the rows of the tables before and
	// after the step, summed; Tables has them by table.
	RowsBefore, RowsAfter int64
	Tables                []tableResult

	// DriverUser and DriverSystem are the CPU time of the driver's
	// process over the load (every client's goroutines, the garbage
	// collector, and anything else the process ran meanwhile: under
	// perfbench run, the process perfbench insert-driver runs the driver
	// alone). DriverPeakRSSBytes is its largest resident memory seen at a
	// per-second sample of the step.
	DriverUser, DriverSystem time.Duration
	DriverPeakRSSBytes       int64

	// Warnings are conditions that weaken the result without voiding it.
	Warnings []string
}

// tableResult is one table's part of a step.
type tableResult struct {
	Name string
	// RowsBefore and RowsAfter come from the table's id range (the
	// table is a queue without holes while only this driver writes it);
	// RowsAfter is counted as RowsBefore + Inserted - Deleted and checked
	// against the id range after the step.
	RowsBefore, RowsAfter int64
	Inserted, Deleted     int64
	Queries               int64
	// IndexSeconds is how long l.x's ALTER TABLE took.
	IndexSeconds float64
}

// PerSecond returns the rate of kind (record.OpInsert, record.OpDelete, record.OpQuery) over
// the step; for l.x, record.OpInsert gives the rows indexed per second.
func (r *Result) PerSecond(kind string) float64 {
	if r.Seconds <= 0 {
		return math.NaN()
	}
	n := counts{Inserts: r.Inserted, Deletes: r.Deleted, Queries: r.Queries}.of(kind)
	if kind == record.OpInsert && r.Step.Kind == Index {
		n = r.RowsIndexed
	}
	return float64(n) / r.Seconds
}

// BelowTarget reports whether a q step's writers fell short of their
// target: fewer than 95% of TargetInsertsPerSecond.
func (r *Result) BelowTarget() bool {
	return record.BelowTarget(r.PerSecond(record.OpInsert), r.TargetInsertsPerSecond)
}

// DriverCPUPerOp is the driver's CPU time per main operation (per row
// inserted for l.i0, l.i1, l.i2; per query for the q steps; per row
// indexed for l.x), to print next to the server's CPU per operation.
func (r *Result) DriverCPUPerOp() time.Duration {
	n := r.Inserted
	switch r.Step.Kind {
	case Query:
		n = r.Queries
	case Index:
		n = r.RowsIndexed
	}
	if n == 0 {
		return 0
	}
	return (r.DriverUser + r.DriverSystem) / time.Duration(n)
}

// stateError is a table that is not as the step needs it.
type stateError struct {
	Step    string
	Table   string
	Problem string
}

func (e *stateError) Error() string {
	return fmt.Sprintf("insert-benchmark step %s: table %s: %s", e.Step, e.Table, e.Problem)
}

// client is one client: one table, and the connections of its roles
// (inserter, deleter, querier; l.x: the index builder).
type client struct {
	n     int // 1-based
	table string

	// per counts the rows inserted, rows deleted and queries run, by
	// the second in which each statement ended (hIns, hDel, hQry); each
	// is written by one goroutine, read after all ended.
	per [3]tally
	// mainEnd is when the client's main loop (inserts in an l step,
	// queries in a q step) ended.
	mainEnd time.Time
	// minID and maxID are the live ids of the table.
	minID, maxID atomic.Int64

	// Each histogram is written by one goroutine, read after all ended.
	hist      [3]Histogram // insert, delete, query
	queryRows int64
	before    int64
	indexed   time.Duration
	warnings  []string // written by the deleter only

	conns []*sql.Conn
}

const (
	hIns = iota
	hDel
	hQry
)

var histKinds = [3]string{record.OpInsert, record.OpDelete, record.OpQuery}

type nopLogger struct{}

func (nopLogger) Print(...any) {}

// run holds a step's state.
type run struct {
	o       Options
	clock   clock
	stmtDB  *sql.DB // connections with the statement timeout
	ddlDB   *sql.DB // connections with the DDL timeout
	clients []*client
	loadCtx context.Context // ends when the load should stop (q steps)

	mu   sync.Mutex
	live []shutdowner // every connection opened

	// insTimeout is the read and write timeout the INSERTs set on their
	// sockets: 0 when these time out by themselves.
	insTimeout time.Duration
}

// shutdowner is a connection that can be woken from a blocked read or
// write, from another goroutine.
type shutdowner interface{ Shutdown() }

// deadlineShutdown wakes one of Go's connections by a deadline in the past.
type deadlineShutdown struct{ net.Conn }

func (c deadlineShutdown) Shutdown() { c.SetDeadline(time.Unix(1, 0)) }

// shutdownAll wakes every connection: the load's statements run without a
// context (see bg), so this is how they stop when the step fails or is
// interrupted.
func (r *run) shutdownAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.live {
		c.Shutdown()
	}
}

// bg is the context of the load's statements. A context that can end
// makes the driver hand every statement to a goroutine that watches it:
// two goroutine switches per statement, a third of the driver's CPU per
// query as measured here. The statements are bounded by their
// connection's timeouts instead, and stopped by shutdownAll.
var bg = context.Background()

// runStep runs one step of the insert benchmark against the database that cfg
// reaches (cfg.DBName must be set; cfg itself is not changed) and returns
// what it measured. Before the load it opens every connection, prepares
// every statement and, for l.i0, drops and creates the tables; for the
// other steps it checks the tables are as the step needs them
// (*stateError otherwise).
//
// Connections: one per client and role, each on its own table: l.i0 and
// l.x one per client; l.i1 and l.i2 two (inserts, and deletes that follow
// them); q steps three (queries, rate-limited inserts, deletes). Plus one
// for the setup and the checks.
//
// Every statement is bounded by StatementTimeout (DDL by DDLTimeout), the
// read and write timeout of its connection, so a server that dies or
// hangs fails the step with the statement and the reason instead of
// hanging it. The first error ends the step: runStep returns it with the
// Result so far (nil only when nothing ran). When ctx ends, the step
// stops likewise and the error wraps ctx's.
func runStep(ctx context.Context, cfg *mysql.Config, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if cfg.DBName == "" {
		return nil, fmt.Errorf("insert-benchmark step %s: no database given to connect to", o.Step.Name)
	}
	r := &run{o: o, clock: o.clock}
	if ownTimeouts(cfg) {
		defer raiseProcs(o.waiters() + 1)()
	} else {
		r.insTimeout = o.StatementTimeout
	}
	if r.clock == nil {
		r.clock = realClock{}
	}
	var err error
	if r.stmtDB, err = r.openDB(cfg, o.StatementTimeout); err != nil {
		return nil, err
	}
	defer r.stmtDB.Close()
	if r.ddlDB, err = r.openDB(cfg, o.DDLTimeout); err != nil {
		return nil, err
	}
	defer r.ddlDB.Close()

	setup, err := r.conn(ctx, r.ddlDB, "setup")
	if err != nil {
		return nil, err
	}
	defer setup.Close()
	for i := 1; i <= o.Tables; i++ {
		r.clients = append(r.clients, &client{n: i, table: o.tableName(i)})
	}
	defer func() {
		for _, c := range r.clients {
			for _, cn := range c.conns {
				cn.Close()
			}
		}
	}()
	if err := r.prepareTables(ctx, setup); err != nil {
		return nil, err
	}
	rls, err := r.openClients(ctx)
	if err != nil {
		return nil, err
	}
	return r.load(ctx, setup, rls)
}

// openDB opens a pool for connections whose statements may take up to
// timeout. Its connections are blockingConns (Linux), which time out by
// themselves, unless cfg has a dial function of its own: then the driver's
// read and write timeouts bound them. Every connection is tracked for
// shutdownAll.
func (r *run) openDB(cfg *mysql.Config, timeout time.Duration) (*sql.DB, error) {
	c := cfg.Clone()
	c.InterpolateParams = false // server-side prepared statements
	c.Logger = nopLogger{}      // errors reach the caller; no log lines
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	c.ReadTimeout, c.WriteTimeout = timeout, timeout
	dial := c.DialFunc
	if dial == nil {
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialServer(ctx, network, addr, timeout)
		}
	}
	if ownTimeouts(cfg) {
		c.ReadTimeout, c.WriteTimeout = 0, 0
	}
	c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err == nil {
			if slot, ok := ctx.Value(dialedKey{}).(*net.Conn); ok {
				*slot = conn
			}
			s, ok := conn.(shutdowner)
			if !ok {
				s = deadlineShutdown{conn}
			}
			r.mu.Lock()
			r.live = append(r.live, s)
			r.mu.Unlock()
		}
		return conn, err
	}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, fmt.Errorf("insert benchmark: configure the connection to %s: %w", c.Addr, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxIdleConns(-1) // connections are pinned (db.Conn), never pooled
	return db, nil
}

// waiters is how many of the load's goroutines wait on a connection to
// the server at once: one per client and role.
func (o Options) waiters() int {
	roles := map[kind]int{Load: 1, Index: 1, Insert: 2, Query: 3}[o.Step.Kind]
	return roles * o.Tables
}

// raiseProcs raises GOMAXPROCS to n when it is lower, and returns what
// sets it back. A goroutine that waits on a blockingConn keeps its P
// (its system calls are raw), so that the load's goroutines, each waiting
// on a connection of its own, need a P each, and the rest of the process
// (timers, the memory sampler, the garbage collector) one more. runStep
// is not run by two goroutines of a process at once.
func raiseProcs(n int) (restore func()) {
	prev := runtime.GOMAXPROCS(0)
	if prev >= n {
		return func() {}
	}
	runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(prev) }
}

// ownTimeouts tells whether the connections of cfg time out by themselves
// (blockingConns).
func ownTimeouts(cfg *mysql.Config) bool { return cfg.DialFunc == nil && kernelTimeouts }

// dialedKey is the key of a *net.Conn in the context of db.Conn that
// receives the socket the driver connects over (database/sql gives the
// driver that context when it opens a connection for the call).
type dialedKey struct{}

func (r *run) conn(ctx context.Context, db *sql.DB, role string) (*sql.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, r.o.StatementTimeout)
	defer cancel()
	c, err := db.Conn(cctx)
	if err != nil {
		return nil, fmt.Errorf("insert-benchmark step %s: connect (%s): %w", r.o.Step.Name, role, err)
	}
	return c, nil
}

// exec runs a statement of the setup connection, bounded by the DDL
// timeout.
func (r *run) exec(ctx context.Context, c *sql.Conn, q string) error {
	sctx, cancel := context.WithTimeout(ctx, r.o.DDLTimeout)
	defer cancel()
	t0 := time.Now()
	_, err := c.ExecContext(sctx, q)
	return r.stmtErr(ctx, err, time.Since(t0), r.o.DDLTimeout, "%s", q)
}

// stmtErr wraps err of a statement that ran for took with a timeout of
// timeout: a statement that ran out of time says so, one whose connection
// broke says that.
func (r *run) stmtErr(ctx context.Context, err error, took, timeout time.Duration, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if ctx.Err() == nil && took >= timeout {
		return fmt.Errorf("insert-benchmark step %s: %s: no answer within the statement timeout (%s; is the server hung or overloaded?): %w",
			r.o.Step.Name, what, timeout, err)
	}
	if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn) {
		return fmt.Errorf("insert-benchmark step %s: %s: the connection broke (did the server die or restart?): %w", r.o.Step.Name, what, err)
	}
	return fmt.Errorf("insert-benchmark step %s: %s: %w", r.o.Step.Name, what, err)
}

// prepareTables creates the tables (l.i0) or checks them, and reads their
// id ranges.
func (r *run) prepareTables(ctx context.Context, setup *sql.Conn) error {
	for _, c := range r.clients {
		if r.o.Step.Kind == Load {
			if err := r.exec(ctx, setup, "DROP TABLE IF EXISTS "+c.table); err != nil {
				return err
			}
			if err := r.exec(ctx, setup, createTableSQL(c.table, r.o.Engine)); err != nil {
				return err
			}
			c.minID.Store(1)
			continue
		}
		if err := r.checkTable(ctx, setup, c.table); err != nil {
			return err
		}
		lo, hi, err := r.idRange(ctx, setup, c.table)
		if err != nil {
			return err
		}
		c.minID.Store(lo)
		c.maxID.Store(hi)
		c.before = hi - lo + 1
	}
	return nil
}

// checkTable checks that table exists with (or, for l.x, without) the
// secondary indexes.
func (r *run) checkTable(ctx context.Context, setup *sql.Conn, table string) error {
	sctx, cancel := context.WithTimeout(ctx, r.o.StatementTimeout)
	defer cancel()
	// Names are checked identifiers; the text protocol keeps the setup
	// out of the prepared-statement counts.
	q := "SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" + table + "'"
	t0 := time.Now()
	rows, err := setup.QueryContext(sctx, q)
	if err != nil {
		return r.stmtErr(ctx, err, time.Since(t0), r.o.StatementTimeout, "read the indexes of %s", table)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return fmt.Errorf("insert-benchmark step %s: read the indexes of %s: %w", r.o.Step.Name, table, err)
		}
		have[name] = true
	}
	if err := rows.Err(); err != nil {
		return r.stmtErr(ctx, err, time.Since(t0), r.o.StatementTimeout, "read the indexes of %s", table)
	}
	if !have["PRIMARY"] {
		return &stateError{Step: r.o.Step.Name, Table: table, Problem: "does not exist (or has no primary key): run l.i0 first"}
	}
	n := 0
	for _, x := range secondaryIndexes {
		if have[table+"_"+x.suffix] {
			n++
		}
	}
	switch {
	case r.o.Step.Kind == Index && n > 0:
		return &stateError{Step: r.o.Step.Name, Table: table, Problem: "has secondary indexes already: l.x runs once after l.i0"}
	case r.o.Step.Kind != Index && n < len(secondaryIndexes):
		return &stateError{Step: r.o.Step.Name, Table: table, Problem: "lacks the secondary indexes: run l.x first"}
	}
	return nil
}

// idRange returns the smallest and largest id of table; an empty table
// gives (1, 0).
func (r *run) idRange(ctx context.Context, c *sql.Conn, table string) (lo, hi int64, err error) {
	sctx, cancel := context.WithTimeout(ctx, r.o.StatementTimeout)
	defer cancel()
	var mn, mx sql.NullInt64
	t0 := time.Now()
	err = c.QueryRowContext(sctx, "SELECT MIN(transactionid), MAX(transactionid) FROM "+table).Scan(&mn, &mx)
	if err != nil {
		return 0, 0, r.stmtErr(ctx, err, time.Since(t0), r.o.StatementTimeout, "read the id range of %s", table)
	}
	if !mn.Valid {
		return 1, 0, nil
	}
	return mn.Int64, mx.Int64, nil
}

// roles are a client's prepared statements, by role.
type roles struct {
	// insert and insertRest insert RowsPerCommit rows and the rest of
	// l.i0's rows: statements on the socket of insConn, run inside
	// insConn.Raw (see insert).
	insConn            *sql.Conn
	insert, insertRest *wireStmt
	delete             *sql.Stmt
	queries            []*sql.Stmt
	index              *sql.Conn
}

// openClients opens every client's connections and prepares their
// statements.
func (r *run) openClients(ctx context.Context) ([]roles, error) {
	o := r.o
	out := make([]roles, len(r.clients))
	for i, c := range r.clients {
		var dialed net.Conn
		open := func(db *sql.DB, role string) (*sql.Conn, error) {
			cn, err := r.conn(context.WithValue(ctx, dialedKey{}, &dialed), db, fmt.Sprintf("client %d %s", c.n, role))
			if err == nil {
				c.conns = append(c.conns, cn)
			}
			return cn, err
		}
		prepare := func(cn *sql.Conn, q string) (*sql.Stmt, error) {
			sctx, cancel := context.WithTimeout(ctx, o.StatementTimeout)
			defer cancel()
			t0 := time.Now()
			s, err := cn.PrepareContext(sctx, q)
			return s, r.stmtErr(ctx, err, time.Since(t0), o.StatementTimeout, "client %d: prepare %.60s...", c.n, q)
		}
		rl := &out[i]
		var err error
		if o.Step.Kind == Index {
			rl.index, err = open(r.ddlDB, "index")
			if err != nil {
				return nil, err
			}
			continue
		}
		ins, err := open(r.stmtDB, "insert")
		if err != nil {
			return nil, err
		}
		rl.insConn = ins
		if dialed == nil {
			return nil, fmt.Errorf("insert-benchmark step %s: client %d: the insert connection's socket is not known", o.Step.Name, c.n)
		}
		w := newWireConn(dialed, r.insTimeout)
		if rl.insert, err = r.prepareWire(ctx, c, w, o.RowsPerCommit); err != nil {
			return nil, err
		}
		if rest := int(o.Rows % int64(o.RowsPerCommit)); rest > 0 {
			if rl.insertRest, err = r.prepareWire(ctx, c, w, rest); err != nil {
				return nil, err
			}
		}
		if o.Step.Kind == Load {
			continue
		}
		del, err := open(r.stmtDB, "delete")
		if err != nil {
			return nil, err
		}
		if rl.delete, err = prepare(del, deleteSQL(c.table)); err != nil {
			return nil, err
		}
		if o.Step.Kind != Query {
			continue
		}
		qc, err := open(r.stmtDB, "query")
		if err != nil {
			return nil, err
		}
		qs := rangeQueries(c.table, o.RowsPerQuery)
		if o.Step.Point {
			qs = []string{pointQuerySQL(c.table, o.RowsPerQuery)}
		}
		for _, q := range qs {
			s, err := prepare(qc, q)
			if err != nil {
				return nil, err
			}
			rl.queries = append(rl.queries, s)
		}
	}
	return out, nil
}

// prepareWire prepares c's INSERT of rows rows on w, the socket of one
// of the driver's connections, idle meanwhile.
func (r *run) prepareWire(ctx context.Context, c *client, w *wireConn, rows int) (*wireStmt, error) {
	q := insertSQL(c.table, rows)
	defer context.AfterFunc(ctx, r.shutdownAll)() // ctx ends: the prepare too
	t0 := time.Now()
	st, err := w.prepare(q, rows)
	return st, r.stmtErr(ctx, err, time.Since(t0), r.o.StatementTimeout, "client %d: prepare %.60s...", c.n, q)
}

// group runs the clients' goroutines; the first error cancels the others.
type group struct {
	wg     sync.WaitGroup
	once   sync.Once
	err    error
	cancel context.CancelFunc
}

func (g *group) Go(f func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := f(); err != nil {
			g.once.Do(func() { g.err = err; g.cancel() })
		}
	}()
}

// load runs the step's load and gathers the Result.
func (r *run) load(ctx context.Context, setup *sql.Conn, rls []roles) (*Result, error) {
	o := r.o
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	loadCtx, stopLoad := context.WithCancel(runCtx)
	defer stopLoad()
	r.loadCtx = loadCtx
	g := &group{cancel: cancelRun}
	stopShutdown := context.AfterFunc(runCtx, r.shutdownAll)

	if o.AtStart != nil {
		o.AtStart(r.clock.Now())
	}
	// The load starts when AtStart returns: it may wait (for a window to
	// open).
	start := r.clock.Now()
	user0, sys0, cpuErr := selfCPU()
	for _, c := range r.clients {
		for k := range c.per {
			c.per[k].start = start
		}
	}
	smp := newRSSSampler(r.clock, start)
	smpCtx, stopSampler := context.WithCancel(runCtx)
	smpDone := make(chan struct{})
	go func() { defer close(smpDone); smp.run(smpCtx) }()
	if o.Step.Kind == Query {
		go func() {
			if r.clock.SleepUntil(loadCtx, start.Add(o.Duration)) == nil {
				stopLoad()
			}
		}()
	}

	for i, c := range r.clients {
		rl := rls[i]
		rng := rand.New(rand.NewPCG(o.Seed, uint64(c.n)))
		switch o.Step.Kind {
		case Index:
			g.Go(func() error { return r.index(runCtx, c, rl.index) })
		case Load:
			g.Go(func() error { defer c.endMain(); return r.insert(runCtx, c, rl, rng, nil, nil) })
		case Insert:
			batches := make(chan int, 8)
			g.Go(func() error { defer c.endMain(); return r.insert(runCtx, c, rl, rng, nil, batches) })
			g.Go(func() error { return r.delete(runCtx, c, rl.delete, batches) })
		case Query:
			batches := make(chan int, 8)
			lim := newLimiter(r.clock, start, o.RowsPerCommit, o.Rate)
			wrng := rand.New(rand.NewPCG(o.Seed, uint64(c.n)+1<<32))
			g.Go(func() error { return r.insert(runCtx, c, rl, wrng, lim, batches) })
			g.Go(func() error { return r.delete(runCtx, c, rl.delete, batches) })
			g.Go(func() error { defer c.endMain(); return r.query(runCtx, c, rl.queries, rng) })
		}
	}
	g.wg.Wait()
	stopShutdown()
	end := r.clock.Now()
	user1, sys1, cpuErr1 := selfCPU()
	if o.AtEnd != nil {
		o.AtEnd(end)
	}
	stopSampler()
	<-smpDone
	lastRSS := smp.take()

	res := r.result(start, end, smp, lastRSS)
	if cpuErr == nil && cpuErr1 == nil {
		res.DriverUser, res.DriverSystem = user1-user0, sys1-sys0
	} else {
		res.Warnings = append(res.Warnings, fmt.Sprintf("perfbench's own CPU time is not known: %v", errors.Join(cpuErr, cpuErr1)))
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("insert-benchmark step %s interrupted after %.1fs: %w", o.Step.Name, res.Seconds, ctx.Err())
	}
	if g.err != nil {
		return res, g.err
	}
	r.checkAfter(ctx, setup, res)
	return res, nil
}

// endMain notes the end of the client's main loop.
func (c *client) endMain() { c.mainEnd = time.Now() }

// index builds the secondary indexes of c's table.
func (r *run) index(ctx context.Context, c *client, cn *sql.Conn) error {
	t0 := time.Now()
	if err := r.exec(ctx, cn, addIndexesSQL(c.table)); err != nil {
		return fmt.Errorf("client %d: %w", c.n, err)
	}
	c.indexed = time.Since(t0)
	return nil
}

// insert inserts c's rows: o.Rows of them, or, with a limiter, until the
// load stops. Each committed batch's size goes to batches (when not nil)
// for the deleter, which is closed at the end.
//
// The INSERTs run on the socket of the driver's connection, which Raw
// keeps from anything else meanwhile; the rows are generated into the
// packet (see wireConn).
func (r *run) insert(ctx context.Context, c *client, rl roles, rng *rand.Rand, lim *limiter, batches chan<- int) error {
	if batches != nil {
		defer close(batches)
	}
	return rl.insConn.Raw(func(any) error { return r.insertLoop(ctx, c, rl, rng, lim, batches) })
}

func (r *run) insertLoop(ctx context.Context, c *client, rl roles, rng *rand.Rand, lim *limiter, batches chan<- int) error {
	o := r.o
	gen := newRowGen(rng, o.PadMin, o.PadMax)
	next := c.maxID.Load() + 1
	if o.Step.Kind == Load {
		next = 1
	}
	left := o.Rows
	for lim != nil || left > 0 {
		if lim != nil && lim.Wait(r.loadCtx) != nil {
			return nil // the load stopped
		}
		n, stmt := o.RowsPerCommit, rl.insert
		if lim == nil && left < int64(n) {
			n, stmt = int(left), rl.insertRest
		}
		p := gen.appendRows(stmt.packet(), next, n, time.Now())
		t0 := time.Now()
		k, err := stmt.exec(p)
		t1 := time.Now()
		d := t1.Sub(t0)
		if err == nil && k != int64(n) {
			err = fmt.Errorf("the server inserted %d rows, not %d", k, n)
		}
		if err != nil {
			return r.stmtErr(ctx, err, d, o.StatementTimeout, "client %d: insert ids %d-%d into %s", c.n, next, next+int64(n)-1, c.table)
		}
		c.hist[hIns].Add(d)
		next += int64(n)
		left -= int64(n)
		c.maxID.Store(next - 1)
		c.per[hIns].add(t1, int64(n))
		if batches != nil {
			select {
			case batches <- n:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// delete deletes the oldest rows of c's table, as many as each batch
// received, until batches is closed.
func (r *run) delete(ctx context.Context, c *client, stmt *sql.Stmt, batches <-chan int) error {
	o := r.o
	lo := c.minID.Load()
	for {
		var n int
		select {
		case b, ok := <-batches:
			if !ok {
				return nil
			}
			n = b
		case <-ctx.Done():
			return ctx.Err()
		}
		hi := lo + int64(n)
		t0 := time.Now()
		res, err := stmt.ExecContext(bg, lo, hi)
		t1 := time.Now()
		d := t1.Sub(t0)
		if err != nil {
			return r.stmtErr(ctx, err, d, o.StatementTimeout, "client %d: delete ids %d-%d from %s", c.n, lo, hi-1, c.table)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("insert-benchmark step %s: client %d: delete from %s: %w", o.Step.Name, c.n, c.table, err)
		}
		if k != int64(n) && len(c.warnings) == 0 {
			c.warnings = append(c.warnings, fmt.Sprintf("table %s: deleting ids %d-%d removed %d rows, not %d: the table has holes (did something else write it?)",
				c.table, lo, hi-1, k, n))
		}
		c.hist[hDel].Add(d)
		lo = hi
		c.minID.Store(lo)
		c.per[hDel].add(t1, k)
	}
}

// query runs c's queries until the load stops.
func (r *run) query(ctx context.Context, c *client, stmts []*sql.Stmt, rng *rand.Rand) error {
	o := r.o
	args := make([]any, o.RowsPerQuery)
	for r.loadCtx.Err() == nil {
		i := rng.IntN(len(stmts))
		a := args[:1]
		if o.Step.Point {
			a = args
			lo, hi := c.minID.Load(), c.maxID.Load()
			for j := range a {
				a[j] = lo + rng.Int64N(max(hi-lo+1, 1))
			}
		} else {
			a[0] = rng.IntN(rangeQueryBound[i])
		}
		t0 := time.Now()
		n, err := queryRows(bg, stmts[i], a)
		t1 := time.Now()
		d := t1.Sub(t0)
		if err != nil {
			return r.stmtErr(ctx, err, d, o.StatementTimeout, "client %d: query %s", c.n, c.table)
		}
		c.hist[hQry].Add(d)
		c.queryRows += n
		c.per[hQry].add(t1, 1)
	}
	return nil
}

// queryRows runs a query and reads all its rows.
func queryRows(ctx context.Context, s *sql.Stmt, args []any) (int64, error) {
	rows, err := s.QueryContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	var n int64
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return n, err
	}
	return n, rows.Close()
}

// result gathers the clients' numbers.
func (r *run) result(start, end time.Time, smp *rssSampler, lastRSS int64) *Result {
	o := r.o
	res := &Result{
		Step:               o.Step,
		Clients:            o.Tables,
		RowsPerCommit:      o.RowsPerCommit,
		Rate:               o.Rate,
		Start:              start,
		End:                end,
		Seconds:            end.Sub(start).Seconds(),
		Histograms:         map[string]*Histogram{},
		Series:             series(start, end, r.clients, smp.rss, lastRSS),
		DriverPeakRSSBytes: smp.peak,
		P50:                math.NaN(),
		P99:                math.NaN(),
	}
	if o.Step.Kind == Query {
		res.TargetInsertsPerSecond = float64(o.Rate * o.Tables)
	}
	kinds := map[kind][]int{Load: {hIns}, Insert: {hIns, hDel}, Query: {hIns, hDel, hQry}}[o.Step.Kind]
	for _, k := range kinds {
		res.Histograms[histKinds[k]] = &Histogram{}
	}
	for _, c := range r.clients {
		t := tableResult{
			Name:         c.table,
			RowsBefore:   c.before,
			Inserted:     c.per[hIns].total,
			Deleted:      c.per[hDel].total,
			Queries:      c.per[hQry].total,
			IndexSeconds: c.indexed.Seconds(),
		}
		t.RowsAfter = t.RowsBefore + t.Inserted - t.Deleted
		res.Tables = append(res.Tables, t)
		res.Inserted += t.Inserted
		res.Deleted += t.Deleted
		res.Queries += t.Queries
		res.QueryRows += c.queryRows
		res.RowsBefore += t.RowsBefore
		res.RowsAfter += t.RowsAfter
		for _, k := range kinds {
			res.Histograms[histKinds[k]].Merge(&c.hist[k])
		}
		res.Warnings = append(res.Warnings, c.warnings...)
	}
	if o.Step.Kind == Index {
		res.RowsIndexed = res.RowsBefore
	}
	if main := o.Step.Main(); main != "" {
		res.P50, res.P99, res.RateSeconds = ratePercentiles(res.Series, main)
		if res.RateSeconds == 0 {
			res.Warnings = append(res.Warnings, "no full second of load: no p50/p99")
		}
	}
	return res
}

// checkAfter compares each table's id range after the step with its row
// count as counted, and warns when they differ.
func (r *run) checkAfter(ctx context.Context, setup *sql.Conn, res *Result) {
	for _, t := range res.Tables {
		lo, hi, err := r.idRange(ctx, setup, t.Name)
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("table %s: rows after the step not checked: %v", t.Name, err))
			continue
		}
		if hi-lo+1 != t.RowsAfter {
			res.Warnings = append(res.Warnings, fmt.Sprintf("table %s: ids %d-%d after the step (%d rows) but %d rows counted (%d before + %d inserted - %d deleted)",
				t.Name, lo, hi, hi-lo+1, t.RowsAfter, t.RowsBefore, t.Inserted, t.Deleted))
		}
	}
}
