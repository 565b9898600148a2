package osstat

import (
	"errors"
	"reflect"
	"strings"
	"testing"
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
	if !errors.Is(err, ErrProcessGone) {
		t.Errorf("missing pid: %v, want ErrProcessGone", err)
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
	if _, err := fs.Snapshot(12122, "sdz"); !errors.Is(err, ErrNoBlockDevice) {
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
		if !errors.Is(err, ErrNoBlockDevice) || !strings.Contains(err.Error(), c.want) {
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
	if _, err := (FS{Root: "testdata/lvm"}).mapperDevice("vg9-x"); !errors.Is(err, ErrNoBlockDevice) {
		t.Errorf("unknown mapper: %v, want ErrNoBlockDevice", err)
	}
}
