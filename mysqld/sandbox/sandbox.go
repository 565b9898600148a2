// Package sandbox runs a throwaway MySQL-family server: it initialises a data
// directory, starts mysqld or mariadbd on its own socket, port and data
// directory, waits until the server answers, creates a database and a user
// for the load, and stops the server again.
//
// A sandbox works with the installed binaries or with any unpacked tree (a
// tarball, or a Debian package unpacked with dpkg-deb -x), so that several
// server versions can be run side by side on one machine:
//
//	srv, err := sandbox.Start(ctx, sandbox.Config{
//		Basedir: "/opt/mariadb-10.11.6/usr",
//		Dir:     "/var/tmp/bench/10.11.6",
//		Options: []string{"--innodb-buffer-pool-size=4G"},
//	})
//	...
//	defer srv.Stop(context.Background())
//
// The server never outlives its owner: cancelling the context given to Start
// stops it, and the server gets SIGTERM when the process that started it
// dies (even by SIGKILL), through the parent-death signal.
//
// Servers run with --no-defaults (or only the given my.cnf), bind 127.0.0.1,
// skip name resolution, and, when perfbench runs as root, run as root. The
// root account has no password and is reached over the unix socket; the
// load account (sbtest/sbtest by default) is created for host '%' so that TCP
// clients such as sysbench connect without DNS.
package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/perfbench/perfbench/internal/host/cpuset"
)

// Flavors of server, as detected from mysqld --version.
const (
	MariaDB = "mariadb"
	mySQL   = "mysql" // MySQL and Percona Server: both initialise with --initialize-insecure
)

// Sentinel errors.
var (
	// errNoServerBinary means neither mariadbd nor mysqld was found.
	errNoServerBinary = errors.New("no mysqld or mariadbd binary found")
	// errNotReady means the server did not answer a ping in time, or
	// exited while starting.
	errNotReady = errors.New("server did not become ready")
	// ErrPortInUse means the server could not listen on its TCP port:
	// another process has it.
	ErrPortInUse = errors.New("the port is in use")
)

// Config describes a sandbox. The zero value of every field but Dir is a
// usable default.
type Config struct {
	// Dir holds everything of the sandbox: data/, the socket, the pid file
	// and the error log. It is created if missing; a data directory
	// already initialised there is reused.
	Dir string
	// Basedir is the root of an unpacked server tree (the directory that
	// has bin/ or sbin/ and share/). Empty means the installed binaries,
	// found in PATH, /usr/sbin and /usr/local/mysql.
	Basedir string
	// MyCnf, when set, is passed as --defaults-file; otherwise the server
	// runs with --no-defaults.
	MyCnf string
	// Options are extra server options, appended after the sandbox's own
	// (so they override them), for example "--innodb-buffer-pool-size=1G".
	Options []string
	// Port is the TCP port on 127.0.0.1. 0 picks a free one.
	Port int
	// ReadyTimeout bounds the wait for the first successful ping
	// (default 60 s: crash recovery of a big data directory takes time).
	ReadyTimeout time.Duration
	// StopTimeout bounds a clean shutdown before SIGKILL (default 120 s:
	// flushing a large buffer pool takes time).
	StopTimeout time.Duration
	// Database, User and Password are created for the load; defaults
	// "sbtest", "sbtest", "sbtest". User is created for host '%' and is
	// granted every privilege on Database.
	Database string
	User     string
	Password string
	// NoLoadUser skips creating Database and User.
	NoLoadUser bool
	// CPUs, when not empty, are the CPUs the server may run on: set on
	// the process before it runs, so every thread it creates has them
	// (Linux).
	CPUs cpuset.Set
	// Cgroup starts the server in a cgroup v2 of its own, created below
	// perfbench's and removed when the server exits (Linux, with the
	// right to create cgroups: root): counters can then count it per CPU
	// (cgroup mode), which sees CPU that per-thread counters miss. When
	// it cannot be done the server starts without, and
	// Server.CgroupErr says why.
	Cgroup bool
}

