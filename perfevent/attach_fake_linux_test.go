package perfevent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Hardware events as the catalogue encodes them (PERF_TYPE_HARDWARE = 0,
// PERF_TYPE_HW_CACHE = 3).
func hwEvent(name string, config uint64) Event {
	return Event{Name: name, Kind: KindHardware, Encodings: []Encoding{{PMU: "cpu", Type: 0, Config: config}}}
}

var (
	cycles       = hwEvent("cycles", 0)
	instructions = hwEvent("instructions", 1)
	cacheMisses  = hwEvent("cache-misses", 3)
	branches     = hwEvent("branches", 4)
	branchMisses = hwEvent("branch-misses", 5)
	l1dMisses    = Event{Name: "L1-dcache-load-misses", Kind: KindCache, Encodings: []Encoding{{PMU: "cpu", Type: 3, Config: 0x10000}}}
)

// fakeRoot makes a directory tree with proc/PID/task/TID/stat for each
// thread (start times in ticks) and proc/sys/kernel/perf_event_paranoid.
func fakeRoot(t *testing.T, pid int, starts map[int]uint64) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc/sys/kernel/perf_event_paranoid"), "2\n")
	for tid, st := range starts {
		addFakeThread(t, root, pid, tid, st)
	}
	return root
}

func addFakeThread(t *testing.T, root string, pid, tid int, start uint64) {
	t.Helper()
	stat := fmt.Sprintf("%d (work (x) y) S 1 %d %d 0 -1 4194624 10 0 0 0 3 1 0 0 20 0 4 0 %d 123 45\n", tid, pid, pid, start)
	writeFile(t, filepath.Join(root, "proc", strconv.Itoa(pid), "task", strconv.Itoa(tid), "stat"), stat)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func threads(tids ...int) map[int]uint64 {
	m := map[int]uint64{}
	for _, tid := range tids {
		m[tid] = 5
	}
	return m
}

// attachFake attaches with the fake kernel and checks, at cleanup, that
// everything it opened is closed.
func attachFake(t *testing.T, f *fakeSys, root string, pid int, events []Event, opts Options) (*Attachment, error) {
	t.Helper()
	opts.sys, opts.Root = f, root
	a, err := Attach(pid, events, opts)
	t.Cleanup(func() {
		if a != nil {
			if err := a.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		}
		if open := f.stillOpen(); len(open) > 0 {
			t.Errorf("descriptors left open: %v", open)
		}
	})
	return a, err
}

func TestAttachFakeAttrsAndGroups(t *testing.T) {
	f := newFakeSys()
	root := fakeRoot(t, 100, threads(100, 101, 102))
	events := []Event{taskClock, cacheMisses, cycles, pageFaults, instructions, branches, branchMisses}
	a, err := attachFake(t, f, root, 100, events, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.Groups(), "task-clock,page-faults,{cycles,instructions,cache-misses,branches},branch-misses"; got != want {
		t.Errorf("groups %s, want %s", got, want)
	}
	opens := f.opens()
	if len(opens) != 3*7 {
		t.Fatalf("%d opens, want 21", len(opens))
	}
	// The fake numbers descriptors from 1000 in open order: each thread's
	// groups open leader first, members pointing at it.
	byFD := map[int]fakeOpen{}
	for i, o := range opens {
		byFD[1000+i] = o
	}
	for i, o := range opens {
		a := o.attr
		// The cycles group reads as a group; events alone read alone.
		format := uint64(unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING | unix.PERF_FORMAT_ID)
		if a.Type == 0 && a.Config != 5 {
			format |= unix.PERF_FORMAT_GROUP
		}
		if a.Read_format != format {
			t.Errorf("open %d: read_format %#x, want %#x", i, a.Read_format, format)
		}
		if a.Bits&unix.PerfBitInherit == 0 || a.Bits&unix.PerfBitDisabled != 0 {
			t.Errorf("open %d: bits %#x, want inherit and not disabled", i, a.Bits)
		}
		if o.cpu != -1 || o.flags != unix.PERF_FLAG_FD_CLOEXEC {
			t.Errorf("open %d: cpu %d flags %#x", i, o.cpu, o.flags)
		}
		if o.group >= 0 {
			l := byFD[o.group]
			if l.pid != o.pid || l.group != -1 {
				t.Errorf("open %d (tid %d) joins a group led on tid %d", i, o.pid, l.pid)
			}
			if (l.attr.Type == 1) != (a.Type == 1) {
				t.Errorf("open %d: type %d in a group led by type %d", i, a.Type, l.attr.Type)
			}
		}
	}
	// Per thread: task-clock and page-faults alone; cycles leads, then
	// instructions, cache-misses, branches; branch-misses alone.
	var first []string
	for _, o := range opens[:7] {
		first = append(first, fmt.Sprintf("%d/%d/%v", o.attr.Type, o.attr.Config, o.group >= 0))
	}
	if want := []string{"1/1/false", "1/2/false", "0/0/false", "0/1/true", "0/3/true", "0/4/true", "0/5/false"}; !reflect.DeepEqual(first, want) {
		t.Errorf("opens on the first thread %v, want %v", first, want)
	}
	if opens[0].pid != 100 {
		t.Errorf("first thread opened is %d, want the thread-group leader 100", opens[0].pid)
	}

	r0, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	r1, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	d, err := r1.Sub(r0)
	if err != nil {
		t.Fatal(err)
	}
	// Each read adds config+1 per thread, and 1000 ns enabled and running.
	want := map[string]uint64{"task-clock": 6, "page-faults": 9, "cycles": 3, "instructions": 6, "cache-misses": 12, "branches": 15, "branch-misses": 18}
	groups := map[string]int{"task-clock": 0, "page-faults": 0, "cycles": 1, "instructions": 1, "cache-misses": 1, "branches": 1, "branch-misses": 0}
	for _, ec := range d.Events {
		n := ec.Event.Name
		if ec.Count != (Count{Raw: want[n], Enabled: 3000, Running: 3000}) || ec.Value != float64(want[n]) || ec.Status != StatusCounted || ec.Group != groups[n] {
			t.Errorf("%s: %+v value %v status %v group %d; want raw %d, 3000 ns, counted, group %d", n, ec.Count, ec.Value, ec.Status, ec.Group, want[n], groups[n])
		}
	}
	if len(d.Threads) != 3 || d.Threads[0].Tid != 100 || d.Threads[2].Counts[4] != (Count{Raw: 2, Enabled: 1000, Running: 1000}) {
		t.Errorf("threads %+v", d.Threads)
	}
	if len(noteTexts(d.Notes)) != 0 {
		t.Errorf("warnings %q", noteTexts(d.Notes))
	}
	if got := d.Seconds(); got < 0 {
		t.Errorf("window of %v s", got)
	}
}

func TestAttachFakeBudgetAndUserGroups(t *testing.T) {
	f := newFakeSys()
	root := fakeRoot(t, 7, threads(7))
	events := []Event{cacheMisses, branches, taskClock, cycles, instructions, branchMisses, l1dMisses, pageFaults}
	opts := Options{Groups: [][]int{{6, 7}, {1, 5}}, Budgets: map[string]int{"cpu": 2}}
	a, err := attachFake(t, f, root, 7, events, opts)
	if err != nil {
		t.Fatal(err)
	}
	// User groups first, in the order given (software joins the hardware
	// leader); then the rest per PMU, cycles and instructions together,
	// two per group on this budget.
	want := "{L1-dcache-load-misses,page-faults},{branches,branch-misses},{cycles,instructions},cache-misses,task-clock"
	if got := a.Groups(); got != want {
		t.Errorf("groups %s, want %s", got, want)
	}
}

func TestAttachFakePermission(t *testing.T) {
	for _, at := range []int{1, 5} {
		t.Run(fmt.Sprintf("open %d", at), func(t *testing.T) {
			f := newFakeSys()
			f.fail = func(n int, o fakeOpen) error {
				if n == at {
					return syscall.EACCES
				}
				return nil
			}
			root := fakeRoot(t, 100, threads(100, 101, 102))
			_, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults}, Options{})
			if !errors.Is(err, ErrPermission) || !errors.Is(err, syscall.EACCES) {
				t.Fatalf("err = %v, want ErrPermission wrapping EACCES", err)
			}
			for _, s := range []string{"perf_event_paranoid=2", "CAP_PERFMON", "of pid 100"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if f.successes > 0 && f.closed != f.successes {
				t.Errorf("opened %d, closed %d", f.successes, f.closed)
			}
		})
	}
}

func TestAttachFakeNotSupported(t *testing.T) {
	f := newFakeSys()
	f.fail = func(n int, o fakeOpen) error {
		if o.attr.Type == 0 || o.attr.Type == 3 {
			return syscall.ENOENT
		}
		return nil
	}
	root := fakeRoot(t, 100, threads(100, 101))
	events := []Event{cycles, taskClock, instructions, l1dMisses, pageFaults}
	a, err := attachFake(t, f, root, 100, events, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.opens()); got != 2*2 {
		t.Errorf("%d opens, want 4 (2 software events on 2 threads)", got)
	}
	// Hardware events fail once, on the first thread, then are not tried.
	if f.calls != 4+3 {
		t.Errorf("%d perf_event_open calls, want 7", f.calls)
	}
	un := a.Unsupported()
	if len(un) != 3 || !strings.Contains(un["cycles"], "no hardware PMU") || un["instructions"] == "" || un["L1-dcache-load-misses"] == "" {
		t.Errorf("unsupported: %q, want cycles, instructions and L1-dcache-load-misses with reasons", un)
	}
	r0, _ := a.Read()
	r1, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := r1.Sub(r0)
	for _, ec := range d.Events {
		hw := ec.Event.Kind != KindSoftware
		if hw != (ec.Status == StatusNotSupported) {
			t.Errorf("%s: status %v", ec.Event.Name, ec.Status)
		}
		if hw && (!strings.Contains(ec.Reason, "no hardware PMU") || !strings.Contains(ec.Reason, "no such file or directory") || ec.Value != 0 || ec.Count != (Count{})) {
			t.Errorf("%s: reason %q value %v count %+v", ec.Event.Name, ec.Reason, ec.Value, ec.Count)
		}
	}
	if tc := d.Events[1]; tc.Status != StatusCounted || tc.Count.Raw != 4 || tc.Group != 0 {
		t.Errorf("task-clock %+v", tc)
	}
}

func TestAttachFakeThreadExits(t *testing.T) {
	f := newFakeSys()
	tried := 0
	f.fail = func(n int, o fakeOpen) error {
		if o.pid == 105 {
			tried++
			if tried == 2 { // after its first counter opened
				return syscall.ESRCH
			}
		}
		return nil
	}
	root := fakeRoot(t, 100, threads(100, 101, 102, 103, 104, 105, 106, 107))
	a, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := a.Coverage()
	if c.Listed != 8 || c.Attached != 7 || c.Exited != 1 {
		t.Errorf("coverage %+v, want 8 listed, 7 attached, 1 exited", c)
	}
	if got := a.Threads(); slices.Contains(got, 105) || len(got) != 7 {
		t.Errorf("threads %v", got)
	}
	for _, fd := range f.stillOpen() {
		if f.open[fd].pid == 105 {
			t.Errorf("descriptor %d of the exited thread is open", fd)
		}
	}
	if a.Descriptors() != 14 {
		t.Errorf("%d descriptors, want 14", a.Descriptors())
	}
}

func TestAttachFakeTooManyFiles(t *testing.T) {
	f := newFakeSys()
	f.fail = func(n int, o fakeOpen) error {
		if n == 17 {
			return syscall.EMFILE
		}
		return nil
	}
	root := fakeRoot(t, 100, threads(100, 101, 102, 103, 104, 105, 106, 107, 108, 109))
	_, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults, contextSwitches}, Options{})
	if !errors.Is(err, errTooManyFiles) || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("err = %v, want ErrTooManyFiles wrapping EMFILE", err)
	}
	for _, s := range []string{"30 descriptors", "10 threads × 3 events", "ulimit -n"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if f.successes != 16 || f.closed != 16 {
		t.Errorf("opened %d, closed %d, want 16 and 16", f.successes, f.closed)
	}
}

