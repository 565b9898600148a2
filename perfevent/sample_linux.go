package perfevent

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Sampling is sampling in progress on one process: one event and one ring
// buffer per online CPU, drained by a goroutine until Stop.
type Sampling struct {
	pid   int
	opts  SampleOptions
	root  string
	rings []*ring
	wake  int // eventfd that ends the reader's poll
	done  chan struct{}
	// noLostFormat: the kernel refused PERF_FORMAT_LOST.
	noLostFormat bool
	// noClockID: the kernel refused to time samples by CLOCK_MONOTONIC
	// (use_clockid, Linux 4.1).
	noClockID bool

	mu      sync.Mutex // guards set, col, scratch, stopped, ended
	set     *SampleSet
	col     *collector
	scratch []byte
	stopped bool
	ended   bool // End was called
}

// ring is one CPU's event and its mmap'd ring buffer.
type ring struct {
	cpu  int
	fd   int
	mem  []byte // the whole mapping: metadata page, then data
	meta *unix.PerfEventMmapPage
	data []byte
}

// StartSampling starts sampling process pid: it opens opts.Event in sampling
// mode on every online CPU with a ring buffer each, reads the process's
// memory map and thread names, enables the events and drains the buffers in
// the background until Stop. See the package's sampling design (sample.go)
// for why sampling is CPU-wide and filtered by pid.
//
// It fails with procfs.ErrGone, ErrPermission (CPU-wide sampling needs
// perf_event_paranoid <= 0, root or CAP_PERFMON) or ErrNotSupported, and
// closes whatever it opened when it fails.
func StartSampling(pid int, opts SampleOptions) (*Sampling, error) {
	if err := validateSampleOptions(pid, &opts); err != nil {
		return nil, err
	}
	root := opts.Root
	proc := procfs.New(root).Proc(pid)
	if _, err := proc.Stat(); errors.Is(err, procfs.ErrGone) {
		return nil, fmt.Errorf("sample pid %d: %w", pid, procfs.ErrGone)
	}
	if opts.Freq > 0 {
		if max, ok := readSysctlInt(root, "kernel.perf_event_max_sample_rate"); ok && opts.Freq > max {
			return nil, fmt.Errorf("sample %s at %d Hz: above kernel.perf_event_max_sample_rate=%d; lower the frequency or raise the limit (sysctl -w kernel.perf_event_max_sample_rate=%d)", opts.Event.Name, opts.Freq, max, opts.Freq)
		}
	}
	cpus, err := onlineCPUs(root)
	if err != nil {
		return nil, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	s := &Sampling{pid: pid, opts: opts, root: root, wake: -1, done: make(chan struct{})}
	s.set = &SampleSet{Pid: pid, Event: opts.Event.Name, Unit: opts.Event.Unit, Freq: opts.Freq, Period: opts.Period, CPUs: len(cpus), CPUWide: !opts.Cgroup}
	s.col = newCollector(pid, s.set)

	cgFD, flags := -1, unix.PERF_FLAG_FD_CLOEXEC
	if opts.Cgroup {
		dir := opts.CgroupDir
		if dir == "" {
			if dir, err = cgroupDirOf(root, pid); err != nil {
				return nil, fmt.Errorf("sample pid %d by cgroup: %w", pid, err)
			}
		}
		f, err := os.Open(dir)
		if err != nil {
			return nil, fmt.Errorf("sample pid %d: open cgroup %s: %w", pid, dir, err)
		}
		defer f.Close()
		cgFD, flags = int(f.Fd()), flags|unix.PERF_FLAG_PID_CGROUP
	}

	// Thread names and the map before the first sample can arrive.
	s.set.Exe = exeLink(proc)
	s.set.MapsStart, _ = proc.ReadFile("maps")
	readComms(proc, s.set.Comms)

	pages := opts.BufferPages
	for _, cpu := range cpus {
		r, err := s.openRing(cpu, cgFD, flags, pages)
		if err != nil {
			s.closeRings()
			return nil, err
		}
		s.rings = append(s.rings, r)
	}
	if s.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		s.closeRings()
		return nil, fmt.Errorf("sample pid %d: eventfd: %w", pid, err)
	}
	for _, r := range s.rings {
		if err := unix.IoctlSetInt(r.fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
			s.closeRings()
			return nil, fmt.Errorf("sample pid %d: enable %s on CPU %d: %w", pid, opts.Event.Name, r.cpu, err)
		}
	}
	s.set.Start = time.Now()
	go s.reader()
	return s, nil
}

