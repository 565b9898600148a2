package perfevent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Sampling design
//
// A server creates a thread per connection while a step runs, so sampling
// must catch threads that do not exist yet when it starts. The counting
// engine does that with inherit, but the kernel refuses a ring buffer (mmap)
// on an inherited per-thread event (perf_mmap: "event->cpu == -1 &&
// event->attr.inherit" is EINVAL), and perf record -p works around it by
// opening one inherited event per thread per CPU, which still misses threads
// created by a thread it had not yet attached, and costs threads × CPUs
// descriptors.
//
// perfevent instead samples CPU-wide: one event per online CPU (pid = -1,
// cpu = N), each with its own ring buffer, and keeps the samples whose pid is
// the server's, reading the pid the kernel writes into each sample
// (PERF_SAMPLE_TID). Every thread of the server is caught however and
// whenever it was created, with a fixed number of descriptors; the price is
// that samples of other processes on those CPUs are written and thrown away
// (SampleSet.Foreign counts them), and that CPU-wide events need
// perf_event_paranoid <= 0, root or CAP_PERFMON. With SampleOptions.Cgroup
// the events are also filtered by the server's cgroup v2 in the kernel
// (PERF_FLAG_PID_CGROUP), so other processes cost nothing. Software clock
// events exclude the idle task, which is never the server.
//
// Each sample carries PERF_SAMPLE_IP|TID|TIME|CPU|PERIOD|CALLCHAIN. The
// call chain is walked by the kernel with frame pointers, as with perf record
// -g: frames of code built without them end the user chain early. Events are
// opened in frequency mode (SampleOptions.Freq samples per second per CPU,
// the kernel adjusting the period) unless a fixed Period is given. COMM and
// task (FORK/EXIT) records are requested too, for thread names and to see
// the server exit. Records the kernel could not write because a ring buffer
// was full arrive as PERF_RECORD_LOST and become a warning on the result.

// DefaultSampleFreq is the sampling frequency (per CPU, per second) when
// SampleOptions sets neither Freq nor Period: perf's habit of a prime near
// 100 keeps samples from beating with periodic work.
const DefaultSampleFreq = 99

// defaultBufferPages is the size of each CPU's ring buffer in pages when
// SampleOptions.BufferPages is 0: 512 KiB with 4 KiB pages, seconds of
// samples at 999 Hz with deep call chains.
const defaultBufferPages = 128

// errSamplingActive: Stop was called twice.
var errSamplingActive = errors.New("sampling already stopped")

// SampleOptions tune StartSampling. The zero value samples cpu-clock at
// DefaultSampleFreq on every online CPU and keeps the samples of the pid.
type SampleOptions struct {
	// Event is the event whose overflows are sampled: cpu-clock when
	// empty (it works on every machine, VMs included); cycles or any
	// other counter where the PMU has it.
	Event Event
	// Freq is the number of samples per second per CPU the kernel aims
	// at (frequency mode). Period, when set, samples every Period events
	// instead; setting both is an error. Neither: DefaultSampleFreq.
	Freq   int
	Period uint64
	// Cgroup filters the events by the process's cgroup v2 in the kernel
	// (PERF_FLAG_PID_CGROUP), for a server in a cgroup of its own;
	// CgroupDir names another cgroup directory. Samples are still kept
	// only for the pid.
	Cgroup    bool
	CgroupDir string
	// BufferPages is the size of each CPU's ring buffer in pages, a power
	// of two; 0 means defaultBufferPages.
	BufferPages int
	// System, when set, explains why an event does not open.
	System *System
	// Root is the directory proc and sys are read under; empty means "/".
	Root string

	// holdReader (tests) leaves the buffers undrained until Stop, so
	// they overflow.
	holdReader bool
}

// Sample is one sample of the sampled process, or several merged: samples
// of one thread with the same call chain are kept once, with their number
// in Count, so a long window at a high rate needs memory for its distinct
// stacks only.
type Sample struct {
	Tid int
	// CPU and Time are those of the first of the merged samples; Time is
	// the kernel's perf clock, in ns.
	CPU  int
	Time uint64
	// Count is the number of samples merged here (0 is taken as 1).
	Count int
	// Period is how many events the samples stand for: ns of CPU time for
	// the clock events, cycles for cycles.
	Period uint64
	// IP is the instruction pointer.
	IP uint64
	// Kernel and User are the call chain's kernel and user frames, leaf
	// first (the leaf is IP); return addresses above the leaf. A sample
	// taken in user mode has no kernel frames.
	Kernel []uint64
	User   []uint64
}

