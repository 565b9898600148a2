package osstat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

func TestReadProcessFixture(t *testing.T) {
	p, err := FS{Root: "testdata"}.ReadProcess(12122)
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	var vol, invol, ut, st uint64
	for _, th := range p.Threads {
		tids = append(tids, th.TID)
		vol += th.Voluntary
		invol += th.Involuntary
		ut += th.UTime
		st += th.STime
	}
	wantTIDs := []int{12122, 12125, 12127, 12129, 12130, 12132, 12133, 12135, 12139, 12147, 13645}
	if !reflect.DeepEqual(tids, wantTIDs) {
		t.Errorf("threads %v, want %v", tids, wantTIDs)
	}
	// Sums computed with awk over the fixture files.
	if vol != 388338 || invol != 183202 || ut != 1094 || st != 759 {
		t.Errorf("thread sums: voluntary %d involuntary %d utime %d stime %d, want 388338 183202 1094 759", vol, invol, ut, st)
	}
	if p.IO == nil || p.IO.WriteBytes != 864468992 || p.Stat.UTime != 1114 || p.Status.RSSBytes != 194256*1024 {
		t.Errorf("process: %+v", p)
	}
	if p.Vanished != 0 {
		t.Errorf("%d vanished threads in a fixture", p.Vanished)
	}

	_, err = FS{Root: "testdata"}.ReadProcess(4)
	if !errors.Is(err, procfs.ErrGone) {
		t.Errorf("missing pid: %v, want procfs.ErrGone", err)
	}
}

func TestSnapshotFixture(t *testing.T) {
	fs := FS{Root: "testdata", Ticks: 100}
	s, err := fs.Snapshot(12122, "vda")
	if err != nil {
		t.Fatal(err)
	}
	if s.Process == nil || s.Host == nil || s.Disk == nil || s.Disk.WritesCompleted != 405080 || len(s.Problems) != 0 {
		t.Fatalf("snapshot: %+v", s)
	}
	if s.HasCPUClock {
		t.Error("a fixture's snapshot has a CPU clock: it can only be the running system's")
	}
	if _, err := fs.Snapshot(12122, "sdz"); !errors.Is(err, errNoBlockDevice) {
		t.Errorf("unknown disk: %v, want ErrNoBlockDevice", err)
	}
	s, err = fs.Snapshot(0, "")
	if err != nil || s.Process != nil || s.Disk != nil || s.Host == nil {
		t.Errorf("host-only snapshot: %+v, %v", s, err)
	}
}

func TestBlockDevice(t *testing.T) {
	real := FS{Root: "testdata"}
	lvm := FS{Root: "testdata/lvm"}
	cases := []struct {
		name         string
		fs           FS
		major, minor uint32
		want         Device
		str          string
	}{
		{"virtio disk", real, 254, 0, Device{Major: 254, Minor: 0, Name: "vda", Disk: "vda"}, "vda"},
		{"partition", lvm, 8, 2, Device{Major: 8, Minor: 2, Name: "sda2", Partition: true, Disk: "sda"}, "sda2 (partition of sda)"},
		{"whole disk", lvm, 8, 0, Device{Major: 8, Minor: 0, Name: "sda", Disk: "sda"}, "sda"},
		{"lvm volume", lvm, 253, 1, Device{Major: 253, Minor: 1, Name: "dm-1", Disk: "dm-1", Mapper: "vg0-data", Slaves: []string{"sda2"}},
			"dm-1 (vg0-data on sda2)"},
		{"btrfs", lvm, 0, 45, Device{Major: 8, Minor: 1, Name: "sda1", Partition: true, Disk: "sda", FSType: "btrfs", Source: "/dev/sda1"},
			"sda1 (partition of sda)"},
	}
	for _, c := range cases {
		got, err := c.fs.BlockDevice(c.major, c.minor)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
		if got.String() != c.str {
			t.Errorf("%s: String() = %q, want %q", c.name, got.String(), c.str)
		}
	}

	for _, c := range []struct {
		name         string
		major, minor uint32
		want         string
	}{
		{"overlay", 0, 46, "(device 0:46, overlay from \"overlay\") has no block device"},
		{"tmpfs", 0, 47, "/tmp (device 0:47, tmpfs from \"tmpfs\")"},
		{"not mounted", 0, 99, "not in the mount table"},
		{"no sysfs entry", 9, 9, "resolve block device 9:9"},
	} {
		_, err := lvm.BlockDevice(c.major, c.minor)
		if !errors.Is(err, errNoBlockDevice) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrNoBlockDevice saying %q", c.name, err, c.want)
		}
	}
}

