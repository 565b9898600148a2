package report

import (
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// floorRecs are 6 repeats of step s for each version: its operations over
// 10 s are start + repeat-1.
func floorRecs(versions map[string]float64, aaOf map[string]string) []*record.Record {
	var recs []*record.Record
	for _, v := range []string{"a", "b", "a2", "b2"} {
		start, ok := versions[v]
		if !ok {
			continue
		}
		for i := range 6 {
			r := stepRec(v, "s", i+1, start+float64(i))
			r.AAOf = aaOf[v]
			recs = append(recs, r)
		}
	}
	return recs
}

// TestReportFloor: the second label of an A/A pair is no comparison
// column of the rQPS table but its floor, the pair's rQPS (median 1012.5
// over median 1002.5 = 1.01), next to the comparisons, named in the legend
// and explained in a note; a pair of a version other than the base is its
// rQPS against that version (1302.5 / 1202.5 = 1.08).
func TestReportFloor(t *testing.T) {
	rep, err := build(floorRecs(map[string]float64{"a": 1000, "b": 1200, "a2": 1010}, map[string]string{"a2": "a"}),
		Options{Base: "a", Tables: []string{TableRQPS}})
	if err != nil {
		t.Fatal(err)
	}
	tb := rep.Tables[0]
	if strings.Join(tb.Header, " ") != "col-1 floor" {
		t.Errorf("header %q, want col-1 floor", tb.Header)
	}
	if c := cell(t, rep, TableRQPS, "", "s", "col-1"); !strings.HasPrefix(c.Text, "1.20±") {
		t.Errorf("b: %q, want 1.20 with an interval", c.Text)
	}
	if c := cell(t, rep, TableRQPS, "", "s", "floor"); !strings.HasPrefix(c.Text, "1.01±") || c.Version != "a2" {
		t.Errorf("floor: %q of %s, want 1.01 with an interval, of a2", c.Text, c.Version)
	}
	all := strings.Join(append(tb.Preamble, tb.Notes...), "\n")
	for _, want := range []string{"col-1 : b", "floor : a2 against a (A/A)", "floor: the rQPS of one server measured under two labels"} {
		if !strings.Contains(all, want) {
			t.Errorf("preamble and notes lack %q:\n%s", want, all)
		}
	}

	rep, err = build(floorRecs(map[string]float64{"a": 1000, "b": 1200, "b2": 1300}, map[string]string{"b2": "b"}),
		Options{Base: "a", Tables: []string{TableRQPS}})
	if err != nil {
		t.Fatal(err)
	}
	if c := cell(t, rep, TableRQPS, "", "s", "floor"); !strings.HasPrefix(c.Text, "1.08±") {
		t.Errorf("floor of b2 against b: %q, want 1.08", c.Text)
	}
	// Without aa_of there is no floor.
	rep, err = build(floorRecs(map[string]float64{"a": 1000, "b": 1200, "a2": 1010}, nil), Options{Base: "a", Tables: []string{TableRQPS}})
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(rep.Tables[0].Header, " "); h != "col-1 col-2" {
		t.Errorf("no A/A pair: header %q", h)
	}
}

// TestReportAutoRepeats: with repeats = "auto", the note at the top says
// the precision and how many repeats each step ran; a cell whose interval
// is wider than the precision after the maximum is marked m (and d, its
// repeats having a CV of 14%), a precise one is not.
func TestReportAutoRepeats(t *testing.T) {
	auto := &record.AutoRepeats{Precision: 0.02, Max: 6, Base: "a"}
	var recs []*record.Record
	wide := []float64{1200, 1500, 1100, 1600, 1300, 1400}
	for i := range 6 {
		for _, r := range []*record.Record{
			stepRec("a", "steady", i+1, 1000+float64(i)), stepRec("b", "steady", i+1, 1200+float64(i)),
			stepRec("a", "noisy", i+1, 1000+float64(i)), stepRec("b", "noisy", i+1, wide[i]),
		} {
			r.AutoRepeats = auto
			recs = append(recs, r)
		}
	}
	recs = append(recs, stepRec("a", "short", 1, 1000), stepRec("b", "short", 1, 1000))
	for _, r := range recs[len(recs)-2:] {
		r.AutoRepeats = auto
	}
	rep, err := build(recs, Options{Base: "a", Tables: []string{TableRQPS}})
	if err != nil {
		t.Fatal(err)
	}
	want := `repeats = "auto": each step ran until every rQPS against a had a 95% interval within ±2%, or 6 repeats (cells ` +
		`marked m stopped there, wider); repeats run: steady at 1 thread: 6 (the maximum); noisy at 1 thread: 6 (the maximum); short at 1 thread: 1`
	if !strings.Contains(strings.Join(rep.Notes, "\n"), want) {
		t.Errorf("notes lack\n%s\nin\n%s", want, strings.Join(rep.Notes, "\n"))
	}
	steady, noisy, short := cell(t, rep, TableRQPS, "", "steady", "col-1"), cell(t, rep, TableRQPS, "", "noisy", "col-1"),
		cell(t, rep, TableRQPS, "", "short", "col-1")
	if strings.ContainsAny(steady.Text, "dm") || !strings.HasSuffix(noisy.Text, "dm") || strings.Contains(short.Text, "m") {
		t.Errorf("steady %q (no mark), noisy %q (dm), short %q (no m: it could run more)", steady.Text, noisy.Text, short.Text)
	}
	notes := strings.Join(rep.Tables[0].Notes, "\n")
	for _, w := range []string{"d: the repeats' throughputs disagree", `m: repeats = "auto": the step ran the most repeats`} {
		if !strings.Contains(notes, w) {
			t.Errorf("table notes lack %q:\n%s", w, notes)
		}
	}
}
