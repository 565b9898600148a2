package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const reportFixtures = "../../testdata/records"

func TestReportCommandText(t *testing.T) {
	code, out, errs := runCLI(t, "report", reportFixtures, "--tables", "rqps")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// Versions in measurement order, the first one the base.
	if !strings.Contains(out, "Relative to: mariadb-10.11.6\ncol-1 : mariadb-11.4.3\ncol-2 : mariadb-10.11.6-ps\n") {
		t.Errorf("header lines:\n%s", out)
	}
	code, out, _ = runCLI(t, "report", reportFixtures, "--tables", "rqps", "--base", "mariadb-11.4.3")
	if code != exitOK || !strings.Contains(out, "Relative to: mariadb-11.4.3\ncol-1 : mariadb-10.11.6\ncol-2 : mariadb-10.11.6-ps\n") {
		t.Errorf("--base: exit %d\n%s", code, out)
	}
}

func TestReportCommandOutAndFormats(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"text", "markdown", "html", "csv", "json", "benchfmt"} {
		path := filepath.Join(dir, "report."+f)
		code, out, errs := runCLI(t, "report", reportFixtures, "--format", f, "--out", path, "--legacy-normalization")
		if code != exitOK || out != "" || !strings.Contains(errs, "wrote "+path) {
			t.Errorf("--format %s: exit %d, stdout %q, stderr %q", f, code, out, errs)
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) == 0 {
			t.Errorf("--format %s wrote nothing: %v", f, err)
		}
		if f == "json" {
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Errorf("JSON output: %v", err)
			}
		}
	}
}

func TestReportCommandCSVInput(t *testing.T) {
	code, out, errs := runCLI(t, "report", "../../testdata/csv/seeds/001.csv", "--tables", "threads", "--base", "in-5635.opt")
	if code != exitOK || !strings.Contains(out, "1 2 4 concurrency vs in-5635.opt at 1 thread\n- nuc.i3\n552 687 810 in-5635.opt\n563 678 752 in-5717.opt 1.02\n") {
		t.Errorf("exit %d, stderr %q\n%s", code, errs, out)
	}
}

func TestReportCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report"}, exitUsage, "no input"},
		{[]string{"report", reportFixtures, "--format", "pdf"}, exitUsage, `unknown --format "pdf"`},
		{[]string{"report", reportFixtures, "--tables", "rqps,nosuch"}, exitUsage, `unknown table "nosuch"`},
		{[]string{"report", reportFixtures, "--base", "9.9.9"}, exitUsage, `"9.9.9" is not one of`},
		{[]string{"report", "no/such/dir"}, exitFailure, "no/such/dir"},
		{[]string{"report", "../../go.mod"}, exitFailure, "go.mod"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q on one line", tc.args, code, errs, tc.code, tc.want)
		}
	}
}
