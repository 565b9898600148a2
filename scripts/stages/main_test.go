package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestTree: no package of this tree imports one of a later stage, and
// every package is in a stage. go list reads the tree outside what go
// test's cache watches: scripts/test.sh runs it with -count=1.
func TestTree(t *testing.T) {
	var out bytes.Buffer
	n, err := run(&out, "../..")
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the tree breaks the stage order (see scripts/stages):\n%s", out.String())
	}
}

// TestCheck places packages by the longest path that holds them and names
// each import of a later stage; packages of other modules are left alone.
func TestCheck(t *testing.T) {
	const m = "example.com/m"
	imports := map[string][]string{
		m + "/internal/report":             {m + "/analysis", m + "/internal/run/runner", "fmt"},
		m + "/internal/run/runner":         {m + "/analysis", m + "/internal/measure"},
		m + "/analysis":                    {m + "/record", m + "/internal/run/runner"},
		m + "/mysqld/sandbox":              {m + "/internal/host/cpuset", m + "/internal/host/procfs"},
		m + "/internal/host/cpuset":        {m + "/internal/host/procfs", m + "/record"},
		m + "/internal/host/proc":          {m + "/internal/host/cpuset", m + "/internal/host/proc/proctest"},
		m + "/internal/host/proc/proctest": {m + "/internal/testenv", m + "/internal/host/proc"},
		m + "/perfevent/metric":            {m + "/perfevent"},
		m + "/perfevent":                   {m + "/internal/eventname", m + "/perfevent/metric"},
		m + "/newpkg":                      {m + "/record"},
		"other.org/x":                      {m + "/cmd/perfbench"},
	}
	later, unstaged := check(m, imports)
	want := []string{
		"analysis imports internal/run/runner: internal/run/runner (stage runner) is later than analysis (stage analysis)",
		"internal/host/cpuset imports record: record (stage record) is later than internal/host/cpuset (stage helpers)",
		"internal/host/proc imports internal/host/proc/proctest: internal/host/proc/proctest (stage tests) is later than internal/host/proc (stage helpers)",
		"perfevent/metric imports perfevent: perfevent (stage perfevent) is later than perfevent/metric (stage metric)",
	}
	if !reflect.DeepEqual(later, want) {
		t.Errorf("later:\n%q\nwant\n%q", later, want)
	}
	if !reflect.DeepEqual(unstaged, []string{"newpkg"}) {
		t.Errorf("unstaged %q, want newpkg", unstaged)
	}
}

// TestRunBadImport writes a module in which record imports analysis and
// runs the check on it with go list.
func TestRunBadImport(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":               "module example.com/m\n\ngo 1.21\n",
		"analysis/analysis.go": "package analysis\n",
		"record/record.go":     "package record\n",
		// Only on Windows: each system's imports count.
		"record/record_windows.go":  "package record\n\nimport _ \"example.com/m/analysis\"\n",
		"record/record_test.go":     "package record\n\nimport _ \"example.com/m/internal/report\"\n",
		"internal/report/report.go": "package report\n\nimport _ \"example.com/m/analysis\"\n",
	} {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	n, err := run(&out, root)
	if err != nil {
		t.Fatal(err)
	}
	// A test file's imports are not the package's.
	want := "record imports analysis: analysis (stage analysis) is later than record (stage record)\n" +
		"stages: 1 imports of a later stage, 0 packages in no stage\n"
	if n != 1 || out.String() != want {
		t.Errorf("%d found:\n%s\nwant 1:\n%s", n, out.String(), want)
	}
}
