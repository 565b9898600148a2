package analysis

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// One goroutine's namer computes Records one after the other: the role
// shares of each are its own whatever roles and events the Record before it
// had, and in whatever order its roles list their events.
func TestRoleSharesOneNamer(t *testing.T) {
	a := stepRecord("v", "s", 1, 100, counted("instructions", 1000))
	a.Roles = []record.Role{
		{Name: "connection", Threads: 4, Counters: []record.Counter{counted("instructions", 600), counted("cycles", 300)}},
		{Name: "innodb-io", Threads: 2, Counters: []record.Counter{counted("cycles", 100), counted("instructions", 400)}},
	}
	b := stepRecord("v", "s", 2, 100, counted("instructions", 1000))
	b.Roles = []record.Role{
		{Name: "innodb-io", Threads: 3, Counters: []record.Counter{counted("instructions", 10)}},
		{Name: "connection", Threads: 5, Counters: []record.Counter{counted("instructions", 30), counted("branch-misses", 7)}},
		{Name: "log", Threads: 1, Counters: []record.Counter{counted("branch-misses", 0), counted("instructions", 60)}},
	}
	// Hand-computed shares: a's instructions 600 and 400 of 1000, cycles
	// 300 and 100 of 400; b's instructions 10, 30 and 60 of 100,
	// branch-misses 7 and 0 of 7.
	wantA := map[string]float64{
		RoleMetric("connection", "instructions"): 0.6, RoleMetric("innodb-io", "instructions"): 0.4,
		RoleMetric("connection", "cycles"): 0.75, RoleMetric("innodb-io", "cycles"): 0.25,
		RoleMetric("connection", "threads"): 4, RoleMetric("innodb-io", "threads"): 2,
	}
	wantB := map[string]float64{
		RoleMetric("innodb-io", "instructions"): 0.1, RoleMetric("connection", "instructions"): 0.3,
		RoleMetric("log", "instructions"):         0.6,
		RoleMetric("connection", "branch-misses"): 1, RoleMetric("log", "branch-misses"): 0,
		RoleMetric("innodb-io", "threads"): 3, RoleMetric("connection", "threads"): 5, RoleMetric("log", "threads"): 1,
	}
	n := newNamer()
	for round := range 2 { // the namer remembers a's and b's roles in turn
		for _, c := range []struct {
			r    *record.Record
			want map[string]float64
		}{{a, wantA}, {b, wantB}, {a, wantA}} {
			p := computeWith(c.r, Options{}, n)
			for m, w := range c.want {
				if got := p.Get(m); !got.OK() || !near(got.Value, w) {
					t.Errorf("round %d, repeat %d: %s = %+v, want %v", round, c.r.Repeat, m, got, w)
				}
			}
			var roles []string
			for _, m := range p.Metrics() {
				if len(m) > 5 && m[:5] == "role:" {
					roles = append(roles, m)
				}
			}
			if len(roles) != len(c.want) {
				t.Errorf("round %d, repeat %d: role metrics %q, want the %d of %v", round, c.r.Repeat, roles, len(c.want), c.want)
			}
			if c.r == b {
				if got := p.Get(RoleMetric("innodb-io", "cycles")); got.State != Missing {
					t.Errorf("b's innodb-io cycles = %+v, want missing (a's role metric)", got)
				}
			}
		}
	}
}

