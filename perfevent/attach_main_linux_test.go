package perfevent

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain fails the package's tests when they leave perf_event descriptors
// open: every attach, probe and failure path must close what it opened.
func TestMain(m *testing.M) {
	before := perfEventFDs("self")
	code := m.Run()
	if after := perfEventFDs("self"); code == 0 && after != before {
		fmt.Fprintf(os.Stderr, "FAIL: the tests leaked perf_event descriptors: %d open before, %d after\n", before, after)
		code = 1
	}
	if workloadPath != "" {
		os.RemoveAll(filepath.Dir(workloadPath))
	}
	os.Exit(code)
}
