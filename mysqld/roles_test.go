package mysqld

import (
	"maps"
	"reflect"
	"slices"
	"testing"
)

func TestRoleOfInstrument(t *testing.T) {
	for _, tc := range []struct{ name, typ, role string }{
		// MariaDB 10.11, as performance_schema.threads lists them.
		{"thread/sql/main", "BACKGROUND", RoleMain},
		{"thread/mysys/statement_timer", "BACKGROUND", RoleOther},
		{"thread/aria/checkpoint_background", "BACKGROUND", RoleOther},
		{"thread/innodb/page_cleaner_thread", "BACKGROUND", rolePageCleaner},
		{"thread/innodb/thread_pool_thread", "BACKGROUND", roleInnoDBPool},
		{"thread/sql/manager", "BACKGROUND", RoleOther},
		{"thread/sql/signal_handler", "BACKGROUND", RoleOther},
		{"thread/sql/slave_deadlock_handler", "BACKGROUND", roleReplication},
		{"thread/sql/one_connection", "FOREGROUND", RoleConnection},
		{"thread/sql/binlog_background", "BACKGROUND", roleLog},
		{"thread/threadpool/worker_thread", "BACKGROUND", RoleConnection},
		{"thread/threadpool/timer_thread", "BACKGROUND", RoleOther},
		{"thread/sql/slave_io", "FOREGROUND", roleReplication},
		{"thread/sql/slave_sql", "FOREGROUND", roleReplication},
		{"thread/sql/rpl_parallel_thread", "BACKGROUND", roleReplication},
		// MySQL 8.0.
		{"thread/innodb/io_read_thread", "BACKGROUND", roleInnoDBIO},
		{"thread/innodb/io_write_thread", "BACKGROUND", roleInnoDBIO},
		{"thread/innodb/io_ibuf_thread", "BACKGROUND", roleInnoDBIO},
		{"thread/innodb/io_log_thread", "BACKGROUND", roleInnoDBIO},
		{"thread/innodb/page_flush_coordinator_thread", "BACKGROUND", rolePageCleaner},
		{"thread/innodb/page_flush_thread", "BACKGROUND", rolePageCleaner},
		{"thread/innodb/srv_purge_thread", "BACKGROUND", roleInnoDBPurge},
		{"thread/innodb/srv_worker_thread", "BACKGROUND", roleInnoDBPurge},
		{"thread/innodb/log_writer_thread", "BACKGROUND", roleLog},
		{"thread/innodb/log_flusher_thread", "BACKGROUND", roleLog},
		{"thread/innodb/log_checkpointer_thread", "BACKGROUND", roleLog},
		{"thread/innodb/srv_master_thread", "BACKGROUND", RoleOther},
		{"thread/innodb/dict_stats_thread", "BACKGROUND", RoleOther},
		{"thread/sql/replica_io", "BACKGROUND", roleReplication},
		{"thread/sql/replica_worker", "BACKGROUND", roleReplication},
		{"thread/sql/compress_gtid_table", "FOREGROUND", RoleOther},
		{"thread/mysqlx/worker", "BACKGROUND", RoleConnection},
		{"thread/sql/event_scheduler", "FOREGROUND", RoleOther},
		{"thread/sql/event_worker", "FOREGROUND", RoleConnection},
	} {
		if got := roleOfInstrument(tc.name, tc.typ); got != tc.role {
			t.Errorf("RoleOfInstrument(%s, %s) = %s, want %s", tc.name, tc.typ, got, tc.role)
		}
	}
}

func TestRoleOfComm(t *testing.T) {
	for _, tc := range []struct{ comm, role string }{
		{"mariadbd", ""}, // MariaDB does not name its threads
		{"", ""},
		{"connection", RoleConnection},
		{"ib_io_rd-1", roleInnoDBIO},
		{"ib_io_wr-3", roleInnoDBIO},
		{"ib_io_log", roleInnoDBIO},
		{"ib_pg_flush_co", rolePageCleaner},
		{"ib_pg_flush-2", rolePageCleaner},
		{"ib_srv_purge", roleInnoDBPurge},
		{"ib_srv_wkr-1", roleInnoDBPurge},
		{"ib_log_writer", roleLog},
		{"ib_log_flush", roleLog},
		{"rpl_rca_sql-0", roleReplication},
		{"sig_handler", RoleOther},
		{"ib_src_main", RoleOther},
		{"xpl_worker-1", RoleConnection},
		// MyRocks (mariadb-plugin-rocksdb 10.11) as /proc shows them.
		{"rocksdb:high", "rocksdb-flush"},
		{"rocksdb:low", "rocksdb-compaction"},
		{"rocksdb:bottom", "rocksdb-compaction"},
		{"myrocks-bg", "myrocks-background"},
		{"myrocks-index", "myrocks-background"},
		{"myrocks-mc", "myrocks-background"},
	} {
		if got := roleOfComm(tc.comm, "mariadbd"); got != tc.role {
			t.Errorf("RoleOfComm(%q) = %q, want %q", tc.comm, got, tc.role)
		}
	}
}

