package main

import (
	"strings"
	"testing"
)

func TestDemoUsage(t *testing.T) {
	code, out, errs := runCLI(t, "demo", "now")
	if code != exitUsage || out != "" || !strings.Contains(errs, `perfbench demo: unexpected argument "now"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "demo", "--help")
	if code != exitOK || !strings.Contains(out, "--quick") || !strings.Contains(out, "--keep-servers") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
}
