package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/internal/load/sysbench"
	"github.com/perfbench/perfbench/internal/report"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

// TestRecordsNotWritten: Records the output folder cannot take (a disk that
// fills up) are not counted ok, are kept in a temporary folder, named in the
// summary, and make the run fail with ErrRecordsNotWritten.
func TestRecordsNotWritten(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	out := t.TempDir()
	var progress bytes.Buffer
	r := &runner{
		plan:   &plan.Plan{Base: "a", File: "p.toml"},
		opts:   Options{Progress: &progress},
		out:    out,
		recDir: filepath.Join(out, "records"),
		logDir: filepath.Join(out, "logs"),
		sum:    &Summary{},
	}
	// The folder takes one Record; then the disk is full.
	writes := 0
	r.write = func(path string, rec *record.Record) error {
		if strings.HasPrefix(path, r.recDir) {
			if writes++; writes > 1 {
				return fmt.Errorf("write %s: %w", path, &fs.PathError{Op: "write", Path: path + ".tmp1", Err: syscall.ENOSPC})
			}
		}
		return record.Write(path, rec)
	}
	r.prog = newProgress(&progress, false, 0, nil, 0)
	var errs []error
	for i, outcome := range []record.Outcome{record.OutcomeOK, record.OutcomeOK, record.OutcomeFailed} {
		rec := record.New(record.KindStep)
		rec.Version, rec.Step, rec.Threads, rec.Repeat = "a", "point-query_range=100", 1, i+1
		rec.Outcome = outcome
		if outcome == record.OutcomeFailed {
			rec.Error = "sysbench ended with exit status 1"
		}
		errs = append(errs, r.finish(rec))
	}
	s := r.sum
	if s.Ran != 3 || s.OK != 1 || s.Failed != 0 || len(s.Files) != 1 || len(s.Unwritten) != 2 {
		t.Fatalf("summary %+v: want 3 ran, 1 ok, 2 not written", s)
	}
	if errs[0] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "no space left on device; kept in ") {
		t.Errorf("finish errors %v", errs)
	}
	for _, u := range s.Unwritten {
		kept, err := record.Read(u.Kept)
		if err != nil || plan.RecordID(kept) != u.ID {
			t.Errorf("%s: kept Record %s: %v", u.ID, u.Kept, err)
		}
		if _, err := os.Stat(u.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %s exists", u.ID, u.Path)
		}
	}
	if s.Unwritten[1].Outcome != record.OutcomeFailed {
		t.Errorf("the failed measurement's outcome is lost: %+v", s.Unwritten[1])
	}
	err := r.result(false, 3)
	if !errors.Is(err, ErrRecordsNotWritten) || !strings.Contains(err.Error(), "2 of 3 measurements have no Record") ||
		!strings.Contains(err.Error(), "(no space left on device)") {
		t.Errorf("result: %v", err)
	}
	progress.Reset()
	r.summary(false)
	said := progress.String()
	for _, want := range []string{
		": 3 measurements: 1 ok, 0 failed, 0 partial, 2 not written\n",
		"perfbench run: not written: a/point-query_range=100/t1/r2 (ok): write " + filepath.Join(r.recDir, "a__point-query_range=100__t1__r2.json") + ": ",
		"perfbench run: not written: a/point-query_range=100/t1/r3 (failed): ",
		"--resume",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("the summary lacks %q:\n%s", want, said)
		}
	}
}

