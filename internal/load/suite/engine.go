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

// Storage engines a plan version can ask for (its engine key).
const (
	EngineInnoDB  = "innodb"
	EngineRocksDB = "rocksdb"
)

// errNoEngine is wrapped by CheckEngine's error when the server lacks the
// engine.
var errNoEngine = errors.New("storage engine not available")

// rocksDBPackage is what installs MyRocks for MariaDB on Debian and Ubuntu.
const rocksDBPackage = "mariadb-plugin-rocksdb"

// CheckEngine returns an error, one line with the fix, unless the server
// db is connected to has the engine enabled (information_schema.ENGINES
// SUPPORT YES or DEFAULT). An empty engine is the server's default and
// always passes.
func CheckEngine(ctx context.Context, db *sql.DB, engine string) error {
	if engine == "" {
		return nil
	}
	var support sql.NullString
	err := db.QueryRowContext(ctx, "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = ?", strings.ToUpper(engine)).Scan(&support)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("check the %s engine: read information_schema.ENGINES: %w", engine, err)
	}
	if s := strings.ToUpper(support.String); s == "YES" || s == "DEFAULT" {
		return nil
	}
	if strings.EqualFold(engine, EngineRocksDB) {
		return fmt.Errorf("%w: the server has no ROCKSDB engine: install MyRocks (apt-get install %s) and load it (INSTALL SONAME 'ha_rocksdb', or plugin-load-add=ha_rocksdb.so in its my.cnf)",
			errNoEngine, rocksDBPackage)
	}
	return fmt.Errorf("%w: the server has no %s engine enabled (information_schema.ENGINES)", errNoEngine, strings.ToUpper(engine))
}

// TableEngines returns the storage engines of tables sbtest1..N of
// database dbName (the connection's default when empty), as
// information_schema.TABLES names them ("InnoDB", "ROCKSDB"), sorted and
// without repeats.
func TableEngines(ctx context.Context, db *sql.DB, dbName string, tables int) ([]string, error) {
	if tables < 1 {
		return nil, fmt.Errorf("read the tables' engines: tables is %d, must be at least 1", tables)
	}
	names := make([]string, tables)
	args := make([]any, 0, tables+1)
	schema := "DATABASE()"
	if dbName != "" {
		schema = "?"
		args = append(args, dbName)
	}
	for i := range names {
		names[i] = "?"
		args = append(args, "sbtest"+strconv.Itoa(i+1))
	}
	q := "SELECT DISTINCT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + schema +
		" AND TABLE_NAME IN (" + strings.Join(names, ", ") + ") AND ENGINE IS NOT NULL"
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read the tables' engines from information_schema.TABLES: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return nil, fmt.Errorf("read the tables' engines from information_schema.TABLES: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the tables' engines from information_schema.TABLES: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read the tables' engines: database %q has none of sbtest1..sbtest%d (load the data set first)", dbName, tables)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func isRocksDB(engine string) bool { return strings.EqualFold(engine, EngineRocksDB) }
func isInnoDB(engine string) bool  { return strings.EqualFold(engine, EngineInnoDB) }

// RocksDB's counterpart of the dirty-page flush, in the order
// flushRocksDB runs them.
const (
	// sqlRocksFlush writes every memtable to SST files (it returns when
	// they are written).
	sqlRocksFlush = "SET GLOBAL rocksdb_force_flush_memtable_now = 1"
	// sqlRocksCompact compacts the default column family, which holds the
	// sysbench tables' data and indexes (it returns when the manual
	// compaction has ended).
	sqlRocksCompact = "SET GLOBAL rocksdb_compact_cf = 'default'"
	// sqlRocksPending and sqlRocksManual are polled until RocksDB has no
	// memtable to flush, no compaction pending and no manual compaction
	// running.
	sqlRocksPending = "SELECT COALESCE(SUM(VALUE), 0) FROM information_schema.ROCKSDB_CFSTATS WHERE STAT_TYPE IN ('NUM_IMMUTABLE_MEM_TABLE', 'MEM_TABLE_FLUSH_PENDING', 'COMPACTION_PENDING')"
	sqlRocksManual  = "SHOW GLOBAL STATUS LIKE 'Rocksdb_manual_compactions_running'"
)

// flushRocksDB flushes RocksDB's memtables, compacts the default column
// family and waits, until deadline, for RocksDB to have no flush or
// compaction left.
func flushRocksDB(ctx context.Context, db *sql.DB, res *FlushResult, start, deadline time.Time, poll time.Duration) error {
	timeout := deadline.Sub(start)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for _, q := range []string{sqlRocksFlush, sqlRocksCompact} {
		if _, err := db.ExecContext(dctx, q); err != nil {
			res.Waited = time.Since(start)
			if ctx.Err() == nil && dctx.Err() != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("post-write flush stopped after %v in %s", timeout, q))
				return fmt.Errorf("%w after %v: %s had not returned", errFlushTimeout, timeout, q)
			}
			return fmt.Errorf("post-write flush: %s: %w (the user needs the SUPER or SYSTEM_VARIABLES_ADMIN privilege)", q, err)
		}
	}
	for {
		pending, err := rocksPending(ctx, db)
		res.Waited = time.Since(start)
		if err != nil {
			return fmt.Errorf("post-write flush: %w", err)
		}
		res.RocksDBPending = pending
		if pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("post-write flush stopped after %v with %.0f RocksDB flushes and compactions pending or running", timeout, pending))
			return fmt.Errorf("%w after %v: %.0f RocksDB flushes and compactions pending or running", errFlushTimeout, timeout, pending)
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

// rocksPending returns the memtables and compactions RocksDB has pending
// or running, over every column family.
func rocksPending(ctx context.Context, db *sql.DB) (float64, error) {
	var pending float64
	if err := db.QueryRowContext(ctx, sqlRocksPending).Scan(&pending); err != nil {
		return 0, fmt.Errorf("%s: %w", sqlRocksPending, err)
	}
	var name string
	var running float64
	switch err := db.QueryRowContext(ctx, sqlRocksManual).Scan(&name, &running); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, fmt.Errorf("%s: %w", sqlRocksManual, err)
	}
	return pending + running, nil
}
