package profdiff

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perfbench/perfbench/record"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name; -update rewrites it, a
// mismatch writes name.got next to it.
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
		t.Errorf("%s differs from the golden file; see %s.got (go test -update rewrites it)", name, path)
		return
	}
	os.Remove(path + ".got")
}

// prof builds a cpu-clock profile from folded stacks (root first) and
// sample counts; each sample stands for 1 ms.
func prof(stacks map[string]int64) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
	}
	fn := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := fn[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		fn[name] = l
		return l
	}
	keys := make([]string, 0, len(stacks))
	for k := range stacks {
		keys = append(keys, k)
	}
	for _, k := range sortedStrings(keys) {
		frames := strings.Split(k, ";")
		var locs []*profile.Location
		for i := len(frames) - 1; i >= 0; i-- {
			locs = append(locs, loc(frames[i]))
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{stacks[k], stacks[k] * 1_000_000}})
	}
	return p
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// inputs is the hand-computed scenario: base A (1,000 ops, 100 samples),
// B in two windows of 500 ops (120 samples in all), and a second step of A
// alone without an operation count.
func inputs() []input {
	return []input{
		{Version: "A", Step: "point-query", Ops: 1000, Profile: prof(map[string]int64{
			"main;do_command;dispatch_command": 40,
			"main;do_command;net_read":         20,
			"main;idle":                        40,
		})},
		{Version: "B", Step: "point-query", Ops: 500, Warnings: []string{"3 records lost"}, Profile: prof(map[string]int64{
			"main;do_command;dispatch_command": 30,
			"main;do_command;net_read":         10,
			"main;idle":                        20,
		})},
		{Version: "B", Step: "point-query", Ops: 500, Profile: prof(map[string]int64{
			"main;do_command;dispatch_command": 30,
			"main;do_command;alloc<int>":       10,
			"main;idle":                        20,
		})},
		{Version: "A", Step: "read-only_range=100", Profile: prof(map[string]int64{
			"main;scan": 3,
			"main;idle": 1,
		})},
	}
}

