package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/host/proc"
	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/mysqld/sandbox"
	"github.com/perfbench/perfbench/record"
)

// stopTimeout bounds a server's clean shutdown before it is killed.
const stopTimeout = 150 * time.Second

// server is the state of one version's server over the run: a sandbox
// perfbench started, a server started by the plan's own start command, or a
// running server perfbench only connects to.
type server struct {
	r   *runner
	v   *plan.Version
	dir string // <out>/servers/<label> for a managed version

	sb       *sandbox.Server
	sbCancel context.CancelFunc
	cs       *customServer

	db      *mysqld.DB
	client  *mysqld.Client
	pid     int
	datadir string
	// conn is how the load reaches the server: Host and Port, or Socket.
	conn suite.Options

	// dataReady: the tables are loaded (this run, or by an earlier run
	// whose data directory is kept; see the marker file).
	dataReady bool
	// startErr and loadErr are the last start and load failures: the
	// version's measurements fail with them until its next start.
	startErr error
	loadErr  error
	// notes are warnings for the next Record of this version.
	notes []string
	// cpus are the CPUs perfbench pinned the server to (empty: none).
	cpus cpuset.Set
	// placed is where the server and the load of the current
	// measurement were seen to run (nil until its load runs).
	placed *record.Placement
	// crashRecorded: a Record holds the end of the error log of the
	// server that exited last.
	crashRecorded bool
}

// owned reports whether the run started this server and it still runs.
func (s *server) owned() bool {
	return (s.sb != nil && s.sb.Running()) || (s.cs != nil && s.cs.running())
}

// running reports whether the server process is alive.
func (s *server) running() bool {
	switch {
	case s.sb != nil:
		return s.sb.Running()
	case s.cs != nil:
		return s.cs.running()
	}
	return proc.Alive(s.pid)
}

// exited returns a channel closed when the server process exits, watched
// until ctx ends.
func (s *server) exited(ctx context.Context) <-chan struct{} {
	if s.sb != nil {
		return s.sb.Exited()
	}
	pid := s.pid
	ch := make(chan struct{})
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !proc.Alive(pid) {
					close(ch)
					return
				}
			}
		}
	}()
	return ch
}

// down reports whether the server has exited, or does within a moment: a
// server that dies takes its clients' connections with it at once, and its
// own exit may be seen a little later.
func (s *server) down(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	select {
	case <-s.exited(ctx):
		return true
	case <-ctx.Done():
		return !s.running()
	}
}

// errorLogTail returns the last lines of the server's error log, when
// perfbench knows where it is.
func (s *server) errorLogTail(n int) string {
	switch {
	case s.sb != nil:
		return s.sb.ErrorLogTail(n)
	case s.cs != nil:
		return s.cs.logTail(n)
	}
	return ""
}

// start starts a managed server (or, for a running server, finds it and
// connects).
func (s *server) start(ctx context.Context) error {
	s.startErr, s.loadErr = nil, nil
	if s.v.Managed == nil {
		return s.resolve(ctx)
	}
	err := s.startManaged(ctx)
	if err != nil && s.v.Engine == suite.EngineRocksDB {
		err = fmt.Errorf("%w (engine = %q needs MyRocks: apt-get install mariadb-plugin-rocksdb)", err, s.v.Engine)
	}
	if err == nil {
		err = s.checkEngine(ctx)
	}
	if err != nil {
		s.startErr = err
	}
	return err
}

