package perfevent_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// sapphireRapidsRoot writes the sysfs and /proc of a Sapphire Rapids core
// PMU as far as TopDown needs them: the cpu PMU (type 4) with its event and
// umask fields and the slots and topdown-* aliases the kernel publishes.
func sapphireRapidsRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	cpu := filepath.Join(root, "sys/bus/event_source/devices/cpu")
	files := map[string]string{
		"type":                    "4",
		"cpus":                    "0-1",
		"format/event":            "config:0-7",
		"format/umask":            "config:8-15",
		"events/slots":            "event=0x00,umask=0x4",
		"events/topdown-retiring": "event=0x00,umask=0x80",
		"events/topdown-bad-spec": "event=0x00,umask=0x81",
		"events/topdown-fe-bound": "event=0x00,umask=0x82",
		"events/topdown-be-bound": "event=0x00,umask=0x83",
		"events/instructions":     "event=0xc0",
		"events/cpu-cycles":       "event=0x3c",
	}
	for name, text := range files {
		write(t, filepath.Join(cpu, name), text+"\n")
	}
	write(t, filepath.Join(root, "proc/cpuinfo"), "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nstepping\t: 8\n\n")
	return root
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tdWindow is what one window counts, in millions (slots and the topdown
// events in slots; INT_MISC.UOP_DROPPING in uops), and its length.
type tdWindow struct {
	slots, retiring, badSpec, feBound, beBound, uopDropping float64
	instructions, cycles                                    float64
	seconds                                                 float64
}

// Encodings on the fixture's cpu PMU (type 4): config = umask<<8 | event.
const (
	cfgSlots    = 0x0400
	cfgRetiring = 0x8000
	cfgBadSpec  = 0x8100
	cfgFEBound  = 0x8200
	cfgBEBound  = 0x8300
	cfgDropping = 0x10ad // INT_MISC.UOP_DROPPING on Sapphire Rapids: event 0xad, umask 0x10
)

// tdRecord counts the TopDown group, instructions and cycles on the fake
// kernel and returns the Record, with 1,000 operations over w.seconds (the
// op count and window length are what perfbench run takes from the
// server's status and its clock; the fake kernel has neither).
func tdRecord(t *testing.T, sys *perfevent.System, version string, w tdWindow) *record.Record {
	t.Helper()
	list, err := perfevent.Parse("{cpu/slots/,cpu/topdown-retiring/,cpu/topdown-bad-spec/,cpu/topdown-fe-bound/,cpu/topdown-be-bound/},cpu/event=0xad,umask=0x10/,instructions,cycles", sys)
	if err != nil {
		t.Fatal(err)
	}
	r := perfevent.FakeWindowRecord(t, sys, list, func(typ uint32, config uint64) uint64 {
		m := func(v float64) uint64 { return uint64(math.Round(v * 1e6)) }
		switch {
		case typ == 4 && config == cfgSlots:
			return m(w.slots)
		case typ == 4 && config == cfgRetiring:
			return m(w.retiring)
		case typ == 4 && config == cfgBadSpec:
			return m(w.badSpec)
		case typ == 4 && config == cfgFEBound:
			return m(w.feBound)
		case typ == 4 && config == cfgBEBound:
			return m(w.beBound)
		case typ == 4 && config == cfgDropping:
			return m(w.uopDropping)
		case typ == 0 && config == 1: // PERF_COUNT_HW_INSTRUCTIONS
			return m(w.instructions)
		case typ == 0 && config == 0: // PERF_COUNT_HW_CPU_CYCLES
			return m(w.cycles)
		}
		t.Errorf("unexpected event type %d config %#x opened", typ, config)
		return 0
	})
	r.Kind, r.Host, r.Version, r.Step, r.Threads, r.Repeat = record.KindStep, "h", version, "point-query", 1, 1
	r.Window.Seconds = w.seconds
	r.Ops = record.Ops{Source: "Questions", Count: 1000, Per: 1, Counted: true}
	return r
}

// TestTopDownAttributionFakeKernel is the hand-computed TopDown
// attribution: three versions of one step counted on a fake Sapphire
// Rapids, each over 1,000 queries. Sapphire Rapids' level 1 (perf's
// spr-metrics.json), with S = fe + bs + ret + be of the topdown events and
// SLOTS = slots:
//
//	retiring  = ret / S
//	backend   = be / S
//	frontend  = fe / S − UOP_DROPPING / SLOTS
//	bad spec  = max(1 − (frontend + backend + retiring), 0)
//
// and a category's slots per query is its fraction × SLOTS / 1,000.
//
// base: SLOTS 10M; ret 4M, bs 1M, fe 2M, be 3M (S = 10M), dropping 1M;
// 10 s (100 q/s). Per query: retiring 4M/10M × 10M / 1000 = 4000,
// backend 3000, frontend (2M/10M − 1M/10M) × 10M / 1000 = 1000, bad spec
// (1 − 0.1 − 0.3 − 0.4) × 10,000 = 2000.
//
// backend: SLOTS 12.6M; ret 4.2M, bs 1.0M, fe 1.9M, be 5.5M (S = 12.6M),
// dropping 1M; 12.5 s (80 q/s, rQPS 0.8). Per query: retiring 4200,
// backend 5500, frontend (1.9 − 1) × 1000 = 900, bad spec
// (12.6 − 0.9 − 5.5 − 4.2) × 1000 = 2000. Growth: +200, +2500, −100, 0;
// all slots +2600. Backend grew most: 2500 / 2600 = 0.961538 of the
// growth: memory.
//
// code: SLOTS 11.7M; ret 5.6M, bs 1.0M, fe 2.0M, be 3.1M (S = 11.7M),
// dropping 1M; 12.5 s (rQPS 0.8). Per query: retiring 5600, backend 3100,
// frontend 1000, bad spec (11.7 − 1 − 3.1 − 5.6) × 1000 = 2000. Growth:
// +1600, +100, 0, 0; all +1700. Retiring grew most: 1600 / 1700 =
// 0.941176: code.
//
// Instructions and cycles per query (base 5000 and 2500) give the
// three-term verdict next to it: backend's 5250 and 3150 make r(instr/o)
// 1.05 and r(CPI) 1.2, memory's share ln 1.2 / ln 1.25 = 0.817 (memory);
// code's 7000 and 3125 make r(instr/o) 1.4, code's share ln 1.4 / ln 1.25
// = 1.508 (code).
func TestTopDownAttributionFakeKernel(t *testing.T) {
	sys, err := perfevent.LoadSystem(sapphireRapidsRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	recs := []*record.Record{
		tdRecord(t, sys, "base", tdWindow{slots: 10, retiring: 4, badSpec: 1, feBound: 2, beBound: 3, uopDropping: 1, instructions: 5, cycles: 2.5, seconds: 10}),
		tdRecord(t, sys, "backend", tdWindow{slots: 12.6, retiring: 4.2, badSpec: 1, feBound: 1.9, beBound: 5.5, uopDropping: 1, instructions: 5.25, cycles: 3.15, seconds: 12.5}),
		tdRecord(t, sys, "code", tdWindow{slots: 11.7, retiring: 5.6, badSpec: 1, feBound: 2, beBound: 3.1, uopDropping: 1, instructions: 7, cycles: 3.125, seconds: 12.5}),
	}
	for _, r := range recs {
		for _, c := range r.Counters {
			if c.Status != record.StatusCounted {
				t.Fatalf("%s: %s is %s on the fake kernel", r.Version, c.Event, c.Status)
			}
		}
	}
	c, err := analysis.New(recs, "base", analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Categories and verdicts as the report prints them.
	perOp := map[string]map[string]float64{
		"base":    {"retiring": 4000, "backend": 3000, "frontend": 1000, "bad-speculation": 2000},
		"backend": {"retiring": 4200, "backend": 5500, "frontend": 900, "bad-speculation": 2000},
		"code":    {"retiring": 5600, "backend": 3100, "frontend": 1000, "bad-speculation": 2000},
	}
	sc := c.Scopes[0]
	for v, want := range perOp {
		k := analysis.Key(sc, v, "point-query")
		for cat, w := range want {
			m := "topdown." + cat + "/o"
			if got := c.Value(k, m); !got.OK() || !near(got.Value, w) {
				t.Errorf("%s: %s = %+v, want %v slots per query", v, m, got, w)
			}
		}
		if got := c.Value(k, "topdown.smt-contention/o"); got.State != analysis.Missing {
			t.Errorf("%s: Sapphire Rapids has no SMT contention category, got %+v", v, got)
		}
	}
	cases := []struct {
		version, grew  string
		share          float64
		verdict, three string
		growth         map[string]float64
	}{
		{"backend", "backend", 2500.0 / 2600, "memory", "memory",
			map[string]float64{"retiring": 200, "backend": 2500, "frontend": -100, "bad-speculation": 0}},
		{"code", "retiring", 1600.0 / 1700, "code", "code",
			map[string]float64{"retiring": 1600, "backend": 100, "frontend": 0, "bad-speculation": 0}},
	}
	for _, tc := range cases {
		a := c.Attribute(analysis.Key(sc, tc.version, "point-query"))
		if !a.RQPS.OK() || !near(a.RQPS.Value, 0.8) {
			t.Errorf("%s: rQPS %+v, want 0.8", tc.version, a.RQPS)
		}
		td := a.TopDown
		if td.Set != "sapphirerapids" {
			t.Errorf("%s: TopDown set %q, want sapphirerapids", tc.version, td.Set)
		}
		if string(td.Grew) != tc.grew || string(td.Verdict) != tc.verdict || !near(td.Share, tc.share) {
			t.Errorf("%s: TopDown says %s grew (%v of the growth), verdict %s; want %s (%v), %s", tc.version, td.Grew, td.Share, td.Verdict, tc.grew, tc.share, tc.verdict)
		}
		if string(a.Verdict) != tc.three {
			t.Errorf("%s: three-term verdict %s, want %s", tc.version, a.Verdict, tc.three)
		}
		growth := map[string]float64{}
		for cat, g := range td.Growth {
			growth[string(cat)] = g
		}
		for cat, w := range tc.growth {
			if g, ok := growth[cat]; !ok || !near(g, w) {
				t.Errorf("%s: growth of %s %v, want %v", tc.version, cat, g, w)
			}
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