func TestCompareHandComputed(t *testing.T) {
	c, err := Compare(inputs(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Base != "A" || !reflect.DeepEqual(c.Versions, []string{"A", "B"}) || len(c.Steps) != 2 || c.Steps[0].Name != "point-query" {
		t.Fatalf("base %s, versions %v, %d steps", c.Base, c.Versions, len(c.Steps))
	}
	st := c.Steps[0]
	b := st.Versions["B"]
	if !st.PerOp || b.Windows != 2 || b.Samples != 120 || b.Ops != 1000 || b.Value != 120_000_000 {
		t.Errorf("pooled B: perOp %v, %d windows, %d samples, %v ops, value %d", st.PerOp, b.Windows, b.Samples, b.Ops, b.Value)
	}
	top := b.Top(true, 2)
	if want := []row{
		{Function: "dispatch_command", Flat: 60, Cum: 60, FlatShare: 0.5, CumShare: 0.5},
		{Function: "idle", Flat: 40, Cum: 40, FlatShare: 40.0 / 120, CumShare: 40.0 / 120},
	}; !reflect.DeepEqual(top, want) {
		t.Errorf("top of B:\n%+v\nwant\n%+v", top, want)
	}
	if cum := b.TopCum(true, 2); cum[0].Function != "main" || cum[0].Cum != 120 || cum[1].Function != "do_command" || cum[1].Cum != 80 {
		t.Errorf("top cum of B: %+v", cum)
	}
	grew, tb, tv := c.Diff(st, "B", 10)
	if tb != 100 || tv != 120 {
		t.Errorf("totals %v vs %v, want 100 vs 120", tv, tb)
	}
	if wantGrew := []change{
		{Function: "dispatch_command", Base: 40, Version: 60, Delta: 20, CumBase: 40, CumVersion: 60, CumDelta: 20},
		{Function: "alloc<int>", Base: 0, Version: 10, Delta: 10, CumBase: 0, CumVersion: 10, CumDelta: 10},
	}; !reflect.DeepEqual(grew, wantGrew) {
		t.Errorf("grew:\n%+v\nwant\n%+v", grew, wantGrew)
	}
	// The second step has no op count: shares of samples.
	s2 := c.Steps[1]
	if s2.PerOp {
		t.Error("a step without an operation count compared per operation")
	}
	if r := s2.Versions["A"].Top(false, 1); r[0].Function != "scan" || r[0].Flat != 750 {
		t.Errorf("per 1,000 samples: %+v", r)
	}
	ws := strings.Join(c.Warnings, "\n")
	for _, w := range []string{"point-query, B: 3 records lost", "read-only_range=100: no operation count for A"} {
		if !strings.Contains(ws, w) {
			t.Errorf("warnings lack %q:\n%s", w, ws)
		}
	}
	// Base B: A is compared with it.
	c2, err := Compare(inputs(), Options{Base: "B"})
	if err != nil {
		t.Fatal(err)
	}
	if grew, _, _ := c2.Diff(c2.Steps[0], "A", 10); len(grew) != 1 || grew[0].Function != "net_read" || grew[0].Delta != 10 {
		t.Errorf("A against B grew %+v", grew)
	}
	if _, err := Compare(inputs(), Options{Base: "C"}); err == nil {
		t.Error("unknown base accepted")
	}
	if _, err := Compare(nil, Options{}); err == nil {
		t.Error("no inputs accepted")
	}
}

func TestFolded(t *testing.T) {
	c, err := Compare(inputs(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.Steps[0].Versions["B"].WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	want := "main;do_command;alloc<int> 10\nmain;do_command;dispatch_command 60\nmain;do_command;net_read 10\nmain;idle 40\n"
	if b.String() != want {
		t.Errorf("folded:\n%s\nwant\n%s", b.String(), want)
	}
}

func TestTextGolden(t *testing.T) {
	c, err := Compare(inputs(), Options{Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.txt", b.Bytes())
}

// frames reads the frames of a flame graph: title → fill. It fails the test
// when the SVG is not well-formed XML.
func frames(t *testing.T, svg []byte) map[string]string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	out := map[string]string{}
	var inTitle bool
	var title string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("flame graph is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "title":
				inTitle = true
			case "rect":
				for _, a := range e.Attr {
					if a.Name.Local == "fill" && title != "" {
						name, _, _ := strings.Cut(title, ":")
						out[name] = a.Value
					}
				}
			}
		case xml.CharData:
			if inTitle {
				title = string(e)
			}
		case xml.EndElement:
			if e.Name.Local == "title" {
				inTitle = false
			}
			if e.Name.Local == "g" {
				title = ""
			}
		}
	}
	return out
}

func TestFlameGraphs(t *testing.T) {
	c, err := Compare(inputs(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := c.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, f := range files {
		r, _ := filepath.Rel(dir, f)
		rel = append(rel, r)
	}
	want := []string{
		"point-query/A.folded", "point-query/A.svg", "point-query/B.folded", "point-query/B.svg", "point-query/diff-B-vs-A.svg",
		"read-only_range=100/A.folded", "read-only_range=100/A.svg",
	}
	if !reflect.DeepEqual(rel, want) {
		t.Errorf("files %v, want %v", rel, want)
	}
	diff, err := os.ReadFile(filepath.Join(dir, "point-query/diff-B-vs-A.svg"))
	if err != nil {
		t.Fatal(err)
	}
	fills := frames(t, diff)
	// Hand-computed per 1,000 ops on each stack: dispatch_command 40 → 60
	// and alloc 0 → 10 grew (red; dispatch_command, the largest change
	// with do_command and main, fully), net_read 20 → 10 shrank (blue),
	// idle 40 → 40 is unchanged (white).
	for name, want := range map[string]string{
		"dispatch_command": "rgb(255,55,55)",
		"do_command":       "rgb(255,55,55)",
		"all":              "rgb(255,55,55)",
		"alloc&lt;int&gt;": "",
		"alloc<int>":       "rgb(255,155,155)",
		"net_read":         "rgb(155,155,255)",
		"idle":             "rgb(255,255,255)",
	} {
		if want == "" {
			continue
		}
		if got := fills[name]; got != want {
			t.Errorf("%s filled %q, want %q (frames %v)", name, got, want, fills)
		}
	}
	golden(t, "diff-B-vs-A.svg", diff)
	plain, err := os.ReadFile(filepath.Join(dir, "point-query/B.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if f := frames(t, plain); len(f) != 7 {
		t.Errorf("B.svg has frames %v, want all, main, do_command, dispatch_command, net_read, alloc<int>, idle", f)
	}
	golden(t, "B.svg", plain)
}

func TestLoadRecordsAndProfiles(t *testing.T) {
	dir := t.TempDir()
	writeProf := func(path string, p *profile.Profile) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	in := inputs()
	for i, x := range in[:3] {
		sub := filepath.Join(dir, "run", x.Version, string(rune('0'+i)))
		writeProf(filepath.Join(sub, "profile.pb.gz"), x.Profile)
		r := &record.Record{Schema: record.SchemaVersion, Kind: record.KindStep, Outcome: record.OutcomeOK,
			Version: x.Version, Step: x.Step, Ops: record.Ops{Source: "Questions", Count: x.Ops}, Profile: "profile.pb.gz"}
		for _, w := range x.Warnings {
			r.Warnf(record.WarnGeneral, "%s", w)
		}
		if err := record.Write(filepath.Join(sub, "rec.json"), r); err != nil {
			t.Fatal(err)
		}
	}
	// A Record without a profile, and one whose profile is missing.
	r := &record.Record{Schema: record.SchemaVersion, Kind: record.KindStep, Outcome: record.OutcomeOK, Version: "A", Step: "point-query"}
	record.Write(filepath.Join(dir, "run", "noprof.json"), r)
	r.Profile = "gone.pb.gz"
	record.Write(filepath.Join(dir, "run", "gone.json"), r)
	// A profile alone, with its metadata in comments.
	alone := prof(map[string]int64{"main;scan": 3, "main;idle": 1})
	alone.Comments = []string{"perfbench.version=A", "perfbench.step=read-only_range=100", "perfbench.ops=8"}
	writeProf(filepath.Join(dir, "alone.pb.gz"), alone)

	got, notes, err := Load([]string{filepath.Join(dir, "run"), filepath.Join(dir, "alone.pb.gz")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d inputs, want 4", len(got))
	}
	c, err := Compare(got, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b := c.Steps[0].Versions["B"]; b.Samples != 120 || b.Ops != 1000 {
		t.Errorf("B from Records: %d samples, %v ops", b.Samples, b.Ops)
	}
	if a := c.Steps[1].Versions["A"]; !c.Steps[1].PerOp || a.Ops != 8 {
		t.Errorf("profile alone: ops %v", a.Ops)
	}
	n := strings.Join(notes, "\n")
	if !strings.Contains(n, "skipped 1 Records without a profile") || !strings.Contains(n, "gone.pb.gz is missing") {
		t.Errorf("notes %q", notes)
	}
	if _, _, err := Load([]string{filepath.Join(dir, "run", "noprof.json")}); err == nil {
		t.Error("a Record named on its own without a profile was accepted")
	}
	empty := t.TempDir()
	if _, _, err := Load([]string{empty}); err == nil {
		t.Error("a folder without profiles was accepted")
	}
}

func TestSafeNameAndFit(t *testing.T) {
	for in, want := range map[string]string{"point-query_range=100": "point-query_range=100", "a/b c": "a_b_c", "..": "_", "": "_"} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fit("dispatch_command", 7*8+6); got != "dispat.." {
		t.Errorf("fit = %q", got)
	}
	if fit("x", 10) != "" {
		t.Error("label in a frame too narrow for 3 characters")
	}
}
