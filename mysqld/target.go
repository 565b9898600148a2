// Package mysqld finds a running MySQL-family server (mysqld, mariadbd),
// connects to it the way MySQL clients do, and reads what perfbench needs
// from it: SHOW GLOBAL STATUS snapshots and their deltas over a window, the
// server's identity (version, configuration, binary and build-id), and the
// role of each of its OS threads. It opens no perf events.
//
// A measurement uses the pieces in this order:
//
//	var t mysqld.Target
//	t.AddFlags(fs)                                  // --pid, --socket, --user, ...
//	...
//	p, err := mysqld.Find(ctx, t)                   // the server process
//	c, err := t.Client(mysqld.ClientEnv{})          // credentials: ~/.my.cnf, MYSQL_PWD, flags
//	db, err := mysqld.Connect(ctx, c, p, mysqld.ConnectOptions{Prompt: ...})
//	a, err := db.Status(ctx)                        // next to the counters' first read
//	...
//	b, err := db.Status(ctx)                        // next to the counters' last read
//	d, err := mysqld.Delta(a, b)                    // counters as deltas, gauges at b
//	op, err := mysqld.ResolveOp("Questions", b)
//	n, err := d.Ops(op)                             // record.Ops{Source: op.Source(), Count: n, Per: op.Per}
//	srv, warnings, err := db.Server(ctx, p.Pid)     // record.Server; d.FillServer(srv)
//	roles, err := db.Roles(ctx, p.Pid)              // tid → role
//
// The password never leaves this package in text: it is held in a Secret,
// which prints as asterisks, and errors are scrubbed of it.
package mysqld

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// Target is what the user pointed perfbench at: the flags shared by
// perfbench stat and perfbench run. The zero value means "the only server
// running, credentials from ~/.my.cnf".
type Target struct {
	// Pid and PidFile name the server process directly.
	Pid     int
	PidFile string
	// Socket is the server's unix socket: it is used to connect and, when
	// neither Pid nor PidFile is given, to find the process (the peer of a
	// connection to it).
	Socket string
	// Host and Port reach the server over TCP; the process is the owner of
	// the listening socket. As with MySQL clients, host "localhost" means
	// the unix socket unless a port is given.
	Host string
	Port int
	// User and Password override the option files and MYSQL_PWD.
	User     string
	Password Secret
	// AskPassword prompts for the password on the terminal.
	AskPassword bool
	// DefaultsFile, when set, is the only option file read (instead of
	// ~/.my.cnf).
	DefaultsFile string
	// Force accepts a process whose executable is not mysqld or mariadbd.
	Force bool
}

// AddFlags registers the target flags on fs, with their help text.
func (t *Target) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&t.Pid, "pid", t.Pid, "process id of the server to measure")
	fs.StringVar(&t.PidFile, "pid-file", t.PidFile, "read the server's process id from this file (the server's pid_file)")
	fs.StringVar(&t.Socket, "socket", t.Socket, "unix socket of the server: used to connect, and to find the process when --pid is not given")
	fs.StringVar(&t.Host, "host", t.Host, "host of the server for a TCP connection (it must run on this machine); "+
		"\"localhost\" means the unix socket unless --port is given")
	fs.IntVar(&t.Port, "port", t.Port, "TCP port of the server; finds the process listening on it")
	fs.StringVar(&t.User, "user", t.User, "MySQL user (default: from the option files, else the login name)")
	fs.Var(&passwordFlag{t}, "password", "password of --user (other users can read it in ps until perfbench hides it as it "+
		"starts: prefer ~/.my.cnf, MYSQL_PWD or --ask-password)")
	fs.BoolVar(&t.AskPassword, "ask-password", t.AskPassword, "prompt for the password on the terminal")
	fs.StringVar(&t.DefaultsFile, "defaults-file", t.DefaultsFile, "read client options only from this file, sections "+
		"[client] then [perfbench] (default ~/.my.cnf)")
	fs.BoolVar(&t.Force, "force", t.Force, "measure the process even if its executable is not mysqld or mariadbd")
}

// passwordFlag is the --password flag: it stores into t.Password and never
// shows the value (help prints no default).
type passwordFlag struct{ t *Target }

func (p *passwordFlag) String() string { return "" }
func (p *passwordFlag) Set(s string) error {
	p.t.Password = NewSecret(s)
	return nil
}
func (p *passwordFlag) Type() string { return "string" }

// errUsage marks target flags that contradict each other; the command turns
// it into a usage error.
var errUsage = errors.New("invalid target flags")

// Validate checks the flags for contradictions.
func (t Target) Validate() error {
	switch {
	case t.Pid < 0:
		return fmt.Errorf("%w: --pid %d is not a process id", errUsage, t.Pid)
	case t.Pid != 0 && t.PidFile != "":
		return fmt.Errorf("%w: give --pid or --pid-file, not both", errUsage)
	case t.Port < 0 || t.Port > 65535:
		return fmt.Errorf("%w: --port %d is not a TCP port", errUsage, t.Port)
	case t.AskPassword && t.Password.IsSet():
		return fmt.Errorf("%w: give --password or --ask-password, not both", errUsage)
	}
	return nil
}

// ValidateFlags is Validate for a command line, which also refuses
// --socket with a TCP --port or a --host other than localhost: the
// connection would use the socket and ignore the others. (A plan's running
// server may name both, for perfbench and for its load.)
func (t Target) ValidateFlags() error {
	if err := t.Validate(); err != nil {
		return err
	}
	if t.Socket != "" && (t.Port != 0 || (t.Host != "" && t.Host != "localhost")) {
		tcp := "--host " + t.Host
		if t.Port != 0 {
			tcp = fmt.Sprintf("--port %d", t.Port)
			if t.Host != "" {
				tcp = fmt.Sprintf("--host %s --port %d", t.Host, t.Port)
			}
		}
		return fmt.Errorf("%w: give --socket or %s, not both (perfbench would connect over the socket and ignore %s)", errUsage, tcp, tcp)
	}
	return nil
}

// Secret holds a password. It prints as "********" (or "" when unset) with
// every fmt verb and in JSON, so a Target or Client can be logged safely.
type Secret struct{ v *string }

// NewSecret returns a set Secret holding s (which may be empty: an explicit
// empty password).
func NewSecret(s string) Secret { return Secret{&s} }

// IsSet reports whether a password was given (possibly empty).
func (s Secret) IsSet() bool { return s.v != nil }

// Reveal returns the password, for the driver only.
func (s Secret) Reveal() string {
	if s.v == nil {
		return ""
	}
	return *s.v
}

// String returns "********" for a set password, "" otherwise.
func (s Secret) String() string {
	if s.v == nil {
		return ""
	}
	return "********"
}

// GoString is String, so %#v hides the password too.
func (s Secret) GoString() string { return `mysqld.Secret("` + s.String() + `")` }

// Format hides the password from every verb (%s, %v, %q, %x, ...).
func (s Secret) Format(f fmt.State, verb rune) { fmt.Fprint(f, s.String()) }

// MarshalJSON writes the masked form.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }
