package suite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The post-write flush. Write steps leave dirty pages, an undo history to
// purge and stale index statistics; a read step measured right after them
// would pay for that work. Published runs therefore, after read-write and
// before the read steps that follow, run ANALYZE TABLE on every table and
// have InnoDB write back its dirty pages. These are the statements, in the
// order Flush runs them.
const (
	// sqlSaveDirtyPct reads the setting to restore afterwards.
	sqlSaveDirtyPct = "SELECT @@GLOBAL.innodb_max_dirty_pages_pct"
	// sqlFlushDirty makes the page cleaner write back every dirty page.
	sqlFlushDirty = "SET GLOBAL innodb_max_dirty_pages_pct = 0"
	// sqlFlushProgress is polled until the dirty pages (and, where the
	// server reports it, the purge history) reach zero.
	sqlFlushProgress = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_pages_dirty', 'Innodb_history_list_length')"
	// sqlRestoreDirtyPct restores the saved setting (%s is its value).
	sqlRestoreDirtyPct = "SET GLOBAL innodb_max_dirty_pages_pct = %s"
)

// analyzeSQL returns the ANALYZE TABLE statement for tables sbtest1..N of
// database db (unqualified when db is empty).
func analyzeSQL(db string, tables int) string {
	names := make([]string, tables)
	for i := range names {
		t := "sbtest" + strconv.Itoa(i+1)
		if db != "" {
			t = quoteIdent(db) + "." + t
		}
		names[i] = t
	}
	return "ANALYZE TABLE " + strings.Join(names, ", ")
}

func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// FlushOptions configure Flush. Zero values take the defaults.
type FlushOptions struct {
	DB     string // database of the tables; the connection's default when empty
	Tables int    // sbtest1..Tables; at least 1
	// Timeout bounds the wait for the dirty pages; 10 minutes when zero.
	Timeout time.Duration
	// Poll is the interval between progress reads; 200 ms when zero.
	Poll time.Duration
}

// FlushResult says what Flush saw.
type FlushResult struct {
	// Waited is the time from the start of the flush to the last progress
	// read.
	Waited time.Duration
	// DirtyPages and History are the last values read, -1 when the server
	// does not report them.
	DirtyPages float64
	History    float64
	// Engines are the storage engines of the tables (information_schema),
	// which say which flush ran: RocksDB's (memtables flushed, the default
	// column family compacted), InnoDB's, or both.
	Engines []string
	// RocksDBPending is the RocksDB work left at the last progress read
	// (immutable memtables, pending flushes and compactions, manual
	// compactions running); -1 when no RocksDB flush ran.
	RocksDBPending float64
	// Warnings are conditions that weaken the following read steps without
	// stopping the run: an ANALYZE that reported an error, a server without
	// InnoDB, a flush that did not finish before the timeout. The runner
	// copies them onto the Records of those steps.
	Warnings []string
}

// errFlushTimeout is returned (with the FlushResult) when the dirty pages
// did not reach zero before the timeout.
var errFlushTimeout = errors.New("post-write flush timed out")

