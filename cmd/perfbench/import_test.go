package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestImportFormFlagsHaveHelp(t *testing.T) {
	for _, f := range importForms {
		fs := newImportFlagSet(f, &importFlags{})
		n := 0
		fs.VisitAll(func(fl *pflag.Flag) {
			n++
			if strings.TrimSpace(fl.Usage) == "" {
				t.Errorf("perfbench import %s --%s has no help text", f.name, fl.Name)
			}
		})
		if n < 3 || f.summary == "" || f.usage == "" || f.long == "" {
			t.Errorf("import %s: %d flags, summary %q", f.name, n, f.summary)
		}
	}
}

func TestImportHelpOnEveryForm(t *testing.T) {
	for _, f := range importForms {
		code, out, errs := runCLI(t, "import", f.name, "--help")
		if code != exitOK || !strings.HasPrefix(out, "Usage: perfbench import "+f.name) || !strings.Contains(out, "--out") || errs != "" {
			t.Errorf("import %s --help: exit %d, stdout %q, stderr %q", f.name, code, out, errs)
		}
	}
	_, out, _ := runCLI(t, "import", "dir", "--help")
	if !strings.Contains(out, "<prefix>.<step>.range<R>.pk<N>") || !strings.Contains(out, "sb.perf.hw") || !strings.Contains(out, "--pattern") {
		t.Errorf("import dir --help does not document the naming scheme: %s", out)
	}
	code, out, _ := runCLI(t, "import", "--help")
	if code != exitOK || !strings.Contains(out, "perf-stat") || !strings.Contains(out, "sysbench") {
		t.Errorf("import --help: exit %d, %q", code, out)
	}
}

func TestImportUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"import"},
		{"import", "nosuchform"},
		{"import", "perf-stat", "x.txt", "--out", "o"},                         // no --version/--step
		{"import", "perf-stat", "--version", "v", "--step", "s", "--out", "o"}, // no file
		{"import", "perf-stat", "x", "--version", "v", "--step", "s"},          // no --out
		{"import", "perf-stat", "x", "--version", "v", "--step", "s", "--out", "o", "--ops", "1", "--sysbench", "y"},
		{"import", "dir", "a", "b", "--out", "o"},
		{"import", "dir", "a", "--out", "o", "--pattern", "(?P<x>a)"},
		{"import", "perf-stat", "x", "--version", "v", "--step", "s", "--out", "o", "--decimal", "x"},
	} {
		code, _, errs := runCLI(t, args...)
		if code != exitUsage || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}

func TestImportPerfStatCommand(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := runCLI(t, "import", "perf-stat", filepath.Join("..", "..", "testdata", "perfstat", "append3.txt"),
		"--version", "v1", "--step", "point-query_range=100", "--ops", "1000", "--out", out)
	// No --threads and nothing in the file says it: threads 0 (unknown),
	// said once.
	if code != exitOK || !strings.Contains(stdout, "3 record(s) written") || strings.Count(errs, "\n") != 1 ||
		!strings.Contains(errs, "3 of 3 records have no thread count") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	for r := 1; r <= 3; r++ {
		name := filepath.Join(out, "v1__point-query_range=100__t0__r"+string(rune('0'+r))+".json")
		if _, err := os.Stat(name); err != nil {
			t.Error(err)
		}
	}
}

func TestImportFailureGoesOn(t *testing.T) {
	out := t.TempDir()
	missing := filepath.Join(out, "missing.txt")
	code, stdout, errs := runCLI(t, "import", "perf-stat", missing, filepath.Join("..", "..", "testdata", "perfstat", "append3.txt"),
		"--version", "v1", "--step", "s", "--out", out)
	if code != exitFailure || !strings.Contains(stdout, "3 record(s) written") || !strings.Contains(errs, "missing.txt") ||
		!strings.Contains(errs, "1 failure(s)") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
}

func TestImportDirCommand(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := runCLI(t, "import", "dir", filepath.Join("..", "..", "testdata", "import-dir"), "--out", out)
	if code != exitOK || !strings.Contains(stdout, "4 record(s) written") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.json"))
	if len(files) != 4 || filepath.Base(files[0]) != "base__point-query_range=100__t1__r1.json" {
		t.Errorf("files %v", files)
	}
	// Records are never rewritten.
	code, _, errs = runCLI(t, "import", "dir", filepath.Join("..", "..", "testdata", "import-dir"), "--out", out)
	if code != exitFailure || !strings.Contains(errs, "file exists") {
		t.Errorf("second import: exit %d, stderr %q", code, errs)
	}
}

func TestImportSysbenchCommand(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := runCLI(t, "import", "sysbench", filepath.Join("..", "..", "testdata", "sysbench", "interrupted.txt"),
		"--version", "v", "--step", "point-query_range=100", "--out", out)
	if code != exitOK || !strings.Contains(stdout, "1 record(s) written") || !strings.Contains(errs, "no final report") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
}

