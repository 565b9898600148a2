package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSchema1Testdata: the Records of testdata/records are schema 1, kept
// so as they were written; every one reads as schema 2, its warnings with
// codes, and reading does not change the file.
func TestSchema1Testdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "records", "*.json"))
	if err != nil || len(files) < 20 {
		t.Fatalf("testdata records: %d files, %v", len(files), err)
	}
	var multiplexed, failed, counted int
	for _, f := range files {
		before, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(before, []byte(`"schema":1`)) && !bytes.Contains(before, []byte(`"schema": 1`)) {
			t.Errorf("%s is not a schema-1 Record: testdata/records stay schema 1", f)
		}
		r, err := Read(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if r.Schema != SchemaVersion {
			t.Errorf("%s reads as schema %d", f, r.Schema)
		}
		for _, w := range r.Warnings {
			if w.Code == WarnMultiplexed {
				multiplexed++
				if !reflect.DeepEqual(w.Events, []string{"cache-misses"}) || !strings.HasPrefix(w.Text, "cache-misses was multiplexed") {
					t.Errorf("%s: multiplexing warning %+v", f, w)
				}
			}
		}
		switch {
		case r.Outcome == OutcomeFailed:
			failed++
			if r.Ops.Counted || r.OpsCounted() {
				t.Errorf("%s: a failed Record has its ops counted", f)
			}
		case r.Ops.Counted && r.OpsCounted():
			counted++
		default:
			t.Errorf("%s: ops %+v not counted", f, r.Ops)
		}
		if after, _ := os.ReadFile(f); !bytes.Equal(before, after) {
			t.Errorf("reading %s changed it", f)
		}
	}
	// 3 multiplexed windows, 1 failed step; the other Records counted
	// their ops (0 included: none of them has a "no op count" warning).
	if multiplexed != 3 || failed != 1 || counted != len(files)-1 {
		t.Errorf("%d multiplexing warnings (want 3), %d failed (want 1), %d counted (want %d)", multiplexed, failed, counted, len(files)-1)
	}
}

// TestClassifySchema1: the rules that give a schema-1 warning its code and
// events, in order (a warning mentioning roles concerns the roles).
func TestClassifySchema1(t *testing.T) {
	for _, tc := range []struct {
		text, source string
		code         Code
		events       []string
	}{
		{"performance_schema is off: roles come from the processlist, thread names and /proc", "Questions", WarnRoles, nil},
		{"1 threads started inside the window (innodb-pool 1): their counts are in the role of the thread that created them", "Questions", WarnRoles, nil},
		{"IO of the process not measured: read_bytes, write_bytes, rchar, wchar, syscr and syscw are not measurements", "Questions", WarnIONotMeasured, nil},
		{"write_bytes went backwards (4096 → 0): counted as 0", "Questions", WarnIO, nil},
		{"host CPU not measured: /proc/stat unreadable", "Questions", WarnHostCPUNotMeasured, nil},
		{"3 threads exited inside the window: context switches they made after its start are not counted", "Questions", WarnCSSplit, nil},
		{"cache-misses was multiplexed: counted 62.0% of the time, value scaled", "Questions", WarnMultiplexed, []string{"cache-misses"}},
		{"cycles ran 50.00% of the time (multiplexed): its value is perf's scaled estimate", "", WarnMultiplexed, []string{"cycles"}},
		// Other spellings of a generic event name its canonical one.
		{"cpu-cycles was multiplexed: counted 40.0% of the time, value scaled", "Questions", WarnMultiplexed, []string{"cycles"}},
		{"cpu-cycles:u ran 40.00% of the time (multiplexed)", "", WarnMultiplexed, []string{"cycles:u"}},
		{"LLC-loads, cs, l1d-load-miss not counted: never scheduled", "Questions", WarnNotCounted, []string{"LLC-loads",
			"context-switches", "L1-dcache-load-misses"}},
		{"no op count: the server has no Com_select at the window's end", "Com_select", WarnOpsNotCounted, nil},
		{"no client.queries count for the window: the client's lines cover only 67% of it", "client.queries", WarnOpsNotCounted, nil},
		// "no <source> count" is about the Record's own source only.
		{"no Questions count for the window", "client.queries", WarnGeneral, nil},
		{"ops estimated as sysbench's whole-run QPS (100.00) × the perf window (10.000 s): the two are not aligned", "client.queries", WarnOpsEstimated, nil},
		{"partial window (4 s): interrupted", "Questions", WarnGeneral, nil},
	} {
		w := classify(tc.text, tc.source)
		if w.Code != tc.code || !reflect.DeepEqual(w.Events, tc.events) || w.Text != tc.text || w.Roles != nil {
			t.Errorf("%q (ops %s): %+v, want code %s events %q", tc.text, tc.source, w, tc.code, tc.events)
		}
	}
}

