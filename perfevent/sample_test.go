package perfevent

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rec builds one ring-buffer record: header, then body padded to 8 bytes.
func rec(typ uint32, misc uint16, body []byte) []byte {
	for len(body)%8 != 0 {
		body = append(body, 0)
	}
	b := make([]byte, 8, 8+len(body))
	binary.LittleEndian.PutUint32(b, typ)
	binary.LittleEndian.PutUint16(b[4:], misc)
	binary.LittleEndian.PutUint16(b[6:], uint16(8+len(body)))
	return append(b, body...)
}

func u64s(vs ...uint64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return b
}

func u32pair(a, b uint32) uint64 { return uint64(a) | uint64(b)<<32 }

// sampleRec is a PERF_RECORD_SAMPLE laid out for sampleType.
func sampleRec(pid, tid, cpu uint32, time, period, ip uint64, chain ...uint64) []byte {
	body := u64s(ip, u32pair(pid, tid), time, u32pair(cpu, 0), period, uint64(len(chain)))
	return rec(recordSample, 2 /* PERF_RECORD_MISC_USER */, append(body, u64s(chain...)...))
}

func commRec(pid, tid uint32, comm string, exec bool) []byte {
	var misc uint16
	if exec {
		misc = miscCommExec
	}
	body := u64s(u32pair(pid, tid))
	body = append(body, comm...)
	body = append(body, 0)
	return rec(recordComm, misc, body)
}

func exitRec(pid, ppid, tid, ptid uint32, time uint64) []byte {
	return rec(recordExit, 0, u64s(u32pair(pid, ppid), u32pair(tid, ptid), time))
}

func TestSampleDecode(t *testing.T) {
	r := sampleRec(100, 101, 1, 5_000, 1_001_000, 0xffffffff81000010,
		contextKernel, 0xffffffff81000010, 0xffffffff81000200,
		contextUser, 0x55550000_1234, 0, 0x55550000_5678)
	set := &SampleSet{}
	c := newCollector(100, set)
	c.record(r)
	if set.Malformed != 0 || len(set.Samples) != 1 {
		t.Fatalf("malformed %d, samples %d", set.Malformed, len(set.Samples))
	}
	want := Sample{Tid: 101, CPU: 1, Time: 5_000, Count: 1, Period: 1_001_000, IP: 0xffffffff81000010,
		Kernel: []uint64{0xffffffff81000010, 0xffffffff81000200},
		User:   []uint64{0x55550000_1234, 0x55550000_5678}}
	if got := set.Samples[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%+v, want\n%+v", got, want)
	}
}

func TestSampleDecodeGuestAndHVFramesDropped(t *testing.T) {
	_, user := splitChain(u64s(contextHV, 1, contextGuest, 2, contextGuestKernel, 3, contextGuestUser, 4, contextUser, 5))
	if !reflect.DeepEqual(user, []uint64{5}) {
		t.Errorf("user frames %v, want [5]", user)
	}
	kernel, user := splitChain(u64s(7, 8))
	if kernel != nil || user != nil {
		t.Errorf("frames before any context marker kept: %v %v", kernel, user)
	}
}

