package mysqld

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/perfbench/perfbench/record"
)

// Thread roles. Counts split by role add up to the process total.
const (
	// RoleMain is the server's first thread (tid == pid): startup, then
	// accepting connections.
	RoleMain = "main"
	// RoleConnection is a foreground thread running clients' statements:
	// one thread per connection, or a thread-pool worker.
	RoleConnection = "connection"
	// roleInnoDBIO is an InnoDB IO thread (MySQL's io_read/io_write/
	// io_log/io_ibuf threads) or the asynchronous IO completion thread
	// (io_uring or libaio) of MariaDB.
	roleInnoDBIO = "innodb-io"
	// roleInnoDBPurge is an InnoDB purge coordinator or worker.
	roleInnoDBPurge = "innodb-purge"
	// rolePageCleaner is an InnoDB page cleaner (flush) thread.
	rolePageCleaner = "page-cleaner"
	// roleInnoDBPool is a worker of MariaDB's InnoDB thread pool (10.5
	// and later), which runs IO completions, purge and other background
	// tasks on shared threads, so they cannot be told apart per thread.
	roleInnoDBPool = "innodb-pool"
	// roleLog is a log writer: InnoDB redo log writer, flusher,
	// checkpointer and notifier threads (MySQL 8), and the binary log's
	// background thread.
	roleLog = "log"
	// roleReplication is a replication thread: replica IO/SQL/worker
	// threads, binlog dump threads, their helpers.
	roleReplication = "replication"
	// roleRocksDBFlush is a thread of RocksDB's high-priority pool
	// ("rocksdb:high"), which writes memtables to SST files (MyRocks).
	roleRocksDBFlush = "rocksdb-flush"
	// roleRocksDBCompaction is a thread of RocksDB's low-priority pool
	// ("rocksdb:low"), which runs compactions (MyRocks).
	roleRocksDBCompaction = "rocksdb-compaction"
	// roleMyRocks is one of MyRocks' own background threads: the
	// background thread ("myrocks-bg": periodic syncs and stats), index
	// statistics ("myrocks-index"), manual compaction ("myrocks-mc") and
	// the others performance_schema names thread/rocksdb/....
	roleMyRocks = "myrocks-background"
	// RoleOther is any other background thread (signal handler, timers,
	// Aria checkpoint, event scheduler, InnoDB master and stats threads,
	// threads nothing names).
	RoleOther = "other-background"
)

// RoleNames lists the roles in the order reports print them.
var RoleNames = []string{
	RoleConnection, roleInnoDBIO, roleInnoDBPurge, rolePageCleaner, roleInnoDBPool,
	roleRocksDBFlush, roleRocksDBCompaction, roleMyRocks,
	roleLog, roleReplication, RoleOther, RoleMain,
}

// roleOfInstrument returns the role of a thread from its
// performance_schema.threads NAME ("thread/innodb/page_cleaner_thread") and
// TYPE ("FOREGROUND" or "BACKGROUND").
func roleOfInstrument(name, typ string) string {
	n := strings.ToLower(name)
	last := n[strings.LastIndexByte(n, '/')+1:]
	switch {
	case n == "thread/sql/main":
		return RoleMain
	case n == "thread/sql/one_connection", strings.HasPrefix(n, "thread/threadpool/worker"),
		strings.HasPrefix(n, "thread/sql/threadpool"), strings.HasPrefix(n, "thread/mysqlx/worker"):
		return RoleConnection
	case strings.Contains(last, "slave") || strings.Contains(last, "replica") || strings.HasPrefix(last, "rpl_") ||
		strings.Contains(last, "binlog_dump") || strings.Contains(last, "relay_log") || strings.HasPrefix(n, "thread/rpl"):
		return roleReplication
	case strings.HasPrefix(n, "thread/innodb/"):
		return innodbRole(last)
	case strings.HasPrefix(n, "thread/rocksdb/"):
		return roleMyRocks
	case strings.HasPrefix(last, "binlog_background"):
		return roleLog
	case last == "compress_gtid_table", last == "event_scheduler", last == "bootstrap":
		// Background work that performance_schema types FOREGROUND.
		return RoleOther
	}
	if strings.EqualFold(typ, "FOREGROUND") {
		return RoleConnection
	}
	return RoleOther
}

