package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

// benchRecords: six repeats of point-query per version. The base does about
// 1000 ops and 1e9 instructions per 10 s window; the new version 800 ops
// with the same instructions: queries/s -20%, instructions/op +25%.
func benchRecords() []*record.Record {
	var recs []*record.Record
	for i := 0; i < 6; i++ {
		for _, v := range []struct {
			name string
			ops  float64
		}{{"mariadb-10.11.6", 1000}, {"mariadb-11.4.3", 800}} {
			r := record.New(record.KindStep)
			r.Host, r.Version, r.Step, r.Threads, r.Repeat = "bench1", v.name, "point-query_range=100", 1, i+1
			r.Window.Seconds = 10
			ops := v.ops + float64(i)*0.1 // a little spread between repeats
			perOp := 1e6
			if v.ops == 800 {
				perOp = 1.25e6
			}
			r.Ops = record.Ops{Source: "Questions", Count: ops, Per: 1, Counted: true}
			r.Counters = []record.Counter{
				{Event: "instructions", Raw: uint64(ops * perOp), Enabled: 1e10, Running: 1e10, Value: ops * perOp, Status: record.StatusCounted},
				{Event: "cycles", Status: record.StatusNotSupported},
			}
			recs = append(recs, r)
		}
	}
	return recs
}

func TestReportBenchfmtParses(t *testing.T) {
	var b bytes.Buffer
	if err := writeBenchfmt(&b, benchRecords(), Options{}); err != nil {
		t.Fatal(err)
	}
	rd := benchfmt.NewReader(bytes.NewReader(b.Bytes()), "perfbench.txt")
	n := 0
	names := map[string]bool{}
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		case *benchfmt.Result:
			n++
			names[string(rec.Name.Full())] = true
			if v, ok := rec.Value("instructions/op"); !ok || v <= 0 {
				t.Errorf("%s: no instructions/op", rec.Name.Full())
			}
			if _, ok := rec.Value("cycles/op"); ok {
				t.Errorf("%s: cycles/op written although cycles was not supported", rec.Name.Full())
			}
			if rec.GetConfig("host") != "bench1" {
				t.Errorf("host config %q", rec.GetConfig("host"))
			}
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 12 || !names["PointQuery/range=100/v=mariadb-10.11.6/threads=1"] || !names["PointQuery/range=100/v=mariadb-11.4.3/threads=1"] {
		t.Errorf("%d results, names %v", n, names)
	}
	if m := rd.Units().Get("queries/s", "better"); m == nil || m.Value != "higher" {
		t.Errorf("queries/s better=%v, want higher", m)
	}
	if m := rd.Units().Get("instructions/op", "better"); m == nil || m.Value != "lower" {
		t.Errorf("instructions/op better=%v, want lower", m)
	}
	if !strings.Contains(b.String(), "# PointQuery/range=100/v=mariadb-10.11.6/threads=1 repeat 1: not supported: cycles/o") {
		t.Errorf("the unsupported event is not listed in a comment:\n%s", b.String())
	}
}

// TestReportBenchstat runs the real benchstat, built from the version of
// golang.org/x/perf that go.mod pins, on perfbench's output.
func TestReportBenchstat(t *testing.T) {
	testenv.SkipIfShort(t, "builds benchstat")
	goBin := testenv.NeedBinary(t, "go", "golang-go")
	dir := t.TempDir()
	bin := filepath.Join(dir, "benchstat")
	build := exec.Command(goBin, "build", "-o", bin, "golang.org/x/perf/cmd/benchstat")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build benchstat from the version go.mod pins (go build golang.org/x/perf/cmd/benchstat): %v\n%s", err, out)
	}
	var b bytes.Buffer
	if err := writeBenchfmt(&b, benchRecords(), Options{}); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "perfbench.txt")
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-col", "/v", in)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("benchstat: %v\nstderr: %s", err, stderr.String())
	}
	out := stdout.String()
	t.Logf("benchstat -col /v:\n%s", out)
	// benchstat compares the second column with the first (the base): the
	// throughput change is negative, the instructions per op change
	// positive, and with 6 repeats against 6 both are significant.
	for unit, re := range map[string]*regexp.Regexp{
		"queries/s":       regexp.MustCompile(`PointQuery/range=100/threads=1 .* -(19\.9\d|20\.0\d)% \(p=0\.002 n=6\)`),
		"instructions/op": regexp.MustCompile(`PointQuery/range=100/threads=1 .* \+25\.00% \(p=0\.002 n=6\)`),
	} {
		block := unitBlock(out, unit)
		if block == "" || !re.MatchString(block) {
			t.Errorf("benchstat's %s table does not show the expected change (%s):\n%s", unit, re, out)
		}
	}
	if !strings.Contains(out, "mariadb-10.11.6") || strings.Index(out, "mariadb-10.11.6") > strings.Index(out, "mariadb-11.4.3") {
		t.Errorf("the base is not benchstat's first column:\n%s", out)
	}
}

// unitBlock returns the part of benchstat's text output from the header line
// naming unit to the next blank line.
func unitBlock(out, unit string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Contains(l, "│") && strings.Contains(l, " "+unit+" ") {
			var b strings.Builder
			for _, l2 := range lines[i:] {
				if strings.TrimSpace(l2) == "" {
					break
				}
				b.WriteString(l2 + "\n")
			}
			return b.String()
		}
	}
	return ""
}
