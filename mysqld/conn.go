package mysqld

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Sentinel errors of Connect.
var (
	// ErrAccessDenied means the server refused the user or password.
	ErrAccessDenied = errors.New("access denied")
	// errNoPassword means a password prompt was asked for but no way to
	// prompt was given.
	errNoPassword = errors.New("a password is needed but there is no terminal to ask it on")
)

// defaultSockets are tried, in order, when nothing names the server's socket.
var defaultSockets = []string{"/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/tmp/mysql.sock"}

// DB is one connection to the server. Every statement perfbench sends goes
// through this one connection, one at a time, and is counted, so that Delta
// can take perfbench's own statements out of Questions and Queries.
type DB struct {
	// Endpoint is where the connection goes: "unix:/run/mysqld/mysqld.sock"
	// or "tcp:127.0.0.1:3306". User is the MySQL user.
	Endpoint string
	User     string
	// Pid is the server process behind the connection (the thread group
	// of the connection's thread), 0 when it could not be told.
	Pid int
	// Warnings are problems that did not stop the connection.
	Warnings []string

	proc     Proc
	db       *sql.DB
	conn     *sql.Conn
	password string

	// queryTimeout is ConnectOptions.QueryTimeout.
	queryTimeout time.Duration

	mu   sync.Mutex
	own  map[string]float64 // statements sent, by the status variables they bump
	peer int                // SO_PEERCRED pid of a unix connection
}

// ConnectOptions adjust Connect; the zero value is the default.
type ConnectOptions struct {
	// Prompt returns the password when the Client asks for a prompt
	// (for example: ReadPassword(os.Stdin, os.Stderr, "Enter password: ")).
	Prompt func() (string, error)
	// Proc is the /proc used to tell the server pid of the connection.
	Proc Proc
	// Force downgrades "the connection reached another process than the
	// target" from an error to a warning.
	Force bool
	// Timeout bounds connecting (default 10 s).
	Timeout time.Duration
	// QueryTimeout bounds each statement perfbench sends, from sending it
	// to its last row (default 10 s): a server that stopped
	// (SIGSTOP, a debugger) or stalls does not hold perfbench.
	QueryTimeout time.Duration
}

// defaultQueryTimeout is ConnectOptions.QueryTimeout's default: perfbench's
// statements (SHOW GLOBAL STATUS, the processlist) take milliseconds.
const defaultQueryTimeout = 10 * time.Second

// errNoAnswer is wrapped by the error of a statement the server did not
// answer within ConnectOptions.QueryTimeout; the connection is closed.
var errNoAnswer = errors.New("the server did not answer in time")

// endpoint picks the transport and address (see Connect).
func (c *Client) endpoint(target *Found) (network, addr string) {
	tcp := func(host string, port int) (string, string) {
		if host == "" || host == "localhost" {
			host = "127.0.0.1"
		}
		if port == 0 {
			port = 3306
		}
		return "tcp", net.JoinHostPort(host, strconv.Itoa(port))
	}
	switch {
	case c.explicitSocket:
		return "unix", c.Socket
	case c.explicitTCP:
		return tcp(c.Host, c.Port)
	case target != nil && len(target.Sockets) > 0:
		return "unix", target.Sockets[0]
	case target != nil && len(target.Ports) > 0:
		return tcp("127.0.0.1", target.Ports[0])
	case c.TCP || (c.Host != "" && c.Host != "localhost"):
		return tcp(c.Host, c.Port)
	case c.Socket != "":
		return "unix", c.Socket
	}
	for _, s := range defaultSockets {
		if _, err := os.Stat(s); err == nil {
			return "unix", s
		}
	}
	return tcp("127.0.0.1", 3306)
}

type nopLogger struct{}

func (nopLogger) Print(...any) {}