func innodbRole(last string) string {
	switch {
	case strings.Contains(last, "page_cleaner"), strings.Contains(last, "page_flush"):
		return rolePageCleaner
	case strings.HasPrefix(last, "io_"), strings.Contains(last, "aio"):
		return roleInnoDBIO
	case strings.Contains(last, "purge"), strings.HasPrefix(last, "srv_worker"):
		return roleInnoDBPurge
	case strings.HasPrefix(last, "log_"), strings.HasPrefix(last, "redo_log"):
		return roleLog
	case strings.HasPrefix(last, "thread_pool"), strings.HasPrefix(last, "tpool"):
		return roleInnoDBPool
	}
	return RoleOther
}

// roleOfComm returns the role of a thread from its OS name
// (/proc/PID/task/TID/comm) as MySQL 8.0.27 and later set them
// ("ib_io_rd-1", "ib_pg_flush_co", "ib_srv_purge", "ib_log_writer",
// "connection", "rpl_rca_sql-0"...), and "" when the name says nothing
// (MariaDB leaves its own threads named after the process, but RocksDB
// and MyRocks name theirs: "rocksdb:high", "rocksdb:low", "myrocks-bg"...).
func roleOfComm(comm, processComm string) string {
	c := strings.ToLower(comm)
	switch {
	case c == "" || c == strings.ToLower(processComm):
		return ""
	case c == "connection", strings.HasPrefix(c, "xpl_worker"), strings.HasPrefix(c, "tp_"):
		return RoleConnection
	case strings.HasPrefix(c, "ib_io_"), strings.HasPrefix(c, "ib_aio"):
		return roleInnoDBIO
	case strings.HasPrefix(c, "ib_pg_flush"), strings.HasPrefix(c, "ib_page_clean"):
		return rolePageCleaner
	case strings.HasPrefix(c, "ib_") && strings.Contains(c, "purge"), strings.HasPrefix(c, "ib_srv_wkr"):
		return roleInnoDBPurge
	case strings.HasPrefix(c, "ib_log"):
		return roleLog
	case strings.HasPrefix(c, "rocksdb:high"):
		return roleRocksDBFlush
	case strings.HasPrefix(c, "rocksdb:low"), strings.HasPrefix(c, "rocksdb:bottom"):
		return roleRocksDBCompaction
	case strings.HasPrefix(c, "myrocks-"), strings.HasPrefix(c, "rocksdb:"):
		return roleMyRocks
	case strings.HasPrefix(c, "rpl"), strings.Contains(c, "slave"), strings.Contains(c, "replica"), strings.HasPrefix(c, "bin_dump"):
		return roleReplication
	}
	return RoleOther
}

// roleOfCommand returns the role of a processlist entry from its COMMAND.
func roleOfCommand(command string) string {
	c := strings.ToLower(command)
	switch {
	case strings.HasPrefix(c, "slave"), strings.HasPrefix(c, "replica"), strings.HasPrefix(c, "binlog dump"),
		strings.HasPrefix(c, "register slave"), strings.HasPrefix(c, "register replica"):
		return roleReplication
	case c == "daemon":
		return RoleOther
	}
	return RoleConnection
}

// Thread is one OS thread of the server and its role.
type Thread struct {
	Tid  int
	Role string
	// Name is what named it: the performance_schema instrument, the
	// processlist command, the OS thread name.
	Name string
	// Source is "performance_schema", "processlist", "comm", "syscall" or
	// "" (nothing named it: RoleOther, or RoleMain for tid == pid).
	Source string
}

// ThreadMap is the role of every thread of a server at one instant.
type ThreadMap struct {
	Pid     int
	Threads []Thread // by tid
	// PerformanceSchema tells whether performance_schema.threads was read.
	PerformanceSchema bool
	// Warnings: what limited the naming (no privilege on
	// performance_schema, no PROCESS privilege, ...), all of code roles,
	// with the roles they make less sure (none: the split as a whole).
	Warnings []record.Warning
}