func TestAttachFakeRlimit(t *testing.T) {
	tids := map[int]uint64{}
	for i := range 20 {
		tids[100+i] = 5
	}
	t.Run("raise the soft limit", func(t *testing.T) {
		f := newFakeSys()
		f.cur, f.max = 100, 1000
		root := fakeRoot(t, 100, tids)
		if _, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults}, Options{}); err != nil {
			t.Fatal(err)
		}
		if f.setTo != 1000 {
			t.Errorf("soft limit set to %d, want the hard limit 1000", f.setTo)
		}
	})
	t.Run("above the hard limit", func(t *testing.T) {
		f := newFakeSys()
		f.cur, f.max = 60, 100
		root := fakeRoot(t, 100, tids)
		_, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults}, Options{})
		if !errors.Is(err, errTooManyFiles) || !strings.Contains(err.Error(), "hard limit 100") || !strings.Contains(err.Error(), "40 descriptors (20 threads × 2 events)") {
			t.Fatalf("err = %v", err)
		}
		// 40 counters fit under 100: the message adds up what does not.
		want := fmt.Sprintf("perfbench holds %d others and keeps 64 free for its own files: %d in all, but RLIMIT_NOFILE is 100 (hard limit 100): raise it with 'ulimit -n %d'", f.files, 40+f.files+64, 40+f.files+64)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to say %q", err, want)
		}
		// Only the first thread, where unsupported events are found, was
		// opened, and closed again.
		if f.calls != 2 || f.closed != 2 {
			t.Errorf("%d opens tried, %d closed; want 2 and 2", f.calls, f.closed)
		}
	})
	t.Run("unsupported events need no descriptors", func(t *testing.T) {
		f := newFakeSys()
		f.cur, f.max = 100, 100
		f.fail = func(n int, o fakeOpen) error {
			if o.attr.Type == 0 {
				return syscall.ENOENT
			}
			return nil
		}
		root := fakeRoot(t, 100, tids)
		// 10 open + 20 threads × 1 event + 64 spare fit in 100; with
		// cycles counted as well they would not.
		if _, err := attachFake(t, f, root, 100, []Event{cycles, taskClock}, Options{}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestAttachFakeNoProcess(t *testing.T) {
	t.Run("no such pid", func(t *testing.T) {
		f := newFakeSys()
		root := fakeRoot(t, 100, threads(100))
		_, err := attachFake(t, f, root, 4242, []Event{taskClock}, Options{})
		if !errors.Is(err, procfs.ErrGone) || !strings.Contains(err.Error(), "4242") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("err = %v, want one line with ErrGone naming 4242", err)
		}
		if f.calls != 0 {
			t.Errorf("%d opens tried", f.calls)
		}
	})
	t.Run("exits during attach", func(t *testing.T) {
		f := newFakeSys()
		root := fakeRoot(t, 100, threads(100, 101, 102))
		f.fail = func(n int, o fakeOpen) error {
			if n >= 2 {
				os.RemoveAll(filepath.Join(root, "proc/100"))
				return syscall.ESRCH
			}
			return nil
		}
		_, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults}, Options{})
		if !errors.Is(err, procfs.ErrGone) || !strings.Contains(err.Error(), "exited") {
			t.Fatalf("err = %v", err)
		}
		if f.successes != 1 || f.closed != 1 {
			t.Errorf("opened %d, closed %d", f.successes, f.closed)
		}
	})
}