// TestImportMissingLabels: a missing --version or --step is one usage error
// naming exactly the missing flag, before any file is read (the files here
// do not exist: reading them would fail with exit 1, once per file).
func TestImportMissingLabels(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "sysbench", a, b, "--version", "sb", "--out", dir}, "--step is required: " + a + " and 1 other " +
			"file(s) are not named <version>/sb.o.<step>.range<R>.pk<N>"},
		{[]string{"import", "sysbench", a, "--step", "s", "--out", dir}, "--version is required: " + a + " is not named"},
		{[]string{"import", "sysbench", a, b, "--out", dir}, "--version and --step are required: "},
		{[]string{"import", "perf-stat", a, b, "--version", "v", "--out", dir}, "--step is required: "},
		{[]string{"import", "perf-stat", a, "--step", "s", "--out", dir}, "--version is required: "},
		{[]string{"import", "perf-stat", a, "--out", dir}, "--version and --step are required: "},
	} {
		code, stdout, errs := runCLI(t, c.args...)
		if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "perfbench import: "+c.want) || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args[1:], code, stdout, errs)
		}
		if strings.Contains(errs, "no such file") || strings.Contains(errs, "failure") {
			t.Errorf("%v: files were read: %q", c.args[1:], errs)
		}
	}
}

// TestImportUsageErrorNamesForm: a form's usage errors carry the command
// whose --help documents the form ("import sysbench"), not "import".
func TestImportUsageErrorNamesForm(t *testing.T) {
	for _, c := range []struct{ form, help string }{{"sysbench", "import sysbench"}, {"perf-stat", "import perf-stat"}} {
		var form *importForm
		for _, f := range importForms {
			if f.name == c.form {
				form = f
			}
		}
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb}
		err := inForm(form, runImport(context.Background(), e, form, []string{"x.txt", "--out", t.TempDir()}))
		var ue *usageError
		var h interface{ HelpCommand() string }
		if !errors.As(err, &ue) || !errors.As(err, &h) || h.HelpCommand() != c.help {
			t.Errorf("import %s: %v (%T)", c.form, err, err)
		}
	}
	// The printed line points to the form's help.
	code, _, errs := runCLI(t, "import", "sysbench", "x.txt", "--version", "v", "--out", t.TempDir())
	if code != exitUsage || !strings.HasSuffix(strings.TrimSpace(errs), "run 'perfbench import sysbench --help'") {
		t.Errorf("exit %d, stderr %q: want a usage error pointing to perfbench import sysbench --help", code, errs)
	}
	// A failure that is not a usage error stays as it is.
	if err := inForm(importForms[0], errSilent); err != errSilent {
		t.Errorf("inForm changed a failure: %v", err)
	}
}

// TestImportSysbenchLabelsFromNames: files named as the dir form names them
// need neither --version nor --step; one of them given overrides the name's.
func TestImportSysbenchLabelsFromNames(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sysbench", "oltp_point_select.t1.p99.txt"))
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "10.11.6")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "sb.o.point-query.range100.pk1")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, errs := runCLI(t, "import", "sysbench", file, "--out", out)
	if code != exitOK || !strings.Contains(stdout, "1 record(s) written") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	code, _, errs = runCLI(t, "import", "sysbench", file, "--step", "ps", "--out", out)
	if code != exitOK {
		t.Fatalf("--step only: exit %d, stderr %q", code, errs)
	}
	for _, pat := range []string{"10.11.6__point-query_range=100__t1__r1.json", "10.11.6__ps__t1__r1.json"} {
		if _, err := os.Stat(filepath.Join(out, pat)); err != nil {
			t.Error(err)
		}
	}
}

// TestImportPerfStatRefusesOtherOutput: sysbench's output of a failed run
// ("(last message repeated 1 times)" once became an event "times)") is not
// perf stat output: one line naming the file, exit 1, nothing written.
func TestImportPerfStatRefusesOtherOutput(t *testing.T) {
	out := t.TempDir()
	file := filepath.Join("..", "..", "testdata", "sysbench", "lua-fatal.txt")
	code, stdout, errs := runCLI(t, "import", "perf-stat", file, "--version", "junk", "--step", "s", "--ops", "100", "--out", out)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != exitFailure || stdout != "" || len(lines) != 2 ||
		!strings.Contains(lines[0], file+": not perf stat output: ") || !strings.Contains(lines[0], "task-clock") ||
		lines[1] != "perfbench import: nothing imported: 1 failure(s) above" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	if files, _ := filepath.Glob(filepath.Join(out, "*")); len(files) != 0 {
		t.Errorf("written: %v", files)
	}
}

// TestImportNothingImported: an empty file, or a folder with nothing to
// import, fails (exit 1) saying so, with no "0 record(s) written".
func TestImportNothingImported(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, errs := runCLI(t, "import", "perf-stat", empty, "--version", "v", "--step", "s", "--ops", "1", "--out", out)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != exitFailure || stdout != "" || len(lines) != 2 || !strings.Contains(lines[0], "empty.txt: the file is empty") ||
		lines[1] != "perfbench import: nothing imported: 1 failure(s) above" {
		t.Errorf("empty file: exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	nothing := filepath.Join(dir, "nothing")
	os.MkdirAll(nothing, 0o755)
	code, stdout, errs = runCLI(t, "import", "dir", nothing, "--out", out)
	if code != exitFailure || stdout != "" || errs != "perfbench import: nothing imported: no perf stat or sysbench output in "+nothing+"\n" {
		t.Errorf("empty folder: exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
}