// openRing opens the event on cpu (trying each of its encodings, for hybrid
// CPUs whose PMUs cover different CPUs) and maps its ring buffer.
func (s *Sampling) openRing(cpu, cgFD, flags, pages int) (*ring, error) {
	e := s.opts.Event
	pageSize := os.Getpagesize()
	dataSize := pages * pageSize
	var firstErr error
	var fd = -1
	for _, enc := range e.Encodings {
		attr := e.baseAttr(enc)
		attr.Sample_type = sampleType
		if !s.noLostFormat {
			attr.Read_format = formatLost
		}
		attr.Bits |= unix.PerfBitDisabled | unix.PerfBitComm | unix.PerfBitTask | unix.PerfBitWatermark
		if s.opts.Period > 0 {
			attr.Sample = s.opts.Period
		} else {
			attr.Sample = uint64(s.opts.Freq)
			attr.Bits |= unix.PerfBitFreq
		}
		if e.Kind == KindSoftware {
			attr.Bits |= unix.PerfBitExcludeIdle
		}
		// Samples timed by CLOCK_MONOTONIC, which Begin and End read,
		// so that the window's edges can be told in sample times.
		if !s.noClockID {
			attr.Bits |= unix.PerfBitUseClockID
			attr.Clockid = unix.CLOCK_MONOTONIC
		}
		// Wake the reader when a quarter of the buffer is full.
		attr.Wakeup = uint32(dataSize / 4)
		var err error
		fd, err = realSys{}.perfOpen(&attr, cgFD, cpu, -1, flags)
		if errors.Is(err, unix.EINVAL) && attr.Read_format != 0 {
			// Kernels before 6.0 have no PERF_FORMAT_LOST: lost
			// records are then known from PERF_RECORD_LOST only.
			attr.Read_format = 0
			if fd, err = (realSys{}).perfOpen(&attr, cgFD, cpu, -1, flags); err == nil {
				s.noLostFormat = true
			}
		}
		if errors.Is(err, unix.EINVAL) && attr.Bits&unix.PerfBitUseClockID != 0 {
			attr.Bits &^= unix.PerfBitUseClockID
			attr.Clockid = 0
			if fd, err = (realSys{}).perfOpen(&attr, cgFD, cpu, -1, flags); err == nil {
				s.noClockID = true
			}
		}
		if err == nil {
			break
		}
		if firstErr == nil {
			firstErr = s.openError(enc, cpu, err)
		}
	}
	if fd < 0 {
		return nil, firstErr
	}
	mem, err := unix.Mmap(fd, 0, (1+pages)*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		hint := ""
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM) {
			hint = mlockHint()
		}
		return nil, fmt.Errorf("sample pid %d: map the ring buffer of %s on CPU %d (%d pages)%s: %w", s.pid, e.Name, cpu, pages, hint, err)
	}
	r := &ring{cpu: cpu, fd: fd, mem: mem, meta: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))}
	off, size := r.meta.Data_offset, r.meta.Data_size
	if size == 0 { // kernels before 4.1 do not say: the data follows the first page
		off, size = uint64(pageSize), uint64(dataSize)
	}
	r.data = mem[off : off+size]
	return r, nil
}

// openError explains a failed open of enc on cpu.
func (s *Sampling) openError(enc Encoding, cpu int, err error) error {
	target := fmt.Sprintf("CPU %d (sampling pid %d CPU-wide)", cpu, s.pid)
	if s.opts.System != nil {
		return s.opts.System.OpenError(s.opts.Event, enc, target, err)
	}
	oe := &OpenError{Event: s.opts.Event.Name, PMU: enc.PMU, Target: target, Err: err, Reason: err.Error()}
	switch {
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		oe.Kind = ErrPermission
		p, _ := readSysctlInt(s.root, "kernel.perf_event_paranoid")
		oe.Reason = fmt.Sprintf("permission denied (%v): sampling CPU-wide needs perf_event_paranoid <= 0 (it is %d), root or CAP_PERFMON", err, p)
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENODEV), errors.Is(err, unix.EOPNOTSUPP):
		oe.Kind = ErrNotSupported
		oe.Reason = fmt.Sprintf("the event cannot sample here (%v); cpu-clock samples on every machine", err)
	}
	return oe
}

// Begin opens the window of samples kept: those taken from now on, none
// before. Call it right before the counters' first read of a window, and
// End right before their last: the profile then covers the counters'
// window, not the time it took to start and stop sampling around it, nor
// what perfbench does after the window (its own status queries). Without
// Begin, every sample from StartSampling to Stop is kept.
func (s *Sampling) Begin() {
	s.drain()
	s.mu.Lock()
	defer s.mu.Unlock()
	// What was taken before now is left out.
	s.set.Outside += s.set.Count()
	s.set.Samples = nil
	s.set.Ticks = 0
	clear(s.col.seen)
	s.col.window, s.col.open = true, true
	if !s.noClockID {
		s.col.from = monoNow()
	}
	s.set.Start = time.Now()
}

// End closes the window Begin opened: samples taken from now on are left
// out.
func (s *Sampling) End() {
	s.drain() // what was taken until now is in
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.col.window {
		return
	}
	if s.noClockID {
		// Sample times are not comparable with this clock: the
		// window ends with the drain just made.
		s.col.open = false
	} else {
		s.col.until = monoNow()
	}
	s.set.End = time.Now()
	s.ended = true
}

// monoNow is CLOCK_MONOTONIC in ns, the clock samples are timed by.
func monoNow() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Nano())
}

