package mysqld

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestTargetFlags(t *testing.T) {
	var tg Target
	fs := pflag.NewFlagSet("stat", pflag.ContinueOnError)
	tg.AddFlags(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if strings.TrimSpace(f.Usage) == "" {
			t.Errorf("flag --%s has no help text", f.Name)
		}
	})
	for _, name := range []string{"pid", "pid-file", "socket", "host", "port", "user", "password", "ask-password", "defaults-file", "force"} {
		if fs.Lookup(name) == nil {
			t.Errorf("flag --%s missing", name)
		}
	}
	err := fs.Parse([]string{"--pid=42", "--socket", "/tmp/s", "--port=3307", "--user=u", "--password=hunter22", "--force"})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Pid != 42 || tg.Socket != "/tmp/s" || tg.Port != 3307 || tg.User != "u" || !tg.Force {
		t.Errorf("parsed target = %+v", tg)
	}
	if tg.Password.Reveal() != "hunter22" {
		t.Errorf("password not stored")
	}
	// Help never shows a password, even one set before AddFlags.
	tg2 := Target{Password: NewSecret("hunter22")}
	fs2 := pflag.NewFlagSet("run", pflag.ContinueOnError)
	tg2.AddFlags(fs2)
	if u := fs2.FlagUsages(); strings.Contains(u, "hunter22") {
		t.Errorf("help shows the password:\n%s", u)
	}
	// An explicit empty password is set (it overrides my.cnf).
	var tg3 Target
	fs3 := pflag.NewFlagSet("x", pflag.ContinueOnError)
	tg3.AddFlags(fs3)
	if err := fs3.Parse([]string{"--password="}); err != nil {
		t.Fatal(err)
	}
	if !tg3.Password.IsSet() || tg3.Password.Reveal() != "" {
		t.Errorf("--password= : IsSet %v, value %q", tg3.Password.IsSet(), tg3.Password.Reveal())
	}
}

func TestSecretNeverPrints(t *testing.T) {
	tg := Target{User: "u", Password: NewSecret("hunter22")}
	c := Client{User: "u", Password: NewSecret("hunter22")}
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X"} {
		for _, v := range []any{tg, &tg, c, &c, tg.Password} {
			if s := fmt.Sprintf(f, v); strings.Contains(s, "hunter22") || strings.Contains(s, fmt.Sprintf("%x", "hunter22")) {
				t.Errorf("Sprintf(%q, %T) = %s", f, v, s)
			}
		}
	}
	b, err := json.Marshal(tg)
	if err != nil || strings.Contains(string(b), "hunter22") {
		t.Errorf("JSON = %s, %v", b, err)
	}
	if tg.Password.String() != "********" || (Secret{}).String() != "" {
		t.Errorf("String = %q / %q", tg.Password.String(), Secret{}.String())
	}
}

