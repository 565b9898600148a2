//go:build unix

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/run/plan"
)

// plant makes path a symbolic link to a new file outside the output
// folder holding "victim", and returns the file.
func plant(t *testing.T, path string) string {
	t.Helper()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	return victim
}

// untouched fails the test when the file a planted link points to changed.
func untouched(t *testing.T, victim, what string) {
	t.Helper()
	if b, err := os.ReadFile(victim); err != nil || string(b) != "victim\n" {
		t.Errorf("%s: the link's target was written: %q, %v", what, b, err)
	}
}

// TestPlantedLockLink: a .perfbench.lock that is a symbolic link is refused
// with its path, and perfbench's pid does not reach the link's target.
func TestPlantedLockLink(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	link := filepath.Join(out, lockName)
	victim := plant(t, link)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing to run past the lock
	_, err := Run(ctx, parsePlan(t, twoStepPlan), Options{Out: out, Progress: &syncBuffer{}})
	if err == nil || !strings.Contains(err.Error(), link+" is a symbolic link") {
		t.Errorf("a run into a folder whose lock file is a link: %v; want a refusal naming %s", err, link)
	}
	untouched(t, victim, "lock")
}

// TestPlantedLogLink: a step's load log and a server's data marker that are
// symbolic links are refused with their paths, and nothing is written to
// their targets; a records/ folder that is a link is refused before the run
// writes into it.
func TestPlantedLogLink(t *testing.T) {
	out := t.TempDir()
	p := parsePlan(t, twoStepPlan)
	r := &runner{plan: p, opts: Options{Progress: &syncBuffer{}}, out: out, logDir: filepath.Join(out, "logs"), recDir: filepath.Join(out, "records")}
	it := plan.Item{Version: &p.Versions[0], Step: &p.Steps[2], Threads: 1, Repeat: 1}

	marker := filepath.Join(out, "servers", "a", markerName)
	victim := plant(t, marker)
	s := &server{r: r, v: &p.Versions[0], dir: filepath.Dir(marker)}
	if err := s.setMarker(true); err == nil || !strings.Contains(err.Error(), marker) {
		t.Errorf("a data marker that is a link: %v; want a refusal naming it", err)
	}
	untouched(t, victim, "data marker")

	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, r.recDir); err != nil {
		t.Fatal(err)
	}
	if err := r.prepare(nil); err == nil || !strings.Contains(err.Error(), r.recDir+" is a symbolic link") {
		t.Errorf("a records folder that is a link: %v; want a refusal naming %s", err, r.recDir)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("the records link's target got %d files", len(ents))
	}

	// Last: on a log it cannot refuse, the step goes on to a server the
	// test has not set up.
	logPath := r.logPath(it)
	victim = plant(t, logPath)
	sr := &stepRun{r: r, it: it, st: it.Step, cmd: plan.Command{Shown: []string{"sleep", "5"}}, logPath: logPath}
	rec := sr.run(context.Background())
	if rec == nil || !strings.Contains(rec.Error, logPath+" is a symbolic link") {
		t.Errorf("a step whose log is a link: %+v; want a failure naming %s", rec, logPath)
	}
	untouched(t, victim, "load log")
}
