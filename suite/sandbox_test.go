package suite

// A throwaway MariaDB for this package's tests, after
// shared/reference/mariadb-sandbox.md. It is local to the tests until the
// shared test server helper exists; then these tests should use that one.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

const installHint = "apt-get install mariadb-server sysbench"

// sandbox is a running MariaDB server with a database sbtest and a user
// sbtest/sbtest that may connect over TCP from 127.0.0.1.
type sandbox struct {
	dir    string
	socket string
	port   int
	cmd    *exec.Cmd
	exited chan struct{}
	root   *sql.DB // root over the unix socket
}

var (
	shared     *sandbox
	sharedErr  error
	sharedOnce sync.Once
	sharedSkip string
)

// lookBin finds a binary in PATH or in /usr/sbin (where Debian puts mariadbd).
func lookBin(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		if p := filepath.Join("/usr/sbin", n); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// needSysbench skips the test when sysbench is missing.
func needSysbench(t *testing.T) string {
	t.Helper()
	p := lookBin("sysbench")
	if p == "" {
		t.Skipf("sysbench not installed: %s", installHint)
	}
	return p
}

// server returns the package's sandbox server, starting it on first use. It
// is stopped by TestMain.
func server(t *testing.T) *sandbox {
	t.Helper()
	sharedOnce.Do(func() {
		mariadbd := lookBin("mariadbd", "mysqld")
		install := lookBin("mariadb-install-db", "mysql_install_db")
		if mariadbd == "" || install == "" {
			sharedSkip = "MariaDB server not installed: " + installHint
			return
		}
		dir, err := os.MkdirTemp("", "perfbench-suite-")
		if err != nil {
			sharedErr = err
			return
		}
		shared, sharedErr = startSandbox(dir, mariadbd, install)
		if sharedErr != nil {
			os.RemoveAll(dir)
		}
	})
	if sharedSkip != "" {
		t.Skip(sharedSkip)
	}
	if sharedErr != nil {
		t.Fatalf("start a sandbox MariaDB: %v", sharedErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.stop()
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startSandbox(dir, mariadbd, install string) (*sandbox, error) {
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	out, err := exec.Command(install, "--no-defaults", "--datadir="+data, "--user="+u.Username,
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", install, err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &sandbox{dir: dir, socket: filepath.Join(dir, "mysqld.sock"), port: port, exited: make(chan struct{})}
	errLog := filepath.Join(dir, "error.log")
	s.cmd = exec.Command(mariadbd, "--no-defaults", "--datadir="+data, "--socket="+s.socket,
		fmt.Sprintf("--port=%d", port), "--bind-address=127.0.0.1", "--user="+u.Username,
		"--pid-file="+filepath.Join(dir, "mariadbd.pid"), "--log-error="+errLog,
		"--skip-name-resolve", "--innodb-buffer-pool-size=128M", "--max-connections=100")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", mariadbd, err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()

	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", s.socket
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		s.stop()
		return nil, err
	}
	s.root = sql.OpenDB(connector)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = s.root.PingContext(ctx)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(errLog)
			return nil, fmt.Errorf("mariadbd exited during start-up: %s", tail(log))
		default:
		}
		if time.Now().After(deadline) {
			s.stop()
			log, _ := os.ReadFile(errLog)
			return nil, fmt.Errorf("mariadbd not ready after 60 s: %v: %s", err, tail(log))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, q := range []string{
		"CREATE DATABASE sbtest",
		"CREATE USER sbtest@'%' IDENTIFIED BY 'sbtest'",
		"GRANT ALL ON sbtest.* TO sbtest@'%'",
	} {
		if _, err := s.root.Exec(q); err != nil {
			s.stop()
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return s, nil
}

func tail(b []byte) string {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// stop shuts the server down: SIGTERM, then SIGKILL after 30 s.
func (s *sandbox) stop() {
	if s.root != nil {
		s.root.Close()
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}

// options returns sysbench options for the sandbox over TCP.
func (s *sandbox) options() Options {
	return Options{
		Host: "127.0.0.1", Port: s.port, User: "sbtest", Password: "sbtest", DB: "sbtest",
	}
}

// run runs argv and returns its standard output; a failure includes both
// outputs.
func run(ctx context.Context, argv []string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// sysbench looks for stock scripts in the working directory first.
	cmd.Dir = os.TempDir()
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.String(), fmt.Errorf("%s: %w\nstdout:\n%s\nstderr:\n%s",
				strings.Join(Redact(argv), " "), err, stdout.String(), stderr.String())
		}
		return stdout.String(), err
	}
	return stdout.String(), nil
}
