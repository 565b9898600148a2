package osstat

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/record"
)

// Snapshot is one reading of a process, the host CPU and a block device.
type Snapshot struct {
	// Time is when the reading started; reading a server with hundreds of
	// threads takes a few milliseconds.
	Time time.Time
	// Ticks is the clock tick rate of the CPU times (USER_HZ).
	Ticks float64
	// Process is nil when the snapshot was taken without a pid.
	Process *Process
	// CPUClock is the process's CPU time from its CPU-time clock, read
	// first: the scheduler's run time of all its threads, those that
	// exited included, which utime+stime are cut from in ticks, to the
	// nanosecond. HasCPUClock is false when it was not read (no pid, a
	// fixture root, not Linux).
	CPUClock    time.Duration
	HasCPUClock bool
	// Host is the host's CPU times; nil if /proc/stat could not be read.
	Host *HostCPU
	// Disk is the device's counters; nil when no device was asked for.
	Disk *diskStats
	// Problems are parts that could not be read, each with the code of
	// the numbers it voids and the text. Delta makes them warnings.
	Problems []record.Warning
}

// Snapshot reads process pid (none when pid is 0), the host CPU and the
// disk named disk ("" for none: a Device's Name otherwise). A process that
// does not exist is an error wrapping procfs.ErrGone, a device missing from
// /proc/diskstats one wrapping errNoBlockDevice.
func (f FS) Snapshot(pid int, disk string) (*Snapshot, error) {
	s := &Snapshot{Time: time.Now(), Ticks: f.ticks()}
	if pid != 0 {
		if f.Root == "" || f.Root == "/" {
			s.CPUClock, s.HasCPUClock = processCPUClock(pid)
		}
		p, err := f.ReadProcess(pid)
		if err != nil {
			return nil, err
		}
		s.Process = p
		if p.IOErr != nil {
			s.Problems = append(s.Problems, record.Warning{Code: record.WarnIONotMeasured,
				Text: fmt.Sprintf("IO of pid %d not read: %v%s", pid, p.IOErr, ioHint(p.IOErr, os.Geteuid(), selfPtrace()))})
		}
	}
	if c, err := f.ReadHostCPU(); err != nil {
		s.Problems = append(s.Problems, record.Warning{Code: record.WarnHostCPUNotMeasured, Text: fmt.Sprintf("host CPU not read: %v", err)})
	} else {
		s.Host = &c
	}
	if disk != "" {
		d, err := f.ReadDisk(disk)
		if err != nil {
			return nil, err
		}
		s.Disk = &d
	}
	return s, nil
}

// errRestarted is returned by Delta when the two snapshots are of different
// processes with the same pid: the server restarted between them.
var errRestarted = errors.New("process restarted between the two readings")

