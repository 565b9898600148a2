package procfs

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// The stat line of the fixture mariadbd (testdata/proc/12122/stat), for
// building variants.
const mariadbdStat = "12122 (mariadbd) S 1 12077 4188 0 -1 4194560 43948 0 0 0 1114 772 0 0 20 0 11 0 57677 " +
	"8797547798528 48500 18446744073709551615 93859913617408 93859923251817 140722748060176 0 0 0 552967 4102 26345 0 0 0 " +
	"17 1 0 0 0 0 0 93859930434000 93859932872704 93861004492800 140722748061917 140722748062213 140722748062213 140722748063717 0\n"

func TestParseStat(t *testing.T) {
	// Fields read by hand off the lines.
	mariadbd := Stat{PID: 12122, Comm: "mariadbd", State: 'S', PPID: 1, Session: 4188, MinFlt: 43948, UTime: 1114, STime: 772, NumThreads: 11, StartTime: 57677, CPU: 1}
	withComm := func(comm string) string { return strings.Replace(mariadbdStat, "(mariadbd)", "("+comm+")", 1) }
	named := func(comm string) Stat { s := mariadbd; s.Comm = comm; return s }
	cases := []struct {
		name string
		in   string
		want Stat
		err  string // "" when it parses
	}{
		{"mariadbd", mariadbdStat, mariadbd, ""},
		{"zombie", "30008 (sleep) Z 29944 29781 25793 0 -1 4227084 76 0 0 0 0 0 0 0 20 0 1 0 926605 0 0 18446744073709551615 " +
			"0 0 0 0 0 0 0 0 0 1 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
			Stat{PID: 30008, Comm: "sleep", State: 'Z', PPID: 29944, Session: 25793, MinFlt: 76, NumThreads: 1, StartTime: 926605, CPU: 1}, ""},
		// The comm is whatever the program set, up to 15 bytes.
		{"comm with spaces and parentheses", withComm("a) S 1 (b"), named("a) S 1 (b"), ""},
		{"comm with a newline", withComm("x\ny"), named("x\ny"), ""},
		{"empty comm", withComm(""), named(""), ""},
		// An old kernel's line, through starttime and a few more: no
		// processor.
		{"short line", "7 (init) S 0 7 7 0 -1 256 12 0 3 0 5 6 8 9 20 0 1 0 42 1000 20\n",
			Stat{PID: 7, Comm: "init", State: 'S', Session: 7, MinFlt: 12, MajFlt: 3, UTime: 5, STime: 6, CUTime: 8, CSTime: 9, NumThreads: 1, StartTime: 42, CPU: -1}, ""},
		// Through processor (field 39, here 3), the rest cut.
		{"through processor", "7 (init) S 0 7 7 0 -1 256 12 0 3 0 5 6 8 9 20 0 1 0 42 1000 20 0 0 0 0 0 0 0 0 0 0 0 0 0 17 3\n",
			Stat{PID: 7, Comm: "init", State: 'S', Session: 7, MinFlt: 12, MajFlt: 3, UTime: 5, STime: 6, CUTime: 8, CSTime: 9, NumThreads: 1, StartTime: 42, CPU: 3}, ""},
		{"negative processor", "7 (init) S 0 7 7 0 -1 256 12 0 3 0 5 6 8 9 20 0 1 0 42 1000 20 0 0 0 0 0 0 0 0 0 0 0 0 0 17 -3\n", Stat{}, `stat field 39 is "-3"`},
		{"negative cstime", "7 (init) S 0 7 7 0 -1 256 12 0 3 0 5 6 8 -9 20 0 1 0 42\n", Stat{}, `stat field 17 is "-9"`},
		{"cut before starttime", "7 (init) S 0 7 7 0 -1 256 12 0 3 0 5 6 0 0 20 0 1 0\n", Stat{}, "19 fields after the comm, want at least 20"},
		{"no comm", "7 init S 0\n", Stat{}, "no (comm)"},
		{"pid not a number", "x7 (init) S 0 7 7 0 -1 256 12 0 3 0 5 6 0 0 20 0 1 0 42\n", Stat{}, `stat pid "x7"`},
		{"pid 0", "0 (init) S 0 7 7 0 -1 256 12 0 3 0 5 6 0 0 20 0 1 0 42\n", Stat{}, `stat pid "0"`},
		{"state of two letters", "7 (init) SS 0 7 7 0 -1 256 12 0 3 0 5 6 0 0 20 0 1 0 42\n", Stat{}, `stat state "SS"`},
		{"negative utime", "7 (init) S 0 7 7 0 -1 256 12 0 3 0 -5 6 0 0 20 0 1 0 42\n", Stat{}, `stat field 14 is "-5"`},
		{"starttime overflows", "7 (init) S 0 7 7 0 -1 256 12 0 3 0 5 6 0 0 20 0 1 0 18446744073709551616\n", Stat{}, "stat field 22"},
		{"ppid beyond pid_t", "7 (init) S 2147483648 7 7 0 -1 256 12 0 3 0 5 6 0 0 20 0 1 0 42\n", Stat{}, "stat field 4"},
	}
	for _, c := range cases {
		got, err := parseStat([]byte(c.in))
		checkParse(t, c.name, got, err, c.want, c.err)
	}
}

