package osstat

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/record"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func proc(ut, st uint64, threads ...thread) *Process {
	return &Process{
		Stat:    procfs.Stat{PID: 500, UTime: ut, STime: st, StartTime: 1000, NumThreads: len(threads)},
		Status:  procfs.Status{Pid: 500, Tgid: 500, RSSBytes: 1 << 30, HasRSS: true},
		IO:      &procIO{},
		Threads: threads,
	}
}

func TestDelta(t *testing.T) {
	a := &Snapshot{
		Time: t0, Ticks: 100,
		Process: proc(1000, 500,
			thread{TID: 500, StartTime: 1000, UTime: 10, STime: 5, Voluntary: 100, Involuntary: 10},
			thread{TID: 501, StartTime: 1001, UTime: 900, STime: 450, Voluntary: 5000, Involuntary: 700},
		),
		Host: &HostCPU{User: 10000, System: 4000, Idle: 50000, IOWait: 300, SoftIRQ: 100, Steal: 7},
		Disk: &diskStats{Name: "sda2", ReadsCompleted: 10, SectorsRead: 80, WritesCompleted: 20, SectorsWritten: 400, IOMs: 30},
	}
	a.Process.IO = &procIO{RChar: 1000, WChar: 2000, SyscR: 10, SyscW: 20, ReadBytes: 4096, WriteBytes: 8192}
	b := &Snapshot{
		Time: t0.Add(10 * time.Second), Ticks: 100,
		Process: proc(1250, 600,
			thread{TID: 500, StartTime: 1000, UTime: 12, STime: 6, Voluntary: 110, Involuntary: 11},
			thread{TID: 501, StartTime: 1001, UTime: 1100, STime: 520, Voluntary: 6000, Involuntary: 900},
			// Started inside the window: all its counts are the window's.
			thread{TID: 502, StartTime: 1500, UTime: 48, STime: 29, Voluntary: 300, Involuntary: 40},
		),
		Host: &HostCPU{User: 10600, System: 4300, Idle: 51000, IOWait: 400, SoftIRQ: 150, Steal: 9},
		Disk: &diskStats{Name: "sda2", ReadsCompleted: 15, SectorsRead: 120, WritesCompleted: 70, SectorsWritten: 1400, IOMs: 95},
	}
	b.Process.IO = &procIO{RChar: 1500, WChar: 2600, SyscR: 14, SyscW: 27, ReadBytes: 4096, WriteBytes: 20480}
	b.Process.Status.RSSBytes = 3 << 30

	got, warn, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := record.OS{
		UserSeconds: 2.5, SystemSeconds: 1.0,
		VoluntaryCS: 10 + 1000 + 300, InvoluntaryCS: 1 + 200 + 40,
		ReadBytes: 0, WriteBytes: 12288, ReadChars: 500, WriteChars: 600, ReadCalls: 4, WriteCalls: 7,
		RSSBytes:       3 << 30,
		HostCPUSeconds: (600 + 300 + 50) / 100.0,
		Disk:           &record.Disk{Device: "sda2", Reads: 5, ReadSectors: 40, Writes: 50, WriteSectors: 1000, IOTicks: 65},
	}
	gotDisk, wantDisk := *got.Disk, *want.Disk
	got.Disk, want.Disk = nil, nil
	if *got != want || gotDisk != wantDisk {
		t.Errorf("Delta:\n got %+v %+v\nwant %+v %+v", *got, gotDisk, want, wantDisk)
	}
	// Process CPU 350 ticks, threads 3 + 270 + 77 = 350: nothing unseen.
	if len(warn) != 0 {
		t.Errorf("warnings %q, want none", warn)
	}
}

func TestDeltaLostThreads(t *testing.T) {
	a := &Snapshot{Time: t0, Ticks: 100, Host: &HostCPU{}, Process: proc(100, 0,
		thread{TID: 500, StartTime: 1000, UTime: 50, Voluntary: 10},
		thread{TID: 501, StartTime: 1001, UTime: 50, Voluntary: 20},
	)}
	// Thread 501 exited and its TID was reused by a new thread: it must not
	// be subtracted from the newcomer.
	b := &Snapshot{Time: t0.Add(time.Second), Ticks: 100, Host: &HostCPU{}, Process: proc(400, 0,
		thread{TID: 500, StartTime: 1000, UTime: 150, Voluntary: 15},
		thread{TID: 501, StartTime: 1090, UTime: 60, Voluntary: 7},
	)}
	got, warn, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got.VoluntaryCS != 5+7 {
		t.Errorf("voluntary %v, want 12", got.VoluntaryCS)
	}
	// CPU: process 300 ticks, live threads 100 + 60: 1.40 s unseen.
	if len(warn) != 1 || warn[0].Code != record.WarnCSSplit || !strings.Contains(warn[0].Text, "1 threads exited inside "+
		"the window") || !strings.Contains(warn[0].Text, "used 1.40 s of the process's 3.00 s CPU") {
		t.Errorf("warnings %q, want one about 1 exited thread and 1.40 s", warn)
	}

	// No thread missing, but CPU the live threads do not explain: threads
	// came and went between the readings.
	b.Process.Threads = []thread{{TID: 500, StartTime: 1000, UTime: 150, Voluntary: 15}, {TID: 501, StartTime: 1001, UTime: 60, Voluntary: 25}}
	_, warn, _ = Delta(a, b)
	if len(warn) != 1 || warn[0].Code != record.WarnCSSplit || !strings.Contains(warn[0].Text, "started and exited inside the window used 1.90 s") {
		t.Errorf("warnings %q, want one about 1.90 s of short-lived threads", warn)
	}

	// A few ticks of difference are noise.
	b.Process.Stat.UTime = 100 + 100 + 10 + 4
	_, warn, _ = Delta(a, b)
	if len(warn) != 0 {
		t.Errorf("warnings %q for 4 ticks of skew, want none", warn)
	}
}