// SampleSet is what StartSampling's Stop returns: the samples of the
// process over the window and what is needed to name their frames.
type SampleSet struct {
	Pid int
	// Event is the sampled event as perf prints it; Unit is "ns" for the
	// clock events, empty for counts.
	Event string
	Unit  string
	// Freq or Period is how the event was sampled.
	Freq   int
	Period uint64
	// CPUs is the number of CPUs sampled.
	CPUs int
	// Start and End are the instants sampling was enabled and disabled,
	// or the window's (Sampling.Begin and End).
	Start, End time.Time

	// Samples holds one entry per thread and distinct call chain.
	Samples []Sample
	// Comms maps thread ids to their names (/proc/PID/task/TID/comm at
	// start and stop, and the kernel's COMM records in between).
	Comms map[int]string
	// Exe is the process's executable at the start (/proc/PID/exe).
	Exe string
	// MapsStart and MapsEnd are /proc/PID/maps at the start and the end
	// of the window (MapsEnd is empty when the process had exited).
	MapsStart, MapsEnd []byte

	// Lost is the number of records the kernel dropped because a ring
	// buffer was full (PERF_RECORD_LOST); LostSamples the samples the PMU
	// dropped (PERF_RECORD_LOST_SAMPLES).
	Lost, LostSamples uint64
	// Throttled is the number of times the kernel throttled the event for
	// interrupting too often.
	Throttled int
	// Foreign is the number of samples of other processes that were
	// thrown away; Outside the number of the process's samples taken
	// outside the window (Sampling.Begin and End), left out.
	Foreign uint64
	Outside int
	// Ticks is the number of samples of every task, idle included, taken
	// inside the window. CPUWide is set when every task of every CPU was
	// sampled (not a cgroup): then a clock event's Ticks is about CPUs ×
	// window × Freq, and fewer means its timer did not fire when due (a
	// VM whose host held its CPUs, steal): see finish.
	Ticks   uint64
	CPUWide bool
	// Malformed is the number of records that could not be decoded.
	Malformed int
	// ThreadsExited is the number of the process's threads that exited
	// inside the window; Exited is true when the process itself did.
	ThreadsExited int
	Exited        bool

	// Warnings are conditions that weaken the profile without voiding it.
	Warnings []string
}

// Total is the sum of the samples' periods.
func (s *SampleSet) Total() uint64 {
	var t uint64
	for _, x := range s.Samples {
		t += x.Period
	}
	return t
}

// Count is the number of samples (merged ones counted each).
func (s *SampleSet) Count() int {
	n := 0
	for _, x := range s.Samples {
		n += x.N()
	}
	return n
}

// N is the number of samples x stands for.
func (x Sample) N() int { return max(x.Count, 1) }

// finish derives the warnings of a set whose records are all in.
func (s *SampleSet) finish() {
	if s.Lost > 0 {
		s.warnf("%d records lost because a ring buffer was full (%d samples kept): the profile under-represents busy moments; lower the frequency or raise the buffer size", s.Lost, s.Count())
	}
	if s.LostSamples > 0 {
		s.warnf("the PMU dropped %d samples", s.LostSamples)
	}
	if s.Throttled > 0 {
		s.warnf("the kernel throttled sampling %d times (kernel.perf_event_max_sample_rate, perf_cpu_time_max_percent): fewer samples than asked for", s.Throttled)
	}
	if due, ok := s.ticksDue(); ok && float64(s.Ticks) < 0.8*due {
		s.warnf("the sampling clock fired %d times on %d CPUs over %.2f s, %.0f%% of the %.0f due (the host held this VM's CPUs, steal, or timer interrupts ran late): shares between functions hold, the profile's CPU time is low", s.Ticks, s.CPUs, s.End.Sub(s.Start).Seconds(), 100*float64(s.Ticks)/due, due)
	}
	if s.Malformed > 0 {
		s.warnf("%d ring-buffer records could not be decoded and were skipped", s.Malformed)
	}
	if s.Exited {
		s.warnf("process %d exited during the window: the profile covers it up to its exit", s.Pid)
	}
	if len(s.Samples) == 0 {
		s.warnf("no samples of process %d in the window (idle, or the window was too short for the sampling rate)", s.Pid)
	}
	sort.SliceStable(s.Samples, func(i, j int) bool { return s.Samples[i].Time < s.Samples[j].Time })
}

