package osstat

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func fixture(t testing.TB, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseProcStat(t *testing.T) {
	s, err := ParseProcStat(fixture(t, "proc", "12122", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	want := ProcStat{PID: 12122, Comm: "mariadbd", State: 'S', UTime: 1114, STime: 772, NumThreads: 11, StartTime: 57677, RSSPages: 48500}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}

	// A command name with spaces and parentheses runs to the last ')'.
	line := "77 (a) (b c) R 1 77 77 0 -1 4194560 0 0 0 0 12 34 5 6 20 0 3 0 999 0 25 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
	s, err = ParseProcStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want = ProcStat{PID: 77, Comm: "a) (b c", State: 'R', UTime: 12, STime: 34, CUTime: 5, CSTime: 6, NumThreads: 3, StartTime: 999, RSSPages: 25}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}

	for _, bad := range []string{"", "12 mariadbd S 1", "12 (x) S 1 2 3", "x (y) S" + strings.Repeat(" 1", 30),
		"12 (x) S 1 2 3 4 5 6 7 8 9 10 u 12 13 14 15 16 17 18 19 20 21 22"} {
		if _, err := ParseProcStat([]byte(bad)); !errors.Is(err, errFormat) {
			t.Errorf("ParseProcStat(%q) = %v, want ErrFormat", bad, err)
		}
	}
}

func TestParseStatus(t *testing.T) {
	s, err := parseStatus(fixture(t, "proc", "12122", "status"))
	if err != nil {
		t.Fatal(err)
	}
	want := status{Name: "mariadbd", Tgid: 12122, Pid: 12122, Threads: 11, RSSBytes: 194256 * 1024, HasRSS: true,
		Voluntary: 232, Involuntary: 329, HasCtxt: true}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	s, err = parseStatus(fixture(t, "proc", "12122", "task", "12147", "status"))
	if err != nil || s.Pid != 12147 || s.Tgid != 12122 || s.Voluntary != 184130 || s.Involuntary != 77433 {
		t.Errorf("thread status: %+v, %v", s, err)
	}
	// A kernel thread has no VmRSS.
	s, err = parseStatus([]byte("Name:\tkworker/0:1\nPid:\t9\nTgid:\t9\nThreads:\t1\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t0\n"))
	if err != nil || s.HasRSS || !s.HasCtxt || s.Voluntary != 5 {
		t.Errorf("kernel thread status: %+v, %v", s, err)
	}
	for _, bad := range []string{"Name:\tx\n", "Pid:\tx\n", "Pid:\t1\nVmRSS:\t12 MB\n", "Pid:\t1\nvoluntary_ctxt_switches:\t-1\n"} {
		if _, err := parseStatus([]byte(bad)); !errors.Is(err, errFormat) {
			t.Errorf("ParseStatus(%q) = %v, want ErrFormat", bad, err)
		}
	}
}

func TestParseIO(t *testing.T) {
	io, err := parseIO(fixture(t, "proc", "12122", "io"))
	if err != nil {
		t.Fatal(err)
	}
	want := procIO{RChar: 38732958, WChar: 722072394, SyscR: 476, SyscW: 95050, ReadBytes: 2985984, WriteBytes: 864468992}
	if io != want {
		t.Errorf("got %+v\nwant %+v", io, want)
	}
	if _, err := parseIO([]byte("rchar: 1\nwchar: 2\n")); !errors.Is(err, errFormat) {
		t.Errorf("truncated io: %v, want ErrFormat", err)
	}
	if _, err := parseIO([]byte("rchar: x\n")); !errors.Is(err, errFormat) {
		t.Errorf("bad io: %v, want ErrFormat", err)
	}
}

func TestParseHostCPU(t *testing.T) {
	c, err := ParseHostCPU(fixture(t, "proc", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	want := HostCPU{User: 21163, System: 18633, Idle: 122821, IOWait: 791, SoftIRQ: 5467, Steal: 24}
	if c != want {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if got := c.Busy(); got != 21163+18633+5467 {
		t.Errorf("Busy = %d, want %d", got, 21163+18633+5467)
	}
	// Old kernels print fewer columns.
	c, err = ParseHostCPU([]byte("cpu  1 2 3 4\ncpu0 1 2 3 4\n"))
	if err != nil || c != (HostCPU{User: 1, Nice: 2, System: 3, Idle: 4}) {
		t.Errorf("short cpu line: %+v, %v", c, err)
	}
	if _, err := ParseHostCPU([]byte("cpu0 1 2 3 4\n")); !errors.Is(err, errFormat) {
		t.Errorf("no cpu line: %v, want ErrFormat", err)
	}
}

func TestParseDiskstats(t *testing.T) {
	all, err := parseDiskstats(fixture(t, "proc", "diskstats"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var vda diskStats
	for _, d := range all {
		names = append(names, d.Name)
		if d.Name == "vda" {
			vda = d
		}
	}
	if want := []string{"loop0", "loop1", "loop2", "loop3", "loop4", "loop5", "loop6", "loop7", "vda", "zram0"}; !reflect.DeepEqual(names, want) {
		t.Errorf("devices %q, want %q", names, want)
	}
	want := diskStats{Major: 254, Minor: 0, Name: "vda",
		ReadsCompleted: 57671, ReadsMerged: 8637, SectorsRead: 2704754, ReadMs: 23768,
		WritesCompleted: 405080, WritesMerged: 44261, SectorsWritten: 5020064, WriteMs: 22769,
		InFlight: 0, IOMs: 19572, WeightedIOMs: 53485,
		DiscardsCompleted: 17266, DiscardsMerged: 52, SectorsDiscarded: 5072448, DiscardMs: 949,
		FlushesCompleted: 174651, FlushMs: 5998}
	if vda != want {
		t.Errorf("vda:\n got %+v\nwant %+v", vda, want)
	}

	all, err = parseDiskstats(fixture(t, "lvm", "proc", "diskstats"))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 || all[0] != (diskStats{Major: 7, Name: "loop0"}) || all[4].Name != "dm-1" || all[4].SectorsWritten != 159900 {
		t.Errorf("lvm diskstats: %+v", all)
	}
	for _, bad := range []string{"8 0 sda 1 2 3", "x 0 sda 1 2 3 4 5 6 7 8 9 10 11", "8 0 sda 1 2 3 4 5 6 7 8 9 10 -1"} {
		if _, err := parseDiskstats([]byte(bad)); !errors.Is(err, errFormat) {
			t.Errorf("ParseDiskstats(%q) = %v, want ErrFormat", bad, err)
		}
	}
}

func TestParseMountinfo(t *testing.T) {
	m, err := parseMountinfo(fixture(t, "lvm", "proc", "self", "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 5 {
		t.Fatalf("%d mounts, want 5", len(m))
	}
	want := mount{ID: 40, Parent: 25, Major: 0, Minor: 45, Root: "/", MountPoint: "/srv", FSType: "btrfs", Source: "/dev/sda1"}
	if m[2] != want {
		t.Errorf("btrfs mount:\n got %+v\nwant %+v", m[2], want)
	}
	// Optional fields before the separator, and octal escapes.
	m, err = parseMountinfo([]byte(`30 1 8:3 / /data\040disk rw shared:4 master:1 - xfs /dev/sda3 rw` + "\n"))
	if err != nil || len(m) != 1 || m[0].MountPoint != "/data disk" || m[0].FSType != "xfs" || m[0].Source != "/dev/sda3" {
		t.Errorf("escaped mount: %+v, %v", m, err)
	}
	// This machine's table parses.
	if _, err := parseMountinfo(fixture(t, "proc", "self", "mountinfo")); err != nil {
		t.Error(err)
	}
	if _, err := parseMountinfo([]byte("30 1 8:3 / /data rw xfs /dev/sda3 rw\n")); !errors.Is(err, errFormat) {
		t.Errorf("no separator: %v, want ErrFormat", err)
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add(fixture(f, "proc", "12122", "stat"))
	f.Add([]byte("1 (a)b) R" + strings.Repeat(" 7", 40)))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseProcStat(b)
		if err == nil && !strings.Contains(string(b), "("+s.Comm+")") {
			t.Errorf("comm %q is not between parentheses in %q", s.Comm, b)
		}
	})
}

func FuzzParseDiskstats(f *testing.F) {
	f.Add(fixture(f, "proc", "diskstats"))
	f.Add(fixture(f, "lvm", "proc", "diskstats"))
	f.Fuzz(func(t *testing.T, b []byte) {
		all, err := parseDiskstats(b)
		if err != nil {
			return
		}
		for _, d := range all {
			if d.Name == "" || strings.ContainsAny(d.Name, " \t\n") {
				t.Errorf("device name %q", d.Name)
			}
		}
	})
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add(fixture(f, "lvm", "proc", "self", "mountinfo"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := parseMountinfo(b)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.FSType == "" || m.Source == "" {
				t.Errorf("mount %+v has no file system type", m)
			}
		}
	})
}