func (s *server) startManaged(ctx context.Context) error {
	m := s.v.Managed
	p := s.r.plan
	s.cpus = serverCPUs(s.r)
	if len(m.Start) > 0 {
		cs, err := startCustom(ctx, s.r, s.v, s.dir)
		if err != nil {
			return err
		}
		s.cs = cs
		s.pid, s.datadir = cs.pid, cs.datadir
		s.conn = suite.Options{Host: "127.0.0.1", Port: cs.port}
		if cs.port == 0 {
			s.conn = suite.Options{Socket: cs.socket}
		}
		s.r.prog.printf("perfbench run: started %s with its start command: pid %d, socket %s", s.v.Label, cs.pid, cs.socket)
	} else {
		cfg := sandboxConfig(m, s.dir, p)
		cfg.CPUs = s.cpus
		// In a cgroup of its own, the server is counted per CPU
		// (cgroup mode: see stepRun.open).
		cfg.Cgroup = true
		// The server's lifetime is the run's, not the signal's: on Ctrl-C
		// the partial window is read and written first, then the servers
		// are stopped. Ctrl-C during the start itself aborts it.
		sctx, cancel := context.WithCancel(context.Background())
		stop := context.AfterFunc(ctx, cancel)
		sb, err := sandbox.Start(sctx, cfg)
		stop()
		if err != nil {
			cancel()
			if errors.Is(err, sandbox.ErrPortInUse) {
				return fmt.Errorf("start %s: %w: port %d is taken%s; give version %s (line %d of the plan) another port, or none to let perfbench pick a free one",
					s.v.Label, sandbox.ErrPortInUse, m.Port, listener(m.Port), s.v.Label, s.v.Line)
			}
			return fmt.Errorf("start %s: %w", s.v.Label, err)
		}
		s.sb, s.sbCancel = sb, cancel
		s.pid, s.datadir = sb.Pid, sb.Datadir
		if sb.CgroupErr != nil {
			s.notes = append(s.notes, fmt.Sprintf("the server runs in no cgroup of its own (%v): it is counted per thread, which misses some of its CPU", sb.CgroupErr))
		}
		s.conn = suite.Options{Host: "127.0.0.1", Port: sb.Port}
		s.r.prog.printf("perfbench run: started %s: %s %s, pid %d, port %d, in %s", s.v.Label, filepath.Base(sb.Binary), sb.Version, sb.Pid, sb.Port, sb.Dir)
	}
	s.dataReady = s.markerMatches()
	return s.connect(ctx)
}

// cgroup is the cgroup v2 the server runs in alone, for cgroup mode: a
// sandbox perfbench started in one (sandbox.Config.Cgroup) and that still
// runs there; "" otherwise.
func (s *server) cgroup() string {
	if s.sb == nil || s.sb.Cgroup == "" || s.sb.Pid != s.pid {
		return ""
	}
	return s.sb.Cgroup
}

// listener names the process listening on a port of 127.0.0.1: " by pid
// 4242 (mariadbd)", or "" when it cannot be told.
func listener(port int) string {
	pid, err := mysqld.Proc{}.ListenerOf(net.IPv4(127, 0, 0, 1), port)
	if err != nil || pid <= 0 {
		return ""
	}
	comm, _ := procfs.New("").Proc(pid).Comm()
	if c := strings.TrimSpace(comm); c != "" {
		return fmt.Sprintf(" by pid %d (%s)", pid, c)
	}
	return fmt.Sprintf(" by pid %d", pid)
}

// sandboxConfig is the sandbox of a managed version.
func sandboxConfig(m *plan.Managed, dir string, p *plan.Plan) sandbox.Config {
	cfg := sandbox.Config{
		Dir:      dir,
		MyCnf:    m.Mycnf,
		Port:     m.Port,
		Database: p.Data.DB,
		User:     p.Data.User,
		Password: p.Data.Password,
	}
	if m.Basedir != plan.Installed {
		cfg.Basedir = m.Basedir
	}
	for _, o := range m.Options {
		cfg.Options = append(cfg.Options, "--"+o)
	}
	return cfg
}

// ensure makes sure the server runs before a step: a managed server that
// died is started again (once: if that fails, the version's steps fail
// until its next start), a running server that is gone is looked up again
// (it may be back under another pid), and the connection is renewed when
// it broke.
func (s *server) ensure(ctx context.Context) error {
	if s.v.Managed == nil {
		// Someone else runs it: it may be back under another pid.
		if s.db == nil || !proc.Alive(s.pid) {
			return s.resolve(ctx)
		}
	} else {
		if s.startErr != nil {
			return s.startErr
		}
		if s.sb == nil && s.cs == nil {
			return s.start(ctx)
		}
		if !s.running() {
			old := s.pid
			if s.crashRecorded {
				s.r.prog.printf("perfbench run: the server of %s (pid %d) is not running; starting it again", s.v.Label, old)
			} else {
				s.r.prog.printf("perfbench run: the server of %s (pid %d) is not running; starting it again. Its error log "+
					"ends:\n%s", s.v.Label, old, indent(s.errorLogTail(15)))
			}
			s.crashRecorded = false
			s.closeDB()
			var err error
			if s.sb != nil {
				err = s.sb.Restart(ctx)
				if err == nil {
					s.pid, s.cpus = s.sb.Pid, serverCPUs(s.r)
				}
			} else {
				s.cs.stop()
				s.cs = nil
				err = s.startManaged(ctx)
			}
			if err != nil {
				s.startErr = fmt.Errorf("start %s again after it exited: %w", s.v.Label, err)
				return s.startErr
			}
			s.notes = append(s.notes, fmt.Sprintf("the server was started again before this step: the previous one (pid %d) had exited", old))
		}
	}
	if s.db != nil {
		if _, err := s.db.ConnectionPid(ctx); err == nil {
			return nil
		}
	}
	return s.connect(ctx)
}

