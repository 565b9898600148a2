// Package testdb gives tests a real MariaDB (or MySQL) server in a temporary
// directory, and optionally a prepared sysbench table.
//
// Tests that only read from the server share one per test binary:
//
//	func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		srv := testdb.Shared(t)
//		...
//	}
//
// Tests that stop, kill or reconfigure a server take their own with New,
// stopped by t.Cleanup.
//
// When the server binaries (or sysbench) are missing the tests skip, naming
// the Debian packages to install, through package testenv: where
// integration tests are required (CI requires them) they fail instead, so
// that CI cannot go green without having run them.
package testdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/mysqld/sandbox"
)

const serverInstall = "apt-get install mariadb-server mariadb-client"

// NeedServer skips (or fails, see testenv.Skip) when no server binary is
// installed.
func NeedServer(t testing.TB) {
	t.Helper()
	if _, err := sandbox.FindServerBinary(""); err != nil {
		testenv.Skip(t, "no MySQL-family server installed: "+err.Error(), serverInstall)
	}
	if _, err := exec.LookPath("mariadb-install-db"); err != nil {
		if _, err := exec.LookPath("mysql_install_db"); err != nil {
			if _, err := exec.LookPath("mysqld"); err != nil {
				testenv.Skip(t, "mariadb-install-db is not installed", serverInstall)
			}
		}
	}
}

// NeedSysbench skips (or fails, see testenv.Skip) when sysbench is missing,
// and returns its path.
func NeedSysbench(t testing.TB) string {
	t.Helper()
	return testenv.NeedBinary(t, "sysbench", "sysbench")
}

// rocksDBInstall installs MariaDB's MyRocks plugin on Debian and Ubuntu.
const rocksDBInstall = "apt-get install mariadb-plugin-rocksdb"

// rocksDBPlugins are where Debian/Ubuntu and RPM-based systems put the
// MyRocks plugin of the installed MariaDB.
var rocksDBPlugins = []string{"/usr/lib/mysql/plugin/ha_rocksdb.so", "/usr/lib64/mysql/plugin/ha_rocksdb.so"}

// NeedRocksDB skips (or fails, see testenv.Skip) when the installed server
// has no MyRocks plugin file, and returns the server options that load it
// and make RocksDB the default engine, for Options.Options.
func NeedRocksDB(t testing.TB) []string {
	t.Helper()
	NeedServer(t)
	for _, p := range rocksDBPlugins {
		if _, err := os.Stat(p); err == nil {
			return []string{"--plugin-load-add=ha_rocksdb.so", "--default-storage-engine=rocksdb"}
		}
	}
	testenv.Skip(t, "the MyRocks plugin is not installed (no "+strings.Join(rocksDBPlugins, " or ")+")", rocksDBInstall)
	return nil
}

// Options adjust a server from New.
type Options struct {
	// Options are extra server options ("--performance-schema=OFF").
	Options []string
	// Basedir is an unpacked server tree; empty for the installed server.
	Basedir string
	// Cgroup starts the server in a cgroup v2 of its own
	// (sandbox.Config.Cgroup).
	Cgroup bool
}

// New starts a server of the test's own in t.TempDir() and stops it in
// t.Cleanup (killing it if a clean stop fails).
func New(t testing.TB, opts Options) *sandbox.Server {
	t.Helper()
	NeedServer(t)
	dir := shortTempDir(t)
	ctx := context.Background()
	srv, err := sandbox.Start(ctx, sandbox.Config{
		Dir:          dir,
		Basedir:      opts.Basedir,
		Options:      append(defaultOptions(), opts.Options...),
		ReadyTimeout: 60 * time.Second,
		StopTimeout:  60 * time.Second,
		Cgroup:       opts.Cgroup,
	})
	if err != nil {
		t.Fatalf("start sandbox server: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("stop sandbox server: %v", err)
		}
	})
	return srv
}

// defaultOptions keep a test server small and quick to start.
func defaultOptions() []string {
	return []string{
		"--innodb-buffer-pool-size=128M",
		"--max-connections=100",
		"--performance-schema=ON",
	}
}

// shortTempDir returns a temporary directory whose path is short enough for
// a unix socket (t.TempDir() paths embed the test name and can exceed the
// 107-byte limit).
func shortTempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if len(dir) < 80 {
		return dir
	}
	d, err := os.MkdirTemp("", "pbdb")
	if err != nil {
		t.Fatalf("create temporary directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

var shared struct {
	once sync.Once
	srv  *sandbox.Server
	dir  string
	err  error
}

// Shared returns the test binary's shared server, starting it on first use.
// Tests must not stop, kill or reconfigure it. It is stopped by Main, or, if
// the test binary has no TestMain calling Main, when the binary exits (the
// server receives SIGTERM when its parent dies).
func Shared(t testing.TB) *sandbox.Server {
	t.Helper()
	NeedServer(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "pbdb")
		if shared.err != nil {
			return
		}
		shared.srv, shared.err = sandbox.Start(context.Background(), sandbox.Config{
			Dir:          shared.dir,
			Options:      defaultOptions(),
			ReadyTimeout: 60 * time.Second,
			StopTimeout:  60 * time.Second,
		})
	})
	if shared.err != nil {
		t.Fatalf("start shared sandbox server: %v", shared.err)
	}
	if !shared.srv.Running() {
		t.Fatalf("the shared sandbox server (pid %d) is no longer running; a test stopped it? error log:\n%s",
			shared.srv.Pid, shared.srv.ErrorLogTail(15))
	}
	return shared.srv
}

