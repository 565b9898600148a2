package remote

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestStopScriptNothingLeft runs the stop script here on a session that
// has no process (gone already): it prints nothing, says nothing on
// stderr and exits 0, however the scan of /proc ends.
func TestStopScriptNothingLeft(t *testing.T) {
	// Session ids are pids; this one is above pid_max's default ceiling.
	cmd := exec.Command("sh", "-c", fmt.Sprintf(stopScript, 1<<22+1, 1))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.Len() > 0 || stderr.Len() > 0 {
		t.Errorf("stop script: %v, stdout %q, stderr %q; want exit 0 and no output", err, stdout.String(), stderr.String())
	}
}
