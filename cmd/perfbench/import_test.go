package main

import (
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
	if code != exitOK || !strings.Contains(stdout, "3 record(s) written") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "3 of 3 records have no thread count") {
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
	if code != exitFailure || !strings.Contains(stdout, "3 record(s) written") || !strings.Contains(errs, "missing.txt") || !strings.Contains(errs, "1 failure(s)") {
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
