package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// window is a Record of label at repeat with qps queries per second over a
// 10 s window.
func window(label string, repeat int, qps float64) *record.Record {
	r := record.New(record.KindStep)
	r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h", label, "point-query_range=100", 1, repeat
	r.Window.Seconds = 10
	r.Ops = record.Ops{Source: "Questions", Count: 10 * qps, Per: 1, Counted: true}
	r.Counters = []record.Counter{{Event: "task-clock", Raw: 1, Enabled: 1, Running: 1, Value: 1, Status: record.StatusCounted}}
	return r
}

func TestWindowsRounds(t *testing.T) {
	dir := t.TempDir()
	// Three repeats: a2 against a is 1.0, 1.1 and 0.9.
	for i, q := range [][2]float64{{1000, 1000}, {1000, 1100}, {1000, 900}} {
		for j, label := range []string{"a", "a2"} {
			r := window(label, i+1, q[j])
			if err := record.Write(filepath.Join(dir, record.FileName(r)), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out strings.Builder
	if err := run(&out, []string{dir}, "a", "a2"); err != nil {
		t.Fatal(err)
	}
	// The rounds' ratios are 1.000 1.100 0.900: mean 1, sample standard
	// deviation 0.1: a CV of 10.0%. The rQPS is the medians' ratio, 1.
	got := out.String()
	for _, want := range []string{"windows", "1.000 1.100 0.900", "10.0%", "furthest rQPS 1.000, largest round CV 10.0%"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if cv := spread([]float64{1, 1.1, 0.9}); math.Abs(cv-0.1) > 1e-12 {
		t.Errorf("spread = %v, want 0.1", cv)
	}
	if spread([]float64{2}) != 0 {
		t.Error("the spread of one round is not 0")
	}
}
