package procfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The fuzz targets check that what a parser accepts it reads back the same
// once written the way the kernel writes it: parse(format(parse(b))) equals
// parse(b). The formatters below follow proc(5), not the parsers.

// formatStat writes s as the kernel writes a stat line (52 fields; those
// Stat does not keep are written as 0).
func formatStat(s Stat) []byte {
	f := make([]string, 53) // 1-based
	for i := range f {
		f[i] = "0"
	}
	f[3] = string([]byte{s.State})
	f[4], f[6] = fmt.Sprint(s.PPID), fmt.Sprint(s.Session)
	f[10], f[12] = fmt.Sprint(s.MinFlt), fmt.Sprint(s.MajFlt)
	f[14], f[15] = fmt.Sprint(s.UTime), fmt.Sprint(s.STime)
	f[16], f[17] = fmt.Sprint(s.CUTime), fmt.Sprint(s.CSTime)
	f[20], f[22] = fmt.Sprint(s.NumThreads), fmt.Sprint(s.StartTime)
	if s.CPU < 0 {
		f = f[:39] // the line ends before processor
	} else {
		f[39] = fmt.Sprint(s.CPU)
	}
	return fmt.Appendf(nil, "%d (%s) %s\n", s.PID, s.Comm, strings.Join(f[3:], " "))
}

// formatStatus writes the lines of a status file that s holds.
func formatStatus(s Status) []byte {
	var b bytes.Buffer
	if s.Name != "" {
		fmt.Fprintf(&b, "Name:\t%s\n", s.Name)
	}
	if s.State != 0 {
		fmt.Fprintf(&b, "State:\t%s (state)\n", []byte{s.State})
	}
	fmt.Fprintf(&b, "Tgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\n", s.Tgid, s.Pid, s.PPid)
	if s.EUID >= 0 {
		fmt.Fprintf(&b, "Uid:\t%d\t%d\t%d\t%d\n", s.EUID+1, s.EUID, s.EUID, s.EUID)
	}
	if s.HasRSS {
		fmt.Fprintf(&b, "VmRSS:\t%8d kB\n", s.RSSBytes/1024)
	}
	fmt.Fprintf(&b, "Threads:\t%d\n", s.Threads)
	if s.HasCapEff {
		fmt.Fprintf(&b, "CapEff:\t%016x\n", s.CapEff)
	}
	if s.HasSigIgn {
		fmt.Fprintf(&b, "SigIgn:\t%016x\n", s.SigIgn)
	}
	if s.CPUsAllowed != "" {
		fmt.Fprintf(&b, "Cpus_allowed_list:\t%s\n", s.CPUsAllowed)
	}
	if s.HasCtxt || s.Voluntary != 0 {
		fmt.Fprintf(&b, "voluntary_ctxt_switches:\t%d\n", s.Voluntary)
	}
	if s.HasCtxt || s.Involuntary != 0 {
		fmt.Fprintf(&b, "nonvoluntary_ctxt_switches:\t%d\n", s.Involuntary)
	}
	return b.Bytes()
}

// escapeMount writes a mountinfo field as the kernel does: space, tab,
// newline and backslash as octal escapes.
func escapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\\':
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func formatMountinfo(ms []mount) []byte {
	var b bytes.Buffer
	for _, m := range ms {
		fmt.Fprintf(&b, "%d %d %d:%d %s %s rw,relatime shared:1 - %s %s rw\n", m.ID, m.Parent, m.Major, m.Minor,
			escapeMount(m.Root), escapeMount(m.MountPoint), escapeMount(m.FSType), escapeMount(m.Source))
	}
	return b.Bytes()
}

// seeds adds every file named name under testdata/proc.
func seeds(f *testing.F, name string) {
	paths, _ := filepath.Glob("testdata/proc/*/" + name)
	more, _ := filepath.Glob("testdata/proc/*/task/*/" + name)
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzParseStat(f *testing.F) {
	seeds(f, "stat")
	f.Add([]byte("1 (a) b) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 1 0 5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStat(b)
		if err != nil {
			return
		}
		if s.PID <= 0 || s.PPID < 0 || s.NumThreads < 0 {
			t.Fatalf("negative or zero id or count from %q: %+v", b, s)
		}
		if !bytes.Contains(b, []byte("("+s.Comm+")")) {
			t.Fatalf("comm %q is not in %q", s.Comm, b)
		}
		again, err := parseStat(formatStat(s))
		if err != nil || again != s {
			t.Fatalf("%q parsed as %+v; written back and parsed: %+v, %v", b, s, again, err)
		}
	})
}

// FuzzStatComm writes a stat line around any command name and state letter
// and checks every field comes back, whatever bytes the name holds.
func FuzzStatComm(f *testing.F) {
	f.Add("mariadbd", byte('S'), 1, uint64(43948), uint64(1114), 11, uint64(57677))
	f.Add("a) Z 5 (b", byte('Z'), 0, uint64(0), uint64(0), 1, uint64(0))
	f.Add("x\ny )", byte('I'), 2147483647, uint64(1<<63), uint64(1<<64-1), 0, uint64(1))
	f.Fuzz(func(t *testing.T, comm string, state byte, ppid int, minflt, utime uint64, threads int, start uint64) {
		if strings.IndexByte(" \t\n\v\f\r)", state) >= 0 || ppid < 0 || ppid > 1<<31-1 || threads < 0 || threads > 1<<31-1 {
			return // not what the kernel writes
		}
		want := Stat{PID: 42, Comm: comm, State: state, PPID: ppid, MinFlt: minflt, MajFlt: minflt / 3,
			UTime: utime, STime: utime / 7, CUTime: utime / 5, CSTime: minflt / 11, NumThreads: threads, StartTime: start, CPU: threads % 7}
		got, err := parseStat(formatStat(want))
		if err != nil || got != want {
			t.Fatalf("wrote %+v, read %+v, %v", want, got, err)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	seeds(f, "status")
	f.Add([]byte("Pid:\t5\nVmRSS:\t3 kB\nUid:\t1\t2\t3\t4\nCapEff:\t00000000a80425fb\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStatus(b)
		if err != nil {
			return
		}
		if s.HasRSS && s.RSSBytes%1024 != 0 {
			t.Fatalf("VmRSS of %d bytes from %q: not whole kB", s.RSSBytes, b)
		}
		if s.EUID < -1 || s.Tgid < 0 || s.Pid < 0 || s.Threads < 0 {
			t.Fatalf("negative id or count from %q: %+v", b, s)
		}
		again, err := parseStatus(formatStatus(s))
		if err != nil || again != s {
			t.Fatalf("%q parsed as %+v; written back and parsed: %+v, %v", b, s, again, err)
		}
	})
}

func FuzzParseMountinfo(f *testing.F) {
	for _, p := range []string{"testdata/proc/self/mountinfo"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`40 25 0:45 /a\040b /mnt/x\011y rw master:1 - fuse.x  rw` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := parseMountinfo(b)
		if err != nil {
			return
		}
		lines := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if len(ms) != lines {
			t.Fatalf("%d mounts from %d lines: %q", len(ms), lines, b)
		}
		again, err := parseMountinfo(formatMountinfo(ms))
		if err != nil || !reflect.DeepEqual(again, ms) {
			t.Fatalf("%q parsed as %+v; written back and parsed: %+v, %v", b, ms, again, err)
		}
	})
}
