package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
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