// A metric set twice in one Record keeps the value set last; Metrics
// lists each once, sorted; Records computed alike share a layout and the
// same events, Records computed otherwise do not.
func TestMetricNumbering(t *testing.T) {
	table := func(ipc float64) *record.Record {
		r := record.New(record.KindTable)
		r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h", "v", "s", 1, 1
		// IPC is computed from the counters, then given by the table.
		r.Metrics = map[string]float64{TableQPS: 100, TableSeconds: 10, "instructions": 3000, "cycles": 1000, IPC: ipc}
		return r
	}
	n := newNamer()
	p1, p2 := computeWith(table(2.5), Options{}, n), computeWith(table(1.5), Options{}, n)
	if c := p1.Get(IPC); !c.OK() || c.Value != 2.5 {
		t.Errorf("IPC = %+v, want the table's 2.5 over the computed 3", c)
	}
	if c := p2.Get(IPC); !c.OK() || c.Value != 1.5 {
		t.Errorf("IPC = %+v, want the table's 1.5", c)
	}
	ms := p1.Metrics()
	if !sort.StringsAreSorted(ms) || len(slices.Compact(slices.Clone(ms))) != len(ms) {
		t.Errorf("metrics %q: want each once, sorted", ms)
	}
	for _, m := range []string{OpsPerSecond, IPC, CPI, "instructions/o", "cycles/o"} {
		if !slices.Contains(ms, m) || !p1.Has(m) {
			t.Errorf("metrics %q: want %s", ms, m)
		}
	}
	if p1.Has("no-such-metric") || p1.Get("no-such-metric").State != Missing {
		t.Errorf("a metric no Record has: has %v, %+v", p1.Has("no-such-metric"), p1.Get("no-such-metric"))
	}
	if p1.layout != p2.layout || &p1.Events[0] != &p2.Events[0] {
		t.Errorf("Records computed alike: layouts %p and %p, events %p and %p, want each shared", p1.layout, p2.layout, &p1.Events[0], &p2.Events[0])
	}
	r3 := table(1)
	r3.Metrics["branch-misses"] = 5
	p3 := computeWith(r3, Options{}, n)
	if p3.layout == p1.layout || len(p3.Events) != 3 || len(p1.Events) != 2 {
		t.Errorf("a Record with one more event shares the layout (%v) or events: %q and %q", p3.layout == p1.layout, p1.Events, p3.Events)
	}
	if c := p3.Get(MPKIName("branch-misses")); !c.OK() || !near(c.Value, 5.0/3) {
		t.Errorf("MPKI(branch-misses) = %+v, want 5 per 3000 instructions", c)
	}
	// Shared events have no spare capacity: an append to one Record's
	// copies them rather than write into another's.
	if cap(p1.Events) != len(p1.Events) {
		t.Errorf("events %q have capacity %d", p1.Events, cap(p1.Events))
	}
}

// Each thing a Record has to say makes a line of Warnings on its own: a
// failed repeat, a partial window, a note on how a metric was computed;
// Records with nothing to say make none.
func TestWarningsEachRemark(t *testing.T) {
	clean := stepRecord("v", "clean", 1, 1000, counted("task-clock", 1e9))
	failed := stepRecord("v", "failed", 1, 1000, counted("task-clock", 1e9))
	failed.Outcome, failed.Error = record.OutcomeFailed, "sysbench exited 1"
	partial := stepRecord("v", "partial", 1, 1000, counted("task-clock", 1e9))
	partial.Outcome, partial.Error = record.OutcomePartial, "SIGTERM"
	noted := stepRecord("v", "noted", 1, 1000) // cpu/o from /proc: a note
	noted.OS = &record.OS{UserSeconds: 1}
	c, err := New([]*record.Record{clean, failed, partial, noted}, "v", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r    *record.Record
		want []string
	}{
		{clean, []string{}},
		{failed, []string{"v (host h, 1 thread) failed: failed: sysbench exited 1"}},
		{partial, []string{"v (host h, 1 thread) partial: partial window (10 s): SIGTERM"}},
		{noted, []string{"v (host h, 1 thread) noted: cpu/o from /proc user+system time (task-clock not measured)"}},
	} {
		got := c.Warnings([]record.Key{clean.Key(), tc.r.Key()}, TopicGeneral|TopicCPU, nil)
		if !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("%s: warnings %q, want %q", tc.r.Step, got, tc.want)
		}
	}
}

// The U test's p-value kept by the order of the merged samples is the one
// benchmath computes for each pair of samples: samples of 2 to 8 values
// drawn from few values (many ties), from many (few ties), shifted apart.
func TestUTestByRankOrder(t *testing.T) {
	c := &Comparison{}
	rng := rand.New(rand.NewPCG(7, 8))
	calls := 0
	for range 3000 {
		draw := func(n, distinct int, shift float64) []float64 {
			out := make([]float64, n)
			for i := range out {
				out[i] = float64(rng.IntN(distinct)) + shift
			}
			slices.Sort(out)
			return out
		}
		distinct := []int{2, 3, 5, 1000}[rng.IntN(4)]
		v, b := draw(2+rng.IntN(7), distinct, 0), draw(2+rng.IntN(7), distinct, float64(rng.IntN(3)))
		want := uTestP(slices.Clone(v), slices.Clone(b), 0.05)
		if got := c.uTest(v, b); got != want {
			t.Fatalf("uTest(%v, %v) = %v, benchmath %v", v, b, got, want)
		}
		calls++
	}
	if len(c.uTests) == 0 || len(c.uTests) >= calls {
		t.Errorf("%d p-values kept for %d tests", len(c.uTests), calls)
	}
	if k := rankOrder(nil, []float64{1, 2, 2}, []float64{0, 2, 3}); string(k) != "bvvVBb" {
		t.Errorf("order %q, want bvvVBb", k)
	}
}