// ticksDue is how many samples a clock event sampled on every task of every
// CPU takes over the window: one per period per CPU (the kernel turns a
// clock event's frequency into the period 1e9/Freq ns). ok is false for
// other events, for cgroup sampling and for windows too short to judge.
func (s *SampleSet) ticksDue() (float64, bool) {
	if !s.CPUWide || s.Event != "cpu-clock" || s.CPUs < 1 || !s.End.After(s.Start) {
		return 0, false
	}
	period := s.Period
	if s.Freq > 0 {
		period = uint64(1e9 / s.Freq)
	}
	if period == 0 {
		return 0, false
	}
	due := float64(s.CPUs) * float64(s.End.Sub(s.Start).Nanoseconds()) / float64(period)
	return due, due >= 100
}

func (s *SampleSet) warnf(format string, args ...any) {
	s.Warnings = append(s.Warnings, fmt.Sprintf(format, args...))
}

// Record types of the perf ring buffer (include/uapi/linux/perf_event.h).
const (
	recordMmap        = 1
	recordLost        = 2
	recordComm        = 3
	recordExit        = 4
	recordThrottle    = 5
	recordUnthrottle  = 6
	recordFork        = 7
	recordSample      = 9
	recordMmap2       = 10
	recordLostSamples = 13
)

// Sample fields asked for: the order of the fields in a sample record is the
// order of these bits.
const (
	sampleIP        = 1 << 0
	sampleTID       = 1 << 1
	sampleTime      = 1 << 2
	sampleCallchain = 1 << 5
	sampleCPU       = 1 << 7
	samplePeriod    = 1 << 8

	sampleType = sampleIP | sampleTID | sampleTime | sampleCPU | samplePeriod | sampleCallchain
)

// Call-chain context markers: entries at or above contextMax are not
// addresses but say whose frames follow.
const (
	contextHV          = ^uint64(32 - 1)   // (u64)-32
	contextKernel      = ^uint64(128 - 1)  // (u64)-128
	contextUser        = ^uint64(512 - 1)  // (u64)-512
	contextGuest       = ^uint64(2048 - 1) // (u64)-2048
	contextGuestKernel = ^uint64(2176 - 1)
	contextGuestUser   = ^uint64(2560 - 1)
	contextMax         = ^uint64(4095 - 1) // (u64)-4095
)

// recordHeaderSize is sizeof(struct perf_event_header).
const recordHeaderSize = 8

// miscCommExec marks a COMM record caused by exec.
const miscCommExec = 1 << 13

var le = binary.LittleEndian

// errShortRecord is a record shorter than its fields.
var errShortRecord = errors.New("record shorter than its fields")

// recordHeader is struct perf_event_header.
type recordHeader struct {
	Type uint32
	Misc uint16
	Size uint16
}

func parseHeader(b []byte) (recordHeader, bool) {
	if len(b) < recordHeaderSize {
		return recordHeader{}, false
	}
	return recordHeader{Type: le.Uint32(b), Misc: le.Uint16(b[4:]), Size: le.Uint16(b[6:])}, true
}

// decodeSample decodes the body (after the header) of a PERF_RECORD_SAMPLE
// laid out for sampleType, returning the sample and the pid it belongs to.
func decodeSample(body []byte) (Sample, int, error) {
	const fixed = 8 + 8 + 8 + 8 + 8 + 8 // ip, pid+tid, time, cpu+res, period, nr
	if len(body) < fixed {
		return Sample{}, 0, errShortRecord
	}
	s := Sample{
		Count:  1,
		IP:     le.Uint64(body),
		Tid:    int(int32(le.Uint32(body[12:]))),
		Time:   le.Uint64(body[16:]),
		CPU:    int(le.Uint32(body[24:])),
		Period: le.Uint64(body[32:]),
	}
	pid := int(int32(le.Uint32(body[8:])))
	nr := le.Uint64(body[40:])
	chain := body[fixed:]
	if nr > uint64(len(chain)/8) {
		return Sample{}, 0, fmt.Errorf("call chain of %d entries in %d bytes: %w", nr, len(chain), errShortRecord)
	}
	s.Kernel, s.User = splitChain(chain[:nr*8])
	return s, pid, nil
}

