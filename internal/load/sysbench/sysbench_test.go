package sysbench

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// Expected values are typed from the files in testdata/sysbench.

func parseFixture(t *testing.T, name string) *Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "sysbench", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func TestReadWriteHistogram(t *testing.T) {
	r := parseFixture(t, "oltp_read_write.t2.histogram.txt")
	if len(r.Warnings) > 0 || !r.Complete {
		t.Fatalf("complete %v, warnings %v", r.Complete, r.Warnings)
	}
	got := []float64{r.Reads, r.Writes, r.Other, r.Total, r.Transactions, r.TPS, r.Queries, r.QPS, r.IgnoredErrors, r.ErrPS, r.Reconnects,
		r.TotalTime, r.Events, r.LatencyMin, r.LatencyAvg, r.LatencyMax, r.LatencyPct, r.LatencySum, r.Percentile, r.EventsAvg, r.EventsStd, r.ExecAvg, r.ExecStd}
	want := []float64{54194, 15482, 7741, 77417, 3870, 1288.70, 77417, 25779.67, 1, 0.33, 0,
		3.0024, 3870, 0.69, 1.55, 8.78, 1.82, 5999.37, 95, 1935.0000, 4.00, 2.9997, 0.00}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d: %v, want %v", i, got[i], want[i])
		}
	}
	if r.Threads != 2 || r.ReportInterval != 1 || r.Version != "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)" {
		t.Errorf("threads %d interval %v version %q", r.Threads, r.ReportInterval, r.Version)
	}
	wantIv := []record.Interval{
		{At: 1, Threads: 2, TPS: 1354.72, QPS: 27135.43, Reads: 19002.10, Writes: 5420.89, Other: 2712.44, LatencyMs: 1.76, Errors: 1.00},
		{At: 2, Threads: 2, TPS: 1275.86, QPS: 25519.25, Reads: 17864.08, Writes: 5103.45, Other: 2551.73, LatencyMs: 1.89},
		{At: 3, Threads: 2, TPS: 1236.38, QPS: 24739.66, Reads: 17313.36, Writes: 4953.53, Other: 2472.77, LatencyMs: 1.89},
	}
	if len(r.Intervals) != 3 {
		t.Fatalf("%d intervals", len(r.Intervals))
	}
	for i, w := range wantIv {
		if r.Intervals[i] != w {
			t.Errorf("interval %d: %+v, want %+v", i, r.Intervals[i], w)
		}
	}
	if len(r.Histogram) != 105 {
		t.Fatalf("%d histogram rows, want 105", len(r.Histogram))
	}
	first, last := r.Histogram[0], r.Histogram[len(r.Histogram)-1]
	if first != (record.Bucket{UpToMs: 0.690, Count: 5}) || last != (record.Bucket{UpToMs: 8.737, Count: 1}) {
		t.Errorf("histogram first %+v last %+v", first, last)
	}
	// sysbench's histogram counts every event once.
	var sum float64
	for _, b := range r.Histogram {
		sum += b.Count
	}
	if sum != r.Events {
		t.Errorf("histogram counts add up to %v, events %v", sum, r.Events)
	}
	c := r.Client()
	if c.Tool != "sysbench" || c.Queries != 77417 || c.Seconds != 3.0024 || c.Errors != 1 || c.LatencyP95 != 1.82 ||
		c.Percentile != 0 || len(c.Histogram) != 105 || len(c.Intervals) != 3 {
		t.Errorf("client %+v", c)
	}
}

func TestPercentiles(t *testing.T) {
	r := parseFixture(t, "oltp_point_select.t1.p99.txt")
	if r.Percentile != 99 || r.LatencyPct != 0.09 || r.Queries != 31982 || r.TotalTime != 2.0011 {
		t.Errorf("p99: %+v", r)
	}
	if r.Intervals[1].LatencyMs != 0.08 || r.Intervals[1].QPS != 16000.34 {
		t.Errorf("p99 interval %+v", r.Intervals[1])
	}
	if c := r.Client(); c.Percentile != 99 || c.LatencyP95 != 0.09 {
		t.Errorf("p99 client percentile %v latency %v", c.Percentile, c.LatencyP95)
	}
	r = parseFixture(t, "oltp_read_only.t1.nopct.txt")
	if r.Percentile != 0 || r.LatencyPct != 0 || r.Transactions != 1771 || r.Other != 3542 || len(r.Extra) != 0 || !r.Complete {
		t.Errorf("no percentile: %+v", r)
	}
}