// ensureData loads the data set when the server lacks it (a data directory
// wiped, a load that did not finish) and the plan loads data.
func (s *server) ensureData(ctx context.Context) error {
	if s.loadErr != nil {
		return s.loadErr
	}
	if s.dataReady || !s.r.plan.Data.Load || s.v.Managed == nil {
		return nil
	}
	s.r.prog.printf("perfbench run: %s has no complete data set (a load that did not finish, or a new data directory): loading it", s.v.Label)
	return s.r.load(ctx, s)
}

// resolve finds a running server and connects to it.
func (s *server) resolve(ctx context.Context) error {
	t := s.v.Target
	found, err := mysqld.Find(ctx, runningTarget(t))
	if err != nil {
		s.startErr = fmt.Errorf("find the server of %s: %w", s.v.Label, err)
		return s.startErr
	}
	if s.pid != 0 && s.pid != found.Pid {
		s.notes = append(s.notes, fmt.Sprintf("the server is another process than at the previous step (pid %d, was %d): it was restarted", found.Pid, s.pid))
	}
	s.pid = found.Pid
	s.pinRunning()
	switch {
	case t.Socket != "":
		s.conn = suite.Options{Socket: t.Socket}
	case t.Host != "" || t.Port != 0:
		s.conn = suite.Options{Host: t.Host, Port: t.Port}
		if s.conn.Host == "" || s.conn.Host == "localhost" {
			s.conn.Host = "127.0.0.1"
		}
		if s.conn.Port == 0 {
			s.conn.Port = 3306
		}
	case len(found.Sockets) > 0:
		s.conn = suite.Options{Socket: found.Sockets[0]}
	case len(found.Ports) > 0:
		s.conn = suite.Options{Host: "127.0.0.1", Port: found.Ports[0]}
	}
	if err := s.connect(ctx); err != nil {
		s.startErr = err
		return err
	}
	if srv, _, err := s.db.Server(ctx, 0); err == nil {
		s.datadir = srv.Datadir
	}
	if err := s.checkEngine(ctx); err != nil {
		s.startErr = err
		return err
	}
	return nil
}

func runningTarget(t *plan.Target) mysqld.Target {
	mt := mysqld.Target{Pid: t.Pid, PidFile: t.PidFile, Socket: t.Socket, Host: t.Host, Port: t.Port,
		DefaultsFile: t.DefaultsFile, User: t.User}
	if t.Password != "" {
		mt.Password = mysqld.NewSecret(t.Password)
	}
	return mt
}

// connect opens perfbench's own connection to the server: as root over the
// socket for a managed server (sandboxes have a root without password),
// with the version's credentials for a running one.
func (s *server) connect(ctx context.Context) error {
	s.closeDB()
	var t mysqld.Target
	env := mysqld.ClientEnv{}
	if s.v.Managed != nil {
		t = mysqld.Target{Pid: s.pid, Socket: s.socket(), User: "root", Password: mysqld.NewSecret("")}
		// Nothing of the user's option files or environment: the sandbox
		// has its own root.
		env = mysqld.ClientEnv{Home: filepath.Join(s.dir, "no-home"), Getenv: func(string) string { return "" }}
	} else {
		t = runningTarget(s.v.Target)
		t.Pid = s.pid
	}
	found, err := mysqld.Find(ctx, t)
	if err != nil {
		return fmt.Errorf("find the server of %s: %w", s.v.Label, err)
	}
	c, err := t.Client(env)
	if err != nil {
		return fmt.Errorf("credentials for the server of %s: %w", s.v.Label, err)
	}
	db, err := mysqld.Connect(ctx, c, found, mysqld.ConnectOptions{})
	if err != nil {
		if s.v.Target != nil && errors.Is(err, mysqld.ErrAccessDenied) {
			return deniedByPlan(s.v, c.User, err)
		}
		return fmt.Errorf("connect to the server of %s: %w", s.v.Label, err)
	}
	s.db, s.client = db, c
	return nil
}

