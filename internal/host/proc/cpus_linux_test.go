package proc

import (
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/testenv"
)

// TestCPUs: a command started with CPUs runs on them, and so does what
// it starts (a shell's child prints its own Cpus_allowed_list); one
// started without runs where perfbench does.
func TestCPUs(t *testing.T) {
	own, err := cpuset.Own()
	if err != nil {
		t.Fatal(err)
	}
	if len(own) < 2 {
		testenv.Skip(t, "one CPU only: a pinned command cannot be told from one that is not", "run on a machine of 2 CPUs or more")
	}
	last := own[len(own)-1:]
	for _, c := range []struct {
		cpus cpuset.Set
		want string
	}{{last, last.String()}, {nil, own.String()}} {
		var lines []string
		cmd, err := Start([]string{"sh", "-c", "grep Cpus_allowed_list /proc/self/status"}, Options{CPUs: c.cpus,
			OnLine: func(s string) { lines = append(lines, s) }})
		if err != nil {
			t.Fatal(err)
		}
		cmd.Wait(0)
		if len(lines) != 1 || strings.Join(strings.Fields(lines[0]), " ") != "Cpus_allowed_list: "+c.want {
			t.Errorf("CPUs %v: the command printed %q, want Cpus_allowed_list: %s", c.cpus, lines, c.want)
		}
	}
}
