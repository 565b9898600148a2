package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

func TestCheckDuet(t *testing.T) {
	src := `
[run]
compare = "duet"
threads = [1, 2]
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
[[version]]
label = "b"
basedir = "installed"
`
	p := parsePlan(t, src)
	r := &runner{plan: p, place: placement{mode: plan.PlacementThreads, pl: p.Placement, own: cpuset.Set{0, 1}}}
	// 2 versions at 2 threads need 4 CPUs of their own: refused, with the
	// plan's line, before anything starts.
	err := r.checkDuet(p.Expand())
	if err == nil || !strings.Contains(err.Error(), "(line 3 of ") || !strings.Contains(err.Error(), "needs 4 CPUs (2 versions × 2 threads") ||
		!strings.Contains(err.Error(), `use compare = "auto"`) {
		t.Errorf("2 versions × 2 threads on 2 CPUs: %v", err)
	}
	// At 1 thread they fit.
	one := parsePlan(t, strings.Replace(src, "threads = [1, 2]", "threads = [1]", 1))
	r.plan = one
	if err := r.checkDuet(one.Expand()); err != nil {
		t.Errorf("2 versions × 1 thread on 2 CPUs: %v", err)
	}
	// Under auto, the same comparison is measured in slices.
	auto := parsePlan(t, strings.Replace(src, `compare = "duet"`, `compare = "auto"`, 1))
	r.plan = auto
	if err := r.checkDuet(auto.Expand()); err != nil {
		t.Errorf("auto: %v", err)
	}
	var items []plan.Item
	for _, it := range auto.Expand() {
		if it.Action == plan.ActionMeasure && it.Threads == 2 {
			items = append(items, it)
		}
	}
	c := &comparison{r: r, st: items[0].Step, threads: 2}
	if mode := c.resolveMode(items); mode != record.ComparisonSlices {
		t.Errorf("auto at 2 threads on 2 CPUs: %s, want slices", mode)
	}
	c = &comparison{r: r, st: items[0].Step, threads: 1}
	if mode := c.resolveMode(items); mode != record.ComparisonDuet || len(c.sets) != 2 || c.sets[0].String() != "0" || c.sets[1].String() != "1" {
		t.Errorf("auto at 1 thread on 2 CPUs: %s with sets %v, want duet on 0 and 1", mode, c.sets)
	}
}

// TestTickSkipsEndedWindow: a member whose window ended (its server
// exited) no longer takes ticks; a tick must not wait for it, or the
// comparison hangs.
func TestTickSkipsEndedWindow(t *testing.T) {
	ended := &member{ticks: make(chan time.Time, 1), active: true}
	ended.ticks <- time.Now() // a tick it never took
	live := &member{ticks: make(chan time.Time, 1), active: true}
	acks := make(chan *member, 2)
	results := make(chan result, 2)
	go func() {
		<-live.ticks
		acks <- live
	}()
	c := &comparison{}
	done := make(chan struct{})
	go func() {
		c.tick(context.Background(), []*member{ended, live}, acks, results)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("tick waits for a member whose window ended")
	}
}

// TestFirstFrom: in a duet every version is moved (and read) first once a
// turn, whatever slice the turn starts at, and visits every set of CPUs
// once: an order effect (the version moved onto a set another still holds
// shares it until that one moves) falls on every version alike.
func TestFirstFrom(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4} {
		for start := range 2 * n {
			first := map[int]int{}
			sets := map[[2]int]bool{}
			for slot := start; slot < start+n; slot++ {
				order := firstFrom(slot, n)
				if len(order) != n {
					t.Fatalf("n=%d slot %d: order %v", n, slot, order)
				}
				seen := map[int]bool{}
				for _, i := range order {
					seen[i] = true
					sets[[2]int{i, (i + slot) % n}] = true
				}
				if len(seen) != n {
					t.Errorf("n=%d slot %d: order %v does not move every member once", n, slot, order)
				}
				first[order[0]]++
			}
			for i := range n {
				if first[i] != 1 {
					t.Errorf("n=%d turn from slot %d: member %d first %d times, want once", n, start, i, first[i])
				}
			}
			if len(sets) != n*n {
				t.Errorf("n=%d turn from slot %d: %d (member, set) placements, want %d", n, start, len(sets), n*n)
			}
		}
	}
}

// TestDescribeUnknownBusy: a slice whose edges were not both read (the
// host's CPU times failed) is not a quiet slice: the Record of the version
// that ran in it says for how many of its slices the busy check was not
// made, and why; a version that did not run in it is not warned.
func TestDescribeUnknownBusy(t *testing.T) {
	mk := func(label string) *member {
		m := &member{rec: &record.Record{Outcome: record.OutcomeOK, Comparison: &record.Comparison{Slices: make([]record.Slice, 4)}}}
		m.it.Version = &plan.Version{Label: label}
		return m
	}
	a, b := mk("a"), mk("b")
	c := &comparison{id: "c1", mode: record.ComparisonSlices, inWindow: []*member{a, b}, slots: []int{0, 1, 0, 1},
		other: []float64{0, 0, 0, 0}, busy: []bool{false, false, false, false}, unknown: []bool{false, true, false, false},
		hostErr: errors.New("read the host's CPU times: open /proc/stat: too many open files")}
	c.describe(a)
	c.describe(b)
	text := func(m *member) string {
		var s []string
		for _, w := range m.rec.Warnings {
			s = append(s, w.Text)
		}
		return strings.Join(s, "\n")
	}
	if w := text(b); !strings.Contains(w, "not known for 1 of the 2 slices this version ran") || !strings.Contains(w, "too many open files") {
		t.Errorf("b ran the unchecked slice; warnings:\n%s", w)
	}
	if w := text(a); strings.Contains(w, "not known") {
		t.Errorf("a did not run the unchecked slice; warnings:\n%s", w)
	}
}
