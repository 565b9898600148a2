package osstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errFormat is wrapped by the parsers' errors: the text is not in the
// format the kernel writes.
var errFormat = errors.New("unexpected format")

// ProcStat is the part of /proc/PID/stat (or /proc/PID/task/TID/stat) that
// perfbench uses. For a process (the PID's own file), UTime and STime cover
// every thread it ever had, exited ones included; for a thread, only that
// thread.
type ProcStat struct {
	PID   int
	Comm  string
	State byte
	// UTime and STime are user and system CPU time in clock ticks (USER_HZ).
	UTime uint64
	STime uint64
	// CUTime and CSTime are the user and system CPU time of its reaped
	// children (and of theirs), in clock ticks: a child's time is added
	// when it is reaped, not while it runs.
	CUTime uint64
	CSTime uint64
	// NumThreads is the thread count of the process.
	NumThreads int
	// StartTime is when the task started, in clock ticks after boot: with
	// the PID it identifies a task, since PIDs are reused.
	StartTime uint64
	// RSSPages is the resident set in pages.
	RSSPages int64
}

// ParseProcStat parses the contents of /proc/PID/stat. The command name may
// hold spaces and parentheses: it runs to the last ')'.
func ParseProcStat(b []byte) (ProcStat, error) {
	var s ProcStat
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return s, fmt.Errorf("%w: stat has no (comm)", errFormat)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return s, fmt.Errorf("%w: stat pid %q", errFormat, bytes.TrimSpace(b[:open]))
	}
	s.PID, s.Comm = pid, string(b[open+1:end])
	// Fields after the comm, numbered from 3 as in proc(5).
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 22 { // through field 24, rss
		return s, fmt.Errorf("%w: stat has %d fields after the comm, want at least 22", errFormat, len(f))
	}
	field := func(n int) string { return f[n-3] }
	if len(field(3)) != 1 {
		return s, fmt.Errorf("%w: stat state %q", errFormat, field(3))
	}
	s.State = field(3)[0]
	u := func(n int) uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = strconv.ParseUint(field(n), 10, 64)
		if err != nil {
			err = fmt.Errorf("%w: stat field %d is %q", errFormat, n, field(n))
		}
		return v
	}
	s.UTime, s.STime = u(14), u(15)
	s.CUTime, s.CSTime = u(16), u(17)
	s.NumThreads = int(u(20))
	s.StartTime = u(22)
	if err == nil {
		s.RSSPages, err = strconv.ParseInt(field(24), 10, 64)
		if err != nil {
			err = fmt.Errorf("%w: stat field 24 is %q", errFormat, field(24))
		}
	}
	return s, err
}

// status is the part of /proc/PID/status perfbench uses. For the PID's own
// file, the context switch counts are those of the main thread only: sum
// the threads' files under /proc/PID/task for the process.
type status struct {
	Name    string
	Tgid    int
	Pid     int
	Threads int
	// RSSBytes is VmRSS; HasRSS is false for tasks without memory (kernel
	// threads, zombies).
	RSSBytes uint64
	HasRSS   bool
	// Voluntary and Involuntary are voluntary_ctxt_switches and
	// nonvoluntary_ctxt_switches.
	Voluntary   uint64
	Involuntary uint64
	// HasCtxt is false when the kernel did not print the context switch
	// lines.
	HasCtxt bool
}

// parseStatus parses the contents of /proc/PID/status.
func parseStatus(b []byte) (status, error) {
	var s status
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		num := func() (uint64, error) {
			v, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%w: status %s is %q", errFormat, key, val)
			}
			return v, nil
		}
		var err error
		var v uint64
		switch key {
		case "Name":
			s.Name = val
		case "Tgid":
			v, err = num()
			s.Tgid = int(v)
		case "Pid":
			v, err = num()
			s.Pid = int(v)
		case "Threads":
			v, err = num()
			s.Threads = int(v)
		case "VmRSS":
			n, unit, _ := strings.Cut(val, " ")
			if unit = strings.TrimSpace(unit); unit != "kB" {
				return s, fmt.Errorf("%w: status VmRSS is %q, want a size in kB", errFormat, val)
			}
			v, err = strconv.ParseUint(n, 10, 64)
			if err != nil {
				return s, fmt.Errorf("%w: status VmRSS is %q", errFormat, val)
			}
			s.RSSBytes, s.HasRSS = v*1024, true
		case "voluntary_ctxt_switches":
			s.Voluntary, err = num()
			seen++
		case "nonvoluntary_ctxt_switches":
			s.Involuntary, err = num()
			seen++
		}
		if err != nil {
			return s, err
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("%w: status: %v", errFormat, err)
	}
	if s.Pid == 0 {
		return s, fmt.Errorf("%w: status has no Pid line", errFormat)
	}
	s.HasCtxt = seen == 2
	return s, nil
}

// procIO is /proc/PID/io. For a process it covers every thread it ever had,
// exited ones included.
type procIO struct {
	RChar               uint64 // bytes read by read(2) and similar, cache hits included
	WChar               uint64 // bytes written by write(2) and similar
	SyscR               uint64 // read system calls
	SyscW               uint64 // write system calls
	ReadBytes           uint64 // bytes the process caused to be read from storage
	WriteBytes          uint64 // bytes the process caused to be written to storage (at dirtying time)
	CancelledWriteBytes uint64 // dirtied bytes that were truncated before writeback
}

