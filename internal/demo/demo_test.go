package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/run/runner"
)

func TestRunRefusesEarlierRecords(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "records"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "records", "a.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	_, err := Run(context.Background(), Options{Out: out, Progress: &log})
	if !errors.Is(err, errOutputExists) || !strings.Contains(err.Error(), "rm -rf "+out) {
		t.Errorf("err = %v, want ErrOutputExists saying how to remove it", err)
	}
	if log.Len() != 0 {
		t.Errorf("did something before refusing: %q", log.String())
	}
}

func TestWriteReport(t *testing.T) {
	// Records of two MariaDB versions from the shared fixtures.
	var src []string
	for _, v := range []string{"mariadb-10.11.6", "mariadb-11.4.3"} {
		m, err := filepath.Glob("../../testdata/records/" + v + "__point-query_range=100__t1__r*.json")
		if err != nil || len(m) != 3 {
			t.Fatalf("fixtures of %s: %d files, %v", v, len(m), err)
		}
		src = append(src, m...)
	}
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "records"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range src {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "records", filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, charts, rqps, err := writeReport(out, "mariadb-10.11.6")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(reportFiles) {
		t.Errorf("wrote %q", files)
	}
	for _, f := range reportFiles {
		st, err := os.Stat(filepath.Join(out, f.name))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f.name, err)
		}
	}
	if !bytes.Contains(rqps, []byte("Relative to: mariadb-10.11.6")) || bytes.Contains(rqps, []byte("Relative to: mariadb-11")) {
		t.Errorf("rQPS table against the wrong base:\n%s", rqps)
	}
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !bytes.HasPrefix(bytes.TrimSpace(html), []byte("<!DOCTYPE html>")) || bytes.Contains(html, []byte("<script")) || bytes.Contains(html, []byte("http://")) {
		t.Errorf("report.html is not a self-contained page")
	}
	kinds := map[string]int{}
	for _, c := range charts {
		kinds[strings.SplitN(filepath.Base(c), "_", 2)[0]+filepath.Ext(c)]++
	}
	for _, k := range []string{"rqps.svg", "rqps.png", "heatmap.svg", "heatmap.png", "series.svg", "series.png"} {
		if kinds[k] == 0 {
			t.Errorf("no %s chart among %q", k, charts)
		}
	}
}

func TestGuide(t *testing.T) {
	r := &Result{Out: "/o", Plan: "/o/plan.toml", Summary: &runner.Summary{Files: []string{"a", "b"}},
		Reports: []string{"/o/report.txt", "/o/report.html"}, Charts: []string{"/o/charts/rqps_vm_t1.svg"}}
	var b bytes.Buffer
	r.Guide(&b)
	for _, s := range []string{
		"everything is in /o",
		"perfbench run /o/plan.toml --out DIR",
		"records/           2 Records",
		"report.txt         every table in the layout of published posts",
		"report.html        the same tables as one self-contained HTML page",
		"charts/            1 files",
		"perfbench report /o/records --format text",
		"scripts/check-html.sh /o",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("guide lacks %q:\n%s", s, b.String())
		}
	}
	if strings.Contains(b.String(), "data directory") {
		t.Errorf("guide mentions data directories that were removed:\n%s", b.String())
	}
	r.DataKept = true
	b.Reset()
	r.Guide(&b)
	if !strings.Contains(b.String(), "remove the data when done: rm -rf /o/servers") {
		t.Errorf("guide does not say the data is kept:\n%s", b.String())
	}
}
