package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/perfbench/perfbench/internal/host/proc"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/mysqld/sandbox"
)

// readyTimeout bounds the wait for a server started by a custom command.
const readyTimeout = 60 * time.Second

// customServer is a managed server that the plan's own start and stop
// commands run, on perfbench's folder, socket and port: the escape hatch for
// servers the sandbox cannot start (mysqld_safe, a wrapper, numactl...).
type customServer struct {
	label    string
	m        *plan.Managed
	dir      string
	datadir  string
	socket   string
	pidFile  string
	errorLog string
	port     int
	values   map[string]string
	logPath  string
	cmd      *proc.Cmd // the start command
	pid      int
}

// startCustom runs a version's start command and waits until the server
// answers on its socket. Unless the version's init is "none", the data
// directory is created first, by the sandbox, the way perfbench's own start
// would create it.
func startCustom(ctx context.Context, r *runner, v *plan.Version, dir string) (*customServer, error) {
	m := v.Managed
	cs := &customServer{
		label:    v.Label,
		m:        m,
		dir:      dir,
		datadir:  filepath.Join(dir, "data"),
		socket:   filepath.Join(dir, "mysqld.sock"),
		pidFile:  filepath.Join(dir, "mysqld.pid"),
		errorLog: filepath.Join(dir, "error.log"),
		port:     m.Port,
		logPath:  filepath.Join(r.logDir, "server-"+v.Label+".txt"),
	}
	if err := mkdirOut(dir); err != nil {
		return nil, fmt.Errorf("start %s: %w", v.Label, err)
	}
	if cs.port == 0 {
		p, err := sandbox.FreePort()
		if err != nil {
			return nil, fmt.Errorf("start %s: pick a free port: %w", v.Label, err)
		}
		cs.port = p
	}
	if _, err := os.Stat(filepath.Join(cs.datadir, "mysql")); err != nil && m.Init != plan.InitNone && m.Basedir != "" {
		// The sandbox initialises the data directory when it starts a
		// server on it; starting and stopping it once leaves the data
		// directory and the load account behind.
		r.prog.printf("perfbench run: initialising the data directory of %s in %s", v.Label, cs.datadir)
		cfg := sandboxConfig(m, dir, r.plan)
		sb, err := sandbox.Start(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("initialise the data directory of %s: %w", v.Label, err)
		}
		if err := sb.Stop(context.Background()); err != nil {
			return nil, fmt.Errorf("initialise the data directory of %s: %w", v.Label, err)
		}
	}
	basedir := m.Basedir
	if basedir == plan.Installed {
		basedir = ""
	}
	cs.values = map[string]string{
		"basedir":   basedir,
		"datadir":   cs.datadir,
		"socket":    cs.socket,
		"port":      strconv.Itoa(cs.port),
		"pid_file":  cs.pidFile,
		"mycnf":     m.Mycnf,
		"error_log": cs.errorLog,
		"out":       r.out,
	}
	start, err := plan.Expand(m.Start, cs.values)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", v.Label, err)
	}
	argv := start.Shown
	_ = os.Remove(cs.pidFile)
	log, err := appendOut(cs.logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", v.Label, err)
	}
	defer log.Close()
	fmt.Fprintf(log, "# %s: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(argv, " "))
	cs.cmd, err = proc.Start(start.Argv, proc.Options{Log: log, Env: start.Env, CPUs: serverCPUs(r)})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", v.Label, err)
	}
	if err := cs.waitReady(ctx); err != nil {
		cs.stop()
		return nil, fmt.Errorf("start %s with %q: %w", v.Label, strings.Join(argv, " "), err)
	}
	if err := cs.createLoadUser(ctx, r.plan.Data); err != nil {
		r.prog.printf("perfbench run: warning: %s: %v", v.Label, err)
	}
	return cs, nil
}

// rootDB connects as root over the socket, as perfbench's own start leaves
// the server (root without password).
func (cs *customServer) rootDB() (*sql.DB, error) { return sandbox.OpenRoot(cs.socket) }

