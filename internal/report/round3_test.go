package report

import (
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// Tests of issue 29, items 6 to 9: reports that cannot mislead, round 3.

// A base whose throughput is subnormal (1e-321/s) is not 0: the ratio
// overflows float64, and the report says so rather than printing inf with
// the note that the base's value is 0.
func TestReportSubnormalBaseIsNotZero(t *testing.T) {
	recs := []*record.Record{stepRec("base", "s", 1, 1e-320), stepRec("v", "s", 1, 10000), stepRec("base", "t", 1, 1000), stepRec("v", "t", 1, 1000)}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := cell(t, rep, TableRQPS, "", "s", "col-1")
	notes := tableNotes(t, rep, TableRQPS, "")
	if c.Text == "inf" || strings.Contains(notes, "the base's value is 0") {
		t.Errorf("rqps of 1000/s over 1e-321/s = %q with notes %q: the base is not 0", c.Text, notes)
	}
	if c.Text != "-" || !strings.Contains(notes, "too close to 0") {
		t.Errorf("rqps = %q with notes %q, want - and a note that the base is too close to 0 to divide by", c.Text, notes)
	}
}

// Any finite value prints short and true: 1e300 operations per second is
// not 300 digits (of which all but the first 16 are float noise).
func TestFormatHugeValuesShort(t *testing.T) {
	for _, f := range []struct {
		name string
		f    numFormat
	}{{"ratio", fmtRatio}, {"ratio3", fmtRatio3}, {"int", fmtInt}, {"abs", fmtAbs}, {"qps", fmtQPS}, {"pct", fmtPct}, {"hist", fmtHist}, {"share", func(v float64) string { return fmtShare(v / 100) }}} {
		for _, v := range []float64{1e300, -2.5e300, 1.7e308, 1e16, 123456789012345678} {
			s := f.f(v)
			if len(s) > 12 {
				t.Errorf("%s(%g) = %q: %d characters", f.name, v, s, len(s))
			}
			got, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
			if err != nil || got/v < 0.99 || got/v > 1.01 {
				t.Errorf("%s(%g) = %q, which does not read back as the value", f.name, v, s)
			}
		}
		// Below the cut, the published forms stay.
		if s := f.f(123456); strings.ContainsAny(s, "e") {
			t.Errorf("%s(123456) = %q, want no exponent", f.name, s)
		}
	}
	rep, err := build([]*record.Record{stepRec("base", "s", 1, 1e301), stepRec("v", "s", 1, 2e301)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := cell(t, rep, tableQPS, "", "s", "col-1"); c.Text != "1.00e+300" {
		t.Errorf("qps of 1e301 ops in 10 s = %q, want 1.00e+300", c.Text)
	}
}