// Connect opens one connection to the server with c's credentials. The
// address is, in order: the socket or TCP address the flags gave; a unix
// socket (else a TCP port) the target process listens on; the option
// files' and environment's; the default sockets; 127.0.0.1:3306. When target
// is not nil, Connect checks that the connection reached that process and
// fails with errMismatch otherwise (a warning with opts.Force).
//
// Errors never contain the password.
func Connect(ctx context.Context, c *Client, target *Found, opts ConnectOptions) (*DB, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.QueryTimeout == 0 {
		opts.QueryTimeout = defaultQueryTimeout
	}
	password := c.Password.Reveal()
	if c.AskPassword && !c.Password.IsSet() {
		if opts.Prompt == nil {
			return nil, fmt.Errorf("connect as %s: %w (give it in ~/.my.cnf, MYSQL_PWD or --password)", c.User, errNoPassword)
		}
		p, err := opts.Prompt()
		if err != nil {
			return nil, err
		}
		password = p
	}
	network, addr := c.endpoint(target)
	d := &DB{
		Endpoint: network + ":" + addr,
		User:     c.User,
		proc:     opts.Proc,
		password: password,
		own:      map[string]float64{},

		queryTimeout: opts.QueryTimeout,
	}
	cfg := mysql.NewConfig()
	cfg.User = c.User
	cfg.Passwd = password
	cfg.Net = network
	cfg.Addr = addr
	cfg.Timeout = opts.Timeout
	cfg.Logger = nopLogger{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var nd net.Dialer
		conn, err := nd.DialContext(ctx, network, addr)
		if err != nil {
			return nil, unreachable(err)
		}
		if network == "unix" {
			if pid, err := peerPid(conn); err == nil {
				d.mu.Lock()
				d.peer = pid
				d.mu.Unlock()
			}
		}
		return conn, nil
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, d.wrap(err, "configure the connection to %s", d.Endpoint)
	}
	d.db = sql.OpenDB(connector)
	d.db.SetMaxOpenConns(1)
	cctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	d.conn, err = d.db.Conn(cctx)
	if err == nil {
		err = d.conn.PingContext(cctx)
	}
	if err != nil {
		d.db.Close()
		return nil, d.connectError(err)
	}
	// Long benchmarks leave the connection idle for hours between
	// windows: keep the server from closing it (wait_timeout).
	if err := d.query(ctx, "Com_set_option", "SET SESSION wait_timeout = 31536000", func(*sql.Rows) error { return nil }); err != nil {
		d.Warnings = append(d.Warnings, d.wrap(err, "raise wait_timeout of the connection (it may be closed when idle)").Error())
	}
	pid, err := d.serverPid(ctx)
	if err != nil {
		d.Warnings = append(d.Warnings, fmt.Sprintf("cannot tell which process serves %s: %v", d.Endpoint, err))
	}
	d.Pid = pid
	if target != nil && pid != 0 && pid != target.Pid {
		msg := fmt.Sprintf("the connection to %s reached pid %d, but the server to measure (%s) is pid %d: point --socket or "+
			"--port at that server", d.Endpoint, pid, target.By, target.Pid)
		if !opts.Force {
			d.Close()
			return nil, fmt.Errorf("connect: %w: %s", errMismatch, msg)
		}
		d.Warnings = append(d.Warnings, msg)
	}
	return d, nil
}

func (d *DB) connectError(err error) error {
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && (me.Number == 1045 || me.Number == 1698):
		hint := "check --user and the password (--password, --ask-password, MYSQL_PWD, ~/.my.cnf)"
		if me.Number == 1698 {
			hint = "the account may require unix_socket authentication, which perfbench's driver cannot do: create a user with a password for perfbench"
		}
		return d.wrap(fmt.Errorf("%w: %w", ErrAccessDenied, err), "connect to %s as %s (%s)", d.Endpoint, d.User, hint)
	case errors.Is(err, mysql.ErrUnknownPlugin):
		return d.wrap(fmt.Errorf("%w: %w", ErrAccessDenied, err), "connect to %s as %s (the account's authentication plugin "+
			"is not supported, unix_socket for example: create a user with a password for perfbench)", d.Endpoint, d.User)
	case errors.Is(err, errUnreachable):
		return d.wrap(err, "connect to %s", d.Endpoint)
	}
	return d.wrap(err, "connect to %s as %s", d.Endpoint, d.User)
}

// redactedError hides the password from an error's text while keeping the
// chain for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// wrap adds context to err and removes the password from the text.
func (d *DB) wrap(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...) + ": " + err.Error()
	return &redactedError{msg: redact(msg, d.password), err: err}
}