func TestTargetValidate(t *testing.T) {
	for _, tc := range []struct {
		t    Target
		want string
	}{
		{Target{Pid: 1, PidFile: "/x"}, "not both"},
		{Target{Pid: -3}, "not a process id"},
		{Target{Port: 70000}, "not a TCP port"},
		{Target{AskPassword: true, Password: NewSecret("")}, "--password or --ask-password"},
	} {
		err := tc.t.Validate()
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want ErrUsage with %q", tc.t, err, tc.want)
		}
	}
	if err := (Target{Pid: 5, Socket: "/s", Port: 3306}).Validate(); err != nil {
		t.Errorf("valid target: %v", err)
	}
	// On a command line, --socket with a TCP address is a contradiction.
	for _, tc := range []struct {
		t    Target
		want string
	}{
		{Target{Socket: "/s", Port: 3306}, "give --socket or --port 3306, not both"},
		{Target{Socket: "/s", Host: "127.0.0.1"}, "give --socket or --host 127.0.0.1, not both"},
		{Target{Socket: "/s", Host: "db1", Port: 3307}, "give --socket or --host db1 --port 3307, not both"},
		{Target{Pid: 1, PidFile: "/x"}, "not both"},
	} {
		if err := tc.t.ValidateFlags(); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateFlags(%+v) = %v, want ErrUsage with %q", tc.t, err, tc.want)
		}
	}
	for _, ok := range []Target{{Socket: "/s", Host: "localhost"}, {Socket: "/s"}, {Host: "127.0.0.1", Port: 3306}} {
		if err := ok.ValidateFlags(); err != nil {
			t.Errorf("ValidateFlags(%+v) = %v", ok, err)
		}
	}
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestClientPrecedence(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".my.cnf"), []byte(`[client]
user=cnf_client
password=from-client
socket=/cnf/client.sock
[perfbench]
password=from-perfbench
[mysql]
user=not-read
`), 0o600)
	env := ClientEnv{Home: home, Getenv: envOf(map[string]string{"MYSQL_PWD": "from-env", "USER": "login"})}

	c, err := Target{}.Client(env)
	if err != nil {
		t.Fatal(err)
	}
	// Option files override the environment; [perfbench] overrides [client].
	if c.User != "cnf_client" || c.Password.Reveal() != "from-perfbench" || c.Socket != "/cnf/client.sock" {
		t.Errorf("from ~/.my.cnf: user %q password %q socket %q", c.User, c.Password.Reveal(), c.Socket)
	}
	if len(c.Files) != 1 || c.Files[0] != filepath.Join(home, ".my.cnf") {
		t.Errorf("files = %v", c.Files)
	}

	// Flags override everything.
	c, err = Target{User: "flag_user", Password: NewSecret("from-flag"), Socket: "/flag.sock"}.Client(env)
	if err != nil {
		t.Fatal(err)
	}
	if c.User != "flag_user" || c.Password.Reveal() != "from-flag" || c.Socket != "/flag.sock" {
		t.Errorf("from flags: user %q password %q socket %q", c.User, c.Password.Reveal(), c.Socket)
	}

	// Without an option file: MYSQL_PWD, and the login name as user.
	c, err = Target{}.Client(ClientEnv{Home: t.TempDir(), Getenv: envOf(map[string]string{"MYSQL_PWD": "from-env", "USER": "login"})})
	if err != nil {
		t.Fatal(err)
	}
	if c.User != "login" || c.Password.Reveal() != "from-env" || len(c.Files) != 0 {
		t.Errorf("from env: user %q password %q files %v", c.User, c.Password.Reveal(), c.Files)
	}

	// --defaults-file is the only file read: ~/.my.cnf is not.
	df := filepath.Join(t.TempDir(), "only.cnf")
	os.WriteFile(df, []byte("[client]\nuser=only\nport=3310\nprotocol=tcp\n"), 0o600)
	c, err = Target{DefaultsFile: df}.Client(env)
	if err != nil {
		t.Fatal(err)
	}
	if c.User != "only" || c.Password.Reveal() != "from-env" || c.Socket != "" || c.Port != 3310 || !c.TCP {
		t.Errorf("defaults-file: %+v password %q", c, c.Password.Reveal())
	}
	if _, err := (Target{DefaultsFile: filepath.Join(home, "missing.cnf")}).Client(env); err == nil {
		t.Error("missing --defaults-file: no error")
	}

	// A bare "password" line asks for a prompt; a later value cancels it.
	df2 := filepath.Join(t.TempDir(), "ask.cnf")
	os.WriteFile(df2, []byte("[client]\npassword\n"), 0o600)
	c, _ = Target{DefaultsFile: df2}.Client(ClientEnv{Home: home, Getenv: envOf(nil)})
	if !c.AskPassword {
		t.Error("bare password line: AskPassword false")
	}
	c, _ = Target{DefaultsFile: df2, Password: NewSecret("x")}.Client(ClientEnv{Home: home, Getenv: envOf(nil)})
	if c.AskPassword {
		t.Error("--password after a bare password line still asks")
	}

	// A world-writable option file is ignored, with a warning.
	ww := filepath.Join(t.TempDir(), "ww.cnf")
	os.WriteFile(ww, []byte("[client]\nuser=evil\n"), 0o600)
	os.Chmod(ww, 0o666)
	c, _ = Target{DefaultsFile: ww}.Client(ClientEnv{Home: home, Getenv: envOf(map[string]string{"USER": "login"})})
	if c.User != "login" || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "world-writable") {
		t.Errorf("world-writable file: user %q warnings %v", c.User, c.Warnings)
	}
}

func TestClientEndpoint(t *testing.T) {
	env := ClientEnv{Home: t.TempDir(), Getenv: envOf(map[string]string{"USER": "u"})}
	found := &Found{Process: Process{Pid: 7, Sockets: []string{"/proc.sock"}, Ports: []int{3310}}}
	portOnly := &Found{Process: Process{Pid: 7, Ports: []int{3311}}}
	for _, tc := range []struct {
		name  string
		t     Target
		env   map[string]string
		found *Found
		net   string
		addr  string
	}{
		{"socket flag", Target{Socket: "/flag.sock"}, nil, found, "unix", "/flag.sock"},
		{"port flag", Target{Port: 3320}, nil, found, "tcp", "127.0.0.1:3320"},
		{"host flag", Target{Host: "10.0.0.5"}, nil, found, "tcp", "10.0.0.5:3306"},
		{"localhost means the socket", Target{Host: "localhost"}, nil, found, "unix", "/proc.sock"},
		{"the target's own socket", Target{Pid: 7}, map[string]string{"MYSQL_UNIX_PORT": "/env.sock"}, found, "unix", "/proc.sock"},
		{"the target's own port", Target{Pid: 7}, nil, portOnly, "tcp", "127.0.0.1:3311"},
		{"environment socket", Target{}, map[string]string{"MYSQL_UNIX_PORT": "/env.sock"}, nil, "unix", "/env.sock"},
		{"environment host", Target{}, map[string]string{"MYSQL_HOST": "h", "MYSQL_TCP_PORT": "3399"}, nil, "tcp", "h:3399"},
	} {
		e := env
		if tc.env != nil {
			m := map[string]string{"USER": "u"}
			for k, v := range tc.env {
				m[k] = v
			}
			e.Getenv = envOf(m)
		}
		c, err := tc.t.Client(e)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		n, a := c.endpoint(tc.found)
		if n != tc.net || a != tc.addr {
			t.Errorf("%s: endpoint = %s %s, want %s %s", tc.name, n, a, tc.net, tc.addr)
		}
	}
}

func TestRedact(t *testing.T) {
	if got := redact("Access denied for 'u' using s3cret-pw: s3cret-pw", "s3cret-pw"); strings.Contains(got, "s3cret") {
		t.Errorf("redact left the password: %s", got)
	}
	if got := redact("abc", "ab"); got != "abc" {
		t.Errorf("short password redacted ordinary text: %s", got)
	}
	d := &DB{password: "s3cret-pw"}
	base := errors.New("driver said s3cret-pw")
	err := d.wrap(base, "connect to %s", "unix:/x")
	if strings.Contains(err.Error(), "s3cret") || !errors.Is(err, base) {
		t.Errorf("wrap: %v (Is base: %v)", err, errors.Is(err, base))
	}
}
