package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perfbench/perfbench/record"
)

// comparedRecs are the Records of one comparison of the versions, a
// Record each: in turn t, version i did ops[t][i] operations. In duet a
// turn is a 1 s slice per version, every version running in each (its
// ops spread evenly over them); in slices, version i's load ran alone in
// the turn's i-th slice. edit may change a version's slices (busy,
// failed) before the Record's totals are added up.
func comparedRecs(id, mode, step string, threads, repeat int, versions []string, ops [][]float64,
	edit func(version string, sl []record.Slice)) []*record.Record {
	var recs []*record.Record
	for i, v := range versions {
		var sl []record.Slice
		for turn, o := range ops {
			for j := range versions {
				s := record.Slice{Turn: turn, Seconds: 1, OpsCounted: true}
				switch {
				case mode == record.ComparisonDuet:
					s.Ran, s.Ops = true, o[i]/float64(len(versions))
				case j == i:
					s.Ran, s.Ops = true, o[i]
				}
				sl = append(sl, s)
			}
		}
		if edit != nil {
			edit(v, sl)
		}
		r := stepRec(v, step, repeat, 0)
		r.Threads = threads
		r.Ops.Counted = true
		r.Window.Seconds = 0
		for j := range sl {
			sl[j].Start = r.Window.Seconds
			r.Window.Seconds += sl[j].Seconds
			if sl[j].Ran {
				r.Ops.Count += sl[j].Ops
			}
		}
		r.Comparison = &record.Comparison{Mode: mode, ID: id, Versions: versions, SliceSeconds: 1, Slices: sl}
		if v == "a2" {
			r.AAOf = "a"
		}
		recs = append(recs, r)
	}
	return recs
}

// pairedRecs are versions a (the base), b and a2 (an A/A twin of a)
// measured together:
//
//   - 1 thread, point-query, duet of a, b, a2, 2 repeats of 2 turns; a
//     did 300 operations a turn, b 270, 300 | 300, 300 (ratios 0.9, 1 |
//     1, and a turn left out: a's slice was busy), a2 300, 306 | 294, 300
//     (1, 1.02 | 0.98);
//   - 1 thread, read-write, a and b: repeat 1 in duet (a turn: 200
//     against 180, 0.9), repeat 2 in slices (100 against 80, 0.8): mixed;
//   - 2 threads, point-query, slices, 1 repeat of 3 turns: a 100 each, b
//     110, 121 and the middle turn left out (a read of a's slice failed);
//   - 2 threads, read-only, slices, 2 turns: 100 against 80, then b's
//     slice busy: a single pair.
func pairedRecs() []*record.Record {
	abc := []string{"a", "b", "a2"}
	ab := []string{"a", "b"}
	var recs []*record.Record
	recs = append(recs, comparedRecs("pq1-1", record.ComparisonDuet, "point-query", 1, 1, abc,
		[][]float64{{300, 270, 300}, {300, 300, 306}}, nil)...)
	recs = append(recs, comparedRecs("pq1-2", record.ComparisonDuet, "point-query", 1, 2, abc,
		[][]float64{{300, 300, 294}, {300, 300, 300}}, func(v string, sl []record.Slice) {
			if v == "a" {
				sl[3].Busy = true // turn 1's first slice
			}
		})...)
	recs = append(recs, comparedRecs("rw1-1", record.ComparisonDuet, "read-write", 1, 1, ab, [][]float64{{200, 180}}, nil)...)
	recs = append(recs, comparedRecs("rw1-2", record.ComparisonSlices, "read-write", 1, 2, ab, [][]float64{{100, 80}}, nil)...)
	recs = append(recs, comparedRecs("pq2-1", record.ComparisonSlices, "point-query", 2, 1, ab,
		[][]float64{{100, 110}, {100, 100}, {100, 121}}, func(v string, sl []record.Slice) {
			if v == "a" {
				sl[2].Error = "read Com_select: connection refused"
			}
		})...)
	recs = append(recs, comparedRecs("ro2-1", record.ComparisonSlices, "read-only", 2, 1, ab,
		[][]float64{{100, 80}, {100, 100}}, func(v string, sl []record.Slice) {
			if v == "b" {
				sl[3].Busy = true
			}
		})...)
	return recs
}