// Server is a running sandbox server.
type Server struct {
	// Flavor is MariaDB or MySQL; Version is the version from --version
	// ("10.11.19-MariaDB-0+deb12u1").
	Flavor  string
	Version string
	// Binary is the server executable that was started.
	Binary string
	// Basedir is Config.Basedir (empty for installed binaries).
	Basedir string

	Dir      string
	Datadir  string
	Socket   string
	PidFile  string
	ErrorLog string
	Port     int
	Pid      int
	// Cgroup is the cgroup v2 folder the server runs in alone
	// (Config.Cgroup), "" when none; CgroupErr says why none when one
	// was asked for.
	Cgroup    string
	CgroupErr error

	// Database, User and Password are the load account (empty with
	// NoLoadUser).
	Database string
	User     string
	Password string

	cfg     Config
	ctx     context.Context // Start's: cancelling it stops the server
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has been reaped
	waitErr error
	stopMu  sync.Mutex
	stopped bool
}

// FindServerBinary returns the mariadbd or mysqld executable of basedir, or
// of the installed server when basedir is empty.
func FindServerBinary(basedir string) (string, error) {
	names := []string{"mariadbd", "mysqld"}
	if basedir == "" {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p, nil
			}
		}
		for _, d := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin", "/usr/libexec"} {
			for _, n := range names {
				if isExecutable(filepath.Join(d, n)) {
					return filepath.Join(d, n), nil
				}
			}
		}
		return "", fmt.Errorf("find the server binary: %w in PATH or /usr/sbin (install it: apt-get install mariadb-server)", errNoServerBinary)
	}
	for _, d := range []string{"sbin", "bin", "libexec"} {
		for _, n := range names {
			p := filepath.Join(basedir, d, n)
			if isExecutable(p) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("find the server binary under basedir %s: %w in its sbin/, bin/ or libexec/", basedir, errNoServerBinary)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

var versionRE = regexp.MustCompile(`\bVer\s+(\S+)`)

// parseVersion reads the output of `mysqld --version` and returns the flavor
// (MariaDB or MySQL) and the version string.
func parseVersion(out []byte) (flavor, version string, err error) {
	line := strings.TrimSpace(string(out))
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	m := versionRE.FindStringSubmatch(line)
	if m == nil {
		return "", "", fmt.Errorf("parse server version from %q: no \"Ver\" field", line)
	}
	version = m[1]
	if strings.Contains(line, "MariaDB") {
		return MariaDB, version, nil
	}
	return mySQL, version, nil
}

// Detect runs binary --version and returns its flavor and version.
func Detect(ctx context.Context, binary string) (flavor, version string, err error) {
	cmd := exec.CommandContext(ctx, binary, "--no-defaults", "--version")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("run %s --version: %w: %s", binary, err, tail(out, 5))
	}
	return parseVersion(out)
}

func (c *Config) setDefaults() {
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 60 * time.Second
	}
	if c.StopTimeout == 0 {
		c.StopTimeout = 120 * time.Second
	}
	if !c.NoLoadUser {
		if c.Database == "" {
			c.Database = "sbtest"
		}
		if c.User == "" {
			c.User = "sbtest"
		}
		if c.Password == "" {
			c.Password = "sbtest"
		}
	}
}

// Start initialises cfg.Dir/data when it has no data directory yet, starts
// the server and waits until it answers over its socket, then creates the
// load database and user. When ctx is cancelled the server is stopped (a
// clean shutdown, SIGKILL after StopTimeout). On error nothing is left
// running.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg.setDefaults()
	if cfg.Dir == "" {
		return nil, errors.New("start sandbox server: no directory given")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("start sandbox server: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start sandbox server: create %s: %w", dir, err)
	}
	bin, err := FindServerBinary(cfg.Basedir)
	if err != nil {
		return nil, err
	}
	flavor, version, err := Detect(ctx, bin)
	if err != nil {
		return nil, err
	}
	s := &Server{
		Flavor:   flavor,
		Version:  version,
		Binary:   bin,
		Basedir:  cfg.Basedir,
		Dir:      dir,
		Datadir:  filepath.Join(dir, "data"),
		Socket:   filepath.Join(dir, "mysqld.sock"),
		PidFile:  filepath.Join(dir, "mysqld.pid"),
		ErrorLog: filepath.Join(dir, "error.log"),
		cfg:      cfg,
		ctx:      ctx,
	}
	if len(s.Socket) > 107 {
		return nil, fmt.Errorf("start sandbox server: socket path %s is longer than the 107 bytes a unix socket allows; use a shorter directory", s.Socket)
	}
	if err := s.initialize(ctx); err != nil {
		return nil, err
	}
	// A port picked here may be taken by someone else before the server
	// binds it: retry a few times with another port.
	for attempt := 0; ; attempt++ {
		s.Port = cfg.Port
		if s.Port == 0 {
			if s.Port, err = FreePort(); err != nil {
				return nil, fmt.Errorf("start sandbox server: pick a free port: %w", err)
			}
		}
		err = s.start(ctx)
		if err == nil {
			break
		}
		if cfg.Port != 0 || attempt >= 3 || !errors.Is(err, ErrPortInUse) {
			return nil, err
		}
	}
	if !cfg.NoLoadUser {
		if err := s.createLoadUser(ctx); err != nil {
			_ = s.Kill()
			return nil, err
		}
		s.Database, s.User, s.Password = cfg.Database, cfg.User, cfg.Password
	}
	return s, nil
}

