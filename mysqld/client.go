package mysqld

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// Client is how to reach and log in to the server, resolved from the option
// files, the environment and the Target's flags.
type Client struct {
	User     string
	Password Secret
	// AskPassword: prompt for the password (--ask-password, or a bare
	// "password" line in an option file).
	AskPassword bool
	// Socket, Host and Port as resolved; Connect picks the transport
	// (see Connect).
	Socket string
	Host   string
	Port   int
	// TCP is set when --protocol=tcp was asked for in an option file, or
	// when the flags gave a port or a host other than localhost.
	TCP bool
	// Files are the option files read, in order.
	Files []string
	// Warnings are problems that did not stop the resolution (an
	// !includedir that could not be read, a world-writable file...).
	Warnings []string

	// explicitSocket/explicitTCP: the flags named the transport.
	explicitSocket bool
	explicitTCP    bool
}

// ClientEnv is the outside world Target.Client reads. The zero value reads
// the real home directory and environment.
type ClientEnv struct {
	// Home is the directory of .my.cnf; empty means $HOME (or the
	// current user's home).
	Home string
	// Getenv reads an environment variable; nil means os.Getenv.
	Getenv func(string) string
}

func (e ClientEnv) getenv(k string) string {
	if e.Getenv != nil {
		return e.Getenv(k)
	}
	return os.Getenv(k)
}

func (e ClientEnv) home() string {
	if e.Home != "" {
		return e.Home
	}
	if h := e.getenv("HOME"); h != "" {
		return h
	}
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	return ""
}

// optionGroups are the option-file groups perfbench reads, in order: later
// groups override earlier ones.
var optionGroups = []string{"client", "perfbench"}

// Client resolves the connection parameters the way MySQL clients do, from
// lowest to highest precedence: the environment (MYSQL_PWD, MYSQL_HOST,
// MYSQL_TCP_PORT, MYSQL_UNIX_PORT), the option file (--defaults-file
// alone, else ~/.my.cnf when it exists; groups [client] then [perfbench]),
// then the flags. The user defaults to the login name.
func (t Target) Client(env ClientEnv) (*Client, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	c := &Client{}
	// Environment: the lowest precedence.
	if v := env.getenv("MYSQL_PWD"); v != "" {
		c.Password = NewSecret(v)
	}
	c.Host = env.getenv("MYSQL_HOST")
	c.Socket = env.getenv("MYSQL_UNIX_PORT")
	if v := env.getenv("MYSQL_TCP_PORT"); v != "" {
		if p, err := strconv.Atoi(v); err == nil {
			c.Port = p
		} else {
			c.Warnings = append(c.Warnings, fmt.Sprintf("MYSQL_TCP_PORT=%q is not a port: ignored", v))
		}
	}

	// Option files.
	var path string
	switch {
	case t.DefaultsFile != "":
		path = t.DefaultsFile
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("read --defaults-file: %w", err)
		}
	default:
		if h := env.home(); h != "" {
			p := filepath.Join(h, ".my.cnf")
			if _, err := os.Stat(p); err == nil {
				path = p
			} else if !errors.Is(err, fs.ErrNotExist) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("cannot read %s: %v", p, err))
			}
		}
	}
	if path != "" {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o002 != 0 {
			// MySQL clients ignore a world-writable option file.
			c.Warnings = append(c.Warnings, fmt.Sprintf("option file %s is world-writable: ignored, as MySQL clients do (chmod o-w it)", path))
		} else {
			of, err := loadOptionFile(path)
			if err != nil {
				return nil, err
			}
			c.Files = of.Files
			if err := c.apply(of); err != nil {
				return nil, err
			}
		}
	}

	// Flags: the highest precedence.
	if t.User != "" {
		c.User = t.User
	}
	if t.Password.IsSet() {
		c.Password = t.Password
		c.AskPassword = false
	}
	if t.AskPassword {
		c.AskPassword = true
	}
	if t.Socket != "" {
		c.Socket = t.Socket
		c.explicitSocket = true
	}
	if t.Host != "" {
		c.Host = t.Host
	}
	if t.Port != 0 {
		c.Port = t.Port
	}
	if t.Port != 0 || (t.Host != "" && t.Host != "localhost") {
		c.explicitTCP = true
		c.TCP = true
	}
	if t.Socket != "" && !c.explicitTCP {
		c.TCP = false
	}
	if c.User == "" {
		c.User = loginName(env)
	}
	return c, nil
}

func (c *Client) apply(of *optionFile) error {
	for _, g := range optionGroups {
		for _, o := range of.Groups[g] {
			switch o.Name {
			case "user":
				c.User = o.Value
			case "password":
				if o.HasValue {
					c.Password = NewSecret(o.Value)
					c.AskPassword = false
				} else {
					c.AskPassword = true
				}
			case "socket":
				c.Socket = o.Value
			case "host":
				c.Host = o.Value
			case "port":
				p, err := strconv.Atoi(o.Value)
				if err != nil || p <= 0 || p > 65535 {
					return fmt.Errorf("read option file %s: [%s] port=%q is not a TCP port", strings.Join(of.Files, ", "), g, o.Value)
				}
				c.Port = p
			case "protocol":
				switch strings.ToLower(o.Value) {
				case "tcp":
					c.TCP = true
				case "socket":
					c.TCP = false
				default:
					c.Warnings = append(c.Warnings, fmt.Sprintf("[%s] protocol=%s is not supported: using socket or TCP", g, o.Value))
				}
			}
		}
	}
	return nil
}

func loginName(env ClientEnv) string {
	for _, k := range []string{"USER", "LOGNAME"} {
		if v := env.getenv(k); v != "" {
			return v
		}
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// ReadPassword prompts on out and reads a password from the terminal in
// without echo. in must be a terminal.
func ReadPassword(in *os.File, out io.Writer, prompt string) (string, error) {
	if !term.IsTerminal(int(in.Fd())) {
		return "", errors.New("read password: standard input is not a terminal (use ~/.my.cnf, MYSQL_PWD or --password)")
	}
	fmt.Fprint(out, prompt)
	b, err := term.ReadPassword(int(in.Fd()))
	fmt.Fprintln(out)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	return string(b), nil
}