// redact replaces every occurrence of password in s. Passwords of fewer
// than 3 characters are not searched for: they would match ordinary text
// (and are not secrets worth the name).
func redact(s, password string) string {
	if len(password) < 3 {
		return s
	}
	return strings.ReplaceAll(s, password, "********")
}

// Close closes the connection.
func (d *DB) Close() error {
	if d.conn != nil {
		d.conn.Close()
	}
	if d.db != nil {
		return d.db.Close()
	}
	return nil
}

// query runs q on the connection with the lock held, counting it against
// Questions, Queries and the Com_ variable com, and calls scan on its rows.
func (d *DB) query(ctx context.Context, com, q string, scan func(*sql.Rows) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queryLocked(ctx, com, q, scan)
}

func (d *DB) queryLocked(ctx context.Context, com, q string, scan func(*sql.Rows) error) error {
	d.own["Questions"]++
	d.own["Queries"]++
	if com != "" {
		d.own[com]++
	}
	timeout := d.queryTimeout
	if timeout <= 0 {
		timeout = defaultQueryTimeout
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := d.scanQuery(qctx, q, scan)
	if err != nil && ctx.Err() == nil && qctx.Err() != nil {
		// The driver closes the connection when the deadline passes.
		return fmt.Errorf("%w: %s took more than %s (is the server stopped, for example by SIGSTOP, or stalled?): %w", errNoAnswer, q, timeout, err)
	}
	return err
}

// scanQuery runs q and calls scan on its rows.
func (d *DB) scanQuery(ctx context.Context, q string, scan func(*sql.Rows) error) error {
	rows, err := d.conn.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := scan(rows); err != nil {
		return err
	}
	return rows.Err()
}

// ConnectionPid returns the server process serving this connection: the
// thread group of the connection's OS thread (information_schema.PROCESSLIST
// TID on MariaDB, performance_schema.threads THREAD_OS_ID on MySQL), else
// the peer credentials of a unix socket.
func (d *DB) ConnectionPid(ctx context.Context) (int, error) { return d.serverPid(ctx) }

func (d *DB) serverPid(ctx context.Context) (int, error) {
	tid, terr := d.connectionTid(ctx)
	if terr == nil {
		pid, err := d.proc.Tgid(tid)
		if err == nil {
			return pid, nil
		}
		terr = fmt.Errorf("connection thread %d: %w (server in another pid namespace?)", tid, err)
	}
	d.mu.Lock()
	peer := d.peer
	d.mu.Unlock()
	if peer != 0 {
		return peer, nil
	}
	return 0, terr
}

// ConnectionThread returns the OS thread that serves this connection, when
// the server gives each connection a thread of its own (thread_handling
// one-thread-per-connection, the default); otherwise an error saying so.
func (d *DB) ConnectionThread(ctx context.Context) (int, error) {
	var h sql.NullString
	err := d.query(ctx, "Com_select", "SELECT @@thread_handling", func(rows *sql.Rows) error {
		if rows.Next() {
			return rows.Scan(&h)
		}
		return nil
	})
	if err != nil {
		return 0, d.wrap(err, "read thread_handling")
	}
	if h.String != "one-thread-per-connection" {
		return 0, fmt.Errorf("thread_handling is %s: connections share threads", h.String)
	}
	return d.connectionTid(ctx)
}

// connectionTid returns the OS thread id of this connection's thread.
func (d *DB) connectionTid(ctx context.Context) (int, error) {
	var tid sql.NullInt64
	scan := func(rows *sql.Rows) error {
		if rows.Next() {
			return rows.Scan(&tid)
		}
		return nil
	}
	err := d.query(ctx, "Com_select", "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()", scan)
	if err != nil || !tid.Valid || tid.Int64 == 0 {
		// MySQL has no TID column; performance_schema has it.
		err2 := d.query(ctx, "Com_select", "SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()", scan)
		if err2 != nil {
			if err == nil {
				err = err2
			}
			return 0, d.wrap(err, "read the OS thread of the connection")
		}
	}
	if !tid.Valid || tid.Int64 == 0 {
		return 0, errors.New("read the OS thread of the connection: the server does not say")
	}
	return int(tid.Int64), nil
}
