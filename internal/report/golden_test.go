package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name. With -update it rewrites
// the file; on a mismatch it writes name.got next to it for diffing.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(path + ".got")
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s differs from the golden file; see %s.got (go test -update rewrites it)\n%s", name, path, firstDiff(want, got))
		return
	}
	os.Remove(path + ".got")
}

// firstDiff shows the first differing line.
func firstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + itoa(i+1) + ":\nwant " + w + "\n got " + g
		}
	}
	return ""
}

// fixtures loads the shared Record fixtures in measurement order.
func fixtures(t *testing.T) []*record.Record {
	t.Helper()
	recs, warnings, err := Load([]string{filepath.Join("..", "..", "testdata", "records")})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Fatalf("fixtures load with warnings: %q", warnings)
	}
	return recs
}

// TestReportGolden renders the fixtures (three versions; repeats;
// multiplexed, not supported and not counted counters; a failed and a
// partial step; thread roles; insert-benchmark steps; a warm-up step) in
// every format.
func TestReportGolden(t *testing.T) {
	recs := fixtures(t)
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, format, recs, nil, Options{Legacy: true}); err != nil {
				t.Fatal(err)
			}
			golden(t, "records."+format, b.Bytes())
		})
	}
}

// TestReportGoldenCSVInput renders a long-format CSV table: two hosts,
// three thread counts, repeats, an event given as n/a and as nc.
func TestReportGoldenCSVInput(t *testing.T) {
	recs, _, err := Load([]string{filepath.Join("..", "..", "testdata", "csv", "table.csv")})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown", "csv"} {
		var b bytes.Buffer
		if err := Write(&b, format, recs, nil, Options{}); err != nil {
			t.Fatal(err)
		}
		golden(t, "table."+format, b.Bytes())
	}
}