// unseenConnections are the roles a warning about connection threads the
// processlist did not show concerns: they count as other-background.
var unseenConnections = []string{RoleConnection, RoleOther}

// warn adds a roles warning about roles (nil: the split as a whole), its
// text formatted as by fmt.Sprintf.
func (m *ThreadMap) warn(roles []string, format string, args ...any) {
	m.Warnings = append(m.Warnings, record.Warning{Code: record.WarnRoles, Roles: roles, Text: fmt.Sprintf(format, args...)})
}

// Roles returns tid → role (one of RoleNames) for every thread of the
// server pid.
func (d *DB) Roles(ctx context.Context, pid int) (map[int]string, error) {
	m, err := d.ThreadRoles(ctx, pid)
	if err != nil {
		return nil, err
	}
	return m.Map(), nil
}

// Map returns tid → role.
func (m *ThreadMap) Map() map[int]string {
	out := make(map[int]string, len(m.Threads))
	for _, t := range m.Threads {
		out[t.Tid] = t.Role
	}
	return out
}

// Count returns the number of threads of each role.
func (m *ThreadMap) Count() map[string]int {
	out := map[string]int{}
	for _, t := range m.Threads {
		out[t.Role]++
	}
	return out
}

// pfsThread is a row of performance_schema.threads.
type pfsThread struct {
	Tid        int
	Name, Type string
}

// plThread is a row of information_schema.PROCESSLIST.
type plThread struct {
	Tid     int
	Command string
}

// roleInputs is everything the role assignment looks at, gathered first so
// that the assignment is a pure function.
type roleInputs struct {
	pid      int
	tids     []int
	comm     map[int]string // OS thread names
	procComm string
	syscall  map[int]int // syscall a thread is blocked in (-1 running)
	pfs      []pfsThread
	pl       []plThread
}

// assignRoles names each thread: performance_schema first, then the
// processlist, the OS thread name, a thread blocked waiting for
// asynchronous IO completions, and tid == pid for the main thread.
func assignRoles(in roleInputs) []Thread {
	pfs := map[int][]pfsThread{}
	for _, p := range in.pfs {
		pfs[p.Tid] = append(pfs[p.Tid], p)
	}
	pl := map[int]plThread{}
	for _, p := range in.pl {
		if p.Tid != 0 {
			pl[p.Tid] = p
		}
	}
	out := make([]Thread, 0, len(in.tids))
	for _, tid := range in.tids {
		t := Thread{Tid: tid}
		if rows := pfs[tid]; len(rows) > 0 {
			// A pool worker shows both as a worker and as the
			// connection it runs: the most specific role wins.
			best := -1
			for _, r := range rows {
				role := roleOfInstrument(r.Name, r.Type)
				p := rolePriority(role)
				if p > best || (p == best && strings.EqualFold(r.Type, "FOREGROUND")) {
					best, t.Role, t.Name = p, role, r.Name
				}
			}
			t.Source = "performance_schema"
		} else if p, ok := pl[tid]; ok {
			t.Role, t.Name, t.Source = roleOfCommand(p.Command), p.Command, "processlist"
		} else if r := roleOfComm(in.comm[tid], in.procComm); r != "" {
			t.Role, t.Name, t.Source = r, in.comm[tid], "comm"
		} else if tid == in.pid {
			t.Role = RoleMain
		} else if nr, ok := in.syscall[tid]; ok && isAIOWait(nr) {
			t.Role, t.Name, t.Source = roleInnoDBIO, "aio completion wait", "syscall"
		} else {
			t.Role = RoleOther
		}
		out = append(out, t)
	}
	return out
}

func rolePriority(role string) int {
	switch role {
	case RoleOther:
		return 0
	case RoleConnection:
		return 2
	}
	return 1
}