// absentServerPlan is a plan of two steps on a server that is not there, with
// its output folder and the folder's empty records/.
func absentServerPlan(t *testing.T) (p *plan.Plan, out, recDir string) {
	t.Helper()
	p = parsePlan(t, `
[run]
warmup = "1s"
duration = "2s"
[data]
load = false
[steps]
list = ["point-query", "read-only_range=100"]
[[version]]
label = "a"
socket = "/nonexistent/perfbench-test.sock"
`)
	out = t.TempDir()
	recDir = filepath.Join(out, "records")
	if err := os.MkdirAll(recDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return p, out, recDir
}

// resuming is a runner of p with --resume into out, not started.
func resuming(p *plan.Plan, out string, progress *syncBuffer) *runner {
	r := &runner{plan: p, opts: Options{Resume: true, Progress: progress}, recDir: filepath.Join(out, "records"),
		logDir: filepath.Join(out, "logs"), profDir: filepath.Join(out, "profiles"), sum: &Summary{}}
	r.prog = newProgress(progress, false, 0, nil, 0)
	return r
}

// TestUnreadableRecords: files at a measurement's Record path that are not
// its Record (a newer schema, a truncated file) are not replaced without
// --resume: the run refuses, naming the file and why; with --resume they
// are moved to records/.replaced/ when their measurement runs again.
func TestUnreadableRecords(t *testing.T) {
	p, out, recDir := absentServerPlan(t)
	future := []byte(`{"schema":7,"kind":"step","outcome":"ok","version":"a","step":"point-query_range=100","threads":1,"repeat":1}` + "\n")
	truncated := []byte(`{"schema":1,"kind":"step","outcome":"ok","version":"a","step":"read-only_range=100","thr`)
	files := map[string][]byte{
		filepath.Join(recDir, "a__point-query_range=100__t1__r1.json"): future,
		filepath.Join(recDir, "a__read-only_range=100__t1__r1.json"):   truncated,
	}
	for f, b := range files {
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var progress syncBuffer
	_, err := Run(context.Background(), p, Options{Out: out, Progress: &progress})
	if !errors.Is(err, errRecordsExist) || !strings.Contains(err.Error(), "a__point-query_range=100__t1__r1.json (record schema 7 is newer") ||
		!strings.Contains(err.Error(), "(and 1 more)") || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("run without --resume: %v", err)
	}
	for f, b := range files {
		if got, err := os.ReadFile(f); err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s was changed: %q, %v", f, got, err)
		}
	}

	// With --resume they are set aside when their measurement runs.
	progress = syncBuffer{}
	r := resuming(p, out, &progress)
	items, err := r.schedule()
	if err != nil || plan.Measurements(items) != 2 || len(r.unreadable) != 2 {
		t.Fatalf("schedule with --resume: %d measurements, %d unreadable, %v", plan.Measurements(items), len(r.unreadable), err)
	}
	if n := strings.Count(progress.String(), "is not the Record of its measurement: it moves to records/.replaced/"); n != 2 {
		t.Errorf("said %d times that a file moves aside, want 2:\n%s", n, progress.String())
	}
	for _, it := range items {
		if it.Action == plan.ActionMeasure {
			r.setAside(it)
		}
	}
	kept, _ := filepath.Glob(filepath.Join(recDir, ".replaced", "*.json"))
	if len(kept) != 2 {
		t.Fatalf("kept %v, want both files", kept)
	}
	for _, k := range kept {
		b, _ := os.ReadFile(k)
		if !bytes.Equal(b, future) && !bytes.Equal(b, truncated) {
			t.Errorf("%s holds %q", k, b)
		}
	}
}

