package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

// TestReportRefusesReusedRepeat: a re-run Record kept beside the run it
// repeats (the same host, version, step, threads and repeat, another
// window) is refused, naming both files and what to do, whether it is in
// another folder or in a subfolder of the same one, as a CSV table's two
// values of one repeat are; it would count as a further repeat, which can
// turn ~ into a significant change. Two hosts of a hosts file that go by
// one host name give the same refusal.
func TestReportRefusesReusedRepeat(t *testing.T) {
	first := filepath.Join("..", "..", "testdata", "records", "mariadb-11.4.3__point-query_range=100__t1__r2.json")
	r, err := record.Read(first)
	if err != nil {
		t.Fatal(err)
	}
	r.Window.Start = r.Window.Start.Add(time.Hour)
	r.Window.End = r.Window.End.Add(time.Hour)
	r.Ops.Count *= 1.3
	rerun := filepath.Join(t.TempDir(), "rerun.json")
	if err := record.Write(rerun, r); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load([]string{filepath.Dir(first), rerun})
	if err == nil || !strings.Contains(err.Error(), first) || !strings.Contains(err.Error(), rerun) ||
		!strings.Contains(err.Error(), "both repeat 2 of mariadb-11.4.3 point-query_range=100 (threads 1, host bench1)") ||
		!strings.Contains(err.Error(), "Keep one of them") {
		t.Errorf("a re-run beside the first run: %v", err)
	}
	// In a subfolder of the Records' folder.
	dir := t.TempDir()
	copyRecords(t, filepath.Dir(first), dir)
	if err := os.MkdirAll(filepath.Join(dir, "again"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := record.Write(filepath.Join(dir, "again", filepath.Base(first)), r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load([]string{dir}); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "again")) {
		t.Errorf("a re-run in a subfolder: %v", err)
	}
}

// copyRecords copies the Record files of from into to.
func copyRecords(t *testing.T, from, to string) {
	t.Helper()
	files, err := record.Files(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReportRefusesMixedMachines: Records read from their files (as
// lean as any table reads them) still tell machines and server builds
// apart: a version whose repeats ran on two CPU models, or on two server
// builds, is refused whichever tables are asked for, not merged into one
// median.
func TestReportRefusesMixedMachines(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "records")
	for _, c := range []struct {
		name, want string
		edit       func(*record.Record)
	}{
		{"CPU models", `mixes machines (CPU models)`, func(r *record.Record) { r.Provenance.CPUModel = "Intel Xeon Gold 6430" }},
		{"server builds", `mixes server builds (server.version): "11.4.3-MariaDB" (repeats 1, 2), "11.8.1-MariaDB" (repeat 3)`, func(r *record.Record) {
			r.Server = &record.Server{Version: "11.8.1-MariaDB"}
		}},
	} {
		dir := t.TempDir()
		copyRecords(t, src, dir)
		path := filepath.Join(dir, "mariadb-11.4.3__point-query_range=100__t1__r3.json")
		r, err := record.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		c.edit(r)
		if err := record.Write(path, r); err != nil {
			t.Fatal(err)
		}
		if c.name == "server builds" {
			// The other repeats say their build too.
			for _, rep := range []string{"1", "2"} {
				p := filepath.Join(dir, "mariadb-11.4.3__point-query_range=100__t1__r"+rep+".json")
				o, err := record.Read(p)
				if err != nil {
					t.Fatal(err)
				}
				o.Server = &record.Server{Version: "11.4.3-MariaDB"}
				if err := record.Write(p, o); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, tables := range [][]string{nil, {"rqps"}, {"summary"}} {
			in, err := LoadInputWith([]string{dir}, FieldsFor(Options{Tables: tables}, false))
			if err != nil {
				t.Fatal(err)
			}
			err = Write(io.Discard, "text", in.Records, in.Warnings, Options{Tables: tables})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s with --tables %v: %v, want a refusal with %s", c.name, tables, err, c.want)
			}
		}
	}
}

// TestReportWarningAfterRoles: a warning that jq or Python put after a
// Record's roles and series (where a member they add goes) is printed
// by every --tables that shows the Record's numbers, as by the whole
// report, and an invalid one is refused by each; a misspelt member is
// named by each.
func TestReportWarningAfterRoles(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "records")
	for _, c := range []struct {
		name, member, want string
	}{
		{"a warning", `"warnings": [{"code": "busy", "text": "edited in after the series"}]`, "edited in after the series"},
		{"an invalid warning", `"warnings": [{"code": "nope", "text": "x"}]`, ""},
		{"a misspelt member", `"opps": {"source": "Questions", "count": 5}`, `"opps", which is not a Record member`},
	} {
		dir := t.TempDir()
		copyRecords(t, src, dir)
		// Written now: provenance before the status, roles and series.
		path := filepath.Join(dir, "mariadb-11.4.3__point-query_range=100__t1__r2.json")
		r, err := record.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		r.Roles = []record.Role{{Name: "connection", Threads: 1, Counters: r.Counters}}
		r.Series = []record.Point{{T: 1, Seconds: 1, Ops: 3}}
		data, err := record.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		end := bytes.LastIndexByte(data, '}')
		data = append(append(data[:end:end], ", "+c.member...), "}\n"...)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tables := range [][]string{nil, {"rqps"}, {"summary"}, {"qps"}} {
			in, err := LoadInputWith([]string{dir}, FieldsFor(Options{Tables: tables}, false))
			if c.want == "" {
				if err == nil || !strings.Contains(err.Error(), `unknown code "nope"`) {
					t.Errorf("%s with --tables %v: %v, want a refusal", c.name, tables, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Write(&out, "text", in.Records, in.Warnings, Options{Tables: tables}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("%s with --tables %v: the report does not say %q", c.name, tables, c.want)
			}
		}
	}
}