// ThreadRoles names every thread of the server pid (see assignRoles for the
// order of the sources). performance_schema is used when it is on and
// readable; otherwise thread names, the processlist (which needs the
// PROCESS privilege to show other users' connections) and /proc are, and
// the ThreadMap says so in its warnings.
func (d *DB) ThreadRoles(ctx context.Context, pid int) (*ThreadMap, error) {
	tids, err := d.proc.Threads(pid)
	if err != nil {
		return nil, fmt.Errorf("name the threads of pid %d: %w", pid, err)
	}
	in := roleInputs{pid: pid, tids: tids, comm: map[int]string{}, syscall: map[int]int{}}
	m := &ThreadMap{Pid: pid}
	if p, err := d.proc.basic(pid); err == nil {
		in.procComm = p.Comm
	}
	for _, tid := range tids {
		if c, err := d.proc.ThreadComm(pid, tid); err == nil {
			in.comm[tid] = c
		}
		if nr, err := d.proc.ThreadSyscall(pid, tid); err == nil {
			in.syscall[tid] = nr
		}
	}

	var pfsOn sql.NullInt64
	err = d.query(ctx, "Com_select", "SELECT @@performance_schema", func(rows *sql.Rows) error {
		if rows.Next() {
			return rows.Scan(&pfsOn)
		}
		return nil
	})
	if err != nil {
		return nil, d.wrap(err, "name the threads of pid %d: read @@performance_schema", pid)
	}
	if pfsOn.Int64 == 1 {
		err := d.query(ctx, "Com_select", "SELECT THREAD_OS_ID, NAME, TYPE FROM performance_schema.threads WHERE THREAD_OS_ID "+
			"IS NOT NULL", func(rows *sql.Rows) error {
			for rows.Next() {
				var r pfsThread
				var tid sql.NullInt64
				if err := rows.Scan(&tid, &r.Name, &r.Type); err != nil {
					return err
				}
				r.Tid = int(tid.Int64)
				in.pfs = append(in.pfs, r)
			}
			return nil
		})
		switch {
		case err == nil:
			m.PerformanceSchema = true
		case isDenied(err):
			m.warn(nil, "no SELECT privilege on performance_schema.threads for %s: roles come from the processlist and thread "+
				"names (GRANT SELECT ON performance_schema.* TO the user for finer roles)", d.User)
		default:
			return nil, d.wrap(err, "name the threads of pid %d: read performance_schema.threads", pid)
		}
	} else {
		m.warn(nil, "performance_schema is off: roles come from the processlist, thread names and /proc, and background "+
			"threads that nothing names count as %s", RoleOther)
	}

	// The processlist: needed without performance_schema, and for
	// connection threads performance_schema did not instrument.
	var seen, plRows int
	err = d.query(ctx, "Com_select", "SELECT TID, COMMAND FROM information_schema.PROCESSLIST", func(rows *sql.Rows) error {
		for rows.Next() {
			var tid sql.NullInt64
			var cmd sql.NullString
			if err := rows.Scan(&tid, &cmd); err != nil {
				return err
			}
			plRows++
			if tid.Valid && tid.Int64 != 0 {
				seen++
				in.pl = append(in.pl, plThread{Tid: int(tid.Int64), Command: cmd.String})
			}
		}
		return nil
	})
	if err != nil && !m.PerformanceSchema {
		// MySQL's PROCESSLIST has no TID column.
		// Connection threads are then told by thread names and /proc
		// only: those not found count as other-background.
		m.warn(unseenConnections, "%s", d.wrap(err, "read the processlist's thread ids").Error())
	}
	if err == nil && !m.PerformanceSchema {
		var connected float64
		err := d.query(ctx, "Com_show_status", "SHOW GLOBAL STATUS LIKE 'Threads_connected'", func(rows *sql.Rows) error {
			if rows.Next() {
				var n string
				return rows.Scan(&n, &connected)
			}
			return nil
		})
		if err == nil && float64(plRows) < connected {
			m.warn(unseenConnections, "the processlist shows %d of %.0f connections (%s lacks the PROCESS privilege?): the other "+
				"connection threads count as %s", plRows, connected, d.User, RoleOther)
		}
	}
	m.Threads = assignRoles(in)
	sort.Slice(m.Threads, func(i, j int) bool { return m.Threads[i].Tid < m.Threads[j].Tid })
	return m, nil
}

func isDenied(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1142 || me.Number == 1044 || me.Number == 1227)
}