// parseIO parses the contents of /proc/PID/io.
func parseIO(b []byte) (procIO, error) {
	var io procIO
	fields := map[string]*uint64{
		"rchar": &io.RChar, "wchar": &io.WChar, "syscr": &io.SyscR, "syscw": &io.SyscW,
		"read_bytes": &io.ReadBytes, "write_bytes": &io.WriteBytes,
		"cancelled_write_bytes": &io.CancelledWriteBytes,
	}
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		p, known := fields[key]
		if !known {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return io, fmt.Errorf("%w: io %s is %q", errFormat, key, strings.TrimSpace(val))
		}
		*p = v
		seen++
	}
	if seen != len(fields) {
		return io, fmt.Errorf("%w: io has %d of its %d fields", errFormat, seen, len(fields))
	}
	return io, nil
}

// HostCPU is the first line of /proc/stat: time all CPUs spent in each
// state, in clock ticks.
type HostCPU struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal, Guest, GuestNice uint64
}

// Busy is the time the host's CPUs ran code: user, nice, system, irq and
// softirq, as vmstat's us+sy. Idle, iowait and steal (time the hypervisor
// gave to others) are not busy; guest time is already inside user and nice.
func (c HostCPU) Busy() uint64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
}

// ParseHostCPU parses the aggregate "cpu" line of /proc/stat.
func ParseHostCPU(b []byte) (HostCPU, error) {
	var c HostCPU
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 5 {
			return c, fmt.Errorf("%w: /proc/stat cpu line has %d fields", errFormat, len(f))
		}
		dst := []*uint64{&c.User, &c.Nice, &c.System, &c.Idle, &c.IOWait, &c.IRQ, &c.SoftIRQ, &c.Steal, &c.Guest, &c.GuestNice}
		for i, s := range f[1:] {
			if i >= len(dst) {
				break
			}
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return c, fmt.Errorf("%w: /proc/stat cpu field %d is %q", errFormat, i+1, s)
			}
			*dst[i] = v
		}
		return c, nil
	}
	return c, fmt.Errorf("%w: /proc/stat has no cpu line", errFormat)
}

// diskStats is one line of /proc/diskstats. Kernels before 4.18 print the
// first 11 counters, before 5.5 the first 15; missing ones are zero.
type diskStats struct {
	Major, Minor uint32
	Name         string

	ReadsCompleted  uint64
	ReadsMerged     uint64
	SectorsRead     uint64 // 512-byte sectors, whatever the device's block size
	ReadMs          uint64
	WritesCompleted uint64
	WritesMerged    uint64
	SectorsWritten  uint64
	WriteMs         uint64
	InFlight        uint64 // a gauge
	IOMs            uint64 // time the device had IO in flight
	WeightedIOMs    uint64

	DiscardsCompleted uint64
	DiscardsMerged    uint64
	SectorsDiscarded  uint64
	DiscardMs         uint64

	FlushesCompleted uint64
	FlushMs          uint64
}

// parseDiskstats parses the contents of /proc/diskstats.
func parseDiskstats(b []byte) ([]diskStats, error) {
	var out []diskStats
	for n, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("%w: diskstats line %d has %d fields, want at least 14", errFormat, n+1, len(f))
		}
		var d diskStats
		maj, err1 := strconv.ParseUint(f[0], 10, 32)
		min, err2 := strconv.ParseUint(f[1], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: diskstats line %d device number %s:%s", errFormat, n+1, f[0], f[1])
		}
		d.Major, d.Minor, d.Name = uint32(maj), uint32(min), f[2]
		dst := []*uint64{
			&d.ReadsCompleted, &d.ReadsMerged, &d.SectorsRead, &d.ReadMs,
			&d.WritesCompleted, &d.WritesMerged, &d.SectorsWritten, &d.WriteMs,
			&d.InFlight, &d.IOMs, &d.WeightedIOMs,
			&d.DiscardsCompleted, &d.DiscardsMerged, &d.SectorsDiscarded, &d.DiscardMs,
			&d.FlushesCompleted, &d.FlushMs,
		}
		for i, s := range f[3:] {
			if i >= len(dst) {
				break
			}
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: diskstats line %d (%s) counter %d is %q", errFormat, n+1, d.Name, i+1, s)
			}
			*dst[i] = v
		}
		out = append(out, d)
	}
	return out, nil
}

// mount is one line of /proc/PID/mountinfo.
type mount struct {
	ID, Parent   int
	Major, Minor uint32 // st_dev of files on the mount (0:N for btrfs, overlay, tmpfs...)
	Root         string
	MountPoint   string
	FSType       string
	Source       string
}

// parseMountinfo parses the contents of /proc/PID/mountinfo.
func parseMountinfo(b []byte) ([]mount, error) {
	var out []mount
	for n, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if len(f) < 7 || sep < 0 || sep+2 >= len(f) {
			return nil, fmt.Errorf("%w: mountinfo line %d: %q", errFormat, n+1, line)
		}
		var m mount
		var err error
		if m.ID, err = strconv.Atoi(f[0]); err != nil {
			return nil, fmt.Errorf("%w: mountinfo line %d id %q", errFormat, n+1, f[0])
		}
		if m.Parent, err = strconv.Atoi(f[1]); err != nil {
			return nil, fmt.Errorf("%w: mountinfo line %d parent %q", errFormat, n+1, f[1])
		}
		maj, min, ok := strings.Cut(f[2], ":")
		ma, err1 := strconv.ParseUint(maj, 10, 32)
		mi, err2 := strconv.ParseUint(min, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: mountinfo line %d device %q", errFormat, n+1, f[2])
		}
		m.Major, m.Minor = uint32(ma), uint32(mi)
		m.Root, m.MountPoint = unescape(f[3]), unescape(f[4])
		m.FSType, m.Source = f[sep+1], unescape(f[sep+2])
		out = append(out, m)
	}
	return out, nil
}

// unescape undoes the octal escapes (\040 for a space) of mountinfo paths.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