// splitChain splits a raw call chain (8-byte entries with context markers)
// into kernel and user frames. Hypervisor and guest frames are dropped.
func splitChain(b []byte) (kernel, user []uint64) {
	var ctx uint64
	for i := 0; i+8 <= len(b); i += 8 {
		v := le.Uint64(b[i:])
		if v >= contextMax {
			ctx = v
			continue
		}
		if v == 0 {
			continue
		}
		switch ctx {
		case contextKernel:
			kernel = append(kernel, v)
		case contextUser:
			user = append(user, v)
		}
	}
	return kernel, user
}

// commRecord is PERF_RECORD_COMM.
type commRecord struct {
	Pid, Tid int
	Comm     string
	Exec     bool
}

func decodeComm(misc uint16, body []byte) (commRecord, error) {
	if len(body) < 8 {
		return commRecord{}, errShortRecord
	}
	name := body[8:]
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	return commRecord{
		Pid:  int(int32(le.Uint32(body))),
		Tid:  int(int32(le.Uint32(body[4:]))),
		Comm: string(name),
		Exec: misc&miscCommExec != 0,
	}, nil
}

// taskRecord is PERF_RECORD_FORK or PERF_RECORD_EXIT.
type taskRecord struct {
	Pid, PPid, Tid, PTid int
	Time                 uint64
}

func decodeTask(body []byte) (taskRecord, error) {
	if len(body) < 24 {
		return taskRecord{}, errShortRecord
	}
	return taskRecord{
		Pid:  int(int32(le.Uint32(body))),
		PPid: int(int32(le.Uint32(body[4:]))),
		Tid:  int(int32(le.Uint32(body[8:]))),
		PTid: int(int32(le.Uint32(body[12:]))),
		Time: le.Uint64(body[16:]),
	}, nil
}

// collector turns ring-buffer records into a SampleSet, keeping what belongs
// to one process.
type collector struct {
	pid int
	set *SampleSet
	// seen maps a sample's thread and raw call chain to its entry in
	// set.Samples, to merge repeats.
	seen map[string]int
	// window, when set, keeps only the samples taken from `from` to
	// `until` (the sample's time, in ns of the clock samples are timed
	// by; until 0 while the window is open), and none before `from` is
	// set: see Sampling.Begin.
	window      bool
	open        bool
	from, until uint64
}

// inWindow reports whether a sample taken at time t is kept.
func (c *collector) inWindow(t uint64) bool {
	if !c.window {
		return true
	}
	return c.open && t >= c.from && (c.until == 0 || t <= c.until)
}

func newCollector(pid int, set *SampleSet) *collector {
	if set.Comms == nil {
		set.Comms = map[int]string{}
	}
	return &collector{pid: pid, set: set, seen: map[string]int{}}
}

// sampleKey returns what makes two sample records of one process merge: the
// tid (4 bytes) followed by the raw call chain, with the record's pid and
// period. ok is false when the body is too short to hold them (decodeSample
// then says why).
func sampleKey(body []byte) (key string, pid int, period uint64, ok bool) {
	const fixed = 48 // ip, pid+tid, time, cpu+res, period, nr
	if len(body) < fixed {
		return "", 0, 0, false
	}
	nr := le.Uint64(body[40:])
	if nr > uint64(len(body)-fixed)/8 {
		return "", 0, 0, false
	}
	return string(body[12:16]) + string(body[fixed:fixed+nr*8]), int(int32(le.Uint32(body[8:]))), le.Uint64(body[32:]), true
}

