package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"database/sql"

	"github.com/go-sql-driver/mysql"

	"github.com/perfbench/perfbench/internal/host/proc/proctest"
	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/mysqld/sandbox"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		out, flavor, version string
	}{
		{"mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n", sandbox.MariaDB, "10.11.19-MariaDB-0+deb12u1"},
		{"/usr/sbin/mysqld  Ver 8.0.39 for Linux on x86_64 (MySQL Community Server - GPL)\n", sandbox.MySQL, "8.0.39"},
		{"/opt/ps/bin/mysqld  Ver 8.0.36-28 for Linux on x86_64 (Percona Server (GPL), Release 28, Revision 47601f19)\n", sandbox.MySQL, "8.0.36-28"},
		{"mysqld  Ver 10.6.18-MariaDB-log for Linux on x86_64 (MariaDB Server)", sandbox.MariaDB, "10.6.18-MariaDB-log"},
	} {
		f, v, err := sandbox.ParseVersion([]byte(tc.out))
		if err != nil || f != tc.flavor || v != tc.version {
			t.Errorf("ParseVersion(%q) = %q, %q, %v; want %q, %q", tc.out, f, v, err, tc.flavor, tc.version)
		}
	}
	if _, _, err := sandbox.ParseVersion([]byte("Usage: mysqld [OPTIONS]\n")); err == nil {
		t.Error("ParseVersion of a usage text: no error")
	}
}

