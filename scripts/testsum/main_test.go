package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// testdata/stream.json is `go test -json -count=1 ./...` (Go 1.26) on four
// small packages: jx/a has a passing test that logs, a skip with two lines
// of reason, a test whose subtest fails and a test that panics; jx/b does
// not compile; jx/c has no tests; jx/d has a passing test and a parallel
// test that skips.
func stream(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/stream.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSummary(t *testing.T) {
	var out bytes.Buffer
	if code := run(bytes.NewReader(stream(t)), &out, false); code != 1 {
		t.Errorf("exit %d, want 1 (tests failed)", code)
	}
	got := out.String()
	for _, want := range []string{
		// The compiler's message, as go test prints it.
		"# jx/b [jx/b.test]\nb/b.go:3:23: cannot use \"x\" (untyped string constant) as int value in return statement\n",
		// A failing test's whole log, continuation lines included.
		"    a_test.go:17: bad\n        more\n--- FAIL: TestFail/sub (0.00s)\n",
		"stdout line\n--- FAIL: TestFail (0.00s)\n",
		// A panic: the test's log, then the panic and its stack.
		"    a_test.go:21: before the panic\n--- FAIL: TestPanic (0.00s)\npanic: boom [recovered, repanicked]\n",
		"\t/tmp/jx/a/a_test.go:22 +0x4d\n",
		// One line per package.
		"FAIL\tjx/a\t0.138s\n",
		"FAIL\tjx/b [build failed]\n",
		"?   \tjx/c\t[no test files]\n",
		"ok  \tjx/d\t0.045s\n",
		"failed: 4\n  jx/a TestFail/sub\n  jx/a TestFail\n  jx/a TestPanic\n  jx/b\n",
		// Every skip with its reason: the skip's message, not the
		// test's earlier log.
		"skipped: 2\n" +
			"  jx/a TestSkip: a_test.go:12: no widget (apt-get install widget) second line\n" +
			"  jx/d TestSkipped: d_test.go:6: needs root (run the tests as root)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary does not have %q:\n%s", want, got)
		}
	}
	// What go test prints only with -v: passing tests' logs, the RUN,
	// PAUSE and CONT lines.
	for _, not := range []string{"hello", "=== ", "--- PASS", "--- SKIP", "first"} {
		if strings.Contains(got, not) {
			t.Errorf("the summary has %q:\n%s", not, got)
		}
	}
}

// TestSkipsWhenRequired: a run whose only fault is a skip passes, unless
// integration tests are required.
func TestSkipsWhenRequired(t *testing.T) {
	var jxd []byte
	for _, line := range bytes.SplitAfter(stream(t), []byte("\n")) {
		if bytes.Contains(line, []byte(`"Package":"jx/d"`)) {
			jxd = append(jxd, line...)
		}
	}
	for _, tc := range []struct {
		require bool
		code    int
	}{{false, 0}, {true, 1}} {
		var out bytes.Buffer
		code := run(bytes.NewReader(jxd), &out, tc.require)
		if code != tc.code || !strings.Contains(out.String(), "ok  \tjx/d\t0.045s\nskipped: 1\n  jx/d TestSkipped: ") ||
			strings.Contains(out.String(), "failed:") {
			t.Errorf("require %v: exit %d, want %d; output:\n%s", tc.require, code, tc.code, out.String())
		}
		if tc.require && !strings.Contains(out.String(), "1 tests skipped with PERFBENCH_REQUIRE_INTEGRATION=1") {
			t.Errorf("require: the output does not say why it fails:\n%s", out.String())
		}
	}
}

// TestTruncatedStream: when the stream ends inside a package (go test was
// killed), the output of its running tests is printed and the package
// fails.
func TestTruncatedStream(t *testing.T) {
	s := string(stream(t))
	cut := strings.Index(s, `"Action":"output","Package":"jx/a","Test":"TestPanic","Output":"--- FAIL`)
	cut = strings.LastIndexByte(s[:cut], '\n') + 1
	var out bytes.Buffer
	code := run(strings.NewReader(s[:cut]), &out, false)
	if code != 1 || !strings.Contains(out.String(), "    a_test.go:21: before the panic\nFAIL\tjx/a\t(no result: the output ended)\n") {
		t.Errorf("exit %d, want 1 and the running test's log:\n%s", code, out.String())
	}
}