func TestSampleCollectorFilters(t *testing.T) {
	set := &SampleSet{Pid: 100}
	c := newCollector(100, set)
	for _, r := range [][]byte{
		sampleRec(100, 100, 0, 1, 10, 0x400000, contextUser, 0x400000),
		sampleRec(200, 201, 0, 2, 10, 0x400000, contextUser, 0x400000), // another process
		sampleRec(100, 105, 1, 3, 10, 0x400010, contextUser, 0x400010),
		sampleRec(100, 105, 0, 4, 12, 0x400010, contextUser, 0x400010),           // merges with the one before
		sampleRec(100, 100, 0, 5, 10, 0x400010, contextUser, 0x400010),           // another thread: apart
		sampleRec(100, 105, 0, 6, 10, 0x400010, contextUser, 0x400010, 0x400100), // a longer chain: apart
		commRec(100, 105, "connection", false),
		commRec(200, 200, "sysbench", true), // another process
		rec(recordLost, 0, u64s(7, 12)),
		rec(recordLost, 0, u64s(7, 3)),
		rec(recordLostSamples, 0, u64s(4)),
		rec(recordThrottle, 0, u64s(1, 7, 7)),
		rec(recordUnthrottle, 0, u64s(2, 7, 7)),
		exitRec(100, 1, 105, 100, 9),
		exitRec(200, 1, 200, 1, 9),
		rec(recordMmap2, 0, make([]byte, 64)), // not asked for: ignored
	} {
		c.record(r)
	}
	if len(set.Samples) != 4 || set.Count() != 5 || set.Foreign != 1 {
		t.Errorf("kept %d entries of %d samples and %d foreign, want 4, 5 and 1", len(set.Samples), set.Count(), set.Foreign)
	}
	if m := set.Samples[1]; m.Tid != 105 || m.Count != 2 || m.Period != 22 || m.Time != 3 || m.CPU != 1 {
		t.Errorf("merged sample %+v, want tid 105, 2 samples, period 22, time and CPU of the first", m)
	}
	if set.Total() != 52 {
		t.Errorf("total period %d, want 52", set.Total())
	}
	if set.Lost != 15 || set.LostSamples != 4 || set.Throttled != 1 {
		t.Errorf("lost %d, lost samples %d, throttled %d; want 15, 4, 1", set.Lost, set.LostSamples, set.Throttled)
	}
	if !reflect.DeepEqual(set.Comms, map[int]string{105: "connection"}) {
		t.Errorf("comms %v", set.Comms)
	}
	if set.ThreadsExited != 1 || set.Exited {
		t.Errorf("threads exited %d, process exited %v; want 1, false", set.ThreadsExited, set.Exited)
	}
	c.record(exitRec(100, 1, 100, 1, 10))
	if !set.Exited {
		t.Error("exit of the thread-group leader did not mark the process exited")
	}
	set.finish()
	joined := strings.Join(set.Warnings, "\n")
	for _, w := range []string{"15 records lost", "dropped 4 samples", "throttled sampling 1 times", "process 100 exited"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

func TestSampleMalformed(t *testing.T) {
	full := sampleRec(100, 100, 0, 1, 10, 1, contextUser, 1, 2, 3)
	cases := map[string][]byte{
		"short header":        full[:6],
		"size beyond buffer":  full[:len(full)-8],
		"size below header":   append([]byte{9, 0, 0, 0, 0, 0, 4, 0}, make([]byte, 8)...),
		"sample too short":    rec(recordSample, 0, u64s(1, 2, 3)),
		"chain beyond record": rec(recordSample, 0, u64s(1, u32pair(100, 100), 3, 0, 10, 5, contextUser)),
		"lost too short":      rec(recordLost, 0, u64s(1)),
		"comm too short":      rec(recordComm, 0, nil),
		"exit too short":      rec(recordExit, 0, u64s(1, 2)),
	}
	for name, r := range cases {
		set := &SampleSet{}
		newCollector(100, set).record(r)
		if set.Malformed != 1 || len(set.Samples) != 0 {
			t.Errorf("%s: malformed %d, samples %d; want 1, 0", name, set.Malformed, len(set.Samples))
		}
	}
}

// ringWith writes records into a ring of size bytes starting at position
// start (free-running), returning the ring and the head.
func ringWith(size int, start uint64, recs ...[]byte) ([]byte, uint64) {
	data := make([]byte, size)
	pos := start
	for _, r := range recs {
		for _, c := range r {
			data[pos%uint64(size)] = c
			pos++
		}
	}
	return data, pos
}

func TestSampleRingWrap(t *testing.T) {
	a := sampleRec(100, 100, 0, 1, 10, 0x10, contextUser, 0x10, 0x20) // 80 bytes
	b := commRec(100, 100, "mariadbd", true)                          // 24 bytes
	c := sampleRec(100, 101, 1, 2, 10, 0x30, contextUser, 0x30)       // 72 bytes
	// A 128-byte ring, starting at position 1000 (offset 104): a's header
	// is split across the end, b follows, c wraps again.
	for _, start := range []uint64{1000, 1024, 1020, 0, 1 << 40} {
		data, head := ringWith(128, start, a, b)
		var got [][]byte
		var scratch []byte
		tail, bad := ringRecords(data, head, start, &scratch, func(r []byte) { got = append(got, bytes.Clone(r)) })
		if bad || tail != head || len(got) != 2 || !bytes.Equal(got[0], a) || !bytes.Equal(got[1], b) {
			t.Fatalf("start %d: tail %d (head %d), bad %v, records %d", start, tail, head, bad, len(got))
		}
		// The kernel writes c after the reader freed a and b.
		for i, x := range c {
			data[(head+uint64(i))%128] = x
		}
		head2 := head + uint64(len(c))
		got = got[:0]
		tail, bad = ringRecords(data, head2, tail, &scratch, func(r []byte) { got = append(got, bytes.Clone(r)) })
		if bad || tail != head2 || len(got) != 1 || !bytes.Equal(got[0], c) {
			t.Fatalf("start %d, second pass: tail %d (head %d), bad %v, records %d", start, tail, head2, bad, len(got))
		}
	}
}

func TestSampleRingBad(t *testing.T) {
	a := sampleRec(100, 100, 0, 1, 10, 0x10, contextUser, 0x10)
	var scratch []byte
	// Head inside a's header: incomplete.
	data, head := ringWith(128, 0, a)
	if tail, bad := ringRecords(data, 4, 0, &scratch, func([]byte) { t.Error("record from an incomplete header") }); !bad || tail != 4 {
		t.Errorf("incomplete header: tail %d bad %v", tail, bad)
	}
	// A zero size would loop forever; it ends the walk.
	binary.LittleEndian.PutUint16(data[6:], 0)
	if tail, bad := ringRecords(data, head, 0, &scratch, func([]byte) { t.Error("record of size 0") }); !bad || tail != head {
		t.Errorf("size 0: tail %d bad %v", tail, bad)
	}
	// A ring that is not a power of two, or head more than a ring ahead.
	if _, bad := ringRecords(make([]byte, 100), 8, 0, &scratch, func([]byte) {}); !bad {
		t.Error("ring of 100 bytes accepted")
	}
	if _, bad := ringRecords(make([]byte, 128), 1000, 0, &scratch, func([]byte) {}); !bad {
		t.Error("head 1000 bytes ahead of the tail in a 128-byte ring accepted")
	}
}

func TestSampleOptionsDefaults(t *testing.T) {
	var o SampleOptions
	if err := validateSampleOptions(1, &o); err != nil {
		t.Fatal(err)
	}
	if o.Event.Name != "cpu-clock" || o.Freq != DefaultSampleFreq || o.BufferPages != defaultBufferPages {
		t.Errorf("defaults: %s at %d Hz, %d pages", o.Event.Name, o.Freq, o.BufferPages)
	}
	for name, o := range map[string]SampleOptions{
		"both":           {Freq: 99, Period: 1000},
		"negative":       {Freq: -1},
		"odd buffer":     {BufferPages: 3},
		"encodingless":   {Event: Event{Name: "nothing"}},
		"negative pages": {BufferPages: -4},
	} {
		if err := validateSampleOptions(1, &o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := validateSampleOptions(0, &SampleOptions{}); err == nil {
		t.Error("pid 0 accepted")
	}
}

func TestSampleSetOrderAndTotal(t *testing.T) {
	set := &SampleSet{Pid: 1, Samples: []Sample{{Time: 3, Period: 5}, {Time: 1, Period: 7, Count: 3}, {Time: 2, Period: 11}}}
	set.finish()
	if set.Total() != 23 || set.Count() != 5 {
		t.Errorf("total %d, count %d; want 23, 5", set.Total(), set.Count())
	}
	for i, want := range []uint64{1, 2, 3} {
		if set.Samples[i].Time != want {
			t.Fatalf("samples not in time order: %+v", set.Samples)
		}
	}
	if len(set.Warnings) != 0 {
		t.Errorf("warnings on a clean set: %v", set.Warnings)
	}
	empty := &SampleSet{Pid: 9}
	empty.finish()
	if len(empty.Warnings) != 1 || !strings.Contains(empty.Warnings[0], "no samples of process 9") {
		t.Errorf("empty set warnings: %v", empty.Warnings)
	}
}

// FuzzSampleRecords feeds arbitrary ring contents to the reader and the
// decoder: no panic, the tail never passes the head, and every kept sample
// has no more frames than its record had room for.
func FuzzSampleRecords(f *testing.F) {
	f.Add(sampleRec(100, 100, 0, 1, 10, 0x10, contextKernel, 0xffff1, contextUser, 0x10), uint16(0), uint16(64))
	f.Add(append(commRec(100, 101, "x", false), exitRec(100, 1, 100, 1, 3)...), uint16(3), uint16(40))
	f.Add(rec(recordLost, 0, u64s(1, 2)), uint16(120), uint16(24))
	f.Fuzz(func(t *testing.T, b []byte, start, n uint16) {
		const size = 256
		data := make([]byte, size)
		for i, c := range b {
			data[(int(start)+i)%size] = c
		}
		tail := uint64(start)
		head := tail + uint64(n)%(size+1)
		set := &SampleSet{}
		c := newCollector(100, set)
		var scratch []byte
		var seen uint64
		newTail, _ := ringRecords(data, head, tail, &scratch, func(r []byte) {
			seen += uint64(len(r))
			c.record(r)
		})
		if newTail < tail || newTail > head || tail+seen > head {
			t.Fatalf("tail %d → %d, head %d, %d bytes seen", tail, newTail, head, seen)
		}
		var frames int
		for _, s := range set.Samples {
			frames += (len(s.Kernel) + len(s.User)) * s.N()
		}
		if uint64(frames*8) > seen {
			t.Fatalf("%d frames from %d bytes of records", frames, seen)
		}
	})
}

// TestSampleTicksShortfall: a clock event sampled on every CPU takes one
// sample per period per CPU, idle or not; a window that got far fewer (the
// host held the VM's CPUs) is marked, one that got them all is not, and
// cgroup sampling, other events and windows too short to judge are never
// judged.
func TestSampleTicksShortfall(t *testing.T) {
	start := time.Unix(1000, 0)
	run := func(event string, cpuWide bool, window time.Duration, idle, own int) *SampleSet {
		set := &SampleSet{Event: event, Unit: "ns", Freq: 1000, CPUs: 2, CPUWide: cpuWide, Start: start, End: start.Add(window)}
		c := newCollector(100, set)
		for i := range idle {
			c.record(sampleRec(0, 0, uint32(i%2), uint64(i), 1_000_000, 0xffff0000))
		}
		for i := range own {
			c.record(sampleRec(100, 101, 0, uint64(i), 1_000_000, 0x400000, contextUser, 0x400000))
		}
		set.finish()
		return set
	}
	marked := func(s *SampleSet) bool {
		return strings.Contains(strings.Join(s.Warnings, "\n"), "sampling clock fired")
	}
	// 1 s on 2 CPUs at 1000 Hz: 2000 due.
	if s := run("cpu-clock", true, time.Second, 900, 1000); s.Ticks != 1900 || marked(s) {
		t.Errorf("1900 of 2000 ticks: ticks %d, warnings %q; want 1900 and no mark", s.Ticks, s.Warnings)
	}
	s := run("cpu-clock", true, time.Second, 918, 117)
	if s.Ticks != 1035 || !marked(s) {
		t.Errorf("1035 of 2000 ticks: ticks %d, warnings %q; want 1035 and the mark", s.Ticks, s.Warnings)
	} else if w := strings.Join(s.Warnings, "\n"); !strings.Contains(w, "1035 times on 2 CPUs over 1.00 s, 52% of the 2000 due") {
		t.Errorf("warning does not give the counts: %s", w)
	}
	for _, s := range []*SampleSet{
		run("cpu-clock", false, time.Second, 0, 117),       // a cgroup's tasks only
		run("cycles", true, time.Second, 0, 117),           // not a clock
		run("cpu-clock", true, 40*time.Millisecond, 0, 10), // 80 due: too few to judge
	} {
		if marked(s) {
			t.Errorf("%s, CPU-wide %v, %v: marked %q", s.Event, s.CPUWide, s.End.Sub(s.Start), s.Warnings)
		}
	}
}
