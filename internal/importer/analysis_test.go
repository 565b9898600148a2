package importer_test

import (
	"path/filepath"
	"testing"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/importer"
)

// An event perf printed as <not supported> reaches the analysis as not
// supported: its per-op value and the ratios built on it are not numbers.
func TestImportedNotSupportedIsNotARatio(t *testing.T) {
	res := importer.PerfStat([]string{filepath.Join("..", "..", "testdata", "perfstat", "default.txt")},
		importer.Options{Version: "v", Step: "point-query_range=100", Ops: 1000})
	if len(res.Records) != 1 {
		t.Fatalf("%d records, failures %v", len(res.Records), res.Failures)
	}
	cmp, err := analysis.New(res.Records, "v", analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := analysis.Key(cmp.Scopes[0], "v", res.Records[0].Step)
	for _, m := range []string{analysis.PerOpName("cycles"), analysis.PerOpName("instructions"), analysis.IPC} {
		if c := cmp.Value(k, m); c.OK() || c.State != analysis.NotSupported {
			t.Errorf("%s: state %v value %v, want not supported", m, c.State, c.Value)
		}
	}
	// 67687 context switches over 1000 ops.
	if c := cmp.Value(k, analysis.PerOpName("context-switches")); !c.OK() || c.Value != 67.687 {
		t.Errorf("context-switches/o: %+v", c)
	}
}
