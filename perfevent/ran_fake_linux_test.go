package perfevent

import "testing"

// Reading.Ran names the threads whose task-clock did not change between
// two reads as not run, every other thread (and any tid or start time
// the attachment does not have) as may have run; page faults of a
// thread that did not run do not count against it. Without a clock
// counted as it is, nothing can be told.
func TestReadingRan(t *testing.T) {
	f := newFakeSys()
	root := fakeRoot(t, 100, map[int]uint64{100: 5, 101: 6, 102: 7})
	// task-clock moves on threads 100 and 102 only.
	f.count = func(o fakeOpen, r int) Count {
		if o.attr.Config == 1 && o.pid == 101 {
			return Count{Raw: 500, Enabled: 500, Running: 500}
		}
		return Count{Raw: uint64(r) * 100, Enabled: uint64(r) * 100, Running: uint64(r) * 100}
	}
	a, err := attachFake(t, f, root, 100, []Event{pageFaults, taskClock}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r1, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	r2, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	ran, ok := r2.Ran(r1)
	if !ok {
		t.Fatal("task-clock is counted, yet nothing can be told")
	}
	for _, c := range []struct {
		tid   int
		start uint64
		want  bool
	}{{100, 5, true}, {101, 6, false}, {102, 7, true}, {101, 99, true}, {103, 0, true}} {
		if got := ran(c.tid, c.start); got != c.want {
			t.Errorf("ran(%d, %d) = %v, want %v", c.tid, c.start, got, c.want)
		}
	}

	// page-faults alone, or task-clock:u (user time only), tell nothing.
	user := taskClock
	user.Name, user.Modifiers.ExcludeKernel = "task-clock:u", true
	for _, evs := range [][]Event{{pageFaults}, {user}} {
		b, err := attachFake(t, newFakeSys(), root, 100, evs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r1, _ := b.Read()
		r2, _ := b.Read()
		if _, ok := r2.Ran(r1); ok {
			t.Errorf("%s: Ran tells which threads ran", evs[0].Name)
		}
	}
}
