package profdiff

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/profile/pprofout"
	"github.com/perfbench/perfbench/internal/profile/symbols"
	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/mysqld/sandbox"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

func questions(t *testing.T, srv *sandbox.Server) float64 {
	t.Helper()
	db, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name string
	var v float64
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// measure runs oltp_point_select on srv and samples one window of it,
// writing a Record of version v with its profile under dir.
func measure(t *testing.T, srv *sandbox.Server, res *symbols.Resolver, dir, v string) {
	t.Helper()
	tb := testdb.Table{Tables: 1, Size: 2000}
	testdb.PrepareSysbench(t, srv, tb)
	ctx, cancel := context.WithCancel(context.Background())
	load := testdb.SysbenchCommand(ctx, srv, "oltp_point_select", tb, "--threads=2", "--time=300", "run")
	if err := load.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() { cancel(); load.Wait() }()
	testdb.WaitStatus(t, srv, "Handler_read_key", 100) // connected and running
	q0 := questions(t, srv)
	w, err := pprofout.Start(srv.Pid, perfevent.SampleOptions{Freq: 999})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the window, 2 s of samples
	ops := questions(t, srv) - q0
	sub := filepath.Join(dir, v)
	prof := filepath.Join(sub, "profile.pb.gz")
	out, err := w.Finish(prof, pprofout.Options{Ops: ops, OpsSource: "Questions", Version: v, Step: "point-query", Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(sub, "point-query.json")
	rel, err := pprofout.RelPath(recPath, prof)
	if err != nil {
		t.Fatal(err)
	}
	r := &record.Record{Schema: record.SchemaVersion, Kind: record.KindStep, Outcome: record.OutcomeOK, Version: v, Step: "point-query",
		Ops: record.Ops{Source: "Questions", Count: ops}, Profile: rel}
	for _, w := range out.Warnings {
		r.Warnf(record.WarnGeneral, "%s", w)
	}
	if err := record.Write(recPath, r); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d samples, %.0f ops", v, out.Samples, ops)
}

// TestReportTwoConfigurations profiles two configurations of a sandbox
// MariaDB (performance_schema off, the base, and on) under
// oltp_point_select, and reports on their Records: per-step differences and
// a differential flame graph.
func TestReportTwoConfigurations(t *testing.T) {
	testenv.NeedRoot(t, "CPU-wide sampling")
	off := testdb.New(t, testdb.Options{Options: []string{"--performance-schema=OFF"}})
	on := testdb.Shared(t)
	dir := t.TempDir()
	res := symbols.NewResolver("/")
	measure(t, off, res, dir, "pfs-off")
	measure(t, on, res, dir, "pfs-on")

	in, notes, err := Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 2 || len(notes) != 0 {
		t.Fatalf("%d inputs, notes %q", len(in), notes)
	}
	c, err := Compare(in, Options{Base: "pfs-off", Top: 20})
	if err != nil {
		t.Fatal(err)
	}
	st := c.Steps[0]
	if !st.PerOp || st.Versions["pfs-off"] == nil || st.Versions["pfs-on"] == nil {
		t.Fatalf("step %s: per op %v, versions %v", st.Name, st.PerOp, st.Versions)
	}
	grew, b, v := c.Diff(st, "pfs-on", 20)
	if len(grew) == 0 || b <= 0 || v <= 0 {
		t.Fatalf("no differences: %v samples/kop vs %v", v, b)
	}
	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "pfs-on vs pfs-off:") {
		t.Errorf("report:\n%s", text.String())
	}
	t.Logf("report:\n%s", text.String())
	files, err := c.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var diff []byte
	for _, f := range files {
		if strings.HasSuffix(f, "diff-pfs-on-vs-pfs-off.svg") {
			diff, _ = os.ReadFile(f)
		}
	}
	fills := frames(t, diff)
	var red, named int
	for name, fill := range fills {
		if strings.HasPrefix(fill, "rgb(255,") && fill != "rgb(255,255,255)" {
			red++
		}
		if name == "do_command" || name == "dispatch_command" {
			named++
		}
	}
	if named != 2 || red == 0 {
		t.Errorf("differential flame graph: %d frames, %d red, server functions found %d of 2", len(fills), red, named)
	}
}
