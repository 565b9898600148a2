package testenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"testing"
)

var helpers = Helpers{
	"echo": func(args []string) int {
		_, set := os.LookupEnv(helperEnv)
		fmt.Printf("args %q helper-env-left %v\n", args, set)
		return 3
	},
}

func TestMain(m *testing.M) {
	if code, ok := helpers.Run(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// probeEnv names what TestGate does when this test binary runs it as a
// child of itself.
const probeEnv = "TESTENV_PROBE"

var errOther = errors.New("some other failure")

// probes are what a child runs: each ends the test in one of the ways the
// gate decides.
var probes = map[string]func(t *testing.T){
	"skip":           func(t *testing.T) { Skip(t, "the widget is missing", "apt-get install widget") },
	"binary-missing": func(t *testing.T) { NeedBinary(t, "perfbench-no-such-program", "nothing") },
	"binary-found":   func(t *testing.T) { NeedBinary(t, "sh", "dash") },
	"target":         func(t *testing.T) { SkipUnless(t, fmt.Errorf("open x: %w", fs.ErrNotExist), "make x", fs.ErrNotExist) },
	"other":          func(t *testing.T) { SkipUnless(t, errOther, "make x", fs.ErrNotExist) },
	"nil":            func(t *testing.T) { SkipUnless(t, nil, "make x", fs.ErrNotExist) },
	"no-pmu":         func(t *testing.T) { HW(t, false) },
	"pmu":            func(t *testing.T) { HW(t, true) },
	"short":          func(t *testing.T) { SkipIfShort(t, "starts servers") },
}

// TestGate runs each probe in a child process (this test binary, running
// only TestGate) with and without PERFBENCH_REQUIRE_INTEGRATION=1 and checks
// how the real testing package ended it: with the variable set, every skip
// is a failure that still says what is missing.
func TestGate(t *testing.T) {
	if p := os.Getenv(probeEnv); p != "" {
		probes[p](t)
		return
	}
	for _, tc := range []struct {
		probe   string
		env     []string
		short   bool
		outcome string // PASS, SKIP or FAIL
		says    string
	}{
		{probe: "skip", outcome: "SKIP", says: "the widget is missing (apt-get install widget)"},
		{probe: "skip", env: []string{requireIntegration + "=1"}, outcome: "FAIL",
			says: "the widget is missing (apt-get install widget); PERFBENCH_REQUIRE_INTEGRATION=1: this test must run here"},
		{probe: "skip", env: []string{requireIntegration + "=0"}, outcome: "SKIP"},
		{probe: "binary-missing", outcome: "SKIP", says: "perfbench-no-such-program is not installed (apt-get install nothing)"},
		{probe: "binary-missing", env: []string{requireIntegration + "=1"}, outcome: "FAIL", says: "perfbench-no-such-program is not installed"},
		{probe: "binary-found", env: []string{requireIntegration + "=1"}, outcome: "PASS"},
		{probe: "target", outcome: "SKIP", says: "open x: file does not exist (make x)"},
		{probe: "target", env: []string{requireIntegration + "=1"}, outcome: "FAIL", says: "open x: file does not exist (make x)"},
		{probe: "other", outcome: "FAIL", says: "some other failure"},
		{probe: "nil", env: []string{requireIntegration + "=1"}, outcome: "PASS"},
		{probe: "no-pmu", outcome: "PASS"},
		{probe: "no-pmu", env: []string{requireIntegration + "=1"}, outcome: "PASS"},
		{probe: "no-pmu", env: []string{requireHW + "=1"}, outcome: "FAIL", says: "this machine has no hardware PMU"},
		{probe: "pmu", env: []string{requireHW + "=1"}, outcome: "PASS"},
		{probe: "short", outcome: "PASS"},
		{probe: "short", short: true, outcome: "SKIP", says: "starts servers: not with -short (run without -short)"},
		{probe: "short", short: true, env: []string{requireIntegration + "=1"}, outcome: "FAIL"},
	} {
		name := tc.probe + " " + strings.Join(tc.env, " ")
		if tc.short {
			name += " -short"
		}
		args := []string{"-test.run=^TestGate$", "-test.v"}
		if tc.short {
			args = append(args, "-test.short")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(withoutGates(os.Environ()), append(tc.env, probeEnv+"="+tc.probe)...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s: run the child: %v", name, err)
		}
		if got := outcome(string(out)); got != tc.outcome || (tc.outcome == "FAIL") != (err != nil) {
			t.Errorf("%s: %s, exit %v, want %s; output:\n%s", name, got, err, tc.outcome, out)
			continue
		}
		if !strings.Contains(string(out), tc.says) {
			t.Errorf("%s: the output does not say %q:\n%s", name, tc.says, out)
		}
	}
}

// withoutGates is env without the variables the gate reads, so the parent's
// own setting (scripts/test.sh sets one) does not reach the children.
func withoutGates(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, requireIntegration+"=") && !strings.HasPrefix(kv, requireHW+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// outcome is how `go test -v` output says TestGate ended.
func outcome(out string) string {
	for _, o := range []string{"PASS", "SKIP", "FAIL"} {
		if strings.Contains(out, "--- "+o+": TestGate ") {
			return o
		}
	}
	return "no result"
}

// TestHelperCommand runs a helper: it gets its arguments, runs instead of
// the tests (no test output at all), exits with the helper's status, and
// does not pass the helper variable on to its own children.
func TestHelperCommand(t *testing.T) {
	cmd := HelperCommand(t, "echo", "a", "-test.run=x")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("exit %v, want status 3; output %q", err, out)
	}
	if want := "args [\"a\" \"-test.run=x\"] helper-env-left false\n"; string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
	out, err = HelperCommand(t, "nope").CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), `no helper "nope"`) {
		t.Errorf("unknown helper: exit %v, output %q", err, out)
	}
}