// record takes one whole record (header included). Records of other
// processes are counted or ignored; records that do not decode are counted
// as malformed.
func (c *collector) record(rec []byte) {
	h, ok := parseHeader(rec)
	if !ok || int(h.Size) < recordHeaderSize || int(h.Size) > len(rec) {
		c.set.Malformed++
		return
	}
	body := rec[recordHeaderSize:h.Size]
	switch h.Type {
	case recordSample:
		if key, pid, period, ok := sampleKey(body); ok {
			in := c.inWindow(le.Uint64(body[16:]))
			if in {
				c.set.Ticks++
			}
			if pid != c.pid {
				c.set.Foreign++
				return
			}
			if !in {
				c.set.Outside++
				return
			}
			if i, ok := c.seen[key]; ok {
				c.set.Samples[i].Count++
				c.set.Samples[i].Period += period
				return
			}
			s, _, err := decodeSample(body)
			if err != nil {
				c.set.Malformed++
				return
			}
			c.seen[key] = len(c.set.Samples)
			c.set.Samples = append(c.set.Samples, s)
			return
		}
		c.set.Malformed++
	case recordLost:
		if len(body) < 16 {
			c.set.Malformed++
			return
		}
		c.set.Lost += le.Uint64(body[8:])
	case recordLostSamples:
		if len(body) < 8 {
			c.set.Malformed++
			return
		}
		c.set.LostSamples += le.Uint64(body)
	case recordComm:
		r, err := decodeComm(h.Misc, body)
		if err != nil {
			c.set.Malformed++
			return
		}
		if r.Pid == c.pid {
			c.set.Comms[r.Tid] = r.Comm
		}
	case recordExit:
		r, err := decodeTask(body)
		if err != nil {
			c.set.Malformed++
			return
		}
		if r.Pid == c.pid {
			c.set.ThreadsExited++
			if r.Tid == c.pid {
				c.set.Exited = true
			}
		}
	case recordThrottle:
		c.set.Throttled++
	}
}

// ringRecords walks the records of a ring buffer's data area between tail and
// head (free-running positions; len(data) is a power of two) and calls fn on
// each whole record, copying one that wraps around the end of the area into
// scratch. fn must not keep the slice. It returns the new tail, which is head
// unless a record is incomplete; a record whose size cannot be right (less
// than a header, or beyond head) ends the walk at head and is reported as
// bad, since nothing after it can be found.
func ringRecords(data []byte, head, tail uint64, scratch *[]byte, fn func([]byte)) (newTail uint64, bad bool) {
	size := uint64(len(data))
	if size == 0 || size&(size-1) != 0 || head-tail > size {
		return head, true
	}
	mask := size - 1
	var hb [recordHeaderSize]byte
	for tail < head {
		if head-tail < recordHeaderSize {
			return head, true
		}
		off := tail & mask
		hdr := copyRing(hb[:], data, off)
		h, _ := parseHeader(hdr)
		n := uint64(h.Size)
		if n < recordHeaderSize || n > head-tail {
			return head, true
		}
		if off+n <= size {
			fn(data[off : off+n])
		} else {
			if uint64(cap(*scratch)) < n {
				*scratch = make([]byte, n)
			}
			buf := (*scratch)[:n]
			copyRing(buf, data, off)
			fn(buf)
		}
		tail += n
	}
	return tail, false
}

// copyRing fills dst from the ring data starting at off, wrapping at the end.
func copyRing(dst, data []byte, off uint64) []byte {
	n := copy(dst, data[off:])
	if n < len(dst) {
		copy(dst[n:], data)
	}
	return dst
}

// DefaultSampleEvent is cpu-clock, the event sampled when SampleOptions.Event
// is empty.
func DefaultSampleEvent() Event {
	return Event{
		Name:      "cpu-clock",
		Kind:      KindSoftware,
		Encodings: []Encoding{{PMU: "software", Type: typeSoftware, Config: 0}},
		Unit:      "ns",
		Canonical: "cpu-clock",
	}
}

// validateSampleOptions fills defaults and refuses contradictions.
func validateSampleOptions(pid int, o *SampleOptions) error {
	if pid <= 0 {
		return fmt.Errorf("sample pid %d: not a process id: %w", pid, procfs.ErrGone)
	}
	if o.Event.Name == "" {
		o.Event = DefaultSampleEvent()
	}
	if len(o.Event.Encodings) == 0 {
		return fmt.Errorf("sample %s: the event has no encoding: %w", o.Event.Name, ErrNotSupported)
	}
	if o.Freq < 0 {
		return fmt.Errorf("sample %s: negative frequency %d", o.Event.Name, o.Freq)
	}
	if o.Freq > 0 && o.Period > 0 {
		return fmt.Errorf("sample %s: give a frequency or a period, not both", o.Event.Name)
	}
	if o.Freq == 0 && o.Period == 0 {
		o.Freq = DefaultSampleFreq
	}
	if o.BufferPages == 0 {
		o.BufferPages = defaultBufferPages
	}
	if o.BufferPages < 1 || o.BufferPages&(o.BufferPages-1) != 0 {
		return fmt.Errorf("sample %s: ring buffer of %d pages: the size must be a power of two", o.Event.Name, o.BufferPages)
	}
	return nil
}