func TestLuaExtraLines(t *testing.T) {
	r := parseFixture(t, "lua-extra-lines.txt")
	if !r.Complete || r.Queries != 197430 || r.QPS != 98562.90 || len(r.Intervals) != 2 || r.Intervals[1].QPS != 100133.69 || len(r.Warnings) != 0 {
		t.Errorf("%+v", r)
	}
	want := []string{"noisy: thread 0 ready", "noisy: thread 1 ready", "noisy: thread 0 done", "noisy: thread 1 done"}
	if strings.Join(r.Extra, "|") != strings.Join(want, "|") {
		t.Errorf("extra lines %q", r.Extra)
	}
}

func TestInterruptedAndFailed(t *testing.T) {
	r := parseFixture(t, "interrupted.txt")
	if r.Complete || len(r.Intervals) != 2 || r.Intervals[1].QPS != 111792.06 {
		t.Errorf("interrupted: complete %v intervals %+v", r.Complete, r.Intervals)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].Msg, "no final report") {
		t.Errorf("interrupted: warnings %v", r.Warnings)
	}
	r = parseFixture(t, "lua-fatal.txt")
	if r.Complete || len(r.Fatal) != 2 || r.Fatal[1] != "FATAL: Thread initialization failed!" {
		t.Errorf("fatal: %+v", r)
	}
	// Cut in the middle of the final report.
	b, _ := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sysbench", "oltp_read_write.t2.histogram.txt"))
	cut := b[:bytes.Index(b, []byte("General statistics"))]
	r, err := Parse(bytes.NewReader(cut))
	if err != nil || r.Complete || r.Queries != 77417 || len(r.Warnings) != 1 {
		t.Errorf("cut report: err %v complete %v queries %v warnings %v", err, r.Complete, r.Queries, r.Warnings)
	}
}

func TestLiveParser(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sysbench", "oltp_point_select.t1.p99.txt"))
	p := NewParser()
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		p.Line(l)
		if i == 12 { // line 13 is "[ 1s ]"
			r := p.Result()
			if len(r.Intervals) != 1 || r.Intervals[0].TPS != 15969.33 || r.Complete {
				t.Errorf("after line 13: %+v", r)
			}
		}
	}
	if r := p.Result(); !r.Complete || len(r.Intervals) != 2 {
		t.Errorf("end: %+v", r)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Parse(strings.NewReader("hello\nworld\n")); !errors.Is(err, errNotSysbench) {
		t.Errorf("not sysbench: %v", err)
	}
	r, err := Parse(strings.NewReader("sysbench 1.0.20\n\xff\xfe\n[ 1s ] thds: 2 tps: nan qps: 1\n[ 2s ] thds: 2 tps: 5.00 " +
		"qps: 10.00 (r/w/o: 10.00/0.00/0.00) lat (ms,95%): 0.02 err/s: 0.00 reconn/s: 0.00\n"))
	if err != nil || len(r.Intervals) != 1 || r.Intervals[0].At != 2 {
		t.Fatalf("err %v intervals %+v", err, r.Intervals)
	}
	var lines []int
	for _, w := range r.Warnings {
		lines = append(lines, w.Line)
	}
	if len(lines) != 3 || lines[0] != 2 || lines[1] != 3 || lines[2] != 0 {
		t.Errorf("warnings %v", r.Warnings)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "sysbench", "*.txt"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _ := Parse(bytes.NewReader(data))
		lines := bytes.Count(data, []byte("\n")) + 1
		nums := []float64{r.Reads, r.Writes, r.Other, r.Total, r.Transactions, r.TPS, r.Queries, r.QPS, r.IgnoredErrors, r.ErrPS,
			r.Reconnects, r.ReconnPS, r.TotalTime, r.Events, r.LatencyMin, r.LatencyAvg, r.LatencyMax, r.LatencyPct, r.LatencySum,
			r.Percentile, r.EventsAvg, r.EventsStd, r.ExecAvg, r.ExecStd, r.Warmup, r.ReportInterval}
		for _, iv := range r.Intervals {
			nums = append(nums, iv.At, iv.TPS, iv.QPS, iv.Reads, iv.Writes, iv.Other, iv.LatencyMs, iv.Errors, iv.Reconnects)
		}
		for _, b := range r.Histogram {
			nums = append(nums, b.UpToMs, b.Count)
		}
		for _, v := range nums {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite number in %+v", r)
			}
		}
		for _, w := range r.Warnings {
			if w.Line < 0 || w.Line > lines {
				t.Fatalf("warning line %d outside 0-%d", w.Line, lines)
			}
		}
		if r.Complete && r.TotalTime <= 0 && r.Events == 0 {
			t.Fatalf("complete without total time or events")
		}
		if len(r.Extra) > 100 {
			t.Fatalf("%d extra lines kept", len(r.Extra))
		}
	})
}