func TestMapperSource(t *testing.T) {
	// The root of the lvm fixture is mounted from /dev/mapper/vg0-data: a
	// mount with that source and an anonymous number resolves to dm-1.
	name, err := FS{Root: "testdata/lvm"}.mapperDevice("vg0-data")
	if err != nil || name != "dm-1" {
		t.Errorf("mapperDevice(vg0-data) = %q, %v, want dm-1", name, err)
	}
	if _, err := (FS{Root: "testdata/lvm"}).mapperDevice("vg9-x"); !errors.Is(err, errNoBlockDevice) {
		t.Errorf("unknown mapper: %v, want ErrNoBlockDevice", err)
	}
}

// TestReadProcessManyThreads: a process with more threads than
// parallelThreads is read by several goroutines; every thread is there
// once, in TID order, and threads that vanished are counted.
func TestReadProcessManyThreads(t *testing.T) {
	root := t.TempDir()
	const pid, n = 500, 300
	src := filepath.Join("testdata", "proc", "12122")
	dir := filepath.Join(root, "proc", strconv.Itoa(pid))
	for _, f := range []string{"stat", "status", "io"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	status, err := os.ReadFile(filepath.Join(src, "task", "12125", "status"))
	if err != nil {
		t.Fatal(err)
	}
	var wantVol uint64
	for i := range n {
		tid := 1000 + i
		td := filepath.Join(dir, "task", strconv.Itoa(tid))
		if err := os.MkdirAll(td, 0o755); err != nil {
			t.Fatal(err)
		}
		if i%50 == 7 {
			continue // listed, exited before it was read: no files
		}
		stat := fmt.Sprintf("%d (mariadbd) S 1 1 1 0 -1 0 0 0 0 0 %d 1 0 0 20 0 1 0 %d 0 0", tid, i, 100+i)
		st := strings.Replace(string(status), "voluntary_ctxt_switches:\t641", fmt.Sprintf("voluntary_ctxt_switches:\t%d", tid), 1)
		if st == string(status) {
			t.Fatal("fixture status has no voluntary_ctxt_switches:\t641 line")
		}
		wantVol += uint64(tid)
		if err := os.WriteFile(filepath.Join(td, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(td, "status"), []byte(st), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := FS{Root: root}.ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Threads 7, 57, ..., 257: 6 vanished.
	if len(p.Threads) != n-6 || p.Vanished != 6 {
		t.Fatalf("%d threads, %d vanished; want %d and 6", len(p.Threads), p.Vanished, n-6)
	}
	var vol uint64
	for i, th := range p.Threads {
		if i > 0 && th.TID <= p.Threads[i-1].TID {
			t.Fatalf("threads out of order at %d: %d after %d", i, th.TID, p.Threads[i-1].TID)
		}
		if th.Voluntary != uint64(th.TID) || th.UTime != uint64(th.TID-1000) {
			t.Errorf("thread %d: voluntary %d utime %d", th.TID, th.Voluntary, th.UTime)
		}
		vol += th.Voluntary
	}
	if vol != wantVol {
		t.Errorf("voluntary sum %d, want %d", vol, wantVol)
	}

	// A thread whose status cannot be parsed fails the reading.
	bad := filepath.Join(dir, "task", "1100", "status")
	if err := os.WriteFile(bad, []byte("Name:\tx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (FS{Root: root}).ReadProcess(pid); err == nil || !strings.Contains(err.Error(), "thread 1100") {
		t.Errorf("a thread without context switch counts: %v", err)
	}
}
