package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// TestReportBusyWindows: a window flagged busy is listed in the report's
// notes by host, version, step, threads and repeat with the other CPU, and
// its warning is under every table of its version, as a warning on every
// number; without one there is no such note.
func TestReportBusyWindows(t *testing.T) {
	recs := fixtures(t)
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range rep.Notes {
		if strings.HasPrefix(n, "busy:") {
			t.Fatalf("no busy window, yet: %s", n)
		}
	}

	var r *record.Record
	for _, x := range recs {
		if x.Outcome == record.OutcomeOK && x.Kind != record.KindTable && x.Threads == 1 {
			r = x
			break
		}
	}
	const text = "busy host: other processes used 0.90 CPU over the window"
	r.AddWarning(record.Warning{Code: record.WarnBusy, Text: text})
	r.Interference = &record.Interference{OtherSeconds: 9, Seconds: 10, HostCPUs: 2}
	rep, err = build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("busy: other processes used the host's CPU during 1 window(s), whose numbers may be off (the "+
		"tables' notes say who): host %s, %s, step %s, 1 thread, repeat %d (others 0.90 CPU, 45%% of the host)",
		r.Host, r.Version, r.Step, r.Repeat)
	if !strings.Contains(strings.Join(rep.Notes, "\n"), want) {
		t.Errorf("report notes lack\n%s\n in\n%s", want, strings.Join(rep.Notes, "\n"))
	}
	in := 0
	for _, tb := range rep.Tables {
		if (tb.ID == TableRQPS || tb.ID == tableCPUIO) && strings.Contains(strings.Join(tb.Notes, "\n"), text) {
			in++
		}
	}
	if in < 2 {
		t.Errorf("the busy warning is under %d of the rQPS and CPU/IO tables", in)
	}
}