// FreePort returns a TCP port of 127.0.0.1 that nothing listens on now.
// Someone else may take it before the caller binds it: be ready to retry.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// defaultsArg is the first argument of every server and install command.
func (s *Server) defaultsArg() string {
	if s.cfg.MyCnf != "" {
		return "--defaults-file=" + s.cfg.MyCnf
	}
	return "--no-defaults"
}

// shareDir is the tree's directory of error messages and system tables.
func (s *Server) shareDir() string {
	if s.Basedir == "" {
		return ""
	}
	for _, d := range []string{"share/mysql", "share/mariadb", "share"} {
		p := filepath.Join(s.Basedir, d)
		if _, err := os.Stat(filepath.Join(p, "english")); err == nil {
			return p
		}
		if _, err := os.Stat(filepath.Join(p, "charsets")); err == nil {
			return p
		}
	}
	return ""
}

func (s *Server) commonArgs() []string {
	args := []string{s.defaultsArg()}
	if s.Basedir != "" {
		args = append(args, "--basedir="+s.Basedir)
		if sh := s.shareDir(); sh != "" {
			args = append(args, "--lc-messages-dir="+sh)
		}
	}
	args = append(args, "--datadir="+s.Datadir)
	if t := s.tmpdir(); t != "" {
		args = append(args, "--tmpdir="+t)
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	return args
}

// tmpdir is the sandbox's own directory for temporary tables, "" when the
// my.cnf names one. A server deletes every #sql file in its tmpdir as it
// starts: sandboxes sharing /tmp would delete each other's temporary
// tables, which fails a data directory's initialisation ("Unknown table
// 'mysql.tmp_proxies_priv'") and the statements of a running server.
func (s *Server) tmpdir() string {
	if s.cfg.MyCnf != "" {
		if b, err := os.ReadFile(s.cfg.MyCnf); err == nil && myCnfSetsTmpdir(b) {
			return ""
		}
	}
	return filepath.Join(s.Dir, "tmp")
}

func (s *Server) makeTmpdir() error {
	if t := s.tmpdir(); t != "" {
		if err := os.MkdirAll(t, 0o750); err != nil {
			return fmt.Errorf("create the sandbox's tmpdir: %w", err)
		}
	}
	return nil
}

// myCnfSetsTmpdir reports whether an option file sets tmpdir (in any group:
// the server reads several).
func myCnfSetsTmpdir(b []byte) bool {
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		name, _, _ := strings.Cut(line, "=")
		name = strings.ReplaceAll(strings.TrimSpace(name), "_", "-")
		if name == "tmpdir" {
			return true
		}
	}
	return false
}

// initialize creates the data directory unless it already holds a server's
// system tables.
func (s *Server) initialize(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(s.Datadir, "mysql")); err == nil {
		return nil
	}
	if err := os.MkdirAll(s.Datadir, 0o750); err != nil {
		return fmt.Errorf("initialise data directory %s: %w", s.Datadir, err)
	}
	if err := s.makeTmpdir(); err != nil {
		return err
	}
	logPath := filepath.Join(s.Dir, "install.log")
	var cmd *exec.Cmd
	switch s.Flavor {
	case MariaDB:
		script, err := s.installScript()
		if err != nil {
			return err
		}
		args := s.commonArgs()
		// --force only skips the host name check with resolveip,
		// which unpacked trees may lack and which sandbox servers do
		// not need: they skip name resolution.
		args = append(args, "--auth-root-authentication-method=normal", "--skip-test-db", "--force")
		cmd = exec.CommandContext(ctx, script, args...)
	default:
		args := s.commonArgs()
		args = append(args, "--initialize-insecure", "--log-error="+logPath)
		cmd = exec.CommandContext(ctx, s.Binary, args...)
	}
	out, err := cmd.CombinedOutput()
	if s.Flavor == MariaDB {
		_ = os.WriteFile(logPath, out, 0o644)
	} else if b, rerr := os.ReadFile(logPath); rerr == nil {
		out = append(out, b...)
	}
	if err != nil {
		return fmt.Errorf("initialise data directory %s with %s: %w; %s",
			s.Datadir, filepath.Base(cmd.Path), err, logExcerpt(out, logPath))
	}
	return nil
}

