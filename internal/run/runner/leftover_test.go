package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

// TestLeftoversOfEarlierRuns: the next run into an output folder finds what
// an earlier run left behind. The sysbench option file (the data password)
// of a perfbench killed by SIGKILL is removed and said to be; the folder of
// Records a full disk made a run keep is named again while records/ lacks
// some of them, and removed, and said to be, once records/ has them all.
func TestLeftoversOfEarlierRuns(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out := filepath.Join(t.TempDir(), "out")
	p := parsePlan(t, twoStepPlan)

	// The earlier run: the disk takes no Record.
	var progress syncBuffer
	early := &runner{plan: p, opts: Options{Progress: &progress}, out: out, recDir: filepath.Join(out, "records"),
		logDir: filepath.Join(out, "logs"), sum: &Summary{}}
	early.write = func(path string, rec *record.Record) error {
		if strings.HasPrefix(path, early.recDir) {
			return &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return record.Write(path, rec)
	}
	early.prog = newProgress(&progress, false, 0, nil, 0)
	var items []plan.Item
	for _, it := range p.Expand() {
		if it.Action == plan.ActionMeasure {
			items = append(items, it)
		}
	}
	rec := early.newRecord(items[0])
	rec.Outcome = record.OutcomeOK
	if err := early.finish(rec); err == nil || len(early.sum.Unwritten) != 1 || early.sum.Unwritten[0].Kept == "" {
		t.Fatalf("the earlier run: %v, %+v", err, early.sum.Unwritten)
	}
	kept := filepath.Dir(early.sum.Unwritten[0].Kept)

	// Its sysbench option file, left by SIGKILL.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skipf("no true(1) to leave a dead pid: %v", err)
	}
	options := filepath.Join(tmp, fmt.Sprintf("perfbench-sysbench-%d-789", c.Process.Pid))
	if err := os.Mkdir(options, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(options, "options.cfg"), []byte("mysql-password=secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The next run, with nothing to measure but the kept Record's.
	for _, it := range items[1:] {
		if err := record.Write(filepath.Join(early.recDir, recordName(it)+".json"), early.newRecord(it)); err != nil {
			t.Fatal(err)
		}
	}
	run := func() string {
		t.Helper()
		var said syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // a measurement left is not run
		Run(ctx, p, Options{Out: out, Resume: true, Progress: &said})
		return said.String()
	}
	said := run()
	if _, err := os.Stat(options); !errors.Is(err, os.ErrNotExist) || !strings.Contains(said, "removed "+options) {
		t.Errorf("the option file of a killed run: %v; the run said:\n%s", err, said)
	}
	if !strings.Contains(said, "1 Record of an earlier run that "+early.recDir+" could not take is kept in "+kept) {
		t.Errorf("the kept Records are not named again:\n%s", said)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("the kept Records went before records/ had them: %v", err)
	}

	// --resume measured it again: all of records/ is there.
	if err := record.Write(filepath.Join(early.recDir, recordName(items[0])+".json"), early.newRecord(items[0])); err != nil {
		t.Fatal(err)
	}
	said = run()
	if _, err := os.Stat(kept); !errors.Is(err, os.ErrNotExist) || !strings.Contains(said, "removed "+kept) {
		t.Errorf("the kept Records' folder: %v; the run said:\n%s", err, said)
	}
}