// reader drains the ring buffers whenever one is a quarter full, and at
// least twice a second, until Stop writes to the eventfd.
func (s *Sampling) reader() {
	defer close(s.done)
	fds := make([]unix.PollFd, 0, len(s.rings)+1)
	for _, r := range s.rings {
		fds = append(fds, unix.PollFd{Fd: int32(r.fd), Events: unix.POLLIN})
	}
	fds = append(fds, unix.PollFd{Fd: int32(s.wake), Events: unix.POLLIN})
	if s.opts.holdReader {
		fds = fds[len(fds)-1:]
	}
	for {
		_, err := unix.Poll(fds, 500)
		if err != nil && !errors.Is(err, unix.EINTR) {
			s.mu.Lock()
			s.set.warnf("polling the ring buffers failed (%v): samples were read only at the end of the window", err)
			s.mu.Unlock()
			return
		}
		if fds[len(fds)-1].Revents&unix.POLLIN != 0 {
			return
		}
		if !s.opts.holdReader {
			s.drain()
		}
	}
}

// drain reads every ring buffer from its tail to its head and hands the
// space back to the kernel.
func (s *Sampling) drain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rings {
		// data_head is written by the kernel: load it with acquire
		// semantics before reading the data it covers; store data_tail
		// with release semantics after the data is read, so the kernel
		// does not overwrite records still being read.
		head := atomic.LoadUint64(&r.meta.Data_head)
		tail := atomic.LoadUint64(&r.meta.Data_tail)
		newTail, bad := ringRecords(r.data, head, tail, &s.scratch, s.col.record)
		if bad {
			s.set.Malformed++
		}
		atomic.StoreUint64(&r.meta.Data_tail, newTail)
	}
}

// Stop disables the events, reads what is left in the ring buffers, closes
// everything and returns the samples of the process with their warnings
// (lost records, throttling, the process exiting during the window). It is
// safe to call once; a second call returns errSamplingActive.
func (s *Sampling) Stop() (*SampleSet, error) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil, errSamplingActive
	}
	s.stopped = true
	s.mu.Unlock()

	for _, r := range s.rings {
		_ = unix.IoctlSetInt(r.fd, unix.PERF_EVENT_IOC_DISABLE, 0)
	}
	end := time.Now()
	var one [8]byte
	one[0] = 1
	_, _ = unix.Write(s.wake, one[:])
	<-s.done
	s.drain()
	lost := s.readLost()
	s.closeRings()

	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.set
	if !s.ended {
		set.End = end
	}
	if s.noClockID && s.col.window {
		set.warnf("this kernel cannot time samples by CLOCK_MONOTONIC: the profile's window edges are those of the ring buffers' drains at the counters' reads, within a few milliseconds")
	}
	proc := procfs.New(s.root).Proc(s.pid)
	if b, err := proc.ReadFile("maps"); err == nil && len(b) > 0 {
		set.MapsEnd = b
	} else if !set.Exited {
		set.Exited = true
	}
	readComms(proc, set.Comms)
	// A record lost when the buffer was full is reported by a LOST record
	// only once there is room again; records lost just before the events
	// were disabled are known only from read(2).
	set.Lost = max(set.Lost, lost)
	set.finish()
	return set, nil
}

// formatLost is PERF_FORMAT_LOST: read(2) returns the value, then the number
// of records lost.
const formatLost = 1 << 4

// readLost sums the lost-record counts read(2) gives with PERF_FORMAT_LOST.
func (s *Sampling) readLost() uint64 {
	if s.noLostFormat {
		return 0
	}
	var total uint64
	var buf [16]byte
	for _, r := range s.rings {
		if n, err := (realSys{}).read(r.fd, buf[:]); err == nil && n == len(buf) {
			total += le.Uint64(buf[8:])
		}
	}
	return total
}

// closeRings unmaps and closes every ring and the eventfd.
func (s *Sampling) closeRings() {
	for _, r := range s.rings {
		if r.mem != nil {
			_ = unix.Munmap(r.mem)
			r.mem, r.meta, r.data = nil, nil, nil
		}
		if r.fd >= 0 {
			unix.Close(r.fd)
			r.fd = -1
		}
	}
	if s.wake >= 0 {
		unix.Close(s.wake)
		s.wake = -1
	}
}

// readComms adds the names of the threads of proc to comms.
func readComms(proc procfs.Proc, comms map[int]string) {
	tids, err := proc.Tasks()
	if err != nil {
		return
	}
	for _, tid := range tids {
		if c, err := proc.Task(tid).Comm(); err == nil {
			comms[tid] = strings.TrimSpace(c)
		}
	}
}

// readSysctlInt reads an integer kernel setting under root
// ("kernel.perf_event_paranoid").
func readSysctlInt(root, name string) (int, bool) {
	v, err := procfs.New(root).SysctlInt(name)
	return v, err == nil
}

// mlockHint explains a ring buffer that could not be mapped: it is above
// what may be locked. Root is not told to run as root: it already is, and
// what is left to it is a smaller buffer.
func mlockHint() string {
	if euid() == 0 {
		return " (above kernel.perf_event_mlock_kb and RLIMIT_MEMLOCK: use a smaller buffer)"
	}
	return " (above kernel.perf_event_mlock_kb and RLIMIT_MEMLOCK: run as root or use a smaller buffer)"
}