// TestDeltaProblems: what a snapshot could not read, and what is therefore
// not measured, are warnings with the code of the numbers they void.
func TestDeltaProblems(t *testing.T) {
	a := &Snapshot{Time: t0, Ticks: 100, Process: proc(1, 1), Problems: []record.Warning{
		{Code: record.WarnIONotMeasured, Text: "IO of pid 500 not read: permission denied (run as root)"}}}
	a.Process.IO = nil
	b := &Snapshot{Time: t0.Add(time.Second), Ticks: 100, Process: proc(1, 1), Host: &HostCPU{}}
	_, warn, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []record.Warning{
		{Code: record.WarnIONotMeasured, Text: "at the window's start: IO of pid 500 not read: permission denied (run as root)"},
		{Code: record.WarnIONotMeasured, Text: "IO of the process not measured: read_bytes, write_bytes, rchar, wchar, syscr and syscw are not measurements"},
		{Code: record.WarnHostCPUNotMeasured, Text: "host CPU not measured: host_cpu_seconds is not a measurement"},
	}
	if !reflect.DeepEqual(warn, want) {
		t.Errorf("warnings\n%+v\nwant\n%+v", warn, want)
	}
}

// TestDeltaBackwards: a counter that went backwards counts as 0 with a
// warning, of code io for the /proc/PID/io counters (rchar as much as
// read_bytes), general for the others.
func TestDeltaBackwards(t *testing.T) {
	a := &Snapshot{Time: t0, Ticks: 100, Process: proc(200, 0), Host: &HostCPU{}}
	b := &Snapshot{Time: t0.Add(time.Second), Ticks: 100, Process: proc(100, 0), Host: &HostCPU{}}
	a.Process.IO = &procIO{RChar: 9000, ReadBytes: 10}
	b.Process.IO = &procIO{RChar: 8000, ReadBytes: 20}
	got, warn, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got.ReadChars != 0 || got.ReadBytes != 10 || got.UserSeconds != 0 {
		t.Errorf("rchar %v read_bytes %v user %v, want 0, 10, 0", got.ReadChars, got.ReadBytes, got.UserSeconds)
	}
	codes := map[string]record.Code{}
	for _, w := range warn {
		codes[strings.SplitN(w.Text, " went backwards", 2)[0]] = w.Code
	}
	want := map[string]record.Code{"process user time": record.WarnGeneral, "rchar": record.WarnIO}
	if !reflect.DeepEqual(codes, want) {
		t.Errorf("warnings %+v, want backwards user time (general) and rchar (io)", warn)
	}
}

func TestDeltaErrors(t *testing.T) {
	a := &Snapshot{Time: t0, Ticks: 100, Process: proc(1, 1)}
	restarted := &Snapshot{Time: t0.Add(time.Second), Ticks: 100, Process: proc(1, 1)}
	restarted.Process.Stat.StartTime = 2000
	if _, _, err := Delta(a, restarted); !errors.Is(err, errRestarted) {
		t.Errorf("restart: %v, want ErrRestarted", err)
	}
	if _, _, err := Delta(a, &Snapshot{Time: t0.Add(-time.Second), Process: proc(1, 1)}); err == nil {
		t.Error("b before a: no error")
	}
	if _, _, err := Delta(a, &Snapshot{Time: t0.Add(time.Second)}); err == nil {
		t.Error("process in one snapshot only: no error")
	}
	other := &Snapshot{Time: t0.Add(time.Second), Process: proc(1, 1)}
	other.Process.Stat.PID = 9
	if _, _, err := Delta(a, other); err == nil {
		t.Error("different pids: no error")
	}
	da := &Snapshot{Time: t0, Disk: &diskStats{Name: "sda"}}
	if _, _, err := Delta(da, &Snapshot{Time: t0, Disk: &diskStats{Name: "sdb"}}); err == nil {
		t.Error("different disks: no error")
	}
}

// TestIOHint: only a permission problem gets a hint, root is not told to
// run as root, and a process that has CAP_SYS_PTRACE is not told to grant
// it.
func TestIOHint(t *testing.T) {
	denied := fmt.Errorf("read /proc/5/io: %w", fs.ErrPermission)
	if h := ioHint(denied, 1000, false); h != " (run as root or grant CAP_SYS_PTRACE)" {
		t.Errorf("user: %q", h)
	}
	if h := ioHint(denied, 0, false); strings.Contains(h, "run as root") || !strings.Contains(h, "without CAP_SYS_PTRACE") {
		t.Errorf("root: %q", h)
	}
	for _, euid := range []int{0, 1000} {
		if h := ioHint(denied, euid, true); strings.Contains(h, "without") || strings.Contains(h, "grant") || !strings.Contains(h, "although perfbench has CAP_SYS_PTRACE") {
			t.Errorf("euid %d with CAP_SYS_PTRACE: %q", euid, h)
		}
	}
	if h := ioHint(errors.New("read /proc/5/io: no such process"), 0, true); h != "" {
		t.Errorf("not a permission problem: %q", h)
	}
}