func TestStatExited(t *testing.T) {
	for state, want := range map[byte]bool{'R': false, 'S': false, 'D': false, 'T': false, 't': false, 'I': false, 'Z': true, 'X': true, 'x': true} {
		if got := (Stat{State: state}).Exited(); got != want {
			t.Errorf("state %c: exited %v, want %v", state, got, want)
		}
	}
}

// TestIgnoresChildren: SIGCHLD (17) is bit 16 of SigIgn; mariadbd's mask
// (SIGINT, SIGQUIT, SIGPIPE) does not hold it; no SigIgn line says no.
func TestIgnoresChildren(t *testing.T) {
	for _, c := range []struct {
		s    Status
		want bool
	}{
		{Status{SigIgn: 1 << 16, HasSigIgn: true}, true},
		{Status{SigIgn: 0x1006, HasSigIgn: true}, false},
		{Status{SigIgn: 1 << 17, HasSigIgn: true}, false},
		{Status{}, false},
	} {
		if got := c.s.IgnoresChildren(); got != c.want {
			t.Errorf("SigIgn %#x (line %v): ignores children %v, want %v", c.s.SigIgn, c.s.HasSigIgn, got, c.want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	b, err := os.ReadFile("testdata/proc/12122/status")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseStatus(b)
	if err != nil {
		t.Fatal(err)
	}
	// Read by hand off the file.
	want := Status{Name: "mariadbd", State: 'S', Tgid: 12122, Pid: 12122, PPid: 1, Threads: 11, EUID: 0,
		CapEff: 0x1fffeffffff, HasCapEff: true, SigIgn: 0x1006, HasSigIgn: true, RSSBytes: 194256 * 1024, HasRSS: true,
		Voluntary: 232, Involuntary: 329, HasCtxt: true, CPUsAllowed: "0-1"}
	if got != want {
		t.Errorf("mariadbd:\n got %+v\nwant %+v", got, want)
	}

	b, err = os.ReadFile("testdata/proc/30008/status")
	if err != nil {
		t.Fatal(err)
	}
	got, err = parseStatus(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != 'Z' || got.HasRSS || got.Pid != 30008 || got.PPid != 29944 || got.Threads != 1 || !got.HasCtxt {
		t.Errorf("zombie: %+v, want state Z, no RSS, pid 30008, parent 29944, 1 thread, context switches", got)
	}

	cases := []struct {
		name string
		in   string
		want Status
		err  string
	}{
		{"minimal", "Pid:\t5\n", Status{Pid: 5, EUID: -1}, ""},
		{"no final newline", "Name:\tx\nPid:\t5", Status{Name: "x", Pid: 5, EUID: -1}, ""},
		{"name with leading space", "Name:\t a b\nPid:\t5\n", Status{Name: " a b", Pid: 5, EUID: -1}, ""},
		{"one context switch line", "Pid:\t5\nvoluntary_ctxt_switches:\t3\n", Status{Pid: 5, EUID: -1, Voluntary: 3}, ""},
		{"the same line twice", "Pid:\t5\nvoluntary_ctxt_switches:\t3\nvoluntary_ctxt_switches:\t4\n", Status{Pid: 5, EUID: -1, Voluntary: 4}, ""},
		{"effective uid", "Pid:\t5\nUid:\t1000\t0\t0\t0\n", Status{Pid: 5, EUID: 0}, ""},
		{"no Pid", "Name:\tx\nTgid:\t5\n", Status{}, "no Pid line"},
		{"bad Tgid", "Tgid:\t5x\nPid:\t5\n", Status{}, `status Tgid is "5x"`},
		{"VmRSS in MB", "Pid:\t5\nVmRSS:\t3 MB\n", Status{}, `status VmRSS is "3 MB"`},
		{"VmRSS overflows in bytes", "Pid:\t5\nVmRSS:\t18014398509481984 kB\n", Status{}, "status VmRSS"},
		{"CapEff not hex", "Pid:\t5\nCapEff:\tzz\n", Status{}, "status CapEff"},
		{"SIGCHLD ignored", "Pid:\t5\nSigIgn:\t0000000000010000\n", Status{Pid: 5, EUID: -1, SigIgn: 1 << 16, HasSigIgn: true}, ""},
		{"SigIgn not hex", "Pid:\t5\nSigIgn:\t0x1g\n", Status{}, "status SigIgn"},
		{"Uid with one field", "Pid:\t5\nUid:\t0\n", Status{}, "status Uid"},
		{"empty State", "Pid:\t5\nState:\t\n", Status{}, "status State"},
	}
	for _, c := range cases {
		got, err := parseStatus([]byte(c.in))
		checkParse(t, c.name, got, err, c.want, c.err)
	}
}

func TestParseMountinfo(t *testing.T) {
	b, err := os.ReadFile("testdata/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := parseMountinfo(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 20 {
		t.Fatalf("%d mounts, want the 20 lines of the file", len(ms))
	}
	root := mount{ID: 27, Parent: 1, Major: 254, Minor: 0, Root: "/", MountPoint: "/", FSType: "ext4", Source: "/dev/vda"}
	cg2 := mount{ID: 41, Parent: 31, Major: 0, Minor: 38, Root: "/", MountPoint: "/sys/fs/cgroup/unified", FSType: "cgroup2", Source: "cgroup2"}
	if ms[5] != root || ms[18] != cg2 {
		t.Errorf("line 6: %+v\nline 19: %+v", ms[5], ms[18])
	}

	cases := []struct {
		name string
		in   string
		want []mount
		err  string
	}{
		{"optional fields", "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 shared:2 - ext3 /dev/root rw,errors=continue\n",
			[]mount{{ID: 36, Parent: 35, Major: 98, Root: "/mnt1", MountPoint: "/mnt/parent", FSType: "ext3", Source: "/dev/root"}}, ""},
		{"escapes", `40 25 0:45 /a\040b /mnt/x\011y\134z rw - fuse.my\040fs src\012x rw` + "\n",
			[]mount{{ID: 40, Parent: 25, Minor: 45, Root: "/a b", MountPoint: "/mnt/x\ty\\z", FSType: "fuse.my fs", Source: "src\nx"}}, ""},
		{"escapes ending the fields", `40 25 0:45 /\040 /mnt/a\040 rw - tmpfs b\134 rw` + "\n",
			[]mount{{ID: 40, Parent: 25, Minor: 45, Root: "/ ", MountPoint: "/mnt/a ", FSType: "tmpfs", Source: `b\`}}, ""},
		{"a backslash that is no escape", `40 25 0:45 / /m\9 rw - tmpfs \400 rw` + "\n",
			[]mount{{ID: 40, Parent: 25, Minor: 45, Root: "/", MountPoint: `/m\9`, FSType: "tmpfs", Source: `\400`}}, ""},
		{"empty source", "41 25 0:46 / /mnt rw - tmpfs  rw,size=8g\n",
			[]mount{{ID: 41, Parent: 25, Minor: 46, Root: "/", MountPoint: "/mnt", FSType: "tmpfs"}}, ""},
		{"mount point named -", "42 25 0:47 / - rw - tmpfs tmpfs rw\n",
			[]mount{{ID: 42, Parent: 25, Minor: 47, Root: "/", MountPoint: "-", FSType: "tmpfs", Source: "tmpfs"}}, ""},
		{"blank lines", "\n22 1 0:21 / /proc rw - proc proc rw\n\n",
			[]mount{{ID: 22, Parent: 1, Minor: 21, Root: "/", MountPoint: "/proc", FSType: "proc", Source: "proc"}}, ""},
		{"no separator", "22 1 0:21 / /proc rw proc proc rw\n", nil, "line 1: too few fields"},
		{"no super options", "22 1 0:21 / /proc rw - proc proc\n", nil, "too few fields"},
		{"bad device", "22 1 0-21 / /proc rw - proc proc rw\n", nil, "device number"},
		{"bad id", "22 1 0:21 / /proc rw - proc proc rw\nx 1 0:21 / /proc rw - proc proc rw\n", nil, "line 2: mount id"},
	}
	for _, c := range cases {
		got, err := parseMountinfo([]byte(c.in))
		checkParse(t, c.name, got, err, c.want, c.err)
	}
}

func TestParseCgroup(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{"0::/system.slice/mariadb.service\n", "/system.slice/mariadb.service", true},
		// Hybrid: v1 hierarchies and the v2 line.
		{"9:name=systemd:/\n4:memory:/a\n0::/\n", "/", true},
		{"4:memory:/a\n1:cpu:/\n", "", false},
		// Another cgroup namespace's path is still a path.
		{"0::/../../x\n", "/../../x", true},
		{"0::\n", "", false},
		{"", "", false},
		{"10::/x\n", "", false},
	}
	for _, c := range cases {
		got, ok := parseCgroup([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %q %v, want %q %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestIDs(t *testing.T) {
	got := ids([]string{"13", "self", "2", "thread-self", "0", "-4", "100", "sys", "2a"})
	if want := []int{2, 13, 100}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids: %v, want %v", got, want)
	}
}

// checkParse checks one case of a parser's table: the value wanted, or an
// ErrFormat saying wantErr.
func checkParse[T any](t *testing.T, name string, got T, err error, want T, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("%s: %v", name, err)
	case wantErr != "" && (!errors.Is(err, errFormat) || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("%s: error %v, want ErrFormat saying %q", name, err, wantErr)
	case wantErr == "" && !reflect.DeepEqual(got, want):
		t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
	}
}