// Flush runs the post-write flush on db, a connection pool to the server
// with privileges to SET GLOBAL: ANALYZE TABLE, then, by the engines
// information_schema gives the tables: for RocksDB tables (MyRocks) the
// memtables are flushed and the default column family compacted, until
// RocksDB has no flush or compaction pending or running; for InnoDB tables
// (and when the engines could not be read) the dirty-page flush runs until
// InnoDB has no dirty page and no purge history left, then the saved
// innodb_max_dirty_pages_pct is restored (also when ctx is cancelled).
// Both waits share the timeout.
func Flush(ctx context.Context, db *sql.DB, o FlushOptions) (res FlushResult, err error) {
	res = FlushResult{DirtyPages: -1, History: -1, RocksDBPending: -1}
	if o.Tables < 1 {
		return res, fmt.Errorf("post-write flush: tables is %d, must be at least 1", o.Tables)
	}
	timeout, poll := o.Timeout, o.Poll
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	if poll == 0 {
		poll = 200 * time.Millisecond
	}
	start := time.Now()

	analyze := analyzeSQL(o.DB, o.Tables)
	rows, err := db.QueryContext(ctx, analyze)
	if err != nil {
		return res, fmt.Errorf("post-write flush: %s: %w", analyze, err)
	}
	for rows.Next() {
		var table, op, typ, text sql.NullString
		if err = rows.Scan(&table, &op, &typ, &text); err != nil {
			rows.Close()
			return res, fmt.Errorf("post-write flush: read the result of ANALYZE TABLE: %w", err)
		}
		if t := strings.ToLower(typ.String); t == "error" || t == "warning" {
			res.Warnings = append(res.Warnings, fmt.Sprintf("ANALYZE TABLE %s: %s: %s", table.String, t, text.String))
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return res, fmt.Errorf("post-write flush: %s: %w", analyze, err)
	}
	rows.Close()

	engines, err := TableEngines(ctx, db, o.DB, o.Tables)
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the tables' engines not read (%v): flushed as InnoDB tables", err))
	}
	res.Engines = engines
	deadline := start.Add(timeout)
	if slices.ContainsFunc(engines, isRocksDB) {
		if err := flushRocksDB(ctx, db, &res, start, deadline, poll); err != nil {
			return res, err
		}
		if !slices.ContainsFunc(engines, isInnoDB) {
			return res, nil
		}
	}
	err = flushInnoDB(ctx, db, &res, start, deadline, poll)
	return res, err
}

// flushInnoDB has InnoDB write back its dirty pages and purge its history,
// until deadline.
func flushInnoDB(ctx context.Context, db *sql.DB, res *FlushResult, start, deadline time.Time, poll time.Duration) (err error) {
	timeout := deadline.Sub(start)
	var saved sql.NullString
	if err := db.QueryRowContext(ctx, sqlSaveDirtyPct).Scan(&saved); err != nil {
		// No InnoDB (MyRocks only, for example): nothing to flush here.
		res.Warnings = append(res.Warnings, fmt.Sprintf("dirty pages not flushed: %s: %v", sqlSaveDirtyPct, err))
		res.Waited = time.Since(start)
		return nil
	}
	if _, err := db.ExecContext(ctx, sqlFlushDirty); err != nil {
		return fmt.Errorf("post-write flush: %s: %w (the user needs the SUPER or SYSTEM_VARIABLES_ADMIN privilege)", sqlFlushDirty, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		restore := fmt.Sprintf(sqlRestoreDirtyPct, saved.String)
		if _, err := db.ExecContext(rctx, restore); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s failed: %v; restore it by hand", restore, err))
		}
	}()

	for {
		dirty, history, err := flushProgress(ctx, db)
		res.Waited = time.Since(start)
		if err != nil {
			return fmt.Errorf("post-write flush: %w", err)
		}
		res.DirtyPages, res.History = dirty, history
		if dirty < 0 {
			res.Warnings = append(res.Warnings, "dirty pages not flushed: the server does not report Innodb_buffer_pool_pages_dirty")
			return nil
		}
		if dirty == 0 && history <= 0 {
			return nil
		}
		if time.Now().After(deadline) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("post-write flush stopped after %v with %.0f dirty pages and a purge history of %.0f",
				timeout, dirty, history))
			return fmt.Errorf("%w after %v: %.0f dirty pages, purge history %.0f", errFlushTimeout, timeout, dirty, history)
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("post-write flush: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// flushProgress reads the dirty pages and the purge history, -1 for a
// variable the server lacks.
func flushProgress(ctx context.Context, db *sql.DB) (dirty, history float64, err error) {
	dirty, history = -1, -1
	rows, err := db.QueryContext(ctx, sqlFlushProgress)
	if err != nil {
		return dirty, history, fmt.Errorf("%s: %w", sqlFlushProgress, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return dirty, history, fmt.Errorf("%s: %w", sqlFlushProgress, err)
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return dirty, history, fmt.Errorf("%s: %s is %q, not a number", sqlFlushProgress, name, value)
		}
		switch strings.ToLower(name) {
		case "innodb_buffer_pool_pages_dirty":
			dirty = v
		case "innodb_history_list_length":
			history = v
		}
	}
	return dirty, history, rows.Err()
}
