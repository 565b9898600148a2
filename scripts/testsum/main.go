// Command testsum reads the output of `go test -json` on its standard input
// and prints what `go test` prints without -json: build errors, the whole
// output of every failing test and of every failing package, and one line
// per package (ok, FAIL, or no test files). At the end it prints the
// number of skipped tests, each with the reason its skip gave:
//
//	go test -json ./... | go run ./scripts/testsum
//
// It exits 1 when a package or test failed, or, with
// PERFBENCH_REQUIRE_INTEGRATION=1 in its environment, when a test was
// skipped.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
)

func main() {
	require := os.Getenv("PERFBENCH_REQUIRE_INTEGRATION") == "1"
	os.Exit(run(os.Stdin, os.Stdout, require))
}

// event is a line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output
}

// test is what is kept of a test while it runs.
type test struct {
	lines  []string
	failed bool // its lines were printed: later ones are printed at once
}

// skip is a skipped test and the reason it gave.
type skip struct {
	pkg, test, reason string
}

type summary struct {
	out     io.Writer
	running map[string]bool             // packages started, not ended
	pkgOut  map[string][]string         // package-level lines
	tests   map[string]map[string]*test // package → test → state
	skips   []skip
	failed  []string // "pkg Test" or "pkg"
	failure bool
}

func run(in io.Reader, out io.Writer, require bool) int {
	s := &summary{out: out, running: map[string]bool{}, pkgOut: map[string][]string{}, tests: map[string]map[string]*test{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			// Not an event: go test printed it as is.
			fmt.Fprintln(out, sc.Text())
			continue
		}
		s.event(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testsum: read go test -json output: %v\n", err)
		return 1
	}
	for _, pkg := range slices.Sorted(maps.Keys(s.running)) {
		// A package still running when the stream ended (go test was
		// killed): show what it printed.
		s.flushRunning(pkg)
		for _, l := range s.pkgOut[pkg] {
			fmt.Fprint(out, l)
		}
		fmt.Fprintf(out, "FAIL\t%s\t(no result: the output ended)\n", pkg)
		s.failed = append(s.failed, pkg)
		s.failure = true
	}
	return s.finish(require)
}

func (s *summary) event(e event) {
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.out, e.Output)
	case e.Action == "build-fail":
		s.failure = true
	case e.Test == "":
		s.packageEvent(e)
	default:
		s.testEvent(e)
	}
}

func (s *summary) packageEvent(e event) {
	switch e.Action {
	case "start":
		s.running[e.Package] = true
	case "output":
		s.pkgOut[e.Package] = append(s.pkgOut[e.Package], e.Output)
	case "pass", "skip":
		// "ok  \tpkg\t1.2s" or "?   \tpkg\t[no test files]"
		for _, l := range s.pkgOut[e.Package] {
			if strings.HasPrefix(l, "ok  \t") || strings.HasPrefix(l, "?   \t") {
				fmt.Fprint(s.out, l)
			}
		}
		s.done(e.Package)
	case "fail":
		s.flushRunning(e.Package)
		for _, l := range s.pkgOut[e.Package] {
			if !framing(l) {
				fmt.Fprint(s.out, l)
			}
		}
		if !slices.ContainsFunc(s.failed, func(f string) bool { return strings.HasPrefix(f, e.Package+" ") }) {
			s.failed = append(s.failed, e.Package)
		}
		s.failure = true
		s.done(e.Package)
	}
}

func (s *summary) done(pkg string) {
	delete(s.running, pkg)
	delete(s.pkgOut, pkg)
	delete(s.tests, pkg)
}

func (s *summary) testEvent(e event) {
	tests := s.tests[e.Package]
	if tests == nil {
		tests = map[string]*test{}
		s.tests[e.Package] = tests
	}
	tc := tests[e.Test]
	if tc == nil {
		tc = &test{}
		tests[e.Test] = tc
	}
	switch e.Action {
	case "output":
		if tc.failed {
			if !framing(e.Output) {
				fmt.Fprint(s.out, e.Output)
			}
			return
		}
		tc.lines = append(tc.lines, e.Output)
	case "fail":
		s.print(tc)
		tc.failed = true
		s.failed = append(s.failed, e.Package+" "+e.Test)
		s.failure = true
	case "skip":
		s.skips = append(s.skips, skip{e.Package, e.Test, reason(tc.lines)})
		delete(tests, e.Test)
	case "pass":
		delete(tests, e.Test)
	}
}

// flushRunning prints the output of the tests of pkg that have not ended:
// a test binary that timed out or crashed ends no test.
func (s *summary) flushRunning(pkg string) {
	names := make([]string, 0, len(s.tests[pkg]))
	for name, tc := range s.tests[pkg] {
		if !tc.failed {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		tc := s.tests[pkg][name]
		s.print(tc)
		tc.failed = true
	}
}

func (s *summary) print(tc *test) {
	for _, l := range tc.lines {
		if !framing(l) {
			fmt.Fprint(s.out, l)
		}
	}
	tc.lines = nil
}

// framing tells the lines go test prints only with -v.
func framing(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "PASS\n"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// logLine is the start of a message of t.Log, t.Skip, t.Error...:
// "    file_test.go:12: ".
var logLine = regexp.MustCompile(`^\s+[^\s:]+\.go:\d+: `)

// reason is the skip message among a skipped test's lines: the last logged
// message, with its continuation lines.
func reason(lines []string) string {
	start := -1
	for i, l := range lines {
		if logLine.MatchString(l) {
			start = i
		}
	}
	if start < 0 {
		return "(no reason given)"
	}
	var msg []string
	for _, l := range lines[start:] {
		if strings.HasPrefix(l, "--- SKIP") {
			break
		}
		msg = append(msg, strings.TrimSpace(l))
	}
	return strings.Join(msg, " ")
}

func (s *summary) finish(require bool) int {
	code := 0
	if s.failure {
		code = 1
	}
	if len(s.failed) > 0 {
		fmt.Fprintf(s.out, "failed: %d\n", len(s.failed))
		for _, f := range s.failed {
			fmt.Fprintf(s.out, "  %s\n", f)
		}
	}
	fmt.Fprintf(s.out, "skipped: %d\n", len(s.skips))
	for _, sk := range s.skips {
		fmt.Fprintf(s.out, "  %s %s: %s\n", sk.pkg, sk.test, sk.reason)
	}
	if require && len(s.skips) > 0 {
		fmt.Fprintf(s.out, "testsum: %d tests skipped with PERFBENCH_REQUIRE_INTEGRATION=1: every test must run\n", len(s.skips))
		code = 1
	}
	return code
}
