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