// Delta returns what happened between snapshots a and b (a first): the
// process's CPU time, context switches, IO, its RSS at b, the host's busy
// CPU and the disk's counters (record.OS with its Disk). Fields whose
// sources were not read in both snapshots stay zero and a warning says so
// (io-not-measured, host-cpu-not-measured); warnings also report IO
// counters that went backwards (io), other counters that did (general) and
// threads whose context switches could not be counted (cs-split).
//
// Context switches are summed over the threads' /proc/PID/task/TID/status,
// because the process's own status counts the main thread only and the
// kernel exposes no per-process total that keeps the switches of exited
// threads (the CPU times and IO of /proc/PID/stat and /proc/PID/io do keep
// them). A thread alive at both readings contributes its difference, a
// thread started after a all of its switches; the switches of a thread that
// exited after a was read are lost from that reading on. Delta tells when
// that happened: by the threads of a missing from b, and by the CPU time of
// the process not found in its live threads (threads that came and went
// between the readings).
func Delta(a, b *Snapshot) (*record.OS, []record.Warning, error) {
	if a == nil || b == nil {
		return nil, nil, errors.New("os delta: a snapshot is missing")
	}
	if b.Time.Before(a.Time) {
		return nil, nil, fmt.Errorf("os delta: the second snapshot (%s) is older than the first (%s)",
			b.Time.Format(time.RFC3339Nano), a.Time.Format(time.RFC3339Nano))
	}
	var warn []record.Warning
	for _, p := range a.Problems {
		p.Text = "at the window's start: " + p.Text
		warn = append(warn, p)
	}
	for _, p := range b.Problems {
		p.Text = "at the window's end: " + p.Text
		warn = append(warn, p)
	}
	ticks := a.Ticks
	if ticks <= 0 {
		ticks = float64(procfs.ClockTicks())
	}
	out := &record.OS{}
	// sub is y − x, or 0 with a warning of code c when the counter went
	// backwards.
	sub := func(c record.Code, what string, x, y uint64) float64 {
		if y < x {
			warn = append(warn, record.Warning{Code: c, Text: fmt.Sprintf("%s went backwards (%d to %d): counted as 0", what, x, y)})
			return 0
		}
		return float64(y - x)
	}
	ioc, other := record.WarnIO, record.WarnGeneral

	switch {
	case a.Process == nil && b.Process == nil:
	case a.Process == nil || b.Process == nil:
		return nil, nil, errors.New("os delta: only one snapshot has the process")
	default:
		pa, pb := a.Process, b.Process
		if pa.Stat.PID != pb.Stat.PID {
			return nil, nil, fmt.Errorf("os delta: snapshots of pid %d and pid %d", pa.Stat.PID, pb.Stat.PID)
		}
		if pa.Stat.StartTime != pb.Stat.StartTime {
			return nil, nil, fmt.Errorf("os delta: pid %d: %w (start time %d, then %d)", pa.Stat.PID, errRestarted, pa.Stat.StartTime, pb.Stat.StartTime)
		}
		out.UserSeconds = sub(other, "process user time", pa.Stat.UTime, pb.Stat.UTime) / ticks
		out.SystemSeconds = sub(other, "process system time", pa.Stat.STime, pb.Stat.STime) / ticks
		if pb.Status.HasRSS {
			out.RSSBytes = float64(pb.Status.RSSBytes)
		}
		if pa.IO != nil && pb.IO != nil {
			out.ReadBytes = sub(ioc, "read_bytes", pa.IO.ReadBytes, pb.IO.ReadBytes)
			out.WriteBytes = sub(ioc, "write_bytes", pa.IO.WriteBytes, pb.IO.WriteBytes)
			out.ReadChars = sub(ioc, "rchar", pa.IO.RChar, pb.IO.RChar)
			out.WriteChars = sub(ioc, "wchar", pa.IO.WChar, pb.IO.WChar)
			out.ReadCalls = sub(ioc, "syscr", pa.IO.SyscR, pb.IO.SyscR)
			out.WriteCalls = sub(ioc, "syscw", pa.IO.SyscW, pb.IO.SyscW)
		} else {
			warn = append(warn, record.Warning{Code: record.WarnIONotMeasured,
				Text: "IO of the process not measured: read_bytes, write_bytes, rchar, wchar, syscr and syscw are not measurements"})
		}
		warn = append(warn, threadDelta(out, pa, pb, ticks)...)
	}

	if a.Host != nil && b.Host != nil {
		out.HostCPUSeconds = sub(other, "host busy CPU time", a.Host.Busy(), b.Host.Busy()) / ticks
	} else {
		warn = append(warn, record.Warning{Code: record.WarnHostCPUNotMeasured, Text: "host CPU not measured: host_cpu_seconds is not a measurement"})
	}

	switch {
	case a.Disk == nil && b.Disk == nil:
	case a.Disk == nil || b.Disk == nil || a.Disk.Name != b.Disk.Name:
		return nil, nil, errors.New("os delta: the snapshots are not of the same disk")
	default:
		da, db := a.Disk, b.Disk
		out.Disk = &record.Disk{
			Device:       db.Name,
			Reads:        sub(other, db.Name+" reads", da.ReadsCompleted, db.ReadsCompleted),
			ReadSectors:  sub(other, db.Name+" sectors read", da.SectorsRead, db.SectorsRead),
			Writes:       sub(other, db.Name+" writes", da.WritesCompleted, db.WritesCompleted),
			WriteSectors: sub(other, db.Name+" sectors written", da.SectorsWritten, db.SectorsWritten),
			IOTicks:      sub(other, db.Name+" io time", da.IOMs, db.IOMs),
		}
	}
	return out, warn, nil
}

