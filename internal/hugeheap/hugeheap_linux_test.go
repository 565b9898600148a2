package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// TestSkipReason checks each condition under which Advise must not mark
// anything, with the kernel's files replaced by the test's own.
func TestSkipReason(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	defer func(a, d string, p procfs.FS, g func() string, r func(int, *unix.Rlimit) error) {
		thpModeFile, thpSizeFile, proc, getenvGodebug, getrlimit = a, d, p, g, r
	}(thpModeFile, thpSizeFile, proc, getenvGodebug, getrlimit)
	proc = procfs.New(dir)
	rlimits := map[int]uint64{}
	getrlimit = func(res int, l *unix.Rlimit) error {
		l.Cur, l.Max = unix.RLIM_INFINITY, unix.RLIM_INFINITY
		if v, ok := rlimits[res]; ok {
			l.Cur = v
		}
		return nil
	}
	write("proc/self/status", "Name:\tperfbench\nVmSize:\t 1300000 kB\nVmData:\t   50000 kB\n")
	meminfo := "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n"
	for _, c := range []struct {
		mode, overcommit, meminfo, godebug string
		n                                  int
		want                               string // a word of the reason; "" for none
	}{
		{"always [madvise] never\n", "0\n", meminfo, "", 256 << 20, ""},
		{"[always] madvise never\n", "0\n", meminfo, "", 256 << 20, "always"},
		{"always madvise [never]\n", "0\n", meminfo, "", 256 << 20, "never"},
		{"always [madvise] never\n", "2\n", meminfo, "", 256 << 20, "overcommit"},
		{"always [madvise] never\n", "0\n", "MemAvailable:     900000 kB\n", "", 256 << 20, "too little memory"},
		{"always [madvise] never\n", "0\n", "MemTotal: 1 kB\n", "", 256 << 20, "too little memory"},
		{"always [madvise] never\n", "0\n", meminfo, "gctrace=1,disablethp=1", 256 << 20, "disablethp"},
		{"always [madvise] never\n", "0\n", meminfo, "disablethp=0", 256 << 20, ""},
		{"always [madvise] never\n", "0\n", meminfo, "", 0, "nothing"},
	} {
		thpModeFile = write("enabled", c.mode)
		write("proc/sys/vm/overcommit_memory", c.overcommit)
		write("proc/meminfo", c.meminfo)
		godebug := c.godebug
		getenvGodebug = func() string { return godebug }
		got := skipReason(c.n)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("mode %q, overcommit %q, meminfo %q, GODEBUG %q, n %d: reason %q, want one with %q",
				strings.TrimSpace(c.mode), strings.TrimSpace(c.overcommit), c.meminfo, c.godebug, c.n, got, c.want)
		}
	}
	thpModeFile = write("enabled", "always [madvise] never\n")
	write("proc/sys/vm/overcommit_memory", "0\n")
	write("proc/meminfo", meminfo)
	getenvGodebug = func() string { return "" }
	old := debug.SetMemoryLimit(300 << 20)
	got := skipReason(256 << 20)
	debug.SetMemoryLimit(old)
	if !strings.Contains(got, "GOMEMLIMIT") {
		t.Errorf("a 256 MB block under a 300 MB soft limit: reason %q", got)
	}
	// Limits: the block may take a quarter of what is left beyond
	// VmSize (1,300,000 kB) or VmData (50,000 kB).
	for _, c := range []struct {
		as, data uint64
		want     string
	}{
		{2000000 << 10, 0, "address-space limit"}, // ulimit -v 2000000: 700 MB left
		{(1300000 << 10) + 4*(256<<20), 0, ""},
		{(1300000 << 10) + 4*(256<<20) - 1, 0, "address-space limit"},
		{1000 << 20, 0, "address-space limit"}, // under VmSize already
		{0, (50000 << 10) + 4*(256<<20), ""},
		{0, 1 << 30, "data limit"},
	} {
		clear(rlimits)
		if c.as != 0 {
			rlimits[unix.RLIMIT_AS] = c.as
		}
		if c.data != 0 {
			rlimits[unix.RLIMIT_DATA] = c.data
		}
		got := skipReason(256 << 20)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("RLIMIT_AS %d, RLIMIT_DATA %d: reason %q, want one with %q", c.as, c.data, got, c.want)
		}
	}
	clear(rlimits)
	thpModeFile = filepath.Join(dir, "missing")
	if got := skipReason(1 << 20); !strings.Contains(got, "no transparent huge pages") {
		t.Errorf("no sysfs file: reason %q", got)
	}
	thpSizeFile = write("size", "3000000\n")
	if _, err := hugePageSize(); err == nil {
		t.Error("a huge page size that is not a power of two was taken")
	}
}

