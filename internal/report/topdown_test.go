package report

import (
	"slices"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// tdStep is a point-query Record of 1,000 queries over seconds with the
// given counters (Sapphire Rapids' TopDown group as perf names it).
func tdStep(version string, seconds float64, counters map[string]float64) *record.Record {
	r := record.New(record.KindStep)
	r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h", version, "point-query", 1, 1
	r.Window.Seconds = seconds
	r.Ops = record.Ops{Source: "Questions", Count: 1000, Per: 1, Counted: true}
	for e, v := range counters {
		r.Counters = append(r.Counters, record.Counter{Event: e, Raw: uint64(v), Enabled: 1e10, Running: 1e10, Value: v, Status: record.StatusCounted})
	}
	return r
}

// TestAttributionTopDownColumn: the attribution table names the TopDown
// category that grew, with its share of the growth, next to the verdict;
// Records without TopDown counters get no such column.
func TestAttributionTopDownColumn(t *testing.T) {
	td := func(slots, ret, bs, fe, be, instr, cyc float64) map[string]float64 {
		return map[string]float64{"cpu/slots/": slots, "cpu/topdown-retiring/": ret, "cpu/topdown-bad-spec/": bs,
			"cpu/topdown-fe-bound/": fe, "cpu/topdown-be-bound/": be, "cpu/event=0xad,umask=0x10/": 1e6,
			"instructions": instr, "cycles": cyc}
	}
	// Per query (the numbers of perfevent's TestTopDownAttributionFakeKernel):
	// base retiring 4000, bad spec 2000, frontend 1000, backend 3000;
	// "backend" 4200, 2000, 900, 5500: backend grew 2500 of 2600 (96%);
	// "code" 5600, 2000, 1000, 3100: retiring grew 1600 of 1700 (94%).
	recs := []*record.Record{
		tdStep("base", 10, td(10e6, 4e6, 1e6, 2e6, 3e6, 5e6, 2.5e6)),
		tdStep("backend", 12.5, td(12.6e6, 4.2e6, 1e6, 1.9e6, 5.5e6, 5.25e6, 3.15e6)),
		tdStep("code", 12.5, td(11.7e6, 5.6e6, 1e6, 2e6, 3.1e6, 7e6, 3.125e6)),
	}
	rep, err := build(recs, Options{Base: "base"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ version, topdown, verdict string }{
		{"backend", "backend 96%", "memory"},
		{"code", "retiring 94%", "code"},
	} {
		if got := cell(t, rep, tableAttribution, tc.version, "point-query", "topdown").Text; got != tc.topdown {
			t.Errorf("%s: topdown %q, want %q", tc.version, got, tc.topdown)
		}
		if got := cell(t, rep, tableAttribution, tc.version, "point-query", "verdict").Text; got != tc.verdict {
			t.Errorf("%s: verdict %q, want %q", tc.version, got, tc.verdict)
		}
	}
	if got := cell(t, rep, tableCounters, "topdown.backend per operation", "point-query", "col-2").Text; got != "5500" { // col-2: version backend
		t.Errorf("backend slots per query of version backend %q, want 5500", got)
	}

	for _, r := range recs {
		r.Counters = slices.DeleteFunc(r.Counters, func(c record.Counter) bool { return c.Event != "instructions" && c.Event != "cycles" })
	}
	rep, err = build(recs, Options{Base: "base"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range rep.Tables {
		if tb.ID == tableAttribution && slices.Contains(tb.Header, "topdown") {
			t.Errorf("%q has a topdown column without TopDown counters: %q", tb.Title, tb.Header)
		}
	}
}
