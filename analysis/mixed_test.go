package analysis

import (
	"errors"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// TestNewRefusesMixedCell checks that a cell whose repeats come from two
// machines (host names, CPU models or CPU counts), two server builds or
// two kinds of Record is refused, saying what was mixed, in which
// repeats, and how to split it: their median (cpu/o 65 where one machine
// measured 90 and the other 40) describes neither. A Record that does not
// say (a failed one written without provenance) mixes nothing.
func TestNewRefusesMixedCell(t *testing.T) {
	recs := func(edit func(rep int, r *record.Record)) []*record.Record {
		var out []*record.Record
		for _, v := range []string{"base", "v"} {
			for rep := 1; rep <= 3; rep++ {
				r := stepRecord(v, "point", rep, 1000, counted("task-clock", 1e9))
				r.Provenance = record.Provenance{Hostname: "h", CPUModel: "AMD EPYC 9454", CPUs: 96}
				r.Server = &record.Server{Version: "11.4.3-MariaDB"}
				if v == "v" {
					edit(rep, r)
				}
				out = append(out, r)
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		edit func(rep int, r *record.Record)
		want string
	}{
		{"CPU models", func(rep int, r *record.Record) {
			if rep == 3 {
				r.Provenance.CPUModel = "Intel Xeon Gold 6430"
			}
		}, `v point (host h, 1 thread): one cell mixes machines (CPU models): "AMD EPYC 9454" (repeats 1, 2), "Intel Xeon Gold 6430" (repeat 3); its median would describe none of them: report each machine's Records on their own`},
		{"host names", func(rep int, r *record.Record) {
			if rep != 2 {
				r.Provenance.Hostname = "h2"
			}
		}, `one cell mixes machines (host names): "h2" (repeats 1, 3), "h" (repeat 2)`},
		{"server builds", func(rep int, r *record.Record) {
			if rep == 1 {
				r.Server.Version = "11.8.1-MariaDB"
			}
		}, `one cell mixes server builds (server.version): "11.8.1-MariaDB" (repeat 1), "11.4.3-MariaDB" (repeats 2, 3); its median would describe none of them: give each build its own version label`},
		{"kinds", func(rep int, r *record.Record) {
			if rep == 2 {
				r.Kind = record.KindStat
			}
		}, `one cell mixes kinds of Record: "step" (repeats 1, 3), "stat" (repeat 2)`},
	} {
		_, err := New(recs(c.edit), "base", Options{})
		if !errors.Is(err, errMixedCell) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant an error with %s", c.name, err, c.want)
		}
	}
	// A failed Record without provenance or server, as a campaign writes
	// for a measurement it lost, mixes nothing.
	if _, err := New(recs(func(rep int, r *record.Record) {
		if rep == 2 {
			r.Outcome, r.Provenance, r.Server = record.OutcomeFailed, record.Provenance{}, nil
		}
	}), "base", Options{}); err != nil {
		t.Errorf("a failed Record without provenance: %v", err)
	}
}