// TestReportPairsTable checks the pairs table against the counts and
// ratios worked out by hand from pairedRecs.
func TestReportPairsTable(t *testing.T) {
	rep, err := build(pairedRecs(), Options{Base: "a", Tables: []string{tablePairs}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != 2 {
		t.Fatalf("%d pairs tables, want one per thread count", len(rep.Tables))
	}
	type want struct{ title, step, version, cells, why string }
	for _, w := range []want{
		{"1 thread", "point-query", "b", "a duet 3 1 0 2 0.95 1.00 3.7% 0.97±40%~d",
			"turn ratios 0.9, 1 | 1 (one left out, busy); rounds √0.9 = 0.949 and 1, CV 0.0363/0.974 = 3.7% (d above 3%); " +
				"geometric mean of the rounds 0.9^(1/4) = 0.974; their logs ln(0.9)/2 and 0: s/√2 = 0.02634, × t(0.975, 1 df) 12.706 " +
				"= 0.3347: interval 0.697–1.361, +40%; t = -1 with 1 df: p = 0.5"},
		{"1 thread", "point-query", "a2", "a duet 3 1 0 2 1.01 0.98 2.1% 0.99±21%~",
			"the A/A twin against a: 1, 1.02 | 0.98; rounds √1.02 = 1.010 and 0.98, CV 2.1%; their logs' mean -0.00515: 0.995; " +
				"s/√2 = 0.01505, × 12.706 = 0.1913: interval 0.822–1.205, +21%"},
		{"1 thread", "read-write", "b", "a mixed 2 0 0 2 0.90 0.80 8.3% 0.85±111%~d",
			"a duet round of 0.9 and a slices round of 0.8: √0.72 = 0.849, CV 0.0707/0.85 = 8.3%; t = -2.79 with 1 df: p = 0.22"},
		{"2 threads", "point-query", "b", "a slices 2 0 1 1 1.15 - 1.15?",
			"1.1 and 1.21, the failed read's turn out: 1.1^1.5 = 1.154; one round: no CV, no interval, not tested"},
		{"2 threads", "read-only", "b", "a slices 1 1 0 1 0.80 - 0.80?",
			"a single pair, 80/100, the busy turn out: not tested, ?"},
	} {
		var got []string
		found := false
		for _, tb := range rep.Tables {
			if !strings.HasSuffix(tb.Title, w.title+")") {
				continue
			}
			for _, r := range tb.Sections[0].Rows {
				if r.Label == w.step && r.Cells[0].Text == w.version {
					found = true
					for _, c := range r.Cells[1:] {
						got = append(got, c.Text)
					}
				}
			}
		}
		if !found {
			t.Errorf("%s %s: no row of %s", w.title, w.step, w.version)
			continue
		}
		if g := strings.Join(got, " "); g != w.cells {
			t.Errorf("%s %s %s: %q, want %q (%s)", w.title, w.step, w.version, g, w.cells, w.why)
		}
	}
}

// TestReportPairedNotes: a table of paired ratios says what they are in
// short lines, one per mode, one for the statistic and one for the turns
// left out (counted once per version and base: 2 of 10 turns at 1
// thread, both busy; 2 of 5 at 2 threads, one busy, one failed), and none
// of the notes on repeats.
func TestReportPairedNotes(t *testing.T) {
	rep, err := build(pairedRecs(), Options{Base: "a"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"1 thread": {
			"duet: the versions ran at once, each on CPUs of its own, swapped every slice; a turn: every version once on every set of CPUs",
			"slices: one version's load ran at a time, the others stopped, switching every slice in a random order; a turn: a slice of each",
			"mixed: the ratio pairs the turns of duet and of slices comparisons (the mode changed between repeats)",
			"paired ratios: geometric mean of 2 rounds, a round the geometric mean of its turns' version/base ratios; ±x%: 95% t interval on their logs; ~: p >= 0.05",
			"d: a paired ratio whose rounds (repeats) disagree: their ratios' CV is above 3% (pairs table)",
			"left out: 2 of 10 turns: 2 with a busy slice",
			"-: not recorded", // a2 did not run read-write
		},
		"2 threads": {
			"slices: one version's load ran at a time, the others stopped, switching every slice in a random order; a turn: a slice of each",
			"paired ratios: geometric mean of 1 round, a round the geometric mean of its turns' version/base ratios; ±x%: 95% t interval on their logs; ~: p >= 0.05",
			"?: a paired ratio from a single round (repeat): not tested for significance, its turns are not independent samples",
			"left out: 2 of 5 turns: 1 with a busy slice, 1 with a failed read, no ops counted or cut short",
			"-: not recorded",
		},
	}
	for scope, lines := range want {
		notes := tableNotes(t, rep, TableRQPS, scope+")")
		var paired []string
		for _, n := range strings.Split(notes, "\n") {
			if !strings.HasPrefix(n, "floor:") {
				paired = append(paired, n)
			}
		}
		if got := strings.Join(paired, "\n"); got != strings.Join(lines, "\n") {
			t.Errorf("rqps notes (%s):\n%s\nwant:\n%s", scope, got, strings.Join(lines, "\n"))
		}
	}
	if c := cell(t, rep, TableRQPS, "2 threads", "read-only", "col-1"); c.Text != "0.80?" {
		t.Errorf("rQPS from a single pair %q, want 0.80?", c.Text)
	}
	// No table of paired ratios alone explains them by repeats (those
	// with absolute values have medians of repeats too), and every note
	// added for them is short.
	ours := []string{"duet:", "slices:", "mixed:", "paired ratios:", "?: a paired", "d: a paired", "left out:", "pairs:", "rounds:"}
	for _, tb := range rep.Tables {
		for _, n := range tb.Notes {
			for _, bad := range []string{"Mann-Whitney", "[n/m]", "no difference can be significant", "?: from a single repeat",
				"medians over repeats", "repeats' throughputs disagree"} {
				if strings.Contains(n, bad) && slices.Contains([]string{TableRQPS, tableAverage, tablePairs, tableSummary}, tb.ID) {
					t.Errorf("%s: a note on repeats: %q", tb.Title, n)
				}
			}
			if slices.ContainsFunc(ours, func(p string) bool { return strings.HasPrefix(n, p) }) && utf8.RuneCountInString(n) > 160 {
				t.Errorf("%s: a note of %d characters: %q", tb.Title, utf8.RuneCountInString(n), n)
			}
		}
	}
}

// TestReportPairsGolden renders the pairs table of pairedRecs as text and
// CSV.
func TestReportPairsGolden(t *testing.T) {
	for _, format := range []string{"text", "csv"} {
		var b bytes.Buffer
		if err := Write(&b, format, pairedRecs(), nil, Options{Base: "a", Tables: []string{tablePairs}}); err != nil {
			t.Fatal(err)
		}
		golden(t, "pairs."+format, b.Bytes())
	}
}

// TestReportWindowsNoPairs: Records measured in windows (no comparison)
// get no pairs table, and their rQPS notes are the repeats' as before.
func TestReportWindowsNoPairs(t *testing.T) {
	var recs []*record.Record
	for _, v := range []string{"a", "b"} {
		for i := range 4 {
			recs = append(recs, stepRec(v, "point-query", i+1, map[string]float64{"a": 1000, "b": 900}[v]+float64(i)))
		}
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range rep.Tables {
		if tb.ID == tablePairs {
			t.Errorf("a pairs table for windows: %s", tb.Title)
		}
	}
	want := []string{
		"values are medians over repeats",
		"no confidence interval is shown for cells with fewer than 6 repeats: too few for a 95% interval of the median",
	}
	if got := tableNotes(t, rep, TableRQPS, ""); got != strings.Join(want, "\n") {
		t.Errorf("rqps notes:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if c := cell(t, rep, TableRQPS, "", "point-query", "col-1"); c.Text != "0.90" || c.Paired != 0 {
		t.Errorf("rQPS %q (paired %v), want 0.90 from medians 901.5/1001.5, tested and significant", c.Text, c.Paired)
	}
	rep, err = build(recs, Options{Tables: []string{tablePairs}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != 0 {
		t.Errorf("--tables pairs on windows: %d tables, want none", len(rep.Tables))
	}
}

// TestReportJSONPaired: a paired ratio's JSON cell names its mode (its
// repeats are turns); a ratio of medians over repeats has none.
func TestReportJSONPaired(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "json", pairedRecs(), nil, Options{Base: "a", Tables: []string{TableRQPS}}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tables []struct {
			Title    string
			Sections []struct {
				Rows []struct {
					Label string
					Cells []struct {
						Text    string
						Paired  string
						Repeats int
						Version string
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tb := range doc.Tables {
		for _, s := range tb.Sections {
			for _, r := range s.Rows {
				for _, c := range r.Cells {
					got[tb.Title[strings.Index(tb.Title, "(")+1:]+" "+r.Label+" "+c.Version] = fmt.Sprintf("%s %s %d", c.Text, c.Paired, c.Repeats)
				}
			}
		}
	}
	for k, want := range map[string]string{
		"host h, 1 thread) point-query b":  "0.97±40%~d duet 2",
		"host h, 1 thread) point-query a2": "0.99±21%~ duet 2",
		"host h, 1 thread) read-write b":   "0.85±111%~d mixed 2",
		"host h, 2 threads) point-query b": "1.15? slices 1",
		"host h, 2 threads) read-only b":   "0.80? slices 1",
		"host h, 2 threads) read-only a2":  "-  0",
		"host h, 1 thread) read-write a2":  "-  0",
	} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}

	var w bytes.Buffer
	recs := []*record.Record{stepRec("a", "s", 1, 1000), stepRec("a", "s", 2, 1001), stepRec("b", "s", 1, 900), stepRec("b", "s", 2, 901)}
	if err := Write(&w, "json", recs, nil, Options{Tables: []string{TableRQPS}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(w.String(), `"paired"`) {
		t.Errorf("windows: a cell says it is paired:\n%s", w.String())
	}
}

// TestReportNoTurnLeft: when every turn of a comparison is left out, the
// ratio is of medians over repeats, which the notes say, and the pairs
// table's row has no per-round ratio and no rQPS of its own.
func TestReportNoTurnLeft(t *testing.T) {
	recs := comparedRecs("c", record.ComparisonDuet, "s", 1, 1, []string{"a", "b"}, [][]float64{{200, 180}, {200, 180}},
		func(v string, sl []record.Slice) {
			if v == "a" {
				sl[0].Busy, sl[2].Busy = true, true
			}
		})
	rep, err := build(recs, Options{Tables: []string{TableRQPS, tablePairs}})
	if err != nil {
		t.Fatal(err)
	}
	if n := tableNotes(t, rep, TableRQPS, ""); !strings.Contains(n, "left out: 2 of 2 turns: 2 with a busy slice; 1 ratio had no turn: medians of repeats") {
		t.Errorf("rqps notes:\n%s", n)
	}
	if c := cell(t, rep, TableRQPS, "", "s", "col-1"); c.Paired != 0 || c.Value != 0.9 {
		t.Errorf("rQPS %q (paired %v), want 0.9, 360/400 over the window, not paired", c.Text, c.Paired)
	}
	var got []string
	for _, c := range rep.Tables[1].Sections[0].Rows[0].Cells {
		got = append(got, c.Text)
	}
	if g := strings.Join(got, " "); g != "b a duet 0 2 0 0 - - -" {
		t.Errorf("pairs row %q, want b a duet 0 2 0 0 - - -", g)
	}
}

// TestReportQPSOfSlices: the absolute o/s of versions measured in slices is
// over the slices each one's load ran, and the qps table says so; a duet
// (every load ran all along) needs no such note.
func TestReportQPSOfSlices(t *testing.T) {
	// Slices, 2 turns: a did 100 then 120 in its 1 s slices, b 80 and 90:
	// a's o/s is 220 over 2 s of the 4 s window, 110.
	recs := comparedRecs("s1", record.ComparisonSlices, "point-query", 1, 1, []string{"a", "b"}, [][]float64{{100, 80}, {120, 90}}, nil)
	rep, err := build(recs, Options{Base: "a", Tables: []string{tableQPS}})
	if err != nil {
		t.Fatal(err)
	}
	const note = "o/s of versions measured in slices: over the slices in which each one's load ran (the others stopped)"
	if n := tableNotes(t, rep, tableQPS, ""); !strings.Contains(n, note) {
		t.Errorf("qps notes:\n%s\nwant the slices note", n)
	}
	if c := cell(t, rep, tableQPS, "", "point-query", "col-1"); c.Value != 110 {
		t.Errorf("a's o/s %v (%q), want 110", c.Value, c.Text)
	}
	duet := comparedRecs("d1", record.ComparisonDuet, "point-query", 1, 1, []string{"a", "b"}, [][]float64{{100, 80}, {120, 90}}, nil)
	rep, err = build(duet, Options{Base: "a", Tables: []string{tableQPS}})
	if err != nil {
		t.Fatal(err)
	}
	if n := tableNotes(t, rep, tableQPS, ""); strings.Contains(n, "measured in slices") {
		t.Errorf("a duet's qps notes say slices:\n%s", n)
	}
}
