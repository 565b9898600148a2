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
	if code != exitOK || !strings.Contains(out, "1 2 4 concurrency vs in-5635.opt at 1 thread\n- nuc.i3\n552 687 810 "+
		"in-5635.opt\n563 678 752 in-5717.opt 1.02\n") {
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

// The same folder given twice prints what it prints once, plus one
// warning line; stderr says it too.
func TestReportCommandSameFolderTwice(t *testing.T) {
	code, once, _ := runCLI(t, "report", reportFixtures)
	code2, twice, errs := runCLI(t, "report", reportFixtures, reportFixtures)
	if code != exitOK || code2 != exitOK {
		t.Fatalf("exit %d, %d", code, code2)
	}
	note := "- 23 Records in " + reportFixtures + " repeat those read from " + reportFixtures
	at := strings.Index(twice, note)
	if at < 0 {
		t.Fatalf("no note on the Records read twice:\n%s", twice)
	}
	end := at + strings.Index(twice[at:], "\n") + 1
	if twice[:at]+twice[end:] != once {
		t.Errorf("DIR DIR without its note differs from DIR")
	}
	if !strings.Contains(errs, "warning: 23 Records in") {
		t.Errorf("stderr %q", errs)
	}
}

// --bare prints the tables alone on stdout and the notes on stderr or in
// --notes FILE; --label and --order and --compare shape the layout.
func TestReportCommandLayoutFlags(t *testing.T) {
	seed := "../../testdata/csv/seeds/001.csv"
	code, out, errs := runCLI(t, "report", seed, "--tables", "threads", "--bare", "--base", "in-5635.opt",
		"--label", "in-5635.opt=5.6.35", "--compare", "in-5717.opt,in-801.opt.latin1sw")
	if code != exitOK || !strings.HasPrefix(out, "update-index\n1 2 4 concurrency vs 5.6.35 at 1 thread\n- nuc.i3\n552 687 "+
		"810 in-5635.opt\n563 678 752 in-5717.opt 1.02\n557 666 781 in-801.opt\n") {
		t.Errorf("bare threads table: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "Notes") || !strings.Contains(errs, "QPS by thread count:\n- ") {
		t.Errorf("notes on stdout or not on stderr:\nstdout %s\nstderr %s", out, errs)
	}
	notes := filepath.Join(t.TempDir(), "notes.txt")
	code, _, errs = runCLI(t, "report", seed, "--tables", "threads", "--bare", "--notes", notes)
	b, err := os.ReadFile(notes)
	if code != exitOK || err != nil || !strings.Contains(string(b), "QPS by thread count:") || strings.Contains(errs, "QPS by thread count") {
		t.Errorf("--notes: exit %d, %v, file %q, stderr %q", code, err, b, errs)
	}
	// CSV rows in file order by default, by group and name with --order.
	code, out, _ = runCLI(t, "report", seed, "--tables", "rqps", "--order", "name", "--base", "in-5635.opt")
	if code != exitOK || strings.Index(out, "point-query") > strings.Index(out, "update-index") {
		t.Errorf("--order name: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--order", "time"}, `unknown --order "time"`},
		{[]string{"--label", "in-5635.opt"}, "want VERSION=LABEL"},
		{[]string{"--label", "9.9=x"}, `"9.9" is not one of the versions`},
		{[]string{"--label", "in-5635.opt=a", "--label", "in-5717.opt=a"}, `both labelled "a"`},
		{[]string{"--compare", "9.9"}, `unknown version "9.9"`},
		{[]string{"--notes", notes}, "--notes goes with --bare"},
	} {
		code, _, errs := runCLI(t, append([]string{"report", seed}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want a usage error with %q", tc.args, code, errs, tc.want)
		}
	}
}

// A CSV with a metric the report does not know is refused in one line
// naming the file, the line and the nearest names.
func TestReportCommandUnknownMetric(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte("version,step,threads,metric,value\nb,s,1,qsp,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "report", path)
	if code != exitFailure || out != "" || !strings.Contains(errs, path+` line 2: unknown metric "qsp"; nearest: qps`) || strings.Count(errs, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestReportRefusesOwnInput: --out (or --notes) naming one of the report's
// inputs, a Record given, a Record in a folder given (also through a hard
// link) or a CSV table, is refused on one line that says how to fix it, and
// the input is kept as it was.
func TestReportRefusesOwnInput(t *testing.T) {
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(reportFixtures, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures: %v, %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := filepath.Join(dir, filepath.Base(files[0]))
	linked := filepath.Join(t.TempDir(), "report.json")
	if err := os.Link(rec, linked); err != nil {
		t.Fatal(err)
	}
	csvIn := filepath.Join(t.TempDir(), "table.csv")
	b, err := os.ReadFile("../../testdata/csv/seeds/001.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvIn, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, f := range []string{rec, csvIn} {
		before[f], _ = os.ReadFile(f)
	}
	for _, args := range [][]string{
		{"report", rec, "--out", rec},
		{"report", dir, "--out", rec, "--format", "json"},
		{"report", dir, "--out", linked},
		{"report", csvIn, "--out", csvIn, "--format", "csv"},
		{"report", dir, "--bare", "--notes", rec},
	} {
		code, _, errs := runCLI(t, args...)
		if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "which the report would replace") ||
			!strings.Contains(errs, "give --") {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and one line refusing the input as output", args, code, errs, exitUsage)
		}
		for f, b := range before {
			if got, err := os.ReadFile(f); err != nil || string(got) != string(b) {
				t.Fatalf("%q: the input %s changed (%d bytes, was %d; %v)", args, f, len(got), len(b), err)
			}
		}
	}
}
