package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The published posts of the reference user (shared/seeds), their numbers
// typed as long-format CSV under testdata/csv/seeds, must come out of the
// report with --bare exactly as published, in their order and with their
// column names. The expected blocks under testdata/seeds are the posts'
// own text, checked by hand against them; where a post's arithmetic or
// layout slips, the expected block holds the correct value and the slip is
// named in the test.

// seedReport renders a seed's CSV with --bare.
func seedReport(t *testing.T, csvName, format string, opt Options) string {
	t.Helper()
	in, err := loadInput([]string{filepath.Join("..", "..", "testdata", "csv", "seeds", csvName)})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Warnings) > 0 {
		t.Fatalf("warnings: %q", in.Warnings)
	}
	opt.Bare, opt.Groups = true, in.Groups
	var notes bytes.Buffer
	opt.Notes = &notes
	var b bytes.Buffer
	if err := Write(&b, format, in.Records, nil, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func seedExpected(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "seeds", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameBlock(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s differs from the published block (%s):\n got:\n%s\nwant:\n%s", what, firstDiff([]byte(want), []byte(got)), got, want)
	}
}

// TestSeed000RelativeQPS: the eight rQPS blocks of seed 000 (four CPUs,
// MyRocks and InnoDB), the "Relative to:" / "col-N :" layout with 42 steps
// in the published order. Each block's text is the seed's byte for byte,
// except that the post prints the last block (Threadripper, InnoDB) with a
// blank line after every line, which the expected block leaves out.
func TestSeed000RelativeQPS(t *testing.T) {
	for _, name := range []string{"4700u-myrocks", "4700u-innodb", "7735hs-myrocks", "7735hs-innodb",
		"4214r-myrocks", "4214r-innodb", "5975wx-myrocks", "5975wx-innodb"} {
		got := seedReport(t, "000-"+name+".csv", "text", Options{Tables: []string{TableRQPS}})
		sameBlock(t, name, got, seedExpected(t, "000-"+name+".txt"))
	}
}

// TestSeed001Threads: seed 001's per-step blocks of QPS at 1, 2 and 4
// threads on two servers, with the ratio to MySQL 5.6.35 at 1 thread for
// the two versions the post compares, thread counts a version did not run
// left blank ("1077 in-5635.opt"), the base named as the post names it.
// The post's slips, corrected in the expected block: in the insert block
// the header line comes after "- nuc.i3" (every other block has it
// first), and three ratios disagree with the QPS next to them: nuc.i3
// in-801.opt.latin1sw 0.64 (1940/2356 = 0.823), nuc.i5 in-5717.opt 0.87
// (7501/8563 = 0.876), nuc.i5 in-801.opt.latin1sw 0.82 (7234/8563 = 0.845).
func TestSeed001Threads(t *testing.T) {
	got := seedReport(t, "001.csv", "text", Options{Tables: []string{tableThreads}, Base: "in-5635.opt",
		Labels:  map[string]string{"in-5635.opt": "5.6.35"},
		Compare: []string{"in-5717.opt", "in-801.opt.latin1sw"}})
	sameBlock(t, "seed 001", got, seedExpected(t, "001.txt"))
}

// TestSeed002Average: seed 002's QPS ratios at 1, 8 and 48 connections
// with the average row, columns headed rocks, inno, toku as the post's
// preamble defines them. The post's text carries its column spacing as
// alternating spaces and no-break spaces (a web page's rendering of the
// original tabs); the expected block has plain spaces, which is what the
// page shows. No slip: the 8-connection inno average of the
// printed ratios is 1.2735, which the post rounds to 1.274 (and so does
// the report: float64 sums it to 1.27349999..., see analysis.FormatFixed).
func TestSeed002Average(t *testing.T) {
	got := seedReport(t, "002.csv", "text", Options{Tables: []string{tableAverage},
		Labels: map[string]string{"myrocks": "rocks", "inno5717": "inno", "toku5717": "toku"}})
	sameBlock(t, "seed 002", got, seedExpected(t, "002.txt"))
}

// TestSeed003GroupsCPUAndIO: seed 003 explains IO-bound results with QPS
// ratios next to CPU/query and read IO/query ratios, steps in four groups
// in run order. The post gives them as prose ("QPS ratios are 0.95, 0.92,
// 0.91, 0.91 for the first 4 tests"); the expected block, typed by hand
// from it, is the relative CPU and IO table with those groups, every
// number of the post in its place (read IO only for the two steps it
// gives one for).
func TestSeed003GroupsCPUAndIO(t *testing.T) {
	got := seedReport(t, "003.csv", "text", Options{Tables: []string{tableCPUIORel}})
	sameBlock(t, "seed 003", got, seedExpected(t, "003.txt"))
}

// TestSeed004InsertBenchmark: seed 004's summary tables (absolute and
// relative throughput, inserts/s against the target) in Markdown, byte for
// byte; its per-step metrics lines and response-time histograms, which the
// post's text has lost the line breaks of (each table is one line), match
// the report's lines joined by spaces. Deviations: the post's tag column
// prefixes each version with the benchmark's row count ("160m."), which
// the expected lines leave out (a table has no column for it); the post's
// Markdown histograms drop their zero cells and shift the rest left, so
// the histograms are checked against its text ones.
func TestSeed004InsertBenchmark(t *testing.T) {
	got := seedReport(t, "004.csv", "markdown", Options{Tables: []string{tableInsert, tableInsertRel, tableInsertTarget}})
	sameBlock(t, "seed 004 summary", got, seedExpected(t, "004-summary.md"))

	for _, tc := range []struct{ table, want string }{
		{tableInsertLine, "004-lines.txt"},
		{tableInsertHist, "004-hist.txt"},
	} {
		out := seedReport(t, "004.csv", "text", Options{Tables: []string{tc.table}})
		var joined []string
		for _, block := range strings.Split(strings.TrimSuffix(out, "\n"), "\n\n") {
			joined = append(joined, strings.ReplaceAll(block, "\n", " "))
		}
		want := strings.Split(strings.TrimSuffix(seedExpected(t, tc.want), "\n"), "\n")
		if len(joined) != len(want) {
			t.Errorf("%s: %d tables, want %d:\n%s", tc.table, len(joined), len(want), out)
			continue
		}
		for i := range want {
			sameBlock(t, tc.table, joined[i], want[i])
		}
	}
}