// Main runs the tests and then stops the shared server, if one was started,
// and removes its directory. Use it from TestMain: os.Exit(testdb.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := shared.srv.Stop(ctx)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testdb: stop shared server: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	return code
}

// SysbenchArgs returns the sysbench options that reach srv's load database
// over TCP with the load account.
func SysbenchArgs(srv *sandbox.Server) []string {
	return []string{
		"--db-driver=mysql",
		"--mysql-host=127.0.0.1",
		"--mysql-port=" + strconv.Itoa(srv.Port),
		"--mysql-user=" + srv.User,
		"--mysql-password=" + srv.Password,
		"--mysql-db=" + srv.Database,
	}
}

var prepared sync.Map // "dir|tables|size" → *prepareOnce

type prepareOnce struct {
	once sync.Once
	err  error
}

// Table describes a sysbench data set.
type Table struct {
	Tables int
	Size   int
}

// PrepareSysbench creates sysbench's tables in srv (once per server and
// table shape, so tests sharing a server prepare once).
func PrepareSysbench(t testing.TB, srv *sandbox.Server, tb Table) {
	t.Helper()
	NeedSysbench(t)
	if tb.Tables == 0 {
		tb.Tables = 1
	}
	if tb.Size == 0 {
		tb.Size = 10000
	}
	key := fmt.Sprintf("%s|%d|%d", srv.Dir, tb.Tables, tb.Size)
	v, _ := prepared.LoadOrStore(key, &prepareOnce{})
	p := v.(*prepareOnce)
	p.once.Do(func() {
		_, p.err = runSysbench(context.Background(), srv, "oltp_read_write", tb, "prepare")
	})
	if p.err != nil {
		t.Fatalf("prepare sysbench tables: %v", p.err)
	}
}

// Result is what a test needs from a sysbench run.
type Result struct {
	Output string
	// Queries is the "queries:" total of sysbench's SQL statistics.
	Queries float64
}

// Sysbench runs `sysbench TEST --tables=N --table_size=M ARGS... run`
// against srv and returns its output and its queries total.
func Sysbench(t testing.TB, srv *sandbox.Server, test string, tb Table, args ...string) Result {
	t.Helper()
	NeedSysbench(t)
	if tb.Tables == 0 {
		tb.Tables = 1
	}
	if tb.Size == 0 {
		tb.Size = 10000
	}
	out, err := runSysbench(context.Background(), srv, test, tb, append(args, "run")...)
	if err != nil {
		t.Fatalf("sysbench %s: %v", test, err)
	}
	q, err := ParseQueries([]byte(out))
	if err != nil {
		t.Fatalf("sysbench %s: %v\n%s", test, err, out)
	}
	return Result{Output: out, Queries: q}
}

// SysbenchCommand returns the command `sysbench TEST ... ARGS` against srv,
// not started, for tests that run a load while they measure.
func SysbenchCommand(ctx context.Context, srv *sandbox.Server, test string, tb Table, args ...string) *exec.Cmd {
	if tb.Tables == 0 {
		tb.Tables = 1
	}
	if tb.Size == 0 {
		tb.Size = 10000
	}
	a := []string{test}
	a = append(a, SysbenchArgs(srv)...)
	a = append(a, "--tables="+strconv.Itoa(tb.Tables), "--table_size="+strconv.Itoa(tb.Size))
	a = append(a, args...)
	return exec.CommandContext(ctx, "sysbench", a...)
}

func runSysbench(ctx context.Context, srv *sandbox.Server, test string, tb Table, args ...string) (string, error) {
	cmd := SysbenchCommand(ctx, srv, test, tb, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args[:2], " "), err, out)
	}
	return string(out), nil
}

var queriesRE = regexp.MustCompile(`(?m)^\s*queries:\s+(\d+)`)

// ParseQueries returns the total of the "queries:" line of a sysbench run
// report (the line under "SQL statistics", not "queries performed").
func ParseQueries(out []byte) (float64, error) {
	m := queriesRE.FindSubmatch(out)
	if m == nil {
		return 0, errors.New("no \"queries:\" line in sysbench output")
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

var statusName = regexp.MustCompile(`^[A-Za-z_]+$`)

// WaitStatus waits until the server's global status counter name has
// grown by more than n since the call: a load started before it is
// connected and doing its work. The counter must be one that reading it
// does not move, unlike Questions: Handler_read_key (rows looked up by a
// key: point selects), Handler_write (rows inserted). It fails t after a
// minute.
func WaitStatus(t testing.TB, srv *sandbox.Server, name string, n float64) {
	t.Helper()
	if !statusName.MatchString(name) {
		t.Fatalf("WaitStatus: %q is not a status variable's name", name)
	}
	db, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	read := func() float64 {
		t.Helper()
		var k string
		var v float64
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&k, &v); err != nil {
			t.Fatalf("read status %s: %v", name, err)
		}
		return v
	}
	v0 := read()
	for deadline := time.Now().Add(time.Minute); read() <= v0+n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("status %s grew by %v or less in a minute: the load is not running", name, n)
		}
	}
}
