package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// cpuGapRecords returns the fixtures with a cpu-gap warning, each with its
// own numbers, on 8 successful windows of sysbench steps, and a busy
// warning on one more; the texts of both.
func cpuGapRecords(t *testing.T, gaps int) ([]*record.Record, []string, string) {
	t.Helper()
	recs := fixtures(t)
	var texts []string
	busy := ""
	var last *record.Record
	for _, r := range recs {
		sysbench := strings.HasSuffix(r.Step, "_range=100") && !strings.Contains(r.Step, ".warm")
		if r.Outcome != record.OutcomeOK || !sysbench {
			continue
		}
		if len(texts) < gaps {
			text := fmt.Sprintf("task-clock %d.0 ms is %d.5%% below the CPU time of the server over the window", 2600+len(texts), 5+len(texts))
			r.AddWarning(record.Warning{Code: record.WarnCPUGap, Text: text})
			texts = append(texts, text)
		} else {
			last = r
		}
	}
	if last != nil {
		busy = "busy host: other processes used 0.90 CPU over the window"
		last.AddWarning(record.Warning{Code: record.WarnBusy, Text: busy})
	}
	if len(texts) != gaps || busy == "" {
		t.Fatalf("the fixtures have %d sysbench windows, want %d", len(texts), gaps+1)
	}
	return recs, texts, busy
}

// qpsNotes returns the notes under the QPS table of a report in a format.
func qpsNotes(t *testing.T, rep *report) []string {
	t.Helper()
	for _, tb := range rep.Tables {
		if tb.ID == tableQPS {
			return tb.Notes
		}
	}
	t.Fatal("no QPS table")
	return nil
}

// TestReportGroupsManyWarningsOfOneCode: 8 windows under the QPS table
// carry a cpu-gap warning each (different numbers) and one a busy warning.
// The table has one cpu-gap note saying 8 of its windows and the first
// window's full text, no per-window cpu-gap note, and the busy note as it
// is without the cpu-gap warnings; text, Markdown and HTML print that one
// note once; the JSON still carries every window's cpu-gap text.
func TestReportGroupsManyWarningsOfOneCode(t *testing.T) {
	recs, texts, busy := cpuGapRecords(t, 8)
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := qpsNotes(t, rep)
	var grouped []string
	for _, n := range notes {
		for _, text := range texts[1:] {
			if strings.Contains(n, text) {
				t.Errorf("a window's own cpu-gap note is still printed: %s", n)
			}
		}
		if strings.Contains(n, "cpu-gap") {
			grouped = append(grouped, n)
		}
	}
	if len(grouped) != 1 {
		t.Fatalf("%d cpu-gap notes under the QPS table, want 1:\n%s", len(grouped), strings.Join(notes, "\n"))
	}
	// The QPS table rests on the 22 windows of the fixtures' 23 Records
	// that are not the warm-up (point-query.warm, left out of the tables).
	m := regexp.MustCompile(`^warning cpu-gap in 8 of the (\d+) windows \((.*)\); the first, (.*) repeat (\d+): (.*)$`).FindStringSubmatch(grouped[0])
	if m == nil {
		t.Fatalf("cpu-gap note not as expected: %s", grouped[0])
	}
	if m[1] != "22" {
		t.Errorf("note says %s windows, the QPS table's Records are 22: %s", m[1], grouped[0])
	}
	if m[5] != texts[0] {
		t.Errorf("the note's example is %q, want the first window's text %q", m[5], texts[0])
	}
	if want := "mariadb-10.11.6, mariadb-11.4.3, mariadb-10.11.6-ps: point-query_range=100 (host bench1, 1 thread)"; m[2] != want {
		t.Errorf("the note says the windows are %q, want %q", m[2], want)
	}
	if m[3] != "mariadb-10.11.6 (host bench1, 1 thread) point-query_range=100" || m[4] != "1" {
		t.Errorf("the note's first window is %s repeat %s", m[3], m[4])
	}

	plain, err := build(func() []*record.Record { r, _, _ := cpuGapRecords(t, 0); return r }(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, n := range qpsNotes(t, plain) {
		if strings.Contains(n, busy) {
			want = n
		}
	}
	if want == "" || strings.Count(strings.Join(notes, "\n"), want) != 1 {
		t.Errorf("the busy note %q is not once among\n%s", want, strings.Join(notes, "\n"))
	}

	for _, format := range []string{"text", "markdown", "html"} {
		var b bytes.Buffer
		if err := Write(&b, format, recs, nil, Options{Tables: []string{tableQPS}}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if n := strings.Count(out, "warning cpu-gap in 8 of the "); n != 1 {
			t.Errorf("%s: the grouped cpu-gap note is there %d times", format, n)
		}
		for _, text := range texts {
			if n := strings.Count(out, text); n > 1 || (n == 1) != (text == texts[0]) {
				t.Errorf("%s: %q printed %d times", format, text, n)
			}
		}
	}

	var b bytes.Buffer
	if err := Write(&b, "json", recs, nil, Options{Tables: []string{tableQPS}}); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Tables []struct {
			Notes       []string `json:"notes"`
			WindowNotes []string `json:"window_notes"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Tables) != 1 {
		t.Fatalf("JSON has %d tables, want the QPS table", len(back.Tables))
	}
	if n := strings.Count(strings.Join(back.Tables[0].Notes, "\n"), "warning cpu-gap in 8 of the "); n != 1 {
		t.Errorf("JSON notes have the grouped cpu-gap note %d times", n)
	}
	all := strings.Join(back.Tables[0].WindowNotes, "\n")
	for _, text := range append(texts, busy) {
		if !strings.Contains(all, text) {
			t.Errorf("JSON window_notes lose %q", text)
		}
	}
}

// TestReportKeepsFewWarningsOfOneCode: with 3 windows carrying cpu-gap
// (3 different texts),
// each keeps its own note, as before, and no grouped note is printed.
func TestReportKeepsFewWarningsOfOneCode(t *testing.T) {
	recs, texts, _ := cpuGapRecords(t, groupWarnings)
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(qpsNotes(t, rep), "\n")
	if strings.Contains(notes, "warning cpu-gap in") {
		t.Errorf("3 cpu-gap windows grouped:\n%s", notes)
	}
	for _, text := range texts {
		if strings.Count(notes, text) != 1 {
			t.Errorf("%q is not once in\n%s", text, notes)
		}
	}
	for _, tb := range rep.Tables {
		if tb.WindowNotes != nil {
			t.Errorf("%s %q: window_notes set with nothing grouped", tb.ID, tb.Title)
		}
	}
}

// TestReportKeepsOneTextOfManyWindows: 8 windows carrying the same
// cpu-gap text are one note naming them, as before, not a grouped note.
func TestReportKeepsOneTextOfManyWindows(t *testing.T) {
	recs, texts, _ := cpuGapRecords(t, 8)
	for _, r := range recs {
		for i, w := range r.Warnings {
			if w.Code == record.WarnCPUGap {
				r.Warnings[i].Text = texts[0]
			}
		}
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(qpsNotes(t, rep), "\n")
	if strings.Contains(notes, "warning cpu-gap in") || strings.Count(notes, texts[0]) != 1 {
		t.Errorf("one cpu-gap text on 8 windows is not one plain note:\n%s", notes)
	}
}