// installScript finds mariadb-install-db for the tree (or the installed
// one), and makes sure my_print_defaults sits next to it: the script needs
// it and unpacked server-core packages lack it.
func (s *Server) installScript() (string, error) {
	names := []string{"mariadb-install-db", "mysql_install_db"}
	if s.Basedir == "" {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p, nil
			}
		}
		return "", fmt.Errorf("initialise data directory: mariadb-install-db not found in PATH (install it: apt-get install mariadb-server)")
	}
	var script string
	for _, d := range []string{"bin", "scripts", "sbin"} {
		for _, n := range names {
			if p := filepath.Join(s.Basedir, d, n); isExecutable(p) {
				script = p
				break
			}
		}
		if script != "" {
			break
		}
	}
	if script == "" {
		return "", fmt.Errorf("initialise data directory: no mariadb-install-db under basedir %s (bin/ or scripts/)", s.Basedir)
	}
	mpd := filepath.Join(s.Basedir, "bin", "my_print_defaults")
	if !isExecutable(mpd) {
		src, err := exec.LookPath("my_print_defaults")
		if err != nil {
			return "", fmt.Errorf("initialise data directory: basedir %s has no bin/my_print_defaults and none is installed "+
				"(install it: apt-get install mariadb-client)", s.Basedir)
		}
		if err := copyFile(src, mpd, 0o755); err != nil {
			return "", fmt.Errorf("initialise data directory: copy my_print_defaults into %s: %w", filepath.Dir(mpd), err)
		}
	}
	return script, nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}

func (s *Server) serverArgs() []string {
	args := s.commonArgs()
	args = append(args,
		"--socket="+s.Socket,
		"--port="+strconv.Itoa(s.Port),
		"--bind-address=127.0.0.1",
		"--pid-file="+s.PidFile,
		"--log-error="+s.ErrorLog,
		"--skip-name-resolve",
	)
	if s.Flavor == mySQL {
		// The X plugin listens on 33060 by default: two sandboxes
		// would fight over it.
		args = append(args, "--mysqlx=OFF")
	}
	return append(args, s.cfg.Options...)
}

// start launches the server process and waits for it to answer.
func (s *Server) start(ctx context.Context) error {
	if err := s.makeTmpdir(); err != nil {
		return err
	}
	_ = os.Remove(s.Socket)
	_ = os.Remove(s.PidFile)
	logOffset := fileSize(s.ErrorLog)
	cmd, cgroup, err := s.launch()
	if err != nil {
		return fmt.Errorf("start %s: %w", s.Binary, err)
	}
	s.Cgroup = cgroup
	s.cmd = cmd
	s.Pid = cmd.Process.Pid
	exited := s.exited
	go func() {
		select {
		case <-s.ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), s.cfg.StopTimeout)
			defer cancel()
			_ = s.Stop(sctx)
		case <-exited:
		}
	}()
	if err := s.waitReady(ctx, logOffset); err != nil {
		_ = s.Kill()
		return err
	}
	return nil
}

// launch starts the server process, in a cgroup of its own when
// Config.Cgroup asks for one (without, when that fails: CgroupErr says
// why), and returns it with its cgroup ("" for none).
func (s *Server) launch() (*exec.Cmd, string, error) {
	s.CgroupErr = nil
	if !s.cfg.Cgroup {
		cmd, err := s.launchIn("", nil)
		return cmd, "", err
	}
	dir, f, err := newCgroup()
	if err != nil {
		s.CgroupErr = err
		cmd, err := s.launchIn("", nil)
		return cmd, "", err
	}
	cmd, err := s.launchIn(dir, f)
	f.Close()
	if err != nil {
		// The kernel may refuse to create a process in a cgroup
		// (before Linux 5.7): start it as usual.
		s.CgroupErr = fmt.Errorf("start the server in cgroup %s: %w", dir, err)
		removeCgroup(dir)
		cmd, err := s.launchIn("", nil)
		return cmd, "", err
	}
	return cmd, dir, nil
}