// waitReady waits until the server answers on its socket and its pid is
// known. The start command may stay in the foreground (mysqld_safe) or
// return once it has started a daemon; it failing before the server answers
// is an error.
func (cs *customServer) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(readyTimeout)
	db, err := cs.rootDB()
	if err != nil {
		return err
	}
	defer db.Close()
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = db.PingContext(pctx)
		cancel()
		if last == nil {
			break
		}
		var me *mysql.MySQLError
		if errors.As(last, &me) {
			// It answers, but not to root without a password: the
			// server is up; perfbench's own connection will say more.
			break
		}
		if !cs.cmd.Running() && cs.cmd.ExitCode() != 0 {
			return fmt.Errorf("the start command ended with %s before the server answered; its output is in %s, the error log %s ends:\n%s",
				cs.cmd.DescribeExit(), cs.logPath, cs.errorLog, indent(cs.logTail(15)))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on %s within %v (last: %v); the error log %s ends:\n%s", cs.socket, readyTimeout, last, cs.errorLog, indent(cs.logTail(15)))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if b, err := os.ReadFile(cs.pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && proc.Alive(pid) {
			cs.pid = pid
			return nil
		}
	}
	pid, err := mysqld.SocketPid(ctx, cs.socket)
	if err != nil {
		return fmt.Errorf("tell the server's pid: no pid file %s, and %w", cs.pidFile, err)
	}
	cs.pid = pid
	return nil
}

func (cs *customServer) logTail(n int) string {
	b, err := os.ReadFile(cs.errorLog)
	if err != nil {
		return ""
	}
	return tailLines(b, n)
}

func (cs *customServer) createLoadUser(ctx context.Context, d plan.Data) error {
	db, err := cs.rootDB()
	if err != nil {
		return err
	}
	defer db.Close()
	for _, stmt := range sandbox.LoadAccountSQL(d.DB, d.User, d.Password) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create the load database and user as root over %s (create them yourself if root needs a password): %w", cs.socket, err)
		}
	}
	return nil
}

func (cs *customServer) running() bool { return proc.Alive(cs.pid) }

// stop runs the stop command (or SHUTDOWN as root), waits for the server to
// exit, and kills what is left: the server after stopTimeout, the start
// command's process group.
func (cs *customServer) stop() error {
	var err error
	if cs.running() {
		if len(cs.m.Stop) > 0 {
			err = cs.runStop()
		} else {
			err = cs.shutdown()
		}
		deadline := time.Now().Add(stopTimeout)
		for cs.running() && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if cs.running() {
			_ = proc.Signal(cs.pid, syscall.SIGKILL)
			err = errors.Join(err, fmt.Errorf("the server (pid %d) did not exit within %v: killed", cs.pid, stopTimeout))
		}
	}
	if cs.cmd != nil {
		cs.cmd.Wait(10 * time.Second)
	}
	return err
}

func (cs *customServer) runStop() error {
	stop, err := plan.Expand(cs.m.Stop, cs.values)
	if err != nil {
		return err
	}
	argv := stop.Shown
	log, err := appendOut(cs.logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	fmt.Fprintf(log, "# %s: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(argv, " "))
	c, err := proc.Start(stop.Argv, proc.Options{Log: log, Env: stop.Env})
	if err != nil {
		return err
	}
	if c.Wait(stopTimeout) {
		return fmt.Errorf("the stop command %q did not end within %v", strings.Join(argv, " "), stopTimeout)
	}
	if c.ExitCode() != 0 {
		return fmt.Errorf("the stop command %q ended with %s (output in %s)", strings.Join(argv, " "), c.DescribeExit(), cs.logPath)
	}
	return nil
}

func (cs *customServer) shutdown() error {
	db, err := cs.rootDB()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = db.ExecContext(ctx, "SHUTDOWN")
		cancel()
		db.Close()
	}
	if err != nil {
		return proc.Signal(cs.pid, syscall.SIGTERM)
	}
	return nil
}
