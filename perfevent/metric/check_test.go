package metric

import (
	"bytes"
	"strings"
	"testing"
)

// When one event does not open, exactly the metrics that read it are not
// computable. (Every set's events encode on fixture machines:
// TestEncodingsMatchPerf, with perf.)
func TestCheck(t *testing.T) {
	s := setNamed("amdzen4")
	failing := s.Event("ex_ret_brn_misp").Spelling
	var probed []string
	openReason := func(spelling string) string {
		probed = append(probed, spelling)
		if spelling == failing {
			return "refused"
		}
		return ""
	}
	r := Check(s, "AuthenticAMD-25-11-0", true, openReason)
	if len(probed) != len(s.Events) {
		t.Errorf("probed %d events, the set has %d", len(probed), len(s.Events))
	}
	for _, e := range r.Events {
		if e.Opens != (e.Spelling != failing) {
			t.Errorf("%s (%s): opens %v, reason %q", e.Name, e.Spelling, e.Opens, e.Reason)
		}
	}
	want := map[string]bool{"branch_misprediction_ratio": false, "bad_speculation_mispredicts": false,
		"bad_speculation_pipeline_restarts": false, "retiring": true, "frontend_bound_latency": true}
	for _, m := range r.Metrics {
		if w, ok := want[m.Name]; ok && m.Computable != w {
			t.Errorf("%s: computable %v, want %v (missing %v)", m.Name, m.Computable, w, m.Missing)
		}
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"metric set amdzen4, from Linux 6.12.117 tools/perf/pmu-events/arch/x86/amdzen4", "20 of 23 metrics can be computed here",
		"cpu/event=0xc3/", "no: refused"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}
