package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
)

func TestConfigLine(t *testing.T) {
	for v, want := range map[string]string{
		"sbtest":        `mysql-password=sbtest`,
		`a#b=c"d'e\f`:   `mysql-password=a#b=c"d'e\f`,
		"a b,c":         `mysql-password="a b,c"`,
		"#x":            `mysql-password="#x"`,
		`"x`:            `mysql-password='"x'`,
		`it's a "test"`: "", // both quotes and a space
		"a\nb":          "",
	} {
		got, err := configLine("mysql-password", v)
		if want == "" {
			if !errors.Is(err, errOptions) {
				t.Errorf("%q: %q, %v; want ErrOptions", v, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", v, got, err, want)
		}
	}
}

// TestPasswordFileOnSysbench: sysbench connects with passwords of every
// shape WriteConfig takes, read from the option file, and the file is
// private and gone after remove.
func TestPasswordFileOnSysbench(t *testing.T) {
	sysbench := testdb.NeedSysbench(t)
	srv := testdb.Shared(t)
	root, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, pw := range []string{"plain", "a b,c#d", `it's $(x) \`, `say "hi", ok`, "#lead", `"lead`, "é€ ü"} {
		user := fmt.Sprintf("pbpw%d", i)
		q := "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(pw) + "'"
		for _, stmt := range []string{"CREATE DATABASE IF NOT EXISTS pbpw", "DROP USER IF EXISTS " + user, "CREATE USER " +
			user + "@'%' IDENTIFIED BY " + q, "GRANT ALL ON pbpw.* TO " + user + "@'%'"} {
			if _, err := root.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		o := Options{Sysbench: sysbench, Host: "127.0.0.1", Port: srv.Port, User: user, Password: pw, DB: "pbpw", Tables: 1, TableSize: 10}
		path, remove, err := WriteConfig(o)
		if err != nil {
			t.Fatalf("%q: %v", pw, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", path, fi.Mode(), err)
		}
		o.ConfigFile = path
		// cleanup connects and drops tables that are not there (in a
		// database of this test's own): it fails only when it cannot
		// connect.
		argv, err := CleanupCommand(o)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(argv, " "), pw) {
			t.Errorf("the password is on the command line: %q", argv)
		}
		if out, err := run(ctx, argv); err != nil {
			t.Errorf("password %q: %v\n%s", pw, err, out)
		}
		remove()
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after remove: %v", path, err)
		}
	}
}

// deadPid is the pid of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skipf("no true(1) to leave a dead pid: %v", err)
	}
	return c.Process.Pid
}

// TestStaleConfigRemoved: the option file (the password) that a perfbench
// killed by SIGKILL left under TMPDIR is removed when an option file is
// written next; the folder of a live process and this process's own stay;
// the new folder names this process.
func TestStaleConfigRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stale := filepath.Join(tmp, fmt.Sprintf("perfbench-sysbench-%d-123", deadPid(t)))
	live := filepath.Join(tmp, "perfbench-sysbench-1-456") // init lives as long as the machine
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "options.cfg"), []byte("mysql-password=secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path, remove, err := WriteConfig(Options{Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the option file of an ended process stays: %v", err)
	}
	if _, err := os.Stat(filepath.Join(live, "options.cfg")); err != nil {
		t.Errorf("the option file of a live process was removed: %v", err)
	}
	if want := fmt.Sprintf("perfbench-sysbench-%d-", os.Getpid()); !strings.HasPrefix(filepath.Base(filepath.Dir(path)), want) {
		t.Errorf("option file %s: its folder does not start with %s", path, want)
	}
	_, remove2, err := WriteConfig(Options{Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	remove2()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("this process's own option file was removed: %v", err)
	}
}