// launchIn starts the server process, in the cgroup open as f when f is
// not nil (dir, removed once the server has been reaped).
func (s *Server) launchIn(dir string, f *os.File) (*exec.Cmd, error) {
	cmd := exec.Command(s.Binary, s.serverArgs()...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = procAttr()
	if f != nil {
		intoCgroup(cmd.SysProcAttr, f)
	}
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		// The thread is never unlocked: it dies with the goroutine,
		// after the server has been reaped, so Pdeathsig cannot fire
		// early.
		if err := cpuset.StartOn(s.cfg.CPUs, cmd.Start); err != nil {
			started <- err
			return
		}
		started <- nil
		s.waitErr = cmd.Wait()
		if dir != "" {
			removeCgroup(dir)
		}
		close(exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	s.exited = exited
	return cmd, nil
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// waitReady pings the server over its socket until it answers, it exits,
// ReadyTimeout passes or ctx is done.
func (s *Server) waitReady(ctx context.Context, logOffset int64) error {
	deadline := time.Now().Add(s.cfg.ReadyTimeout)
	var lastErr error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		lastErr = s.ping(pctx)
		cancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-s.exited:
			return s.exitError(logOffset)
		case <-ctx.Done():
			return fmt.Errorf("start %s in %s: %w: %w", filepath.Base(s.Binary), s.Dir, errNotReady, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("start %s in %s: %w within %v (last ping: %v); error log %s says:\n%s",
				filepath.Base(s.Binary), s.Dir, errNotReady, s.cfg.ReadyTimeout, lastErr, s.ErrorLog, s.logTail(logOffset, 20))
		}
	}
}

// exitError says why a server that exited while starting did: its error
// log's [ERROR] lines in one line, or, when it wrote none, the log's end.
// A port another process has is ErrPortInUse.
func (s *Server) exitError(logOffset int64) error {
	name := filepath.Base(s.Binary)
	var errs []string
	for _, l := range strings.Split(s.logTail(logOffset, 50), "\n") {
		_, msg, ok := strings.Cut(l, "[ERROR] ")
		if !ok || strings.TrimSpace(msg) == "Aborting" {
			continue
		}
		msg = strings.TrimSpace(msg)
		if strings.Contains(msg, "Address already in use") {
			return fmt.Errorf("start %s in %s: %w: port %d is taken by another process (the server said: %s)", name, s.Dir, ErrPortInUse, s.Port, msg)
		}
		errs = append(errs, msg)
	}
	if len(errs) == 0 {
		return fmt.Errorf("start %s in %s: %w: it exited (%v); error log %s says:\n%s",
			name, s.Dir, errNotReady, s.waitErr, s.ErrorLog, s.logTail(logOffset, 20))
	}
	if len(errs) > 3 {
		errs = append(errs[:3], fmt.Sprintf("and %d more", len(errs)-3))
	}
	return fmt.Errorf("start %s in %s: %w: it exited (%v): %s (error log %s)", name, s.Dir, errNotReady, s.waitErr, strings.Join(errs, "; "), s.ErrorLog)
}

func (s *Server) logTail(offset int64, n int) string {
	b, err := os.ReadFile(s.ErrorLog)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	if offset > 0 && offset <= int64(len(b)) {
		b = b[offset:]
	}
	return tail(b, n)
}

// tail returns the last n lines of b.
// logExcerpt is what an error quotes of a failed tool's output (kept in
// path): its error lines when it printed some (the server's bootstrap
// prints [ERROR] lines long before the install script's closing advice),
// else its last lines.
func logExcerpt(out []byte, path string) string {
	var errs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "[ERROR]") || strings.HasPrefix(strings.TrimSpace(l), "ERROR") || strings.Contains(l, "failed!") {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		return fmt.Sprintf("last lines of %s:\n%s", path, tail(out, 15))
	}
	more := ""
	if len(errs) > 10 {
		more = fmt.Sprintf("\n(and %d more)", len(errs)-10)
		errs = errs[:10]
	}
	return fmt.Sprintf("its errors (all of its output is in %s):\n%s%s", path, strings.Join(errs, "\n"), more)
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// RootConfig returns a driver configuration for the root account over the
// sandbox's socket.
func (s *Server) RootConfig() *mysql.Config { return rootConfigAt(s.Socket) }

// rootConfigAt returns a driver configuration for root without a password
// over the unix socket at socket, as a data directory the sandbox
// initialised has it.
func rootConfigAt(socket string) *mysql.Config {
	c := mysql.NewConfig()
	c.User = "root"
	c.Net = "unix"
	c.Addr = socket
	c.Timeout = 5 * time.Second
	c.Logger = nopLogger{}
	return c
}

// nopLogger silences the driver's own log lines (a broken pipe while the
// server shuts down, say): errors reach the caller anyway.
type nopLogger struct{}

func (nopLogger) Print(...any) {}

// Root opens a database handle for root over the socket. The caller closes it.
func (s *Server) Root() (*sql.DB, error) { return OpenRoot(s.Socket) }

// OpenRoot opens a database handle for root without a password over the
// unix socket at socket (rootConfigAt): a server started on a data directory
// the sandbox initialised, by the sandbox or by another command. The caller
// closes it.
func OpenRoot(socket string) (*sql.DB, error) {
	conn, err := mysql.NewConnector(rootConfigAt(socket))
	if err != nil {
		return nil, fmt.Errorf("connect to %s as root: %w", socket, err)
	}
	return sql.OpenDB(conn), nil
}

func (s *Server) ping(ctx context.Context) error {
	db, err := s.Root()
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

// Exec runs statements as root, in order.
func (s *Server) Exec(ctx context.Context, stmts ...string) error {
	db, err := s.Root()
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect to sandbox %s as root: %w", s.Socket, err)
	}
	defer conn.Close()
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			if s.cfg.Password != "" {
				q = strings.ReplaceAll(q, quote(s.cfg.Password), "'***'")
			}
			return fmt.Errorf("run %q on sandbox %s: %w", q, s.Socket, err)
		}
	}
	return nil
}