// planError is an error whose text speaks of the plan, over the error it
// explains (kept for errors.Is).
type planError struct {
	msg string
	err error
}

func (e *planError) Error() string { return e.msg }
func (e *planError) Unwrap() error { return e.err }

// deniedByPlan is a running server's refusal of the credentials the plan
// gave for it: the hint names the version's keys, not perfbench stat's
// flags.
func deniedByPlan(v *plan.Version, user string, err error) error {
	said := "access denied"
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if me.Number != 1045 {
			return fmt.Errorf("connect to the server of %s: %w", v.Label, err)
		}
		said = me.Message
	}
	return &planError{err: err, msg: fmt.Sprintf("connect to the server of %s as %s: %s: check user and password, or "+
		"defaults_file, of version %s (line %d of the plan)",
		v.Label, user, said, v.Label, v.Line)}
}

// loadAccountHint is what a load that the server refused (error 1045 in
// text) should check.
func loadAccountHint(text string) string {
	if strings.Contains(text, "error 1045") {
		return " (the load's account was refused: check data.user and data.password of the plan)"
	}
	return ""
}

func (s *server) socket() string {
	switch {
	case s.sb != nil:
		return s.sb.Socket
	case s.cs != nil:
		return s.cs.socket
	}
	return ""
}

func (s *server) closeDB() {
	if s.db != nil {
		s.db.Close()
		s.db = nil
	}
}

// rootDB opens a connection pool with the privileges of perfbench's own
// connection, for the post-write flush (SET GLOBAL, ANALYZE TABLE).
func (s *server) rootDB() (*sql.DB, error) {
	if s.sb != nil {
		return s.sb.Root()
	}
	if s.db == nil {
		return nil, errors.New("not connected")
	}
	cfg := mysql.NewConfig()
	network, addr, _ := strings.Cut(s.db.Endpoint, ":")
	cfg.Net, cfg.Addr = network, addr
	cfg.User = s.client.User
	cfg.Passwd = s.client.Password.Reveal()
	cfg.Timeout = 10 * time.Second
	cfg.Logger = quietDriver{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

// quietDriver keeps the driver's own log lines (a broken pipe while a server
// shuts down) off stderr: the errors reach the caller anyway.
type quietDriver struct{}

func (quietDriver) Print(...any) {}

// stop stops the server if the run started it, and closes the connection.
func (s *server) stop() error {
	s.closeDB()
	var err error
	switch {
	case s.sb != nil:
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		err = s.sb.Stop(ctx)
		cancel()
		s.sbCancel()
		s.sb = nil
	case s.cs != nil:
		err = s.cs.stop()
		s.cs = nil
	}
	if err != nil {
		return fmt.Errorf("stop the server of %s: %w", s.v.Label, err)
	}
	return nil
}

// The data marker: a file next to a managed server's data directory that
// says which data set a load completed, so that a later run (--resume) or a
// restart after a crash knows whether the tables are there.
const markerName = "perfbench-data"

func (s *server) markerText() string {
	d := s.r.plan.Data
	return fmt.Sprintf("db=%s tables=%d table_size=%d rand_type=%s extra=%q\n", d.DB, d.Tables, d.TableSize, d.RandType, d.ExtraArgs)
}

func (s *server) markerMatches() bool {
	if s.dir == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(s.dir, markerName))
	return err == nil && string(b) == s.markerText()
}

func (s *server) setMarker(ok bool) error {
	if s.dir == "" {
		return nil
	}
	p := filepath.Join(s.dir, markerName)
	if !ok {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return writeOut(p, []byte(s.markerText()))
}

func tailLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	if s == "" {
		return "  (empty)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