func TestAttachFakeClose(t *testing.T) {
	f := newFakeSys()
	root := fakeRoot(t, 100, threads(100, 101, 102, 103))
	a, err := Attach(100, []Event{taskClock, pageFaults, cycles}, Options{Root: root, sys: f})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.stillOpen()); n != 12 || a.Descriptors() != 12 {
		t.Fatalf("%d open (attachment says %d), want 12", n, a.Descriptors())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if open := f.stillOpen(); len(open) != 0 {
		t.Errorf("open after Close: %v", open)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := a.Read(); err == nil {
		t.Error("Read after Close succeeded")
	}
}

func TestAttachFakeScaling(t *testing.T) {
	f := newFakeSys()
	f.count = func(o fakeOpen, r int) Count {
		switch o.attr.Config {
		case 0, 1: // the cycles group ran a quarter of the time
			return Count{Raw: uint64(r) * 100, Enabled: uint64(r) * 1000, Running: uint64(r) * 250}
		case 5: // branch-misses never ran
			return Count{Raw: 0, Enabled: uint64(r) * 1000, Running: 0}
		}
		return Count{Raw: uint64(r) * 7, Enabled: uint64(r) * 1000, Running: uint64(r) * 1000}
	}
	root := fakeRoot(t, 100, threads(100, 101))
	a, err := attachFake(t, f, root, 100, []Event{cycles, instructions, branchMisses}, Options{Budgets: map[string]int{"cpu": 2}})
	if err != nil {
		t.Fatal(err)
	}
	r0, _ := a.Read()
	r1, _ := a.Read()
	d, err := r1.Sub(r0)
	if err != nil {
		t.Fatal(err)
	}
	c := d.Events[0]
	if c.Status != StatusScaled || c.Count != (Count{Raw: 200, Enabled: 2000, Running: 500}) || c.Value != 800 {
		t.Errorf("cycles %+v", c)
	}
	bm := d.Events[2]
	if bm.Status != StatusNotCounted || bm.Value != 0 || !strings.Contains(bm.Reason, "never scheduled") {
		t.Errorf("branch-misses %+v", bm)
	}
	want := []string{
		"cycles was multiplexed: counted 25.0% of the time, value scaled",
		"instructions was multiplexed: counted 25.0% of the time, value scaled",
		"branch-misses not counted: " + bm.Reason,
	}
	if !reflect.DeepEqual(noteTexts(d.Notes), want) {
		t.Errorf("warnings\n%q\nwant\n%q", noteTexts(d.Notes), want)
	}
	kinds := []noteKind{NoteMultiplexed, NoteMultiplexed, NoteNotCounted}
	for i, n := range d.Notes {
		if i < len(kinds) && (n.Kind != kinds[i] || !slices.Equal(n.Events, []string{d.Events[i].Event.RecordName()})) {
			t.Errorf("note %d: kind %v events %q, want %v [%s]", i, n.Kind, n.Events, kinds[i], d.Events[i].Event.RecordName())
		}
	}
}

func TestAttachFakeHybrid(t *testing.T) {
	hyb := func(name string, config uint64) Event {
		return Event{Name: name, Kind: KindHardware, Encodings: []Encoding{
			{PMU: "cpu_core", Type: 0, Config: 4<<32 | config},
			{PMU: "cpu_atom", Type: 0, Config: 8<<32 | config},
		}}
	}
	events := []Event{hyb("cycles", 0), hyb("instructions", 1), taskClock}
	// A per-task event on a hybrid CPU is enabled whenever its thread
	// runs, and running only while the thread is on its PMU's core type:
	// per read, the thread runs 1000 ns, split between the types as
	// given, with the cycles each part counted.
	for _, tc := range []struct {
		name       string
		core, atom Count // per read
		want       Count // over one read, the parts combined
		value      float64
		status     Status
		warnings   []string
	}{
		{"on one core type", Count{800, 1000, 1000}, Count{0, 1000, 0}, Count{800, 1000, 1000}, 800, StatusCounted, nil},
		{"on both core types", Count{800, 1000, 600}, Count{300, 1000, 400}, Count{1100, 1000, 1000}, 1100, StatusCounted, nil},
		// Counters short on both types: the parts ran half of the time
		// the thread ran, which is multiplexing.
		{"multiplexed", Count{400, 1000, 300}, Count{150, 1000, 200}, Count{550, 1000, 500}, 1100, StatusScaled,
			[]string{"cycles was multiplexed: counted 50.0% of the time, value scaled", "instructions was multiplexed: counted 50.0% of the time, value scaled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSys()
			f.count = func(o fakeOpen, r int) Count {
				n := uint64(r)
				switch o.attr.Config >> 32 {
				case 4:
					return Count{tc.core.Raw * n, tc.core.Enabled * n, tc.core.Running * n}
				case 8:
					return Count{tc.atom.Raw * n, tc.atom.Enabled * n, tc.atom.Running * n}
				}
				return Count{n, n, n}
			}
			a, err := attachFake(t, f, fakeRoot(t, 100, threads(100)), 100, events, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := a.Groups(), "{cycles on cpu_core,instructions on cpu_core},{cycles on cpu_atom,instructions on cpu_atom},task-clock"; got != want {
				t.Errorf("groups %s, want %s", got, want)
			}
			r0, _ := a.Read()
			r1, _ := a.Read()
			d, _ := r1.Sub(r0)
			c := d.Events[0]
			if c.Count != tc.want || c.Value != tc.value || c.Status != tc.status {
				t.Errorf("cycles %+v value %v %v; want %+v value %v %v", c.Count, c.Value, c.Status, tc.want, tc.value, tc.status)
			}
			if !reflect.DeepEqual(noteTexts(d.Notes), tc.warnings) {
				t.Errorf("warnings %q, want %q", noteTexts(d.Notes), tc.warnings)
			}
		})
	}
	t.Run("one PMU refuses", func(t *testing.T) {
		f := newFakeSys()
		f.fail = func(n int, o fakeOpen) error {
			if o.attr.Config>>32 == 8 && o.attr.Config&1 == 1 {
				return syscall.ENOENT // instructions on cpu_atom
			}
			return nil
		}
		a, err := attachFake(t, f, fakeRoot(t, 100, threads(100)), 100, events, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := a.Read()
		in := r.Events[1]
		if in.Status != StatusNotSupported || !strings.HasPrefix(in.Reason, "cpu_atom: ") || in.Value != 0 {
			t.Errorf("instructions %+v", in)
		}
		if r.Events[0].Status == StatusNotSupported {
			t.Errorf("cycles %+v", r.Events[0])
		}
	})
}

func TestAttachFakeRescan(t *testing.T) {
	// The fake boot clock reads 10 s (tick 1000) when the attach begins and
	// advances 1 µs per reading; the listed threads started at tick 5.
	const tick = 1000
	for _, tc := range []struct {
		name      string
		appear    map[int]uint64 // threads that appear after the first open, with their start tick
		missed    []int
		inherited int
		ambiguous []int
	}{
		{"created before the first open", map[int]uint64{200: tick - 1}, []int{200}, 0, nil},
		{"created during the attach", map[int]uint64{201: tick}, nil, 0, []int{201}},
		{"created after the attach", map[int]uint64{202: tick + 1}, nil, 1, nil},
		{"inherited and during", map[int]uint64{201: tick, 202: tick + 1, 203: tick + 2}, nil, 2, []int{201}},
		// With a missed thread about, a later thread may be its child
		// from before it was attached: not surely inherited.
		{"missed and after", map[int]uint64{200: tick - 1, 202: tick + 1}, []int{200}, 0, []int{202}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSys()
			f.boot = tick*clockTick - f.bootStep
			root := fakeRoot(t, 100, threads(100, 101, 102))
			f.afterOpen = func(n int) {
				if n == 1 {
					for tid, st := range tc.appear {
						addFakeThread(t, root, 100, tid, st)
					}
				}
			}
			a, err := attachFake(t, f, root, 100, []Event{taskClock}, Options{tries: 1})
			if err != nil {
				t.Fatal(err)
			}
			c := a.Coverage()
			if !slices.Equal(c.Missed, tc.missed) || c.Inherited != tc.inherited || !slices.Equal(c.Ambiguous, tc.ambiguous) {
				t.Errorf("coverage %+v, want missed %v, inherited %d, ambiguous %v", c, tc.missed, tc.inherited, tc.ambiguous)
			}
			want := append([]int{100, 101, 102}, tc.missed...)
			if got := a.Threads(); !slices.Equal(got, want) {
				t.Errorf("attached threads %v, want %v", got, want)
			}
			warned := slices.ContainsFunc(a.Warnings(), func(w string) bool { return strings.Contains(w, "started while counters were being opened") })
			if warned != (len(tc.ambiguous) > 0) {
				t.Errorf("warnings %q", a.Warnings())
			}
		})
	}
}

func TestAttachFakeCgroup(t *testing.T) {
	root := fakeRoot(t, 100, threads(100, 101))
	writeFile(t, filepath.Join(root, "proc/100/cgroup"), "0::/bench/db\n")
	writeFile(t, filepath.Join(root, "proc/self/mountinfo"),
		"25 1 0:23 / /sys rw,nosuid - sysfs sysfs rw\n30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw\n")
	writeFile(t, filepath.Join(root, "sys/devices/system/cpu/online"), "0-3\n")
	if err := os.MkdirAll(filepath.Join(root, "sys/fs/cgroup/unified/bench/db"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFakeSys()
	a, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults}, Options{Cgroup: true})
	if err != nil {
		t.Fatal(err)
	}
	opens := f.opens()
	if len(opens) != 8 {
		t.Fatalf("%d opens, want 2 events × 4 CPUs", len(opens))
	}
	// Each CPU's counters are opened from a worker on that CPU, so the
	// opens come in no set order: each CPU has both events once.
	perCPU := map[int]map[uint64]int{}
	for i, o := range opens {
		if o.pid < 0 || o.flags != unix.PERF_FLAG_PID_CGROUP|unix.PERF_FLAG_FD_CLOEXEC || o.attr.Bits&unix.PerfBitInherit != 0 {
			t.Errorf("open %d: pid %d cpu %d flags %#x bits %#x", i, o.pid, o.cpu, o.flags, o.attr.Bits)
		}
		if perCPU[o.cpu] == nil {
			perCPU[o.cpu] = map[uint64]int{}
		}
		perCPU[o.cpu][o.attr.Config]++
	}
	for cpu := range 4 {
		if len(perCPU[cpu]) != 2 || perCPU[cpu][taskClock.Encodings[0].Config] != 1 || perCPU[cpu][pageFaults.Encodings[0].Config] != 1 {
			t.Errorf("CPU %d: opens by config %v, want task-clock and page-faults once each", cpu, perCPU[cpu])
		}
	}
	r, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	if tc := r.Events[0]; tc.Count.Raw != 4*2 || len(r.Threads) != 0 {
		t.Errorf("task-clock %+v, threads %v", tc, r.Threads)
	}
	if w := a.Warnings(); len(w) != 1 || !strings.Contains(w[0], "bench/db") {
		t.Errorf("warnings %q", w)
	}

	writeFile(t, filepath.Join(root, "proc/100/cgroup"), "0::/\n")
	_, err = attachFake(t, newFakeSys(), root, 100, []Event{taskClock}, Options{Cgroup: true})
	if !errors.Is(err, errNoCgroup) || !strings.Contains(err.Error(), "root cgroup") {
		t.Errorf("root cgroup: err = %v", err)
	}
}

// TestAttachFakeSystemExplains checks that with the catalogue's System the
// reasons are the catalogue's: the same words perfbench events prints.
func TestAttachFakeSystemExplains(t *testing.T) {
	two := 2
	sys := &System{Paranoid: &two} // a machine without PMUs in sysfs
	root := fakeRoot(t, 100, threads(100))

	f := newFakeSys()
	f.fail = func(n int, o fakeOpen) error {
		if o.attr.Type == 0 {
			return syscall.ENOENT
		}
		return nil
	}
	a, err := attachFake(t, f, root, 100, []Event{cycles, taskClock}, Options{System: sys})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := a.Read()
	if got := r.Events[0].Reason; !strings.HasPrefix(got, "this machine has no hardware PMU (ENOENT") {
		t.Errorf("cycles reason %q", got)
	}

	f = newFakeSys()
	f.fail = func(n int, o fakeOpen) error { return syscall.EACCES }
	_, err = attachFake(t, f, root, 100, []Event{taskClock}, Options{System: sys})
	// The catalogue's words depend on who runs the test (root is told of
	// lockdown and seccomp, others of perf_event_paranoid); the attach
	// says what it opened on which thread.
	if !errors.Is(err, ErrPermission) || !strings.HasPrefix(err.Error(), "open task-clock on tid 100 of pid 100: permission denied") {
		t.Errorf("err = %v", err)
	}
}

// fakeCgroupRoot is a /proc and /sys with pid 100 in cgroup v2 /db and
// CPUs 0 and 1 online.
func fakeCgroupRoot(t *testing.T) string {
	root := fakeRoot(t, 100, threads(100))
	writeFile(t, filepath.Join(root, "proc/100/cgroup"), "0::/db\n")
	writeFile(t, filepath.Join(root, "proc/self/mountinfo"), "30 25 0:26 / /cg rw - cgroup2 cgroup2 rw\n")
	writeFile(t, filepath.Join(root, "sys/devices/system/cpu/online"), "0-1\n")
	if err := os.MkdirAll(filepath.Join(root, "cg/db"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestAttachFakeCgroupPermission(t *testing.T) {
	root := fakeCgroupRoot(t)
	f := newFakeSys()
	f.fail = func(n int, o fakeOpen) error {
		if o.cpu == 1 {
			return syscall.EACCES
		}
		return nil
	}
	_, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults}, Options{Cgroup: true})
	if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "CPU 1 for the cgroup of pid 100") || !strings.Contains(err.Error(), "cgroup mode counts per CPU") {
		t.Errorf("err = %v", err)
	}
	if f.successes != 2 || f.closed != 2 {
		t.Errorf("opened %d, closed %d", f.successes, f.closed)
	}
}

// TestAttachFakeRescanByPID classifies new threads by the order of tid
// allocation (ns_last_pid 150 before the first open, 210 once all threads
// were covered), falling back to start times when it cannot tell or pids
// wrapped. All new threads start in the tick of the first open, where start
// times alone cannot tell.
func TestAttachFakeRescanByPID(t *testing.T) {
	const tick = 1000
	for _, tc := range []struct {
		name      string
		during    map[int]uint64 // threads created during the attach
		after     map[int]uint64 // threads created once covered
		wrapTo    string         // ns_last_pid once covered, if it wrapped
		missed    []int
		inherited int
		ambiguous []int
	}{
		{"tid before the first open", map[int]uint64{140: tick}, nil, "", []int{140}, 0, nil},
		{"tid during the attach", map[int]uint64{205: tick}, nil, "", nil, 0, []int{205}},
		{"tid after covered", nil, map[int]uint64{230: tick}, "", nil, 1, nil},
		{"all three", map[int]uint64{140: tick, 205: tick}, map[int]uint64{230: tick}, "", []int{140}, 0, []int{205, 230}},
		{"pids wrapped: start times decide", map[int]uint64{140: tick, 205: tick - 1}, nil, "7", []int{205}, 0, []int{140}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSys()
			f.boot = tick*clockTick - f.bootStep
			root := fakeRoot(t, 100, threads(100, 101, 102))
			last := filepath.Join(root, "proc/sys/kernel/ns_last_pid")
			writeFile(t, last, "150\n")
			f.afterOpen = func(n int) {
				if n == 1 {
					for tid, st := range tc.during {
						addFakeThread(t, root, 100, tid, st)
					}
					writeFile(t, last, "210\n")
				}
			}
			f.onBoot = func(n int) {
				if n == 2 { // covered: ns_last_pid was read just before
					for tid, st := range tc.after {
						addFakeThread(t, root, 100, tid, st)
					}
					if len(tc.after) > 0 {
						writeFile(t, last, "230\n")
					}
					if tc.wrapTo != "" {
						writeFile(t, last, tc.wrapTo+"\n")
					}
				}
			}
			a, err := attachFake(t, f, root, 100, []Event{taskClock}, Options{tries: 1})
			if err != nil {
				t.Fatal(err)
			}
			c := a.Coverage()
			slices.Sort(c.Ambiguous)
			if !slices.Equal(c.Missed, tc.missed) || c.Inherited != tc.inherited || !slices.Equal(c.Ambiguous, tc.ambiguous) {
				t.Errorf("coverage %+v, want missed %v, inherited %d, ambiguous %v", c, tc.missed, tc.inherited, tc.ambiguous)
			}
		})
	}
}

// TestAttachFakeStartsOver checks that an attach during which threads started
// is made again, and that threads starting during every attempt end up in a
// warning.
func TestAttachFakeStartsOver(t *testing.T) {
	const tick = 1000
	for _, tc := range []struct {
		name     string
		every    bool // a thread starts during every attempt, not only the first
		attempts int
		attached []int
		warned   bool
	}{
		{"once", false, 2, []int{100, 101, 102, 300}, false},
		{"every time", true, 3, []int{100, 101, 102, 300, 301}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSys()
			f.boot = tick*clockTick - f.bootStep
			root := fakeRoot(t, 100, threads(100, 101, 102))
			attempt := 0
			f.afterOpen = func(n int) {
				// Every attempt opens task-clock on the leader first.
				if o := f.opens(); o[len(o)-1].pid != 100 || o[len(o)-1].attr.Config != 1 {
					return
				}
				if attempt == 0 || tc.every {
					addFakeThread(t, root, 100, 300+attempt, tick)
				}
				attempt++
			}
			a, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := a.Coverage()
			if c.Attempts != tc.attempts || !slices.Equal(a.Threads(), tc.attached) {
				t.Errorf("%d attempts, threads %v; want %d, %v", c.Attempts, a.Threads(), tc.attempts, tc.attached)
			}
			warned := slices.ContainsFunc(a.Warnings(), func(w string) bool { return strings.Contains(w, "in each of 3 attempts (last: tid 302)") })
			if warned != tc.warned || (len(c.Ambiguous) > 0) != tc.warned {
				t.Errorf("warnings %q, ambiguous %v", a.Warnings(), c.Ambiguous)
			}
			// Earlier attempts closed everything they opened.
			if got, want := len(f.stillOpen()), 2*len(tc.attached); got != want {
				t.Errorf("%d descriptors open, want %d", got, want)
			}
		})
	}
}

