package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

const runTestPlan = `
name = "cli"
[run]
warmup = "1s"
duration = "8s"
events = ["task-clock", "context-switches"]
[data]
table_size = 1000
[steps]
list = ["point-query", "read-only_range=100"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
[[version]]
label = "b"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`

func writeRunPlan(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunUsageErrors(t *testing.T) {
	path := writeRunPlan(t, runTestPlan)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run"}, exitUsage, "no plan given"},
		{[]string{"run", path, "other.toml"}, exitUsage, `unexpected argument "other.toml"`},
		{[]string{"run", path, "--only", "point-qeury", "--out", t.TempDir()}, exitUsage, `did you mean "point-query"`},
		{[]string{"run", filepath.Join(t.TempDir(), "missing.toml")}, exitFailure, "read plan"},
	} {
		code, out, errs := runCLI(t, c.args...)
		if code != c.code || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("perfbench %s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, out, errs, c.code, c.want)
		}
	}
}

// TestRunPlanHostsErrors: a plan's [[host]] tables are checked as a hosts
// file's, each problem with the plan's line, before anything connects; a
// plan with [[host]] tables and --hosts too is a usage error.
func TestRunPlanHostsErrors(t *testing.T) {
	line := strings.Count(runTestPlan, "\n") + 1
	path := writeRunPlan(t, runTestPlan+"[[host]]\nname = \"h1\"\nport = 70000\n")
	code, out, errs := runCLI(t, "run", path, "--out", t.TempDir())
	want := fmt.Sprintf("perfbench run: %s:%d: host h1 has no destination; add destination = \"user@address\" (or an alias of your ssh config)\n"+
		"perfbench run: %s:%d: host h1: port 70000 is not a TCP port (1 to 65535)\n", path, line, path, line+2)
	if code != exitFailure || out != "" || errs != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d and:\n%s", code, out, errs, exitFailure, want)
	}

	path = writeRunPlan(t, runTestPlan+"[[host]]\nname = \"h1\"\ndestination = \"h1.invalid\"\n")
	hosts := filepath.Join(t.TempDir(), "hosts.toml")
	if err := os.WriteFile(hosts, []byte("[[host]]\nname = \"h2\"\ndestination = \"h2.invalid\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "run", path, "--hosts", hosts, "--out", t.TempDir())
	if code != exitUsage || out != "" || !strings.Contains(errs, fmt.Sprintf("plan %s has [[host]] tables (line %d) and "+
		"--hosts %s names hosts too", path, line, hosts)) {
		t.Errorf("with --hosts too: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestRunPlanErrorsOnePerLine(t *testing.T) {
	path := writeRunPlan(t, `
[run]
repeats = 0
[steps]
list = ["no-such-step"]
`)
	code, _, errs := runCLI(t, "run", path)
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	// Every problem on its own line, with the file and line.
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if len(lines) < 2 {
		t.Fatalf("stderr %q: want a line per problem", errs)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "perfbench run: "+path+":") {
			t.Errorf("line %q does not name the plan file", l)
		}
	}
}

// TestRunResumeNothingLeft: with a Record for every measurement, --resume
// runs nothing (no server is started) and says so.
func TestRunResumeNothingLeft(t *testing.T) {
	path := writeRunPlan(t, runTestPlan)
	p, err := plan.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	n := 0
	for _, it := range p.Expand() {
		if it.Action != plan.ActionMeasure {
			continue
		}
		r := record.New(record.KindStep)
		r.Version, r.Step, r.Threads, r.Repeat = it.Version.Label, it.Step.Label, it.Threads, it.Repeat
		if err := record.Write(filepath.Join(out, "records", record.FileName(r)), r); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 4 {
		t.Fatalf("%d measurements, want 4", n)
	}
	code, stdout, errs := runCLI(t, "run", path, "--out", out, "--resume")
	if code != exitOK || stdout != "" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	if !strings.Contains(errs, "skipping 4 of 4 measurements") || !strings.Contains(errs, "nothing to run: all 4 measurements have Records") {
		t.Errorf("stderr:\n%s", errs)
	}
	if _, err := os.Stat(filepath.Join(out, "servers")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a server folder was made: %v", err)
	}
	// Without --resume, the Records are not overwritten.
	code, _, errs = runCLI(t, "run", path, "--out", out)
	if code != exitFailure || !strings.Contains(errs, "--resume") {
		t.Errorf("without --resume: exit %d, stderr %q", code, errs)
	}
}