func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

func (s *Server) createLoadUser(ctx context.Context) error {
	c := s.cfg
	host, _ := os.Hostname()
	stmts := []string{
		// Anonymous accounts would shadow the load user on localhost.
		"DROP USER IF EXISTS ''@'localhost'",
	}
	if host != "" {
		stmts = append(stmts, "DROP USER IF EXISTS ''@"+quote(host))
	}
	stmts = append(stmts, LoadAccountSQL(c.Database, c.User, c.Password)...)
	if err := s.Exec(ctx, stmts...); err != nil {
		return fmt.Errorf("create load database and user: %w", err)
	}
	return nil
}

// LoadAccountSQL returns the statements, to run as root in order, that
// create the load's database and account: user for host '%' (so that TCP
// clients connect without name resolution), granted every privilege on
// database. They may run again on a server that has both.
func LoadAccountSQL(database, user, password string) []string {
	db := "`" + strings.ReplaceAll(database, "`", "``") + "`"
	return []string{
		"CREATE DATABASE IF NOT EXISTS " + db,
		"CREATE USER IF NOT EXISTS " + quote(user) + "@'%' IDENTIFIED BY " + quote(password),
		"GRANT ALL ON " + db + ".* TO " + quote(user) + "@'%'",
	}
}

// Running reports whether the server process is still alive.
func (s *Server) Running() bool {
	if s.exited == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Exited is closed when the server process has exited and been reaped.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Stop shuts the server down: SHUTDOWN over SQL, SIGTERM if that fails,
// then waits; when ctx is done first (or after StopTimeout when ctx has no
// deadline), SIGKILL. Stopping a stopped server is a no-op.
func (s *Server) Stop(ctx context.Context) error {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if !s.Running() {
		s.stopped = true
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.StopTimeout)
		defer cancel()
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := s.Exec(sctx, "SHUTDOWN")
	cancel()
	if err != nil {
		// Not reachable over SQL: ask by signal.
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-s.exited:
		s.stopped = true
		return nil
	case <-ctx.Done():
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.stopped = true
	return fmt.Errorf("stop sandbox server pid %d in %s: no clean shutdown in time, killed it; error log %s says:\n%s",
		s.Pid, s.Dir, s.ErrorLog, s.logTail(0, 10))
}

// Kill ends the server with SIGKILL and waits for it, as a crash would: the
// next Start runs crash recovery. For failure tests.
func (s *Server) Kill() error {
	if !s.Running() {
		return nil
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill sandbox server pid %d: %w", s.Pid, err)
	}
	<-s.exited
	return nil
}

// Restart stops the server cleanly and starts it again on the same
// directory, socket and port. The new process has a new Pid.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.Stop(ctx); err != nil {
		return err
	}
	return s.start(ctx)
}

// ErrorLogTail returns the last n lines of the server's error log.
func (s *Server) ErrorLogTail(n int) string { return s.logTail(0, n) }