// TestSchema1Conversion: event names become canonical everywhere (the
// counter under its canonical name wins a clash in a series point), ops
// are counted unless the window failed or a warning said there was no
// count, an import of the estimate era gets Ops.Estimated, and a Record
// without a group keeps none (readers take the suite's).
func TestSchema1Conversion(t *testing.T) {
	const head = `{"schema":1,"kind":"%s","outcome":"%s","version":"v","step":"point-query_range=100","threads":1,"repeat":1,`
	parse := func(t *testing.T, kind, outcome, rest string) *Record {
		t.Helper()
		r, err := Parse([]byte(fmt.Sprintf(head, kind, outcome) + rest))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := parse(t, "stat", "ok", `"ops":{"source":"Questions","count":0,"per":1},
		"counters":[{"event":"cpu-cycles","value":5,"status":"scaled","time_enabled_ns":2,"time_running_ns":1},{"event":"cs","value":3,"status":"counted"}],
		"roles":[{"role":"connection","counters":[{"event":"cpu-cycles:u","value":5,"status":"counted"}]}],
		"series":[{"t":1,"seconds":1,"counters":{"cs":4,"context-switches":7,"cpu-cycles":9}}],
		"warnings":["cpu-cycles was multiplexed: counted 50.0% of the time, value scaled"]}`)
	if r.Schema != SchemaVersion || r.Counters[0].Event != "cycles" || r.Counters[1].Event != "context-switches" || r.Roles[0].Counters[0].Event != "cycles:u" {
		t.Errorf("counters %+v roles %+v", r.Counters, r.Roles)
	}
	if want := map[string]float64{"context-switches": 7, "cycles": 9}; !reflect.DeepEqual(r.Series[0].Counters, want) {
		t.Errorf("series counters %v, want %v", r.Series[0].Counters, want)
	}
	if len(r.Warnings) != 1 || r.Warnings[0].Code != WarnMultiplexed || !reflect.DeepEqual(r.Warnings[0].Events, []string{"cycles"}) {
		t.Errorf("warnings %+v", r.Warnings)
	}
	if !r.Ops.Counted || r.Ops.Count != 0 || r.Group != "" {
		t.Errorf("an idle window counted 0 ops: ops %+v, group %q", r.Ops, r.Group)
	}

	r = parse(t, "stat", "ok", `"ops":{"source":"Com_select","per":1},"warnings":["no op count: the server has no Com_select at the window's end"]}`)
	if r.Ops.Counted || r.OpsCounted() || r.Warnings[0].Code != WarnOpsNotCounted {
		t.Errorf("no op count: ops %+v warnings %+v", r.Ops, r.Warnings)
	}
	r = parse(t, "step", "failed", `"ops":{"source":"Questions","count":0}}`)
	if r.Ops.Counted {
		t.Errorf("failed: ops %+v", r.Ops)
	}
	r = parse(t, "step", "ok", `"ops":{}}`)
	if r.Ops.Counted {
		t.Errorf("no op source: ops %+v", r.Ops)
	}

	const estimate = `"ops":{"source":"client.queries","count":1000},"client":{"tool":"sysbench","whole_run":true},
		"warnings":["ops estimated as sysbench's whole-run QPS (100.00) × the perf window (10.000 s): the two are not aligned"]}`
	if r := parse(t, "imported", "ok", estimate); !r.Ops.Estimated || !r.Ops.Counted || r.Warnings[0].Code != WarnOpsEstimated {
		t.Errorf("old import: ops %+v warnings %+v", r.Ops, r.Warnings)
	}
	// The runner's Records count the client's ops over the window.
	if r := parse(t, "step", "ok", estimate); r.Ops.Estimated {
		t.Errorf("a step Record is estimated: %+v", r.Ops)
	}
}

// TestParseRefuses: kinds no file holds, unknown codes, warnings that do
// not name the events their code needs, and later schemas are refused with
// what is wrong.
func TestParseRefuses(t *testing.T) {
	const id = `"outcome":"ok","version":"v","step":"s","repeat":1`
	for _, tc := range []struct{ json, want string }{
		{`{"schema":1,"kind":"table",` + id + `}`, `kind "table"`},
		{`{"schema":2,"kind":"table",` + id + `}`, `kind "table"`},
		{`{"schema":1,"kind":"metrics",` + id + `}`, `unknown kind "metrics"`},
		{`{"schema":2,"kind":"step",` + id + `,"warnings":[{"code":"odd","text":"x"}]}`, `unknown code "odd"`},
		{`{"schema":2,"kind":"step",` + id + `,"warnings":[{"code":"multiplexed","text":"x"}]}`, "names no event"},
		{`{"schema":2,"kind":"step",` + id + `,"warnings":["x"]}`, "decode record"},
		{`{"schema":3,"kind":"step",` + id + `}`, "record schema 3 is newer"},
	} {
		if _, err := Parse([]byte(tc.json)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.json, err, tc.want)
		}
	}
}

// TestSchema2RoundTrip: typed warnings, ops.counted and group survive a
// write and a read.
func TestSchema2RoundTrip(t *testing.T) {
	r := sample()
	r.Group = "writes"
	r.Ops.Counted = true
	r.AddWarning(Warning{Code: WarnMultiplexed, Events: []string{"cache-misses"}, Text: "cache-misses was multiplexed"},
		Warning{Code: WarnRoles, Roles: []string{"innodb-io"}, Text: "innodb-io threads named by their creator"})
	r.Warnf(WarnGeneral, "%d threads exited", 3)
	r.Warnf(WarnGeneral, "%d threads exited", 3) // said once
	b, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"schema":2`, `"group":"writes"`, `"counted":true`,
		`{"code":"multiplexed","events":["cache-misses"],"text":"cache-misses was multiplexed"}`, `"roles":["innodb-io"]`} {
		if !bytes.Contains(compact.Bytes(), []byte(s)) {
			t.Errorf("%s lacks %s", compact.Bytes(), s)
		}
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Warnings, r.Warnings) || len(got.Warnings) != 3 || got.Group != "writes" || !got.OpsCounted() {
		t.Errorf("read back warnings %+v group %q ops %+v", got.Warnings, got.Group, got.Ops)
	}
}
