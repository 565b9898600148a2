package mysqld

import (
	"reflect"
	"testing"
)

func TestRoleOfInstrument(t *testing.T) {
	for _, tc := range []struct{ name, typ, role string }{
		// MariaDB 10.11, as performance_schema.threads lists them.
		{"thread/sql/main", "BACKGROUND", RoleMain},
		{"thread/mysys/statement_timer", "BACKGROUND", RoleOther},
		{"thread/aria/checkpoint_background", "BACKGROUND", RoleOther},
		{"thread/innodb/page_cleaner_thread", "BACKGROUND", RolePageCleaner},
		{"thread/innodb/thread_pool_thread", "BACKGROUND", RoleInnoDBPool},
		{"thread/sql/manager", "BACKGROUND", RoleOther},
		{"thread/sql/signal_handler", "BACKGROUND", RoleOther},
		{"thread/sql/slave_deadlock_handler", "BACKGROUND", RoleReplication},
		{"thread/sql/one_connection", "FOREGROUND", RoleConnection},
		{"thread/sql/binlog_background", "BACKGROUND", RoleLog},
		{"thread/threadpool/worker_thread", "BACKGROUND", RoleConnection},
		{"thread/threadpool/timer_thread", "BACKGROUND", RoleOther},
		{"thread/sql/slave_io", "FOREGROUND", RoleReplication},
		{"thread/sql/slave_sql", "FOREGROUND", RoleReplication},
		{"thread/sql/rpl_parallel_thread", "BACKGROUND", RoleReplication},
		// MySQL 8.0.
		{"thread/innodb/io_read_thread", "BACKGROUND", RoleInnoDBIO},
		{"thread/innodb/io_write_thread", "BACKGROUND", RoleInnoDBIO},
		{"thread/innodb/io_ibuf_thread", "BACKGROUND", RoleInnoDBIO},
		{"thread/innodb/io_log_thread", "BACKGROUND", RoleInnoDBIO},
		{"thread/innodb/page_flush_coordinator_thread", "BACKGROUND", RolePageCleaner},
		{"thread/innodb/page_flush_thread", "BACKGROUND", RolePageCleaner},
		{"thread/innodb/srv_purge_thread", "BACKGROUND", RoleInnoDBPurge},
		{"thread/innodb/srv_worker_thread", "BACKGROUND", RoleInnoDBPurge},
		{"thread/innodb/log_writer_thread", "BACKGROUND", RoleLog},
		{"thread/innodb/log_flusher_thread", "BACKGROUND", RoleLog},
		{"thread/innodb/log_checkpointer_thread", "BACKGROUND", RoleLog},
		{"thread/innodb/srv_master_thread", "BACKGROUND", RoleOther},
		{"thread/innodb/dict_stats_thread", "BACKGROUND", RoleOther},
		{"thread/sql/replica_io", "BACKGROUND", RoleReplication},
		{"thread/sql/replica_worker", "BACKGROUND", RoleReplication},
		{"thread/sql/compress_gtid_table", "FOREGROUND", RoleOther},
		{"thread/mysqlx/worker", "BACKGROUND", RoleConnection},
		{"thread/sql/event_scheduler", "FOREGROUND", RoleOther},
		{"thread/sql/event_worker", "FOREGROUND", RoleConnection},
	} {
		if got := RoleOfInstrument(tc.name, tc.typ); got != tc.role {
			t.Errorf("RoleOfInstrument(%s, %s) = %s, want %s", tc.name, tc.typ, got, tc.role)
		}
	}
}

func TestRoleOfComm(t *testing.T) {
	for _, tc := range []struct{ comm, role string }{
		{"mariadbd", ""}, // MariaDB does not name its threads
		{"", ""},
		{"connection", RoleConnection},
		{"ib_io_rd-1", RoleInnoDBIO},
		{"ib_io_wr-3", RoleInnoDBIO},
		{"ib_io_log", RoleInnoDBIO},
		{"ib_pg_flush_co", RolePageCleaner},
		{"ib_pg_flush-2", RolePageCleaner},
		{"ib_srv_purge", RoleInnoDBPurge},
		{"ib_srv_wkr-1", RoleInnoDBPurge},
		{"ib_log_writer", RoleLog},
		{"ib_log_flush", RoleLog},
		{"rpl_rca_sql-0", RoleReplication},
		{"sig_handler", RoleOther},
		{"ib_src_main", RoleOther},
		{"xpl_worker-1", RoleConnection},
	} {
		if got := RoleOfComm(tc.comm, "mariadbd"); got != tc.role {
			t.Errorf("RoleOfComm(%q) = %q, want %q", tc.comm, got, tc.role)
		}
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
		{Tid: 102, Role: RoleInnoDBPool, Name: "thread/innodb/thread_pool_thread", Source: "performance_schema"},
		{Tid: 103, Role: RoleConnection, Name: "thread/sql/one_connection", Source: "performance_schema"},
		{Tid: 104, Role: RoleConnection, Name: "Query", Source: "processlist"},
		{Tid: 105, Role: RoleReplication, Name: "Slave_SQL", Source: "processlist"},
		{Tid: 106, Role: RolePageCleaner, Name: "ib_pg_flush_co", Source: "comm"},
		{Tid: 107, Role: RoleInnoDBIO, Name: "aio completion wait", Source: "syscall"},
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
