package mysqld

// Tests against real MariaDB servers started in temporary directories
// (internal/testdb), under real sysbench loads.

import (
	"context"
	"errors"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/mysqld/sandbox"
	"github.com/perfbench/perfbench/record"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// noHome keeps the tests' credentials away from the user's ~/.my.cnf.
func noHome(t *testing.T) ClientEnv {
	return ClientEnv{Home: t.TempDir(), Getenv: func(string) string { return "" }}
}

// rootClient returns a Client for root over srv's socket.
func rootClient(t *testing.T, srv *sandbox.Server) *Client {
	t.Helper()
	c, err := Target{Socket: srv.Socket, User: "root"}.Client(noHome(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func connectRoot(t *testing.T, srv *sandbox.Server) *DB {
	t.Helper()
	db, err := Connect(context.Background(), rootClient(t, srv), nil, ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestFindRealServer(t *testing.T) {
	srv := testdb.Shared(t)
	ctx := context.Background()
	for _, tg := range []Target{
		{Pid: srv.Pid},
		{PidFile: srv.PidFile},
		{Socket: srv.Socket},
		{Host: "127.0.0.1", Port: srv.Port},
		{Port: srv.Port},
		{Pid: srv.Pid, Socket: srv.Socket},
	} {
		p, err := Find(ctx, tg)
		if err != nil {
			t.Errorf("Find(%+v): %v", tg, err)
			continue
		}
		if p.Pid != srv.Pid {
			t.Errorf("Find(%+v) = pid %d (%s), want %d", tg, p.Pid, p.By, srv.Pid)
		}
		if !p.IsServer() || filepath.Base(p.Exe) != filepath.Base(srv.Binary) {
			t.Errorf("Find(%+v): exe %q, want %s", tg, p.Exe, srv.Binary)
		}
		// The process's own endpoints are found from /proc.
		if len(p.Sockets) != 1 || p.Sockets[0] != srv.Socket || len(p.Ports) != 1 || p.Ports[0] != srv.Port {
			t.Errorf("Find(%+v): sockets %v ports %v; want %s and %d", tg, p.Sockets, p.Ports, srv.Socket, srv.Port)
		}
	}

	// No flags: the lone server, or, when other servers run on this
	// machine, an error listing them all, ours among them.
	servers, err := Proc{}.Servers()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Find(ctx, Target{})
	switch len(servers) {
	case 1:
		if err != nil || p.Pid != srv.Pid || p.By != "only server running" {
			t.Errorf("lone server: %+v, %v", p, err)
		}
	default:
		if !errors.Is(err, errManyServers) || !strings.Contains(err.Error(), srv.Socket) {
			t.Errorf("%d servers running: err = %v, want ErrManyServers listing %s", len(servers), err, srv.Socket)
		}
	}

	// This test process is no server.
	_, err = Find(ctx, Target{Pid: os.Getpid()})
	if !errors.Is(err, errNotServer) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("Find(our own pid) = %v, want ErrNotServer suggesting --force", err)
	}
	if p, err := Find(ctx, Target{Pid: os.Getpid(), Force: true}); err != nil || p.Pid != os.Getpid() {
		t.Errorf("Find(our own pid, --force) = %+v, %v", p, err)
	}
}

func TestDeadSocket(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.sock")
	// A socket file whose server is gone: connections are refused.
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()

	for _, sock := range []string{missing, stale} {
		_, err := Find(ctx, Target{Socket: sock})
		if !errors.Is(err, errUnreachable) || !strings.Contains(err.Error(), sock) || !strings.Contains(err.Error(), "is the server running?") {
			t.Errorf("Find(--socket %s) = %v, want ErrUnreachable naming it", sock, err)
		}
		c, err := Target{Socket: sock, User: "root"}.Client(noHome(t))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Connect(ctx, c, nil, ConnectOptions{Timeout: 3 * time.Second})
		if !errors.Is(err, errUnreachable) || !strings.Contains(err.Error(), sock) {
			t.Errorf("Connect(%s) = %v, want ErrUnreachable naming it", sock, err)
		}
	}
}

func TestConnectCredentials(t *testing.T) {
	srv := testdb.Shared(t)
	ctx := context.Background()
	found, err := Find(ctx, Target{Socket: srv.Socket})
	if err != nil {
		t.Fatal(err)
	}

	// The load account over TCP, with its password from ~/.my.cnf.
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".my.cnf"), []byte("[client]\nuser=nobody\n[perfbench]\nuser="+srv.User+"\npassword="+srv.Password+"\n"), 0o600)
	env := ClientEnv{Home: home, Getenv: func(string) string { return "" }}
	c, err := Target{Host: "127.0.0.1", Port: srv.Port}.Client(env)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Connect(ctx, c, found, ConnectOptions{})
	if err != nil {
		t.Fatalf("connect as %s over TCP: %v", srv.User, err)
	}
	if db.Pid != srv.Pid || !strings.HasPrefix(db.Endpoint, "tcp:") {
		t.Errorf("connection: pid %d endpoint %s, want pid %d over tcp", db.Pid, db.Endpoint, srv.Pid)
	}
	db.Close()

	// With --pid only, Connect goes to the socket the process listens on.
	c, _ = Target{Pid: srv.Pid, User: "root"}.Client(noHome(t))
	db, err = Connect(ctx, c, found, ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if db.Endpoint != "unix:"+srv.Socket || db.Pid != srv.Pid {
		t.Errorf("connection from --pid: endpoint %s pid %d", db.Endpoint, db.Pid)
	}
	db.Close()

	// A wrong password: ErrAccessDenied, and the password is nowhere in
	// the message, over TCP and over the socket.
	const wrong = "Wr0ng-Pa55word-7431"
	for _, tg := range []Target{
		{Host: "127.0.0.1", Port: srv.Port, User: srv.User, Password: NewSecret(wrong)},
		{Socket: srv.Socket, User: srv.User, Password: NewSecret(wrong)},
	} {
		c, _ := tg.Client(noHome(t))
		_, err := Connect(ctx, c, nil, ConnectOptions{})
		if !errors.Is(err, ErrAccessDenied) {
			t.Errorf("wrong password: err = %v, want ErrAccessDenied", err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, wrong) || strings.Contains(msg, "Wr0ng") {
			t.Errorf("error shows the password: %s", msg)
		}
		if !strings.Contains(err.Error(), srv.User) || !strings.Contains(err.Error(), "check --user and the password") {
			t.Errorf("error does not say what to fix: %v", err)
		}
	}

	// The right socket but a target that is another process: refused.
	other := &Found{Process: Process{Pid: os.Getpid()}, By: "--pid"}
	_, err = Connect(ctx, rootClient(t, srv), other, ConnectOptions{})
	if !errors.Is(err, errMismatch) {
		t.Errorf("connection to another process than the target: %v, want ErrMismatch", err)
	}
	db, err = Connect(ctx, rootClient(t, srv), other, ConnectOptions{Force: true})
	if err != nil || len(db.Warnings) == 0 {
		t.Errorf("--force: %v, warnings %v", err, db.Warnings)
	} else {
		db.Close()
	}
}

func TestStatusAndIdentity(t *testing.T) {
	srv := testdb.Shared(t)
	db := connectRoot(t, srv)
	ctx := context.Background()

	a, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Values) < 300 || a.Took <= 0 || !b.Time.After(a.Time) {
		t.Errorf("snapshot: %d values, took %v", len(a.Values), a.Took)
	}
	t.Logf("SHOW GLOBAL STATUS: %d numeric values in %v", len(a.Values), a.Took)
	// Two snapshots in a row: the second's own SHOW GLOBAL STATUS is the
	// only statement in between, and it is taken out.
	rawQ := b.Values["Questions"] - a.Values["Questions"]
	d, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if d.Own["Questions"] != 1 || d.Own["Com_show_status"] != 1 {
		t.Errorf("own statements = %v, want 1 SHOW STATUS", d.Own)
	}
	if q := d.Counters["Questions"]; q != rawQ-1 || q < 0 {
		t.Errorf("Questions delta = %v, raw %v", q, rawQ)
	}
	if _, ok := d.Gauges["Threads_connected"]; !ok {
		t.Error("Threads_connected missing from the gauges")
	}
	if _, ok := d.Counters["Threads_connected"]; ok {
		t.Error("Threads_connected among the counters")
	}

	// MariaDB 10.11 has no Innodb_rows_read: rows resolve to Rows_read,
	// and a variable it lacks is a clear error.
	op, err := ResolveOp("Innodb_rows_read/1000", b)
	if err != nil || op.Variable != "Rows_read" || op.Per != 1000 {
		t.Errorf("ResolveOp(Innodb_rows_read/1000) = %+v, %v", op, err)
	}
	_, err = ResolveOp("Com_selects", b)
	if !errors.Is(err, errNoVariable) || !strings.Contains(err.Error(), "Com_select") {
		t.Errorf("ResolveOp(Com_selects) = %v, want ErrNoVariable suggesting Com_select", err)
	}

	s, warnings, err := db.Server(ctx, srv.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("identity warnings: %v", warnings)
	}
	if s.Pid != srv.Pid || s.Version != srv.Version || s.Port != srv.Port || s.Socket != srv.Socket ||
		strings.TrimSuffix(s.Datadir, "/") != srv.Datadir || s.Exe != srv.Binary && filepath.Base(s.Exe) != filepath.Base(srv.Binary) {
		t.Errorf("identity = %+v\nserver = %+v", s, srv)
	}
	if s.Variables["performance_schema"] != "ON" || s.Variables["innodb_buffer_pool_size"] != "134217728" {
		t.Errorf("variables = %v", s.Variables)
	}
	if out, err := exec.Command("readelf", "-n", s.Exe).Output(); err == nil {
		if m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out); m != nil && string(m[1]) != s.BuildID {
			t.Errorf("build-id %q, readelf says %s", s.BuildID, m[1])
		}
	} else if s.BuildID == "" {
		t.Error("no build-id")
	}
}

// TestQuestionsMatchSysbench: the Questions delta over a sysbench run counts
// the statements sysbench reports, within 1%.
func TestQuestionsMatchSysbench(t *testing.T) {
	srv := testdb.Shared(t)
	testdb.PrepareSysbench(t, srv, testdb.Table{})
	db := connectRoot(t, srv)
	ctx := context.Background()
	a, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res := testdb.Sysbench(t, srv, "oltp_point_select", testdb.Table{}, "--threads=2", "--time=0", "--events=20000")
	b, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	op, err := ResolveOp("", b)
	if err != nil {
		t.Fatal(err)
	}
	n, err := d.Ops(op)
	if err != nil {
		t.Fatal(err)
	}
	if res.Queries < 20000 {
		t.Fatalf("sysbench reports %v queries, want at least 20000:\n%s", res.Queries, res.Output)
	}
	if rel := math.Abs(n-res.Queries) / res.Queries; rel > 0.01 {
		t.Errorf("Questions delta %v vs sysbench queries %v: %.2f%% apart", n, res.Queries, 100*rel)
	}
	t.Logf("Questions delta %v, sysbench queries %v", n, res.Queries)
}

// TestRestartDetected: snapshots across a FLUSH STATUS and across a
// restart of the server are refused.
func TestRestartDetected(t *testing.T) {
	srv := testdb.New(t, testdb.Options{})
	ctx := context.Background()
	db := connectRoot(t, srv)
	// Let Uptime grow past the slack so that a restart shows.
	if !testenv.Await(time.Minute, func() bool {
		s, err := db.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Values["Uptime"] >= 4
	}) {
		t.Fatal("the server's Uptime did not reach 4 s in a minute")
	}
	a, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec(ctx, "FLUSH STATUS"); err != nil {
		t.Fatal(err)
	}
	b, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Delta(a, b); !errors.Is(err, ErrStatusReset) {
		t.Errorf("across FLUSH STATUS: %v, want ErrStatusReset", err)
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	db2 := connectRoot(t, srv)
	c, err := db2.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Delta(a, c); !errors.Is(err, ErrRestarted) || !strings.Contains(err.Error(), "measure the window again") {
		t.Errorf("across a restart: %v, want ErrRestarted", err)
	}
	// The old connection is dead: a clear error.
	if _, err := db.Status(ctx); err == nil {
		t.Error("snapshot on a connection to the stopped server: no error")
	}
}

// loadWhile runs a sysbench load of `seconds` in the background and waits
// until its connections are up.
func loadWhile(t *testing.T, srv *sandbox.Server, db *DB, threads, seconds int) <-chan error {
	t.Helper()
	testdb.PrepareSysbench(t, srv, testdb.Table{})
	ctx, cancel := context.WithCancel(context.Background())
	cmd := testdb.SysbenchCommand(ctx, srv, "oltp_point_select", testdb.Table{},
		"--threads="+strconv.Itoa(threads), "--time="+strconv.Itoa(seconds), "run")
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cancel(); <-done })
	if !testenv.Await(10*time.Second, func() bool {
		s, err := db.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s.Values["Threads_connected"] >= float64(threads+1)
	}) {
		t.Fatalf("sysbench's %d connections did not show up in 10 s", threads)
	}
	return done
}

// threadRoles reads the roles of the threads of the server pid, and the
// threads it had just before.
func threadRoles(t *testing.T, db *DB, pid int) (m *ThreadMap, before []int) {
	t.Helper()
	before, err := Proc{}.Threads(pid)
	if err != nil {
		t.Fatal(err)
	}
	m, err = db.ThreadRoles(context.Background(), pid)
	if err != nil {
		t.Fatal(err)
	}
	return m, before
}

// checkRoles checks a role map of a server under a load of `threads`
// connections, and returns the number of threads per role. Every thread
// the server had before the roles were read (before) and still has has a
// role.
func checkRoles(t *testing.T, m *ThreadMap, before []int, pid, threads int) map[string]int {
	t.Helper()
	after, err := Proc{}.Threads(pid)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Map()
	known := map[string]bool{}
	for _, r := range RoleNames {
		known[r] = true
	}
	for _, tid := range before {
		if _, ok := got[tid]; !ok && slices.Contains(after, tid) {
			t.Errorf("thread %d, there before the roles were read and after, has no role", tid)
		}
	}
	for tid, r := range got {
		if !known[r] {
			t.Errorf("thread %d: unknown role %q", tid, r)
		}
	}
	if got[pid] != RoleMain {
		t.Errorf("main thread %d: role %q", pid, got[pid])
	}
	counts := m.Count()
	// sysbench's connections and perfbench's own.
	if counts[RoleConnection] < threads+1 {
		t.Errorf("%d connection threads, want at least %d: %+v", counts[RoleConnection], threads+1, m.Threads)
	}
	return counts
}

func TestRolesPerformanceSchema(t *testing.T) {
	srv := testdb.Shared(t)
	db := connectRoot(t, srv)
	loadWhile(t, srv, db, 2, 3)
	m, before := threadRoles(t, db, srv.Pid)
	if !m.PerformanceSchema || len(m.Warnings) != 0 {
		t.Errorf("performance_schema not used: %v", m.Warnings)
	}
	counts := checkRoles(t, m, before, srv.Pid, 2)
	if counts[rolePageCleaner] != 1 || counts[roleInnoDBPool] < 1 {
		t.Errorf("roles %v: want one page cleaner and InnoDB pool threads", counts)
	}
	// Our own connection's thread is a connection thread.
	tid, err := db.connectionTid(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Map()[tid]; r != RoleConnection {
		t.Errorf("our connection thread %d: role %q", tid, r)
	}
	t.Logf("roles: %v", counts)
	for _, th := range m.Threads {
		t.Logf("  %d %s %s (%s)", th.Tid, th.Role, th.Name, th.Source)
	}

	// An account without privileges on performance_schema and without
	// PROCESS: roles still come, with warnings saying what is missing.
	c, _ := Target{Socket: srv.Socket, User: srv.User, Password: NewSecret(srv.Password)}.Client(noHome(t))
	udb, err := Connect(context.Background(), c, nil, ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer udb.Close()
	um, err := udb.ThreadRoles(context.Background(), srv.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// Both are roles warnings: the performance_schema one concerns the
	// split as a whole, the PROCESS one the connections the processlist
	// did not show and the role they count in.
	var pfs, process []record.Warning
	for _, w := range um.Warnings {
		switch {
		case w.Code != record.WarnRoles:
			t.Errorf("warning %+v: code %s, want roles", w, w.Code)
		case strings.Contains(w.Text, "performance_schema"):
			pfs = append(pfs, w)
		case strings.Contains(w.Text, "PROCESS"):
			process = append(process, w)
		}
	}
	if um.PerformanceSchema || len(pfs) != 1 || len(pfs[0].Roles) != 0 || len(process) != 1 ||
		!slices.Equal(process[0].Roles, []string{RoleConnection, RoleOther}) {
		t.Errorf("unprivileged roles: performance_schema %v, warnings %+v", um.PerformanceSchema, um.Warnings)
	}
	if um.Map()[srv.Pid] != RoleMain || len(um.Threads) == 0 {
		t.Errorf("unprivileged roles: %+v", um.Threads)
	}
}

func TestRolesWithoutPerformanceSchema(t *testing.T) {
	srv := testdb.New(t, testdb.Options{Options: []string{"--performance-schema=OFF"}})
	db := connectRoot(t, srv)
	loadWhile(t, srv, db, 2, 3)
	m, before := threadRoles(t, db, srv.Pid)
	if m.PerformanceSchema || len(m.Warnings) != 1 || m.Warnings[0].Code != record.WarnRoles ||
		!strings.Contains(m.Warnings[0].Text, "performance_schema is off") {
		t.Errorf("performance_schema %v, warnings %q", m.PerformanceSchema, m.Warnings)
	}
	counts := checkRoles(t, m, before, srv.Pid, 2)
	for _, th := range m.Threads {
		if th.Source == "performance_schema" {
			t.Errorf("thread %+v named by performance_schema while it is off", th)
		}
	}
	// The io_uring/libaio completion thread is found by the system call
	// it waits in (root can read /proc/PID/task/TID/syscall).
	if _, err := (Proc{}).ThreadSyscall(srv.Pid, srv.Pid); err == nil && counts[roleInnoDBIO] != 1 {
		t.Errorf("roles %v: want one innodb-io thread (the AIO completion thread)", counts)
	}
	t.Logf("roles: %v", counts)
}

// TestStoppedServerAnswersNothing stops the server (SIGSTOP) and reads its
// status and its threads' roles (the processlist) on two connections made
// with the default options: each read must fail with errNoAnswer once
// defaultQueryTimeout has passed (they waited until the server was
// resumed, 43 s in the report of a user), and say what it waited for.
func TestStoppedServerAnswersNothing(t *testing.T) {
	srv := testdb.New(t, testdb.Options{})
	statusDB, rolesDB := connectRoot(t, srv), connectRoot(t, srv)
	if err := syscall.Kill(srv.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(srv.Pid, syscall.SIGCONT) })
	errs := make(chan error, 2)
	start := time.Now()
	go func() {
		_, err := statusDB.Status(context.Background())
		errs <- err
	}()
	go func() {
		_, err := rolesDB.ThreadRoles(context.Background(), srv.Pid)
		errs <- err
	}()
	for range 2 {
		select {
		case err := <-errs:
			took := time.Since(start)
			t.Logf("after %.1f s: %v", took.Seconds(), err)
			if !errors.Is(err, errNoAnswer) || !strings.Contains(err.Error(), "SIGSTOP") {
				t.Errorf("a read of a stopped server: %v, want errNoAnswer", err)
			}
			if took < defaultQueryTimeout {
				t.Errorf("a read of a stopped server failed after %v, before its deadline of %v", took, defaultQueryTimeout)
			}
		case <-time.After(defaultQueryTimeout + 15*time.Second):
			t.Fatalf("a read of a stopped server still waits after %v", defaultQueryTimeout+15*time.Second)
		}
	}
}
