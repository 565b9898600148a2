// Package testenv decides, for every test of perfbench, whether it can run
// on this machine, so that a green run proves the tests ran.
//
// A test that needs something the machine may lack (a program, root, a
// kernel feature) asks for it here, and nowhere else:
//
//	perf := testenv.NeedBinary(t, "perf", "linux-perf")
//	testenv.NeedRoot(t, "CPU-wide sampling")
//	testenv.SkipUnless(t, err, "put TMPDIR on a disk", osstat.ErrNoBlockDevice)
//
// Without it the test is skipped with a message saying what is missing and
// how to get it. With PERFBENCH_REQUIRE_INTEGRATION=1 in the environment
// (scripts/test.sh and CI set it) the test fails instead. A skip is decided
// by what the machine has or by the kind of an error (errors.Is), never by
// the text of a message.
//
// Hardware events are not skipped: a test asks HW whether the machine has a
// PMU and asserts what perfbench does in either case (counts with one, "not
// supported" without); PERFBENCH_REQUIRE_HW=1 makes a machine without a PMU
// fail those tests.
//
// Tests that need a process of their own run their test binary again as a
// helper (see Helpers), which runs no test and so is no skip either.
//
// The package imports nothing from perfbench, so the tests of every package
// can use it.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

const (
	// requireIntegration is the environment variable that, set to 1, turns
	// every skip into a failure.
	requireIntegration = "PERFBENCH_REQUIRE_INTEGRATION"
	// requireHW is the environment variable that, set to 1, fails the
	// hardware-event tests on a machine without a hardware PMU.
	requireHW = "PERFBENCH_REQUIRE_HW"
)

func required(env string) bool { return os.Getenv(env) == "1" }

// Skip skips t saying why it cannot run here and what would fix that (a
// command to run, a package to install); with PERFBENCH_REQUIRE_INTEGRATION=1
// it fails t with the same message instead.
func Skip(t testing.TB, why, fix string) {
	t.Helper()
	msg := why
	if fix != "" {
		msg += " (" + fix + ")"
	}
	if required(requireIntegration) {
		t.Fatalf("%s; %s=1: this test must run here", msg, requireIntegration)
	}
	t.Skip(msg)
}

// NeedBinary returns the path of the program name, skipping t (see Skip)
// when it is not installed; debianPackage is the Debian package that has it.
// A name with a slash is a path that must exist and be executable.
func NeedBinary(t testing.TB, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Skip(t, name+" is not installed", "apt-get install "+debianPackage)
	}
	return p
}

// NeedRoot skips t (see Skip) unless it runs as root; what names what needs
// root ("CPU-wide sampling", "mounting a tmpfs").
func NeedRoot(t testing.TB, what string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, what+" needs root", "run the tests as root")
	}
}

// SkipIfShort skips t (see Skip) when the tests run with -short; why says
// what the test does that -short leaves out. CI does not use -short.
func SkipIfShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		Skip(t, why+": not with -short", "run without -short")
	}
}

// SkipUnless returns when err is nil, skips t (see Skip) when err is one of
// targets (errors.Is), with fix saying what would let the test run, and
// fails t on any other error.
func SkipUnless(t testing.TB, err error, fix string, targets ...error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, target := range targets {
		if errors.Is(err, target) {
			Skip(t, err.Error(), fix)
			return
		}
	}
	t.Fatal(err)
}

// HW returns has, the caller's finding of whether this machine has a
// hardware PMU, after failing t when it has none and
// PERFBENCH_REQUIRE_HW=1. The test then asserts the case it is in:
//
//	if testenv.HW(t, sys.HasHardwarePMU()) {
//		// cycles count
//	} else {
//		// cycles are not supported, and say why
//	}
func HW(t testing.TB, has bool) bool {
	t.Helper()
	if !has && required(requireHW) {
		t.Errorf("this machine has no hardware PMU; %s=1: hardware events must count here", requireHW)
	}
	return has
}

// Helper processes.
//
// A test that needs a process of its own (one that is killed, or that
// lives in another cgroup) starts its test binary again as a helper. The
// package's TestMain runs the helper instead of the tests:
//
//	var helpers = testenv.Helpers{"hang": hang}
//
//	func TestMain(m *testing.M) {
//		if code, ok := helpers.Run(); ok {
//			os.Exit(code)
//		}
//		os.Exit(m.Run())
//	}
//
// and the test starts it with testenv.HelperCommand(t, "hang", args...).
// The helper process runs no test, so nothing in it shows as a skip or a
// pass.

// helperEnv names the helper a process started by HelperCommand runs.
const helperEnv = "PERFBENCH_TEST_HELPER"

// Helpers maps a helper's name to its function, which is given the
// arguments of HelperCommand and returns the process's exit status.
type Helpers map[string]func(args []string) int

// Run runs the helper this process was started as, if it was started by
// HelperCommand, and returns its exit status and true; otherwise it returns
// 0 and false, and TestMain runs the tests. An unknown helper name is exit
// status 2.
func (h Helpers) Run() (int, bool) {
	name, ok := os.LookupEnv(helperEnv)
	if !ok {
		return 0, false
	}
	// The helper's own children (servers, shells) are no helpers.
	os.Unsetenv(helperEnv)
	f := h[name]
	if f == nil {
		fmt.Fprintf(os.Stderr, "testenv: no helper %q in this test binary\n", name)
		return 2, true
	}
	return f(os.Args[1:]), true
}

// HelperCommand returns the command that runs this test binary as the
// helper name with args; it is not started.
func HelperCommand(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("find this test binary to run helper %s: %v", name, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+name)
	return cmd
}