// threadDelta sums the context switches of the threads and says what could
// not be counted.
func threadDelta(out *record.OS, pa, pb *Process, ticks float64) []record.Warning {
	type key struct {
		tid   int
		start uint64
	}
	before := make(map[key]thread, len(pa.Threads))
	for _, t := range pa.Threads {
		before[key{t.TID, t.StartTime}] = t
	}
	var vol, invol, cpu uint64
	for _, t := range pb.Threads {
		k := key{t.TID, t.StartTime}
		if old, ok := before[k]; ok {
			delete(before, k)
			// Thread counters never go down; guard anyway.
			vol += t.Voluntary - min(old.Voluntary, t.Voluntary)
			invol += t.Involuntary - min(old.Involuntary, t.Involuntary)
			cpu += t.UTime + t.STime - min(old.UTime+old.STime, t.UTime+t.STime)
		} else {
			vol += t.Voluntary
			invol += t.Involuntary
			cpu += t.UTime + t.STime
		}
	}
	out.VoluntaryCS, out.InvoluntaryCS = float64(vol), float64(invol)

	var warn []record.Warning
	// Threads of a not found in b exited (or vanished while b was read).
	exited := len(before)
	procCPU := (pb.Stat.UTime + pb.Stat.STime) - min(pa.Stat.UTime+pa.Stat.STime, pb.Stat.UTime+pb.Stat.STime)
	var unseen float64
	if procCPU > cpu {
		unseen = float64(procCPU - cpu)
	}
	// Both readings see the threads a little after the process, so a few
	// ticks of difference are noise, not lost threads.
	noise := math.Max(5, 0.02*float64(procCPU))
	switch {
	case exited > 0:
		warn = append(warn, record.Warning{Code: record.WarnCSSplit, Text: fmt.Sprintf("%d threads exited inside the window: "+
			"the voluntary and involuntary context switches they made after its start are not counted in /proc's per-thread split "+
			"(perf counters keep exited threads' counts); threads not alive at the end used %.2f s of the process's %.2f s CPU",
			exited, unseen/ticks, float64(procCPU)/ticks)})
	case unseen > noise:
		warn = append(warn, record.Warning{Code: record.WarnCSSplit, Text: fmt.Sprintf("threads that started and exited "+
			"inside the window used %.2f s of the process's %.2f s CPU: their context switches are not counted in /proc's "+
			"voluntary/involuntary split (perf counters keep exited threads' counts)",
			unseen/ticks, float64(procCPU)/ticks)})
	}
	return warn
}

// capSysPtrace is the bit of CAP_SYS_PTRACE in a capability mask.
const capSysPtrace = 19

// selfPtrace reports whether this process has CAP_SYS_PTRACE in effect
// (false where /proc/self/status cannot tell).
func selfPtrace() bool {
	st, err := procfs.New("/").Self().Status()
	return err == nil && st.HasCapEff && st.CapEff&(1<<capSysPtrace) != 0
}

// ioHint says how to read another process's io when permission was the
// problem: as root, or, for a root already, with CAP_SYS_PTRACE. A process
// that has CAP_SYS_PTRACE (ptrace) and is refused all the same is told what
// else refuses it.
func ioHint(err error, euid int, ptrace bool) string {
	switch {
	case !errors.Is(err, fs.ErrPermission):
		return ""
	case ptrace:
		return " (refused although perfbench has CAP_SYS_PTRACE: the process is not dumpable, runs in another user namespace, or a security module denies it)"
	case euid == 0:
		return " (root without CAP_SYS_PTRACE: grant it)"
	}
	return " (run as root or grant CAP_SYS_PTRACE)"
}
