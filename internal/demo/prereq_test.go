package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// fakeMachine finds the programs in have; its apt-get install adds the
// programs of the packages it installs, unless installFails.
type fakeMachine struct {
	have         map[string]bool
	installFails bool
	ran          []string
}

func (m *fakeMachine) find(name string) bool { return m.have[name] }

func (m *fakeMachine) run(ctx context.Context, dir string, stdout, stderr io.Writer, name string, args ...string) error {
	line := strings.TrimSpace(name + " " + strings.Join(args, " "))
	m.ran = append(m.ran, line)
	if name == "apt-get" && len(args) > 0 && args[0] == "install" {
		if m.installFails {
			fmt.Fprintln(stderr, "E: Unable to locate package sysbench")
			return errors.New("apt-get install: exit status 100")
		}
		for _, pkg := range args {
			for _, t := range tools {
				if t.Package == pkg {
					m.have[t.Name] = true
				}
			}
		}
	}
	return nil
}

func have(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

func TestMissingToolsNotRoot(t *testing.T) {
	m := &fakeMachine{have: have("mariadb", "my_print_defaults", "perf")}
	var log bytes.Buffer
	err := ensureTools(context.Background(), toolsEnv{root: false, find: m.find, run: m.run, log: &log})
	if !errors.Is(err, errMissingTools) {
		t.Fatalf("err = %v, want ErrMissingTools", err)
	}
	want := "missing programs: mariadbd (mariadb-server), mariadb-install-db (mariadb-server), sysbench (sysbench); " +
		"install them as root: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mariadb-server sysbench"
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
	if len(m.ran) != 0 {
		t.Errorf("ran %q without being root", m.ran)
	}
}

func TestMissingOptionalNotRoot(t *testing.T) {
	m := &fakeMachine{have: have("mariadbd", "mariadb-install-db", "mariadb", "my_print_defaults", "sysbench")}
	var log bytes.Buffer
	err := ensureTools(context.Background(), toolsEnv{root: false, find: m.find, run: m.run, log: &log})
	if err != nil {
		t.Fatalf("perf missing stopped the demo: %v", err)
	}
	want := "perfbench demo: warning: perf (linux-perf) not installed (optional: the demo runs without it; install it as root: " +
		"apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends linux-perf)\n"
	if log.String() != want {
		t.Errorf("log:\n got %q\nwant %q", log.String(), want)
	}
}

func TestInstallAsRoot(t *testing.T) {
	m := &fakeMachine{have: have("mariadbd", "mariadb-install-db")}
	var log bytes.Buffer
	err := ensureTools(context.Background(), toolsEnv{root: true, find: m.find, run: m.run, log: &log})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"apt-get update", "apt-get install -y --no-install-recommends mariadb-client sysbench linux-perf"}
	if !reflect.DeepEqual(m.ran, want) {
		t.Errorf("ran %q, want %q", m.ran, want)
	}
	if !strings.HasPrefix(log.String(), "perfbench demo: installing mariadb (mariadb-client), my_print_defaults "+
		"(mariadb-client), sysbench (sysbench), perf (linux-perf): apt-get update && ") {
		t.Errorf("log does not say what it installs: %q", log.String())
	}
}

func TestInstallFails(t *testing.T) {
	m := &fakeMachine{have: have("mariadbd", "mariadb-install-db", "mariadb", "my_print_defaults", "perf"), installFails: true}
	var log bytes.Buffer
	err := ensureTools(context.Background(), toolsEnv{root: true, find: m.find, run: m.run, log: &log})
	if !errors.Is(err, errMissingTools) {
		t.Fatalf("err = %v, want ErrMissingTools", err)
	}
	for _, s := range []string{"sysbench (sysbench)", "exit status 100", "install them: apt-get update && " +
		"DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends sysbench"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if !strings.Contains(log.String(), "E: Unable to locate package sysbench") {
		t.Errorf("apt's output is not shown: %q", log.String())
	}
}

func TestNothingMissing(t *testing.T) {
	m := &fakeMachine{have: have("mariadbd", "mariadb-install-db", "mariadb", "my_print_defaults", "sysbench", "perf")}
	var log bytes.Buffer
	if err := ensureTools(context.Background(), toolsEnv{root: true, find: m.find, run: m.run, log: &log}); err != nil {
		t.Fatal(err)
	}
	if len(m.ran) != 0 || log.Len() != 0 {
		t.Errorf("ran %q, said %q", m.ran, log.String())
	}
}

func TestFindTool(t *testing.T) {
	if findTool("perfbench-no-such-program") {
		t.Error("found a program that does not exist")
	}
	if !findTool("sh") {
		t.Error("did not find sh")
	}
}