// TestResumeSchema1: --resume takes the schema-1 Records of an earlier
// perfbench as they are: an ok one counts as done and stays untouched, a
// failed one is measured again and kept, byte for byte, in
// records/.replaced/; neither is rewritten in schema 2.
func TestResumeSchema1(t *testing.T) {
	p, out, recDir := absentServerPlan(t)
	ok := []byte(`{"schema":1,"kind":"step","outcome":"ok","host":"h","version":"a","step":"point-query_range=100","threads":1,"repeat":1,` +
		`"ops":{"source":"Questions","count":1000,"per":1},"warnings":["cpu-cycles was multiplexed: counted 50.0% of the time, value scaled"]}` + "\n")
	failed := []byte(`{"schema":1,"kind":"step","outcome":"failed","error":"server ` +
		`gone","host":"h","version":"a","step":"read-only_range=100","threads":1,"repeat":1}` + "\n")
	okPath := filepath.Join(recDir, "a__point-query_range=100__t1__r1.json")
	failedPath := filepath.Join(recDir, "a__read-only_range=100__t1__r1.json")
	for f, b := range map[string][]byte{okPath: ok, failedPath: failed} {
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var progress syncBuffer
	r := resuming(p, out, &progress)
	items, err := r.schedule()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		if it.Action == plan.ActionMeasure {
			ids = append(ids, it.ID)
			r.setAside(it)
		}
	}
	if len(ids) != 1 || !strings.Contains(ids[0], "read-only") || len(r.sum.Skipped) != 1 || len(r.unreadable) != 0 {
		t.Fatalf("to measure %q, skipped %q, unreadable %v:\n%s", ids, r.sum.Skipped, r.unreadable, progress.String())
	}
	if b, err := os.ReadFile(okPath); err != nil || !bytes.Equal(b, ok) {
		t.Errorf("the ok schema-1 Record was changed: %q, %v", b, err)
	}
	kept, _ := filepath.Glob(filepath.Join(recDir, ".replaced", "a__read-only_range=100__t1__r1.*.json"))
	if len(kept) != 1 {
		t.Fatalf("kept %v, want the failed Record", kept)
	}
	if b, _ := os.ReadFile(kept[0]); !bytes.Equal(b, failed) {
		t.Errorf("the failed schema-1 Record was kept as %q", b)
	}
}

// checkpointPlan has the custom step of the plan's documentation: a
// checkpoint, a write step though its name says point.
const checkpointPlan = `
[steps]
list = ["point-query", "update-index", "checkpoint", "scan"]
[[steps.custom]]
name = "checkpoint"
command = ["sh", "-c", "sleep {time}"]
group = "writes"
[[version]]
label = "a"
socket = "/s"
`

// TestRecordGroup: a Record carries its step's group, the plan's when it
// gives one (the checkpoint step of the plan's documentation is a write
// step, though its name says nothing), else the suite's.
func TestRecordGroup(t *testing.T) {
	p := parsePlan(t, checkpointPlan)
	r := &runner{plan: p}
	got := map[string]string{}
	for _, it := range p.Expand() {
		if it.Action == plan.ActionMeasure {
			rec := record.New(record.KindStep)
			r.identity(it).Apply(rec)
			got[rec.Step] = rec.Group
		}
	}
	want := map[string]string{"point-query_range=100": "point", "update-index_range=100": "writes", "checkpoint": "writes", "scan_range=100": "range"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
}

// TestRecordGroupReported: the checkpoint step the plan puts in the
// writes group is reported under writes. Its Record, identified as the
// runner identifies it and read back from its file, is a row of the
// writes block: in text ordered by name, after the range step and before
// update-index (by its name it would lead the point block); in Markdown,
// under the writes heading.
func TestRecordGroupReported(t *testing.T) {
	p := parsePlan(t, checkpointPlan)
	r := &runner{plan: p}
	dir := t.TempDir()
	for _, it := range p.Expand() {
		if it.Action != plan.ActionMeasure {
			continue
		}
		rec := record.New(record.KindStep)
		r.identity(it).Apply(rec)
		rec.Window.Seconds = 10
		rec.Ops = record.Ops{Source: suite.OpsQuestions, Count: 1000, Per: 1, Counted: true}
		if err := record.Write(filepath.Join(dir, record.FileName(rec)), rec); err != nil {
			t.Fatal(err)
		}
	}
	in, err := report.LoadInputWith([]string{dir}, report.FieldsFor(report.Options{Tables: []string{"qps"}}, false))
	if err != nil {
		t.Fatal(err)
	}
	render := func(format, order string) string {
		var b bytes.Buffer
		opt := report.Options{Tables: []string{"qps"}, Analysis: analysis.Options{Order: order}}
		if err := report.Write(&b, format, in.Records, in.Warnings, opt); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	text := render("text", "name")
	var rows []string
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "100" {
			rows = append(rows, f[1])
		}
	}
	if want := []string{"point-query_range=100", "scan_range=100", "checkpoint", "update-index_range=100"}; !reflect.DeepEqual(rows, want) {
		t.Errorf("text rows by name %q, want %q (point, range, writes)\n%s", rows, want, text)
	}
	md := render("markdown", analysis.OrderRun)
	heading, found := "", false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| **") {
			heading = strings.Trim(strings.Fields(line)[1], "*")
		}
		if found = strings.HasPrefix(line, "| checkpoint "); found {
			break
		}
	}
	if !found || heading != "writes" {
		t.Errorf("checkpoint is under heading %q in Markdown, want writes\n%s", heading, md)
	}
}