// TestMyRocksRoles: a MariaDB server with MyRocks, named by /proc alone
// (performance_schema off), splits into its own threads (main, other
// background) and MyRocks' three kinds, each listed in RoleNames so that
// reports print them.
func TestMyRocksRoles(t *testing.T) {
	comm := map[int]string{100: "mariadbd", 101: "mariadbd", 102: "rocksdb:high", 103: "rocksdb:low",
		104: "rocksdb:low", 105: "myrocks-bg", 106: "myrocks-index", 107: "myrocks-mc"}
	in := roleInputs{pid: 100, tids: []int{100, 101, 102, 103, 104, 105, 106, 107}, comm: comm, procComm: "mariadbd"}
	count := map[string]int{}
	for _, th := range assignRoles(in) {
		count[th.Role]++
	}
	want := map[string]int{RoleMain: 1, RoleOther: 1, "rocksdb-flush": 1, "rocksdb-compaction": 2, "myrocks-background": 3}
	if !maps.Equal(count, want) {
		t.Errorf("roles %v, want %v", count, want)
	}
	for r := range want {
		if !slices.Contains(RoleNames, r) {
			t.Errorf("role %q is not in RoleNames %v: reports would print it after the known roles", r, RoleNames)
		}
	}
	if got := roleOfInstrument("thread/rocksdb/background", "BACKGROUND"); got != "myrocks-background" {
		t.Errorf("roleOfInstrument(thread/rocksdb/background) = %q, want myrocks-background", got)
	}
}

func TestAssignRoles(t *testing.T) {
	const pid = 100
	in := roleInputs{
		pid:      pid,
		procComm: "mariadbd",
		tids:     []int{100, 101, 102, 103, 104, 105, 106, 107, 108},
		comm: map[int]string{
			100: "mariadbd", 101: "mariadbd", 102: "mariadbd", 103: "mariadbd", 104: "mariadbd",
			105: "mariadbd", 106: "ib_pg_flush_co", 107: "mariadbd", 108: "mariadbd",
		},
		syscall: map[int]int{101: -1, 102: 202, 107: ioWaitForTest(), 108: 202},
		pfs: []pfsThread{
			{Tid: 102, Name: "thread/innodb/thread_pool_thread", Type: "BACKGROUND"},
			// A pool worker running a connection: two rows.
			{Tid: 103, Name: "thread/threadpool/worker_thread", Type: "BACKGROUND"},
			{Tid: 103, Name: "thread/sql/one_connection", Type: "FOREGROUND"},
		},
		pl: []plThread{
			{Tid: 104, Command: "Query"},
			{Tid: 105, Command: "Slave_SQL"},
			{Tid: 0, Command: "Sleep"}, // no thread: ignored
		},
	}
	got := assignRoles(in)
	want := []Thread{
		{Tid: 100, Role: RoleMain},
		{Tid: 101, Role: RoleOther},
		{Tid: 102, Role: roleInnoDBPool, Name: "thread/innodb/thread_pool_thread", Source: "performance_schema"},
		{Tid: 103, Role: RoleConnection, Name: "thread/sql/one_connection", Source: "performance_schema"},
		{Tid: 104, Role: RoleConnection, Name: "Query", Source: "processlist"},
		{Tid: 105, Role: roleReplication, Name: "Slave_SQL", Source: "processlist"},
		{Tid: 106, Role: rolePageCleaner, Name: "ib_pg_flush_co", Source: "comm"},
		{Tid: 107, Role: roleInnoDBIO, Name: "aio completion wait", Source: "syscall"},
		{Tid: 108, Role: RoleOther},
	}
	if ioWaitForTest() < 0 {
		want[7] = Thread{Tid: 107, Role: RoleOther}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("assignRoles:\n got %+v\nwant %+v", got, want)
	}
	m := &ThreadMap{Threads: got}
	if c := m.Count(); c[RoleConnection] != 2 || c[RoleOther] != 2 || len(m.Map()) != 9 {
		t.Errorf("Count = %v, Map = %v", c, m.Map())
	}
}
