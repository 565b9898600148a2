package osstat

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errFormat is wrapped by the parsers' errors: the text is not in the
// format the kernel writes.
var errFormat = errors.New("unexpected format")

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