// TestStepCommandSecrets: a suite step's sysbench, and a custom step's
// {sysbench_options}, get the plan's password in a private option file,
// removed afterwards, never on a command line;
// a custom step's shell script gets it in its environment, and its command
// line as logs and Records show it has none of it.
func TestStepCommandSecrets(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const pw = `s3cr"t, $(touch x)`
	p := parsePlan(t, `
[data]
password = 's3cr"t, $(touch x)'
[steps]
list = ["point-query", "mine", "sb"]
[[steps.custom]]
name = "mine"
command = ["sh", "-c", "mariadb -u{user} -p'{password}' -e 'select 1'; sleep {time}"]
[[steps.custom]]
name = "sb"
command = ["sysbench", "--config-file={sysbench_options}", "oltp_point_select", "run"]
[[version]]
label = "a"
socket = "/s"
`)
	r := &runner{plan: p, scripts: "/lua", tail: time.Second, out: "/o"}
	s := &server{r: r, v: &p.Versions[0], conn: suite.Options{Host: "127.0.0.1", Port: 3306}}
	for _, it := range p.Expand() {
		if it.Action != plan.ActionMeasure {
			continue
		}
		cmd, remove, err := r.stepCommand(s, it, r.tail)
		if err != nil {
			t.Fatalf("%s: %v", it.ID, err)
		}
		for _, a := range append(append([]string(nil), cmd.Argv...), cmd.Shown...) {
			if strings.Contains(a, "cr\"t") {
				t.Errorf("%s: the password is on the command line: %q", it.ID, a)
			}
		}
		if it.Step.Suite != nil || it.Step.Label == "sb" {
			cfg := ""
			for _, a := range cmd.Argv {
				if v, ok := strings.CutPrefix(a, "--config-file="); ok {
					cfg = v
				}
			}
			fi, err := os.Stat(cfg)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("%s: option file %q: %v %v", it.ID, cfg, fi, err)
			}
			if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), pw) {
				t.Errorf("%s: the option file holds %q", it.ID, b)
			}
			remove()
			if _, err := os.Stat(cfg); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: the option file stays: %v", it.ID, err)
			}
			continue
		}
		if !slices.Contains(cmd.Env, "PERFBENCH_PASSWORD="+pw) || !strings.Contains(cmd.Shown[2], "-p'***'") || !strings.Contains(cmd.Shown[2], "-usbtest") {
			t.Errorf("custom step: env %q, shown %q", cmd.Env, cmd.Shown)
		}
		remove()
	}
}

// TestLoadRefusedHint: a load the server refused names the plan's keys of
// the load's account.
func TestLoadRefusedHint(t *testing.T) {
	res := &sysbench.Result{Fatal: []string{"FATAL: unable to connect to MySQL server on host '127.0.0.1', port 3306, aborting...",
		"FATAL: error 1045: Access denied for user 'sbtest'@'localhost' (using password: YES)"}}
	got := loadDetail(res, "/o/logs/x.txt")
	if !strings.Contains(got, "(using password: YES) (the load's account was refused: check data.user and data.password of the plan) (output in /o/logs/x.txt)") {
		t.Errorf("detail %q", got)
	}
	res.Fatal = []string{"FATAL: error 2013: Lost connection to server during query"}
	if got := loadDetail(res, "/o/logs/x.txt"); strings.Contains(got, "data.password") {
		t.Errorf("another failure blames the password: %q", got)
	}
}
