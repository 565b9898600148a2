package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

func TestProfileUsage(t *testing.T) {
	for _, args := range [][]string{
		{"profile"},
		{"profile", "--pid", "1"},
		{"profile", "--pid", "1", "--output", "x", "some.json"},
		{"profile", "--pid", "1", "--output", "x", "--freq", "0"},
		{"profile", "--top", "0", "x.json"},
	} {
		code, out, errs := runCLI(t, args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "perfbench profile:") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// writeStepRecord writes a Record of version v with a profile of the given
// leaf function counts under main.
func writeStepRecord(t *testing.T, dir, v string, ops float64, leaves map[string]int64) {
	t.Helper()
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	mainFn := &profile.Function{ID: 1, Name: "main"}
	mainLoc := &profile.Location{ID: 1, Line: []profile.Line{{Function: mainFn}}}
	p.Function, p.Location = []*profile.Function{mainFn}, []*profile.Location{mainLoc}
	names := make([]string, 0, len(leaves))
	for n := range leaves {
		names = append(names, n)
	}
	for i, n := range names {
		f := &profile.Function{ID: uint64(i + 2), Name: n}
		l := &profile.Location{ID: uint64(i + 2), Line: []profile.Line{{Function: f}}}
		p.Function, p.Location = append(p.Function, f), append(p.Location, l)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l, mainLoc}, Value: []int64{leaves[n], leaves[n] * 1e6}})
	}
	sub := filepath.Join(dir, v)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(sub, "profile.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := &record.Record{Schema: record.SchemaVersion, Kind: record.KindStep, Outcome: record.OutcomeOK, Version: v, Step: "point-query", Ops: record.Ops{Source: "Questions", Count: ops, Counted: true}, Profile: "profile.pb.gz"}
	if err := record.Write(filepath.Join(sub, "point-query.json"), r); err != nil {
		t.Fatal(err)
	}
}

func TestProfileReport(t *testing.T) {
	dir := t.TempDir()
	writeStepRecord(t, dir, "a", 1000, map[string]int64{"parse": 10, "execute": 30})
	writeStepRecord(t, dir, "b", 1000, map[string]int64{"parse": 10, "execute": 45})
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "profile", "--base", "a", "--out", out, dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// execute: 30 → 45 samples per 1,000 ops.
	if !strings.Contains(stdout, "b vs a: 55.000 vs 40.000 samples/kop (+37.5%)") || !strings.Contains(stdout,
		"+15.000     30.000     45.000    +15.000  execute") {
		t.Errorf("report:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "point-query", "diff-b-vs-a.svg")); err != nil {
		t.Errorf("no differential flame graph: %v (stderr %s)", err, stderr)
	}
	if code, _, stderr := runCLI(t, "profile", "--base", "c", dir); code != exitUsage || !strings.Contains(stderr, `base version "c"`) {
		t.Errorf("unknown base: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "profile", t.TempDir()); code != exitFailure || !strings.Contains(stderr, "no profiles") {
		t.Errorf("empty folder: exit %d, %s", code, stderr)
	}
}

// TestProfileSampleProcess samples a busy child process and writes a
// profile pprof reads.
func TestProfileSampleProcess(t *testing.T) {
	needLinux(t)
	testenv.NeedRoot(t, "CPU-wide sampling")
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	code, _, stderr := runCLI(t, "profile", "--pid", strconv.Itoa(cmd.Process.Pid), "--duration", "300ms", "--freq", "499",
		"--output", path, "--label", "sh", "--step", "spin")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	p := readProfile(t, path)
	if len(p.Sample) == 0 || !strings.Contains(strings.Join(p.Comments, "\n"), "perfbench.version=sh") {
		t.Errorf("%d samples, comments %q; stderr %s", len(p.Sample), p.Comments, stderr)
	}
	// No server: no roles, but every sample names its thread (sh's only
	// thread is called sh), and stderr counts them so.
	for _, s := range p.Sample {
		if s.Label["role"][0] != "unattributed" || len(s.Label["comm"]) != 1 || s.Label["comm"][0] != "sh" {
			t.Errorf("sample labels %v", s.Label)
			break
		}
	}
	if !strings.Contains(stderr, "samples by thread name (no roles without a server connection): sh ") {
		t.Errorf("stderr lacks the samples by thread name: %s", stderr)
	}
}
