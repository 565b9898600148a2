package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// FuzzReadCSV checks the CSV reader on any bytes, quoting included: it
// never panics; a refusal is one line naming the file and wrapping ErrCSV;
// what it accepts has versions and steps, finite values of at least 0 and
// metric names the report knows; and writing the accepted rows back as
// CSV, quoted by encoding/csv, reads back to the same Records.
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"version,step,threads,metric,value\nb,s,1,qps,5\n",
		"version,step,threads,metric,value\na\"b,s,1,qps,5\n",
		"version,step,threads,metric,value\n\"a\"\"b\",s,1,qps,5\n",
		"version,step,threads,metric,value\n\"a,b\",\"s\n2\",1,cpu/q,5\n",
		"version,step,threads,metric,value\n\"a\"b,s,1,qps,5\n",
		"\ufeffhost,version,step,threads,repeat,metric,value,group\r\nh,v,s,1,2,cycles,n/a,g\r\n",
		"# comment\nversion,step,threads,metric,value\nv,s,1,QPS,1e308\nv,s,1,cs,nc\n",
		"version,step,threads,metric,value\nv,s,1,qps,NaN\n",
		"version,step,threads,metric,value\nv,s,1,hist:query:1ms,-1\n",
		"version,step,threads,metric,value\nv,s,1,MPKI(cache-misses),2\nv,s,1,qps,\"3\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		recs, err := readCSV(strings.NewReader(in), "t.csv")
		if err != nil {
			if !errors.Is(err, errCSV) || !strings.Contains(err.Error(), "t.csv") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line naming t.csv", err)
			}
			return
		}
		var buf bytes.Buffer
		cw := csv.NewWriter(&buf)
		cw.Write([]string{"host", "version", "step", "threads", "repeat", "metric", "value"})
		for _, r := range recs {
			if r.Version == "" || r.Step == "" {
				t.Fatalf("Record without version or step: %+v", r)
			}
			for m, v := range r.Metrics {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("%s = %v accepted", m, v)
				}
				if c, _, err := canonicalMetric(m); err != nil || c != m {
					t.Fatalf("metric %q kept, canonical %q, %v", m, c, err)
				}
				cw.Write([]string{r.Host, r.Version, r.Step, fmt.Sprint(r.Threads), fmt.Sprint(r.Repeat), m, fmt.Sprint(v)})
			}
			for _, c := range r.Counters {
				if c.Status != "not supported" && c.Status != "not counted" {
					t.Fatalf("counter %+v", c)
				}
				cw.Write([]string{r.Host, r.Version, r.Step, fmt.Sprint(r.Threads), fmt.Sprint(r.Repeat), c.Event,
					map[string]string{"not supported": "n/a", "not counted": "nc"}[string(c.Status)]})
			}
		}
		cw.Flush()
		again, err := readCSV(&buf, "again.csv")
		if err != nil {
			t.Fatalf("the accepted rows written back are refused: %v\n%s", err, buf.String())
		}
		if len(again) != len(recs) {
			t.Fatalf("%d Records, written back %d", len(recs), len(again))
		}
		for i, r := range recs {
			a := again[i]
			// encoding/csv reads \r\n inside a quoted field as \n, and
			// the reader trims spaces around fields.
			norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
			if norm(a.Version) != norm(r.Version) || norm(a.Step) != norm(r.Step) || norm(a.Host) != norm(r.Host) ||
				a.Threads != r.Threads || a.Repeat != r.Repeat || len(a.Metrics) != len(r.Metrics) || len(a.Counters) != len(r.Counters) {
				t.Fatalf("Record %d read back as %+v, was %+v", i, a, r)
			}
			for m, v := range r.Metrics {
				if a.Metrics[m] != v {
					t.Fatalf("%s: %v read back as %v", m, v, a.Metrics[m])
				}
			}
		}
	})
}

// fuzzNames are metric names a generated table draws from: the
// vocabulary and its aliases; fuzzBadNames the reader must refuse.
var (
	fuzzNames = []string{
		"qps", "ops", "seconds", "instructions", "cycles", "cache-misses", "task-clock", "cs", "cpu/o", "cpu/q", "QPS",
		"r/o", "w/q", "IPC", "CPI", "MPKI(cache-misses)", "ips", "cpupq", "wkbpi", "target_ips", "hist:query:1ms",
		"hist:insert:gt", "max:delete", "instructions/o", "rps", "p99",
	}
	fuzzBadNames = []string{"cpu/query-time", "Qps!", "", "hist:x:1ms"}
)

