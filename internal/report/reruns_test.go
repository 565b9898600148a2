package report

import (
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