// TestAdviseFaults allocates 96 MB of small objects in two fresh
// processes, one after Advise and one without, and compares their page
// faults: with the heap marked, the kernel backs it 2 MiB at a time, so the
// faults must drop at least fourfold. It also checks that Advise touched
// none of the block (the marked range holds almost nothing resident right
// after it) and that the range is marked (VmFlags hg in smaps).
func TestAdviseFaults(t *testing.T) {
	run := func(advise bool) childResult {
		t.Helper()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "HUGEHEAP_CHILD="+strconv.FormatBool(advise))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child (advise %v): %v\n%s", advise, err, out)
		}
		for line := range strings.Lines(string(out)) {
			if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
				var r childResult
				if _, err := fmt.Sscan(rest, &r.bytes, &r.faults, &r.residentAfterAdvise, &r.marked, &r.skipped); err != nil {
					t.Fatalf("child line %q: %v", line, err)
				}
				return r
			}
		}
		t.Fatalf("child (advise %v) printed no result:\n%s", advise, out)
		return childResult{}
	}
	plain, marked := run(false), run(true)
	t.Logf("without Advise: %d faults; with Advise (%d bytes marked, %d KiB resident right after): %d faults",
		plain.faults, marked.bytes, marked.residentAfterAdvise, marked.faults)
	if marked.bytes == 0 {
		// The kernel's mode decides: "always" backs both children
		// with huge pages, "never" neither; nothing to compare.
		t.Logf("Advise marked nothing on this machine: %s", marked.skipped)
		return
	}
	if !marked.marked {
		t.Errorf("the marked range has no hg in its VmFlags")
	}
	if marked.residentAfterAdvise > 8<<10 {
		t.Errorf("%d KiB of the marked range resident right after Advise: it touched the block", marked.residentAfterAdvise)
	}
	// Under the race detector its shadow memory, outside the marked
	// range, takes most of the faults: only the rest is checked.
	if !raceEnabled && marked.faults*4 > plain.faults {
		t.Errorf("%d faults with Advise against %d without: want at most a quarter", marked.faults, plain.faults)
	}
}

// TestAdviseUnderAddressLimit runs Advise(384 MiB), the block perfbench
// report asks for, in a process whose address-space limit (ulimit -v)
// leaves only 256 MiB beyond what it maps: Advise must mark nothing, say
// why, and leave the process able to allocate (mapping the block there
// made the runtime die with "fatal error: out of memory").
func TestAdviseUnderAddressLimit(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "HUGEHEAP_CHILD=limit")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child under an address-space limit: %v\n%.2000s", err, out)
	}
	if !strings.Contains(string(out), "RESULT 0 ") {
		t.Fatalf("child under an address-space limit marked memory or printed no result:\n%s", out)
	}
	t.Logf("%s", out)
}

// limitChild sets RLIMIT_AS to VmSize + 256 MiB, calls Advise(384 MiB)
// and allocates 64 MiB, and prints the bytes marked and the reason.
func limitChild() error {
	used, err := statusBytes("VmSize:")
	if err != nil {
		return err
	}
	lim := unix.Rlimit{Cur: used + 256<<20, Max: unix.RLIM_INFINITY}
	if err := unix.Setrlimit(unix.RLIMIT_AS, &lim); err != nil {
		return fmt.Errorf("setrlimit RLIMIT_AS: %w", err)
	}
	n, err := Advise(384 << 20)
	if err != nil {
		return err
	}
	keep := make([][]byte, 0, 64<<20/4096)
	for range cap(keep) {
		keep = append(keep, make([]byte, 4096))
	}
	runtime.KeepAlive(keep)
	fmt.Printf("RESULT %d %s\n", n, limitReason(384<<20))
	return nil
}

type childResult struct {
	bytes, faults, residentAfterAdvise int64
	marked                             bool
	skipped                            string
}

// TestMain runs the test binary as the child process of TestAdviseFaults
// when HUGEHEAP_CHILD is set (true: call Advise first), before anything
// else has used the heap.
func TestMain(m *testing.M) {
	mode := os.Getenv("HUGEHEAP_CHILD")
	if mode == "" {
		os.Exit(m.Run())
	}
	if mode == "limit" {
		if err := limitChild(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if err := adviseChild(mode == "true"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// adviseChild prints on one line: the bytes Advise marked, the page
// faults of allocating 96 MB of small objects after it, the KiB of the
// marked range resident right after Advise, whether every mapping of the
// range has the hg flag, and why Advise skipped ("-" when it did not).
func adviseChild(mark bool) error {
	// Garbage first, as a process has before it calls Advise: freed
	// pages the runtime would clear if the block were made with make.
	garbage := make([][]byte, 0, 32)
	for range cap(garbage) {
		garbage = append(garbage, make([]byte, 1<<20))
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	runtime.GC()
	var r result
	if mark {
		var err error
		if r, err = advise(256 << 20); err != nil {
			return err
		}
	}
	resident, marked, err := rangeInfo(r.Start, r.Bytes)
	if err != nil {
		return err
	}
	before := minorFaults()
	// 96 MB of small objects, kept alive.
	keep := make([][]byte, 0, 96<<20/64)
	for range cap(keep) {
		keep = append(keep, make([]byte, 64))
	}
	faults := minorFaults() - before
	runtime.KeepAlive(keep)
	skipped := strings.ReplaceAll(r.Skipped, " ", "_")
	if skipped == "" {
		skipped = "-"
	}
	fmt.Printf("RESULT %d %d %d %v %s\n", r.Bytes, faults, resident, marked, skipped)
	return nil
}

func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Minflt
}

// rangeInfo sums the Rss (KiB) of the mappings of smaps that overlap
// [start, start+n) and says whether all of them have the hg flag.
func rangeInfo(start uintptr, n int) (residentKiB int64, marked bool, err error) {
	if n == 0 {
		return 0, false, nil
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	end := start + uintptr(n)
	in, marked, any := false, true, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, _ := strings.Cut(fields[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uintptr(a) < end && uintptr(b) > start
			any = any || in
			continue
		}
		if !in {
			continue
		}
		switch {
		case fields[0] == "Rss:":
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			residentKiB += kb
		case fields[0] == "VmFlags:":
			marked = marked && strings.Contains(line, " hg")
		}
	}
	return residentKiB, marked && any, sc.Err()
}
