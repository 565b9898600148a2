package suite

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
)

// TestFlushRocksDB loads the data set into MyRocks (sysbench's
// --mysql-storage-engine=rocksdb), writes to it, and runs the post-write
// flush: it reads the tables' engine from information_schema, flushes the
// memtables (the active memtable of the default column family ends empty),
// runs one manual compaction and leaves nothing pending, without running
// the InnoDB flush or warning. CheckEngine passes for rocksdb and names the
// package for an engine the server lacks.
func TestFlushRocksDB(t *testing.T) {
	sysbench := testdb.NeedSysbench(t)
	srv := testdb.New(t, testdb.Options{Options: testdb.NeedRocksDB(t)})
	root, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := CheckEngine(ctx, root, EngineRocksDB); err != nil {
		t.Fatalf("CheckEngine(rocksdb) on a server that loads the plugin: %v", err)
	}
	if err := CheckEngine(ctx, root, "tokudb"); err == nil || !strings.Contains(err.Error(), "no TOKUDB engine") {
		t.Errorf("CheckEngine(tokudb) = %v, want the engine named", err)
	}

	o := options(t, srv)
	o.Sysbench, o.Tables, o.TableSize, o.Threads, o.Time = sysbench, 2, 2000, 1, time.Second
	o.Extra = []string{"--mysql-storage-engine=rocksdb"}
	prepare, err := PrepareCommand(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, prepare); err != nil {
		t.Fatal(err)
	}
	engines, err := TableEngines(ctx, root, srv.Database, o.Tables)
	if err != nil || !slices.Equal(engines, []string{"ROCKSDB"}) {
		t.Fatalf("TableEngines = %v, %v; want [ROCKSDB]", engines, err)
	}
	step, _ := Lookup("update-nonindex")
	argv, err := Command(step[0], o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, argv); err != nil {
		t.Fatal(err)
	}

	status := func(q string) float64 {
		t.Helper()
		var v float64
		if err := root.QueryRowContext(ctx, q).Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v
	}
	const compactions = "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'ROCKSDB_MANUAL_COMPACTIONS_PROCESSED'"
	const entries = "SELECT VALUE FROM information_schema.ROCKSDB_CFSTATS WHERE CF_NAME = 'default' AND STAT_TYPE = 'NUM_ENTRIES_ACTIVE_MEM_TABLE'"
	before, unflushed := status(compactions), status(entries)
	if unflushed == 0 {
		t.Fatal("no entry in the default column family's memtable after the writes: the flush would not be exercised")
	}
	res, err := Flush(ctx, root, FlushOptions{DB: srv.Database, Tables: o.Tables, Timeout: 2 * time.Minute, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Flush: %v (%+v)", err, res)
	}
	t.Logf("flushed %v memtable entries in %v", unflushed, res.Waited)
	if !slices.Equal(res.Engines, []string{"ROCKSDB"}) || res.RocksDBPending != 0 || len(res.Warnings) != 0 {
		t.Errorf("after Flush: %+v, want engines [ROCKSDB], nothing pending, no warning", res)
	}
	if res.DirtyPages != -1 || res.History != -1 {
		t.Errorf("the InnoDB flush ran on RocksDB tables: %+v", res)
	}
	if got := status(compactions) - before; got != 1 {
		t.Errorf("%v manual compactions ran during Flush, want 1", got)
	}
	if got := status(entries); got != 0 {
		t.Errorf("%v entries left in the default column family's active memtable after Flush, want 0", got)
	}
}