// fuzzValues are the values a generated table draws from; fuzzBadValues
// the reader must refuse; n/a and nc only events may have.
var (
	fuzzValues    = []string{"0", "1", "2.5", "100", "0.001", "1e308", "1.7976931348623157e308", "4.9e-324", "1e-300", "123456789"}
	fuzzBadValues = []string{"-1", "NaN", "inf", "-inf", "1e400", "x"}
	fuzzStates    = []string{"n/a", "nc"}
)

// fuzzEvents are the names among fuzzNames that are perf events.
var fuzzEvents = map[string]bool{"instructions": true, "cycles": true, "cache-misses": true, "task-clock": true, "cs": true}

// fuzzLabels are label parts: ASCII, Latin letters, CJK, emoji, and
// characters the CSV must quote.
var fuzzLabels = []string{"", "ä", "8.0.39", "日本", "🙂", "a,b", "q\"t", " sp ", "l.i0", "scan_range=100", "Ω"}

// FuzzReport builds a long table from the fuzzer's bytes (random metric
// names, values with NaN, inf, negative and huge ones, unicode labels,
// 1 to 100 versions) and reports it in every format: nothing panics, a
// table the reader refuses is refused in one line, no cell prints or holds
// NaN, JSON is valid and benchfmt parses with finite values.
func FuzzReport(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7}, uint8(1))
	f.Add([]byte("the quick brown fox jumps over the lazy dog"), uint8(3))
	f.Add([]byte{1, 0, 0, 0, 2, 0, 1, 1, 5, 4, 9, 9, 3, 3, 3, 0}, uint8(99))
	f.Add(bytes.Repeat([]byte{7, 3, 1}, 40), uint8(12))
	f.Fuzz(fuzzReportBody)
}

func fuzzReportBody(t *testing.T, data []byte, nv uint8) {
	if len(data) == 0 {
		return
	}
	at := 0
	next := func(n int) int {
		b := data[at%len(data)]
		at++
		return int(b) % n
	}
	versions := 1 + int(nv)%100
	steps := 1 + next(4)
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write([]string{"version", "step", "threads", "repeat", "metric", "value"})
	seen := map[string]bool{}
	rows, badRow := 0, -1
	if next(8) == 0 {
		badRow = 1 + next(64)
	}
	for v := range versions {
		version := fmt.Sprintf("v%d%s", v, fuzzLabels[next(len(fuzzLabels))])
		for s := range steps {
			step := fmt.Sprintf("%s%d", fuzzLabels[next(len(fuzzLabels))], s)
			repeats := 1 + next(3)
			for r := range repeats {
				for range 1 + next(6) {
					// Rows the reader takes, so that the report sees up to
					// 100 versions; in one table of eight, one row it
					// must refuse.
					m := fuzzNames[next(len(fuzzNames))]
					value := fuzzValues[next(len(fuzzValues))]
					if fuzzEvents[m] && next(8) == 0 {
						value = fuzzStates[next(len(fuzzStates))]
					}
					if rows++; rows == badRow {
						if next(2) == 0 {
							m = fuzzBadNames[next(len(fuzzBadNames))]
						} else {
							value = fuzzBadValues[next(len(fuzzBadValues))]
						}
					}
					row := []string{version, step, fmt.Sprint(1 + next(2)), fmt.Sprint(r + 1), m, value}
					id := strings.Join(row[:5], "\x00")
					if seen[id] {
						continue
					}
					seen[id] = true
					cw.Write(row)
				}
			}
		}
	}
	cw.Flush()
	recs, err := readCSV(&buf, "fuzz.csv")
	if err != nil {
		if !errors.Is(err, errCSV) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "fuzz.csv") {
			t.Fatalf("error %q: want one line naming fuzz.csv", err)
		}
		return
	}
	rep, err := build(recs, Options{Legacy: true})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	for _, tb := range rep.Tables {
		for _, s := range tb.Sections {
			for _, r := range s.Rows {
				for _, c := range r.Cells {
					if strings.Contains(strings.ToLower(c.Text), "nan") || (c.OK() && math.IsNaN(c.Value)) {
						t.Fatalf("%s, %s: cell %q (%v)", tb.Title, r.Label, c.Text, c.Value)
					}
				}
			}
		}
	}
	for _, format := range Formats {
		var out bytes.Buffer
		if err := Write(&out, format, recs, nil, Options{Legacy: true}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		switch format {
		case "json":
			if !json.Valid(out.Bytes()) {
				t.Fatalf("JSON not valid:\n%s", out.String())
			}
		case "benchfmt":
			r := benchfmt.NewReader(&out, "fuzz.txt")
			for r.Scan() {
				if res, ok := r.Result().(*benchfmt.Result); ok {
					for _, v := range res.Values {
						if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
							t.Fatalf("benchfmt value %v %s", v.Value, v.Unit)
						}
					}
				}
			}
			if err := r.Err(); err != nil {
				t.Fatalf("benchfmt: %v", err)
			}
		}
	}
}
