package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/testenv"
)

// TestStatCPUs: perfbench stat --cpus runs the command on those CPUs (the
// command prints its own Cpus_allowed_list), and the Record's provenance
// says so, with what the kernel said of the command and of the counted
// process; without --cpus the command runs where perfbench does.
func TestStatCPUs(t *testing.T) {
	needLinux(t)
	own, err := cpuset.Own()
	if err != nil {
		t.Fatal(err)
	}
	if len(own) < 2 {
		testenv.Skip(t, "one CPU only: a pinned command cannot be told from one that is not", "run on a machine of 2 CPUs or more")
	}
	last := own[len(own)-1:]
	for _, c := range []struct {
		flags      []string
		mode, want string
	}{{[]string{"--cpus", last.String()}, "cpus", last.String()}, {nil, "none", own.String()}} {
		args := append([]string{"stat", "--pid", strconv.Itoa(os.Getpid()), "--force", "-e", "task-clock", "--format", "json"}, c.flags...)
		args = append(args, "--", "sh", "-c", "grep Cpus_allowed_list /proc/self/status; sleep 0.3")
		r, errs := statRecord(t, args...)
		if !strings.Contains(strings.Join(strings.Fields(errs), " "), "Cpus_allowed_list: "+c.want) {
			t.Errorf("%v: the command did not print Cpus_allowed_list: %s; stderr:\n%s", c.flags, c.want, errs)
		}
		pl := r.Provenance.Placement
		if pl == nil {
			t.Fatalf("%v: no placement in the Record", c.flags)
		}
		client := ""
		if c.flags != nil {
			client = c.want
		}
		if pl.Mode != c.mode || pl.Client != client || pl.ClientAllowed != c.want || pl.ServerAllowed != own.String() || pl.Server != "" {
			t.Errorf("%v: placement %+v, want mode %s, load pinned to %q and allowed %s, the counted process allowed %s", c.flags, pl, c.mode, client, c.want, own)
		}
	}
}

func TestStatCPUsBadInput(t *testing.T) {
	needLinux(t)
	pid := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"stat", "--pid", pid, "--force", "--cpus", "0-x", "--", "true"}, `--cpus "0-x": not a CPU list: "0-x" is not a CPU number or range`},
		{[]string{"stat", "--pid", pid, "--force", "--cpus", "0", "--duration", "1s"}, "--cpus pins the command after --, and there is none"},
		{[]string{"stat", "--pid", pid, "--force", "--cpus", "8000", "--", "true"}, "--cpus 8000: CPU 8000 is not among those perfbench may run on here"},
	} {
		code, out, errs := runCLI(t, tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, tc.says) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d saying %q on one line", tc.args, code, out, errs, exitUsage, tc.says)
		}
	}
}
