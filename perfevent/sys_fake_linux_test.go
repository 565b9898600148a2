package perfevent

import (
	"encoding/binary"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// fakeOpen is one perf_event_open call the fake saw.
type fakeOpen struct {
	attr                   openAttr
	pid, cpu, group, flags int
	// from is the CPU the opener was bound to (pinned), -1 when it was
	// not.
	from int
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
// answers reads with counts the test chooses, and remembers what is still
// open. It models inheritance as far as group reads see it: a thread cloned
// (clone) from a thread with inherited groups gets a copy of each group as
// it is at that moment, and a group read of the creator fails with ECHILD
// while a live copy has fewer members than the group (the kernel's check
// since the fix for CVE-2023-5717).
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

	// copies holds, per group leader, the member counts of the copies
	// inherited by live threads, by tid.
	copies map[int]map[int]int
	// fitsHere decides whether openHere succeeds (nil: it does); here
	// counts its calls.
	fitsHere func(attrs []openAttr) bool
	here     int

	// on maps the OS threads pinned runs work on to their CPU; pins
	// lists the CPUs pinned was called with, in order.
	on   map[int]int
	pins []int

	cur, max  uint64 // RLIMIT_NOFILE
	setTo     uint64 // last setNofile
	files     int    // descriptors open besides counters
	boot      int64  // bootNanos; advanced by step on every call
	bootStep  int64
	successes int
}

func newFakeSys() *fakeSys {
	return &fakeSys{nextFD: 1000, open: map[int]*fakeFD{}, copies: map[int]map[int]int{}, on: map[int]int{}, cur: 1 << 20, max: 1 << 20, files: 10, boot: 1_000_000_000_000, bootStep: 1_000}
}

// clone makes thread child inherit the inherited groups open on parent as
// they are now.
func (f *fakeSys) clone(parent, child int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for fd, l := range f.open {
		if l.pid == parent && l.group < 0 && l.attr.Bits&unix.PerfBitInherit != 0 {
			if f.copies[fd] == nil {
				f.copies[fd] = map[int]int{}
			}
			f.copies[fd][child] = len(l.members)
		}
	}
}

// exit ends thread tid: its inherited copies go.
func (f *fakeSys) exit(tid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.copies {
		delete(c, tid)
	}
}

func (f *fakeSys) perfOpen(attr *openAttr, pid, cpu, groupFD, flags int) (int, error) {
	f.mu.Lock()
	f.calls++
	o := fakeOpen{attr: *attr, pid: pid, cpu: cpu, group: groupFD, flags: flags, from: -1}
	if c, ok := f.on[unix.Gettid()]; ok {
		o.from = c
	}
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
	if l.attr.Read_format&formatGroup == 0 {
		b := binary.NativeEndian.AppendUint64(nil, lc.Raw)
		b = binary.NativeEndian.AppendUint64(b, lc.Enabled)
		b = binary.NativeEndian.AppendUint64(b, lc.Running)
		b = binary.NativeEndian.AppendUint64(b, l.id)
		if len(b) > len(p) {
			return 0, syscall.ENOSPC
		}
		return copy(p, b), nil
	}
	for _, members := range f.copies[fd] {
		if members != len(l.members) {
			return 0, syscall.ECHILD
		}
	}
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
	delete(f.copies, fd) // closing a parent frees its inherited copies
	f.closed++
	return nil
}

func (f *fakeSys) closeAll(fds []int) error {
	var first error
	for _, fd := range fds {
		if err := f.close(fd); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// pinned runs work on a locked OS thread, which perfOpen tells apart: the
// opens made from it are marked from cpu. It binds nothing.
func (f *fakeSys) pinned(cpu int, work func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid := unix.Gettid()
		f.mu.Lock()
		f.on[tid] = cpu
		f.pins = append(f.pins, cpu)
		f.mu.Unlock()
		work()
		f.mu.Lock()
		delete(f.on, tid)
		f.mu.Unlock()
	}()
	<-done
}

func (f *fakeSys) openHere(attrs []openAttr) ([]int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.here++
	if f.fitsHere != nil && !f.fitsHere(attrs) {
		return nil, false
	}
	var fds []int
	for _, a := range attrs {
		fd := f.nextFD
		f.nextFD++
		f.open[fd] = &fakeFD{fakeOpen: fakeOpen{attr: a, pid: 0, cpu: -1, group: -1}, fd: fd}
		fds = append(fds, fd)
	}
	return fds, true
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

// bitInheritForTest is perf_event_attr's inherit bit.
const bitInheritForTest = unix.PerfBitInherit

func itoa(n int) string { return strconv.Itoa(n) }