func TestLoadAccountSQL(t *testing.T) {
	got := sandbox.LoadAccountSQL("sb`test", "o'neil", `p\w'd`)
	want := []string{
		"CREATE DATABASE IF NOT EXISTS `sb``test`",
		`CREATE USER IF NOT EXISTS 'o''neil'@'%' IDENTIFIED BY 'p\\w''d'`,
		"GRANT ALL ON `sb``test`.* TO 'o''neil'@'%'",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("LoadAccountSQL:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFreePort(t *testing.T) {
	port, err := sandbox.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("listen on the free port %d: %v", port, err)
	}
	l.Close()
}

func TestFindServerBinaryBasedir(t *testing.T) {
	dir := t.TempDir()
	if _, err := sandbox.FindServerBinary(dir); !errors.Is(err, sandbox.ErrNoServerBinary) {
		t.Errorf("empty basedir: err = %v, want ErrNoServerBinary", err)
	}
	p := filepath.Join(dir, "sbin", "mariadbd")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
	got, err := sandbox.FindServerBinary(dir)
	if err != nil || got != p {
		t.Errorf("FindServerBinary = %q, %v; want %q", got, err, p)
	}
}

// alive reports whether pid exists and is not a zombie.
func TestLifecycle(t *testing.T) {
	testdb.NeedServer(t)
	dir := t.TempDir()
	ctx := context.Background()
	srv, err := sandbox.Start(ctx, sandbox.Config{Dir: dir, Options: []string{"--innodb-buffer-pool-size=64M"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Kill() })

	b, err := os.ReadFile(srv.PidFile)
	if err != nil {
		t.Fatalf("read pid file: %v", err)
	}
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid != srv.Pid {
		t.Errorf("pid file says %s, server pid is %d", b, srv.Pid)
	}
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", srv.Pid))
	if base := filepath.Base(exe); base != "mariadbd" && base != "mysqld" {
		t.Errorf("pid %d runs %s, want mariadbd or mysqld", srv.Pid, exe)
	}

	// The load account works over TCP on 127.0.0.1 with its password,
	// and sees only its database.
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = srv.User, srv.Password, "tcp", "127.0.0.1:"+strconv.Itoa(srv.Port), srv.Database
	conn, _ := mysql.NewConnector(cfg)
	db := sql.OpenDB(conn)
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (a INT PRIMARY KEY)"); err != nil {
		t.Errorf("load user creates a table in %s over TCP: %v", srv.Database, err)
	}
	var port int
	if err := db.QueryRowContext(ctx, "SELECT @@port").Scan(&port); err != nil || port != srv.Port {
		t.Errorf("@@port = %d, %v; want %d", port, err, srv.Port)
	}
	// Its own tmpdir: a server deletes the #sql files of its tmpdir as it
	// starts, so sandboxes sharing /tmp would delete each other's
	// temporary tables.
	var tmpdir string
	if err := db.QueryRowContext(ctx, "SELECT @@tmpdir").Scan(&tmpdir); err != nil || tmpdir != filepath.Join(dir, "tmp") {
		t.Errorf("@@tmpdir = %q, %v; want %q", tmpdir, err, filepath.Join(dir, "tmp"))
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE other"); err == nil {
		t.Error("load user could create another database")
	}
	db.Close()

	// The load account's statements again, through OpenRoot, for an
	// account whose names need quoting: they run twice without error.
	root, err := sandbox.OpenRoot(srv.Socket)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, q := range sandbox.LoadAccountSQL("we`ird", "o'neil", `pa\ss'`) {
			if _, err := root.ExecContext(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	}
	root.Close()
	cfg.User, cfg.Passwd, cfg.DBName = "o'neil", `pa\ss'`, "we`ird"
	conn, _ = mysql.NewConnector(cfg)
	db = sql.OpenDB(conn)
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (a INT PRIMARY KEY)"); err != nil {
		t.Errorf("the quoted load account creates a table in its database: %v", err)
	}
	db.Close()

	// Kill, then start again on the same directory: the data is kept
	// (crash recovery) and the table is still there.
	old := srv.Pid
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if proctest.Alive(old) {
		t.Fatalf("pid %d alive after Kill", old)
	}
	srv2, err := sandbox.Start(ctx, sandbox.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv2.Kill() })
	if srv2.Pid == old {
		t.Errorf("restarted server has the old pid %d", old)
	}
	if err := srv2.Exec(ctx, "SELECT * FROM sbtest.t"); err != nil {
		t.Errorf("table created before the crash: %v", err)
	}
	if err := srv2.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if proctest.Alive(srv2.Pid) {
		t.Errorf("pid %d alive after Stop", srv2.Pid)
	}
	if log := srv2.ErrorLogTail(3); !strings.Contains(log, "Shutdown complete") {
		t.Errorf("error log does not end with a clean shutdown:\n%s", log)
	}
	if err := srv2.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestBasedirTree runs the installed server as if from an unpacked tree
// (dpkg-deb -x of mariadb-server-core): the tree's binaries, its share/
// directory, and no my_print_defaults, which Start copies in.
func TestBasedirTree(t *testing.T) {
	testdb.NeedServer(t)
	bin, err := sandbox.FindServerBinary("")
	if err != nil {
		t.Fatal(err)
	}
	script := testenv.NeedBinary(t, "mariadb-install-db", "mariadb-server")
	share := "/usr/share/mysql"
	_, err = os.Stat(filepath.Join(share, "english"))
	testenv.SkipUnless(t, err, "this test builds its tree from a Debian MariaDB install: apt-get install mariadb-server", fs.ErrNotExist)
	tree := filepath.Join(t.TempDir(), "usr")
	for _, d := range []string{"sbin", "bin", "share"} {
		os.MkdirAll(filepath.Join(tree, d), 0o755)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(bin, filepath.Join(tree, "sbin", "mariadbd")))
	b, err := os.ReadFile(script)
	must(err)
	must(os.WriteFile(filepath.Join(tree, "bin", "mariadb-install-db"), b, 0o755))
	must(os.Symlink(share, filepath.Join(tree, "share", "mysql")))

	srv, err := sandbox.Start(context.Background(), sandbox.Config{
		Dir: filepath.Join(t.TempDir(), "d"), Basedir: tree, NoLoadUser: true,
		Options: []string{"--innodb-buffer-pool-size=64M"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	if srv.Binary != filepath.Join(tree, "sbin", "mariadbd") {
		t.Errorf("binary %s, want the tree's", srv.Binary)
	}
	if _, err := os.Stat(filepath.Join(tree, "bin", "my_print_defaults")); err != nil {
		t.Errorf("my_print_defaults not copied into the tree: %v", err)
	}
	db, err := srv.Root()
	must(err)
	defer db.Close()
	var basedir, msgs string
	must(db.QueryRow("SELECT @@basedir, @@lc_messages_dir").Scan(&basedir, &msgs))
	if strings.TrimSuffix(basedir, "/") != tree || strings.TrimSuffix(msgs, "/") != filepath.Join(tree, "share", "mysql") {
		t.Errorf("@@basedir %s, @@lc_messages_dir %s; want the tree %s", basedir, msgs, tree)
	}
}

func TestStopOnCancel(t *testing.T) {
	testdb.NeedServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := sandbox.Start(ctx, sandbox.Config{Dir: t.TempDir(), NoLoadUser: true, Options: []string{"--innodb-buffer-pool-size=64M"}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Kill() })
	cancel()
	select {
	case <-srv.Exited():
	case <-time.After(60 * time.Second):
		t.Fatalf("server pid %d still running 60s after its context was cancelled", srv.Pid)
	}
	if log := srv.ErrorLogTail(3); !strings.Contains(log, "Shutdown complete") {
		t.Errorf("cancel did not shut the server down cleanly:\n%s", log)
	}
}

// TestStartFailureShowsErrorLog: a server that exits while starting is
// reported in one line quoting its error log's complaint, not the log's last
// 20 lines; a port another process listens on is ErrPortInUse, said so.
func TestStartFailureShowsErrorLog(t *testing.T) {
	testdb.NeedServer(t)
	dir := t.TempDir()
	_, err := sandbox.Start(context.Background(), sandbox.Config{
		Dir:     dir,
		Options: []string{"--no-such-option-for-perfbench=1"},
	})
	if !errors.Is(err, sandbox.ErrNotReady) {
		t.Fatalf("err = %v, want ErrNotReady", err)
	}
	if !strings.Contains(err.Error(), "unknown variable 'no-such-option-for-perfbench=1'") || strings.Contains(err.Error(), "\n") ||
		strings.Contains(err.Error(), "[Note]") || strings.Contains(err.Error(), "Aborting") {
		t.Errorf("error is not the error log's complaint in one line:\n%v", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = sandbox.Start(context.Background(), sandbox.Config{Dir: dir, Port: port, NoLoadUser: true, Options: []string{"--innodb-buffer-pool-size=64M"}})
	if !errors.Is(err, sandbox.ErrPortInUse) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), fmt.Sprintf("port %d is taken by another process (the server said: Can't start server: Bind on TCP/IP port", port)) {
		t.Errorf("a busy port: %v", err)
	}
	// A load account the server refuses: the statement is quoted without
	// the password.
	_, err = sandbox.Start(context.Background(), sandbox.Config{Dir: dir, User: strings.Repeat("u", 200), Password: "pw-s3cret-x",
		Options: []string{"--innodb-buffer-pool-size=64M"}})
	if err == nil || !strings.Contains(err.Error(), "IDENTIFIED BY '***'") || strings.Contains(err.Error(), "pw-s3cret-x") {
		t.Errorf("a refused load account: %v", err)
	}
}

// TestServerDiesWithParent starts a helper process (this test binary) that
// starts a server and is then killed with SIGKILL: the server must not
// outlive it.
func TestServerDiesWithParent(t *testing.T) {
	testdb.NeedServer(t)
	proctest.DiesWithParent(t, 60*time.Second, "start-and-hang", t.TempDir())
}

var helpers = testenv.Helpers{"start-and-hang": startAndHang}

func TestMain(m *testing.M) {
	if code, ok := helpers.Run(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// startAndHang, the helper of TestServerDiesWithParent, starts a server in
// the folder args[0], says its pid and waits to be killed.
func startAndHang(args []string) int {
	srv, err := sandbox.Start(context.Background(), sandbox.Config{Dir: args[0], NoLoadUser: true, Options: []string{"--innodb-buffer-pool-size=64M"}})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Printf("pid %d\n", srv.Pid)
	time.Sleep(time.Hour) // hangs until the test kills it
	return 0
}