// A thread that exits between its group leader's open and a member's open
// makes the member's open fail with EINVAL; when /proc shows the thread gone,
// that is an exit like ESRCH, not an attach failure. While the thread is
// alive, EINVAL stays an error.
func TestAttachFakeMemberEINVALOnExit(t *testing.T) {
	for _, alive := range []bool{false, true} {
		f := newFakeSys()
		root := fakeRoot(t, 100, threads(100, 101, 102))
		tried := 0
		f.fail = func(n int, o fakeOpen) error {
			if o.pid == 102 {
				tried++
				if tried == 2 { // the member, after the leader opened
					if !alive {
						os.RemoveAll(filepath.Join(root, "proc/100/task/102"))
					}
					return syscall.EINVAL
				}
			}
			return nil
		}
		a, err := attachFake(t, f, root, 100, []Event{taskClock, pageFaults}, Options{})
		if alive {
			if err == nil || !errors.Is(err, syscall.EINVAL) {
				t.Errorf("live thread: err = %v, want EINVAL", err)
			}
			if open := f.stillOpen(); len(open) != 0 {
				t.Errorf("live thread: %d descriptors left open after the failed attach", len(open))
			}
			continue
		}
		if err != nil {
			t.Fatalf("exited thread: %v", err)
		}
		if c := a.Coverage(); c.Attached != 2 || c.Exited != 1 {
			t.Errorf("coverage %+v, want 2 attached and 1 exited", c)
		}
	}
}
