package perfevent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The races of counting a process whose threads come and go, each played
// on the fake kernel (the Attach documentation says what perfbench does in
// each).

// cyclesGroup are two hardware events the engine opens as one group.
var cyclesGroup = []Event{cycles, instructions}

// fourSoftware are the software events of the churn tests.
var fourSoftware = []Event{taskClock, contextSwitches, cpuMigrations, pageFaults}

// TestRaceWindowStartUnreadable: a group that cannot be read when a window
// starts leaves the window's count unknown and the Record failed, saying
// why, instead of taking zeros as the start (which put everything counted
// since the attach into the window, with no warning left).
func TestRaceWindowStartUnreadable(t *testing.T) {
	f := newFakeSys()
	var broken atomic.Bool
	f.readErr = func(o fakeOpen, r int) error {
		if o.pid == 101 && o.attr.Read_format&formatGroup != 0 && broken.Load() {
			return syscall.ECHILD
		}
		return nil
	}
	root := fakeRoot(t, 100, threads(100, 101, 102))
	a, err := attachFake(t, f, root, 100, append(append([]Event(nil), cyclesGroup...), taskClock), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Unreadable at the window's start only.
	broken.Store(true)
	w, err := Measure(context.Background(), a, WindowOptions{Duration: time.Millisecond, OnStart: func(time.Time) error {
		broken.Store(false)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ec := range w.Total.Events[:2] {
		if ec.Status != StatusNotCounted || ec.Value != 0 || ec.Count != (Count{}) ||
			!strings.Contains(ec.Missing, "at the start of the window") || !strings.Contains(ec.Missing, "tid 101") || !strings.Contains(ec.Missing, "ECHILD") {
			t.Errorf("%s: %v %+v value %v missing %q; want not counted, no count, the reason", ec.Event.Name, ec.Status, ec.Count, ec.Value, ec.Missing)
		}
	}
	// task-clock, alone, read fine: counted.
	if tc := w.Total.Events[2]; tc.Status != StatusCounted || tc.Missing != "" || tc.Count.Raw != 3*2 {
		t.Errorf("task-clock %+v", tc)
	}
	if m := w.Total.Missing(); !strings.Contains(m, "the count of cycles, instructions is unknown") {
		t.Errorf("missing %q", m)
	}
	if !slices.ContainsFunc(noteTexts(w.Total.Notes), func(w string) bool { return strings.Contains(w, "at the start of the window") }) {
		t.Errorf("warnings %q do not keep the start's", noteTexts(w.Total.Notes))
	}
}

// TestRaceBackwards: a count that went backwards between two reads is not
// a 0: the window's count is unknown, with the numbers.
func TestRaceBackwards(t *testing.T) {
	f := newFakeSys()
	f.count = func(o fakeOpen, r int) Count {
		if o.pid == 101 && r == 2 {
			return Count{Raw: 1, Enabled: 2000, Running: 2000}
		}
		return Count{Raw: uint64(r) * 100, Enabled: uint64(r) * 1000, Running: uint64(r) * 1000}
	}
	a, err := attachFake(t, f, fakeRoot(t, 100, threads(100, 101)), 100, []Event{taskClock}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r0, _ := a.Read()
	r1, _ := a.Read()
	d, err := r1.Sub(r0)
	if err != nil {
		t.Fatal(err)
	}
	tc := d.Events[0]
	if tc.Status != StatusNotCounted || !strings.Contains(tc.Missing, "task-clock on tid 101 went backwards between two reads (raw 100 to 1") {
		t.Errorf("task-clock %+v", tc)
	}
}

// TestRacePartialGroupInherited: a thread cloned while its creator's group
// is half open inherits half a group, and every group read of the creator
// then fails (ECHILD) while it lives. Software events are opened alone, so
// they cannot be caught so; a hardware group is read once after the attach,
// and the attach starts over when it is in that state.
func TestRacePartialGroupInherited(t *testing.T) {
	t.Run("software events alone", func(t *testing.T) {
		f := newFakeSys()
		const tick = 1000 // the boot clock when the attach begins
		f.boot = tick*clockTick - f.bootStep
		root := fakeRoot(t, 100, threads(100, 101))
		// The leader creates a long-lived thread right after its first
		// counter opened, in every attempt (a server accepting
		// connections all the time).
		next := 300
		f.afterOpen = func(n int) {
			if o := f.opens(); o[len(o)-1].pid == 100 && o[len(o)-1].attr.Config == taskClock.Encodings[0].Config {
				f.clone(100, next)
				addFakeThread(t, root, 100, next, tick)
				next++
			}
		}
		a, err := attachFake(t, f, root, 100, fourSoftware, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range f.opens() {
			if o.group >= 0 {
				t.Fatalf("a software event was opened in a group: %+v", o)
			}
		}
		r0, _ := a.Read()
		r1, err := a.Read()
		if err != nil {
			t.Fatal(err)
		}
		d, _ := r1.Sub(r0)
		// The threads started in every attempt are named in a warning;
		// the counts are all known.
		if len(noteTexts(d.Notes)) != 1 || !strings.Contains(noteTexts(d.Notes)[0], "in each of 3 attempts (last: tid 302)") || d.Missing() != "" {
			t.Errorf("warnings %q, missing %q", noteTexts(d.Notes), d.Missing())
		}
		if c := a.Coverage(); c.Attempts != 3 || !slices.Equal(a.Threads(), []int{100, 101, 300, 301}) {
			t.Errorf("coverage %+v, threads %v", c, a.Threads())
		}
		// Each event reads 2 per thread and read: config+1 = 2, 4, 5, 3.
		for i, want := range []uint64{2, 4, 5, 3} {
			if got := d.Events[i].Count.Raw; got != 4*want {
				t.Errorf("%s: %d, want %d", d.Events[i].Event.Name, got, 4*want)
			}
		}
	})
	t.Run("hardware group inherited in part by a child process", func(t *testing.T) {
		f := newFakeSys()
		root := fakeRoot(t, 100, threads(100, 101))
		// A child process (not a thread of pid 100: the rescan does
		// not see it) forked between cycles' open and instructions'.
		forked := false
		f.afterOpen = func(n int) {
			if o := f.opens(); !forked && o[len(o)-1].pid == 100 && o[len(o)-1].group < 0 {
				forked = true
				f.clone(100, 5000)
			}
		}
		a, err := attachFake(t, f, root, 100, cyclesGroup, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c := a.Coverage(); c.Attempts != 2 || c.Raced != 1 {
			t.Errorf("coverage %+v, want 2 attempts, the first raced", c)
		}
		r0, _ := a.Read()
		r1, err := a.Read()
		if err != nil {
			t.Fatal(err)
		}
		d, _ := r1.Sub(r0)
		if d.Missing() != "" || d.Events[0].Count.Raw != 2 || d.Events[1].Count.Raw != 4 || len(noteTexts(d.Notes)) != 0 {
			t.Errorf("events %+v, missing %q, warnings %q", d.Events, d.Missing(), noteTexts(d.Notes))
		}
	})
	t.Run("every attempt races", func(t *testing.T) {
		f := newFakeSys()
		root := fakeRoot(t, 100, threads(100, 101))
		child := 5000
		f.afterOpen = func(n int) {
			if o := f.opens(); o[len(o)-1].pid == 100 && o[len(o)-1].group < 0 {
				child++
				f.clone(100, child)
			}
		}
		_, err := attachFake(t, f, root, 100, cyclesGroup, Options{})
		if err == nil || !errors.Is(err, errRaced) || !strings.Contains(err.Error(), "tid 100") || !strings.Contains(err.Error(), "in each of 3 attempts") {
			t.Errorf("err = %v, want the race named", err)
		}
	})
}

// TestRaceMemberRefusedWhileCreating: while a thread creates threads, the
// kernel may refuse a group member's open on it (EINVAL) although the
// thread is alive and the event fits: the group is opened again, and an
// event is called not supported only when the group does not open on
// perfbench's own thread either.
func TestRaceMemberRefusedWhileCreating(t *testing.T) {
	refuse := func(times int) func(n int, o fakeOpen) error {
		refused := 0
		return func(n int, o fakeOpen) error {
			if o.pid == 100 && o.group >= 0 && refused < times {
				refused++
				return syscall.EINVAL
			}
			return nil
		}
	}
	t.Run("twice", func(t *testing.T) {
		f := newFakeSys()
		f.fail = refuse(2)
		a, err := attachFake(t, f, fakeRoot(t, 100, threads(100, 101)), 100, cyclesGroup, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if un := a.Unsupported(); len(un) != 0 || a.Groups() != "{cycles,instructions}" {
			t.Errorf("unsupported %q, groups %s", un, a.Groups())
		}
	})
	t.Run("always, but it fits", func(t *testing.T) {
		f := newFakeSys()
		f.fail = refuse(1 << 30)
		_, err := attachFake(t, f, fakeRoot(t, 100, threads(100, 101)), 100, cyclesGroup, Options{})
		if !errors.Is(err, errRaced) || !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "instructions on tid 100") {
			t.Errorf("err = %v", err)
		}
		if f.here == 0 {
			t.Error("the group was not tried on perfbench's own thread")
		}
	})
	t.Run("does not fit", func(t *testing.T) {
		f := newFakeSys()
		f.fail = refuse(1 << 30)
		f.fitsHere = func(attrs []openAttr) bool { return len(attrs) < 2 }
		a, err := attachFake(t, f, fakeRoot(t, 100, threads(100, 101)), 100, cyclesGroup, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if un := a.Unsupported(); !strings.Contains(un["instructions"], "may not fit") || un["cycles"] != "" {
			t.Errorf("unsupported %q", un)
		}
	})
}

// TestRaceOpenOnExitingThread: an open on an exiting thread fails with
// ENODEV on 6.x kernels; when /proc shows the thread gone or a zombie, it
// is an exit, on the probe thread as on the others, not an unsupported
// event nor a failed attach.
func TestRaceOpenOnExitingThread(t *testing.T) {
	f := newFakeSys()
	root := fakeRoot(t, 100, threads(100, 101, 102, 103))
	// The leader is a zombie (it ended with pthread_exit), thread 102
	// exits during the attach.
	writeFile(t, filepath.Join(root, "proc/100/task/100/stat"), "100 (work) Z 1 100 100 0 -1 4194624 10 0 0 0 3 1 0 0 20 0 4 0 5 0 0\n")
	f.fail = func(n int, o fakeOpen) error {
		switch o.pid {
		case 100:
			return syscall.ENODEV
		case 102:
			os.RemoveAll(filepath.Join(root, "proc/100/task/102"))
			return syscall.ENODEV
		}
		return nil
	}
	a, err := attachFake(t, f, root, 100, fourSoftware, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if un := a.Unsupported(); len(un) != 0 {
		t.Errorf("unsupported %q", un)
	}
	if c := a.Coverage(); c.Exited != 2 || c.Attached != 2 || !slices.Equal(a.Threads(), []int{101, 103}) {
		t.Errorf("coverage %+v, threads %v", c, a.Threads())
	}
}

// TestRaceMissedThreadExits: a thread the listing missed (created by an
// uncounted thread) that exits before the rescan opens its counters is an
// exit among the missed threads: the coverage still adds up (Attached +
// Exited = Listed + Missed), which it did not when such an exit was
// counted in Exited alone (TestAttachUnderChurn failed on it once, "not
// supported map[]" being the empty map beside the coverage).
func TestRaceMissedThreadExits(t *testing.T) {
	const tick = 1000
	f := newFakeSys()
	f.boot = tick*clockTick - f.bootStep
	root := fakeRoot(t, 100, threads(100, 101, 102))
	f.afterOpen = func(n int) {
		if n == 1 {
			addFakeThread(t, root, 100, 200, tick-1) // missed
			addFakeThread(t, root, 100, 201, tick-1) // missed, exits
		}
	}
	f.fail = func(n int, o fakeOpen) error {
		if o.pid == 201 {
			return syscall.ESRCH
		}
		return nil
	}
	a, err := attachFake(t, f, root, 100, fourSoftware, Options{tries: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := a.Coverage()
	slices.Sort(c.Missed)
	if c.Listed != 3 || c.Attached != 4 || c.Exited != 1 || !slices.Equal(c.Missed, []int{200, 201}) {
		t.Errorf("coverage %+v, want 3 listed, 4 attached, 1 exited, missed 200 and 201", c)
	}
	if c.Attached+c.Exited != c.Listed+len(c.Missed) {
		t.Errorf("coverage %+v does not add up", c)
	}
	if got := a.Threads(); !slices.Equal(got, []int{100, 101, 102, 200}) {
		t.Errorf("threads %v", got)
	}
}

// TestRacePerThreadScaling: multiplexed counts are scaled thread by thread
// and then added, as perf 6.2 and later do.
func TestRacePerThreadScaling(t *testing.T) {
	f := newFakeSys()
	f.count = func(o fakeOpen, r int) Count {
		n := uint64(r)
		if o.pid == 100 { // ran half of its time on the PMU
			return Count{Raw: 100 * n, Enabled: 1000 * n, Running: 500 * n}
		}
		return Count{Raw: 100 * n, Enabled: 100 * n, Running: 100 * n}
	}
	a, err := attachFake(t, f, fakeRoot(t, 100, threads(100, 101)), 100, []Event{cycles}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r0, _ := a.Read()
	r1, _ := a.Read()
	d, _ := r1.Sub(r0)
	// 200 + 100, not (100+100) × 1100/600 = 366.7.
	if c := d.Events[0]; c.Value != 300 || c.Status != StatusScaled || c.Count != (Count{200, 1100, 600}) {
		t.Errorf("cycles %+v", c)
	}
	if v := []float64{d.Threads[0].Counts[0].Scaled(), d.Threads[1].Counts[0].Scaled()}; !reflect.DeepEqual(v, []float64{200, 100}) {
		t.Errorf("per-thread values %v", v)
	}
}

// TestRaceNoGroupReads: a kernel that refuses group reads of inherited
// counters (before 4.13) gets every event opened alone, with a warning,
// instead of hardware events reported not supported.
func TestRaceNoGroupReads(t *testing.T) {
	f := newFakeSys()
	f.fail = func(n int, o fakeOpen) error {
		if o.attr.Read_format&formatGroup != 0 && o.attr.Bits&bitInheritForTest != 0 {
			return syscall.EINVAL
		}
		return nil
	}
	a, err := attachFake(t, f, fakeRoot(t, 100, threads(100, 101)), 100, append(append([]Event(nil), cyclesGroup...), taskClock), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if un := a.Unsupported(); len(un) != 0 || a.Groups() != "cycles,instructions,task-clock" {
		t.Errorf("unsupported %q, groups %s", un, a.Groups())
	}
	if w := a.Warnings(); len(w) != 1 || !strings.Contains(w[0], "refuses group reads of inherited counters") {
		t.Errorf("warnings %q", w)
	}
	r0, _ := a.Read()
	r1, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := r1.Sub(r0)
	if d.Events[0].Count.Raw != 2 || d.Events[1].Count.Raw != 4 || d.Events[0].Status != StatusCounted {
		t.Errorf("events %+v", d.Events)
	}
}

// TestRaceOwnCounts: a thread counted twice, with and without inherit, has
// its own counts and its descendants' apart; the rows add up to the total.
func TestRaceOwnCounts(t *testing.T) {
	f := newFakeSys()
	f.count = func(o fakeOpen, r int) Count {
		n := uint64(r)
		switch {
		case o.pid == 100 && o.attr.Bits&bitInheritForTest == 0: // its own
			return Count{Raw: 10 * n, Enabled: 10 * n, Running: 10 * n}
		case o.pid == 100: // its own and its descendants'
			return Count{Raw: 50 * n, Enabled: 50 * n, Running: 50 * n}
		}
		return Count{Raw: 7 * n, Enabled: 7 * n, Running: 7 * n}
	}
	a, err := attachFake(t, f, fakeRoot(t, 100, map[int]uint64{100: 5, 101: 9}), 100, []Event{taskClock}, Options{Own: []int{100}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Descriptors() != 3 {
		t.Errorf("%d descriptors, want 3", a.Descriptors())
	}
	r0, _ := a.Read()
	r1, _ := a.Read()
	d, _ := r1.Sub(r0)
	var got []string
	var sum uint64
	for _, th := range d.Threads {
		got = append(got, strings.TrimSpace(strings.Join([]string{itoa(th.Tid), itoa(int(th.Start)), map[bool]string{true: "descendants"}[th.Descendants], itoa(int(th.Counts[0].Raw))}, " ")))
		sum += th.Counts[0].Raw
	}
	if want := []string{"100 5  10", "100 5 descendants 40", "101 9  7"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	if sum != d.Events[0].Count.Raw || sum != 57 {
		t.Errorf("rows add up to %d, total %d", sum, d.Events[0].Count.Raw)
	}
}

// TestRaceCPUOnline: cgroup mode opens its counters on the CPUs online at
// the attach; a window during which another CPU is online does not count
// what the cgroup ran there, and says so.
func TestRaceCPUOnline(t *testing.T) {
	root := fakeRoot(t, 100, threads(100))
	writeFile(t, filepath.Join(root, "proc/100/cgroup"), "0::/db\n")
	writeFile(t, filepath.Join(root, "proc/self/mountinfo"), "30 25 0:26 / /cg rw - cgroup2 cgroup2 rw\n")
	online := filepath.Join(root, "sys/devices/system/cpu/online")
	writeFile(t, online, "0-1\n")
	if err := os.MkdirAll(filepath.Join(root, "cg/db"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := attachFake(t, newFakeSys(), root, 100, []Event{taskClock}, Options{Cgroup: true})
	if err != nil {
		t.Fatal(err)
	}
	r0, _ := a.Read()
	writeFile(t, online, "0-2\n")
	r1, _ := a.Read()
	d, _ := r1.Sub(r0)
	if tc := d.Events[0]; tc.Status != StatusNotCounted || !strings.Contains(tc.Missing, "CPU 2 came online") {
		t.Errorf("task-clock %+v", tc)
	}
	// A CPU taken offline keeps its counts.
	writeFile(t, online, "0\n")
	r2, _ := a.Read()
	if d, _ := r2.Sub(r0); d.Missing() != "" {
		t.Errorf("missing %q", d.Missing())
	}
}
