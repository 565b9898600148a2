package perfevent

import (
	"sort"
	"sync"
	"syscall"
)

// fakeOpen is one perf_event_open call the fake saw.
type fakeOpen struct {
	attr                   openAttr
	pid, cpu, group, flags int
}

// fakeFD is an open fake counter.
type fakeFD struct {
	fakeOpen
	fd      int
	id      uint64
	members []int // descriptors of the members, leader excluded, in open order
	reads   int
}

// fakeSys is a kernel in memory: it hands out descriptors, fails on demand,
// answers group reads with counts the test chooses, and remembers what is
// still open.
type fakeSys struct {
	mu     sync.Mutex
	nextFD int
	open   map[int]*fakeFD
	calls  int // perf_event_open calls, failed ones included
	opened []fakeOpen
	closed int

	// fail, when set, decides the result of the n-th (1-based)
	// perf_event_open call before it succeeds.
	fail func(n int, o fakeOpen) error
	// afterOpen runs after the n-th successful open (outside the lock);
	// tests use it to make threads appear in the fake /proc.
	afterOpen func(n int)
	// count returns the counter's state at its read number r (1-based):
	// raw value and the group's times. Nil: raw = config+1 per read,
	// enabled = running = 1000 per read.
	count func(o fakeOpen, r int) Count
	// readErr, when set, may fail the r-th read of a leader opened for pid.
	readErr func(o fakeOpen, r int) error

	// onBoot runs after the n-th bootNanos reading (outside the lock).
	onBoot func(n int)
	boots  int

	cur, max  uint64 // RLIMIT_NOFILE
	setTo     uint64 // last setNofile
	files     int    // descriptors open besides counters
	boot      int64  // bootNanos; advanced by step on every call
	bootStep  int64
	successes int
}

func newFakeSys() *fakeSys {
	return &fakeSys{nextFD: 1000, open: map[int]*fakeFD{}, cur: 1 << 20, max: 1 << 20, files: 10, boot: 1_000_000_000_000, bootStep: 1_000}
}

func (f *fakeSys) perfOpen(attr *openAttr, pid, cpu, groupFD, flags int) (int, error) {
	f.mu.Lock()
	f.calls++
	o := fakeOpen{attr: *attr, pid: pid, cpu: cpu, group: groupFD, flags: flags}
	if f.fail != nil {
		if err := f.fail(f.calls, o); err != nil {
			f.mu.Unlock()
			return -1, err
		}
	}
	if groupFD >= 0 {
		if _, ok := f.open[groupFD]; !ok {
			f.mu.Unlock()
			return -1, syscall.EBADF
		}
	}
	fd := f.nextFD
	f.nextFD++
	ffd := &fakeFD{fakeOpen: o, fd: fd, id: uint64(fd) * 10}
	f.open[fd] = ffd
	if groupFD >= 0 {
		f.open[groupFD].members = append(f.open[groupFD].members, fd)
	}
	f.opened = append(f.opened, o)
	f.successes++
	n := f.successes
	hook := f.afterOpen
	f.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return fd, nil
}

func (f *fakeSys) countOf(o fakeOpen, r int) Count {
	if f.count != nil {
		return f.count(o, r)
	}
	return Count{Raw: uint64(r) * (o.attr.Config + 1), Enabled: uint64(r) * 1000, Running: uint64(r) * 1000}
}

func (f *fakeSys) read(fd int, p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.open[fd]
	if !ok {
		return 0, syscall.EBADF
	}
	l.reads++
	if f.readErr != nil {
		if err := f.readErr(l.fakeOpen, l.reads); err != nil {
			return 0, err
		}
	}
	lc := f.countOf(l.fakeOpen, l.reads)
	vals := []uint64{lc.Raw}
	ids := []uint64{l.id}
	for _, m := range l.members {
		mf := f.open[m]
		vals = append(vals, f.countOf(mf.fakeOpen, l.reads).Raw)
		ids = append(ids, mf.id)
	}
	b := encodeGroupRead(lc.Enabled, lc.Running, vals, ids)
	if len(b) > len(p) {
		return 0, syscall.ENOSPC
	}
	return copy(p, b), nil
}

func (f *fakeSys) eventID(fd int) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.open[fd]
	if !ok {
		return 0, syscall.EBADF
	}
	return l.id, nil
}

func (f *fakeSys) close(fd int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.open[fd]; !ok {
		return syscall.EBADF
	}
	delete(f.open, fd)
	f.closed++
	return nil
}

func (f *fakeSys) nofile() (uint64, uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur, f.max, nil
}

func (f *fakeSys) setNofile(cur uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur > f.max {
		return syscall.EPERM
	}
	f.cur, f.setTo = cur, cur
	return nil
}

func (f *fakeSys) openFiles() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.files + len(f.open)
}

func (f *fakeSys) bootNanos() int64 {
	f.mu.Lock()
	f.boot += f.bootStep
	now := f.boot
	f.boots++
	n, hook := f.boots, f.onBoot
	f.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return now
}

// stillOpen lists the descriptors not closed, sorted.
func (f *fakeSys) stillOpen() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for fd := range f.open {
		out = append(out, fd)
	}
	sort.Ints(out)
	return out
}

// opens returns a copy of the successful opens, in order.
func (f *fakeSys) opens() []fakeOpen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeOpen(nil), f.opened...)
}
