package hugeheap

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// The kernel's files Advise reads, variables for the tests: two in /sys,
// the others in /proc.
var (
	thpModeFile   = "/sys/kernel/mm/transparent_hugepage/enabled"
	thpSizeFile   = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
	proc          = procfs.New("")
	getenvGodebug = func() string { return os.Getenv("GODEBUG") }
	getrlimit     = unix.Getrlimit
)

// Advise marks the next n bytes of the Go heap (rounded in to huge-page
// boundaries) MADV_HUGEPAGE: it allocates an n-byte block the runtime
// does not clear, marks it and frees it, so that the allocations after it
// land in its pages. Call it once, early: the pages the heap used before
// stay as they were.
//
// It marks nothing (and returns 0) when the kernel already backs every
// mapping with huge pages ("always"), gives none ("never"), or has no
// transparent huge pages; when GODEBUG has disablethp=1; when the soft
// memory limit is under 2n; when the kernel refuses to overcommit memory
// (vm.overcommit_memory 2), n is more than a quarter of MemAvailable, or
// an address-space or data limit (ulimit -v, ulimit -d) leaves less than
// four times n beyond what the process maps already, so that mapping the
// block can never fail (the runtime dies when it cannot map its heap);
// and on 32-bit platforms.
func Advise(n int) (marked int, err error) {
	r, err := advise(n)
	return r.Bytes, err
}

// advise is Advise, saying where it marked and why it did not.
func advise(n int) (result, error) {
	if why := skipReason(n); why != "" {
		return result{Skipped: why}, nil
	}
	huge, err := hugePageSize()
	if err != nil {
		return result{Skipped: "the huge page size is unknown"}, err
	}
	// A Builder grows into memory the runtime does not clear (make
	// would clear the block, touching every page, wherever it reuses
	// memory the heap had before). One byte is written to find it.
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(0)
	start := unsafe.Pointer(unsafe.StringData(sb.String()))
	base := uintptr(start)
	lo := alignUp(base, huge)
	hi := alignDown(base+uintptr(n), huge)
	if hi <= lo {
		return result{Skipped: fmt.Sprintf("%d bytes hold no whole huge page", n)}, nil
	}
	err = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(start, lo-base)), hi-lo), unix.MADV_HUGEPAGE)
	runtime.KeepAlive(&sb)
	sb = strings.Builder{}
	// Free the block now, so the next allocations land in its pages.
	runtime.GC()
	if err != nil {
		return result{Skipped: "madvise refused"}, fmt.Errorf("madvise MADV_HUGEPAGE: %w", err)
	}
	return result{Bytes: int(hi - lo), Start: lo}, nil
}

// skipReason is why Advise should do nothing, or "".
func skipReason(n int) string {
	if unsafe.Sizeof(uintptr(0)) < 8 {
		return "a 32-bit address space"
	}
	if n <= 0 {
		return "nothing asked"
	}
	// The freed block stays mapped and counts against the soft
	// memory limit: under a low one the runtime would hand it back
	// at once.
	if limit := debug.SetMemoryLimit(-1); int64(n) > limit/2 {
		return "the soft memory limit (GOMEMLIMIT) is under twice the block"
	}
	for _, kv := range strings.Split(getenvGodebug(), ",") {
		if strings.TrimSpace(kv) == "disablethp=1" {
			return "GODEBUG has disablethp=1"
		}
	}
	mode, err := os.ReadFile(thpModeFile)
	if err != nil {
		return "no transparent huge pages in this kernel"
	}
	switch selected(mode) {
	case "madvise":
	case "always":
		return "the kernel gives huge pages to every mapping already (transparent_hugepage/enabled: always)"
	default:
		return "transparent huge pages are off (transparent_hugepage/enabled: " + selected(mode) + ")"
	}
	if v, err := proc.Sysctl("vm.overcommit_memory"); err == nil && v == "2" {
		return "the kernel does not overcommit memory (vm.overcommit_memory 2)"
	}
	avail, err := memAvailable()
	if err != nil || int64(n) > avail/4 {
		return "too little memory available"
	}
	return limitReason(n)
}

// limitReason is why the process's address-space or data limit leaves no
// room for an n-byte block, or "": the block may take at most a quarter
// of what either limit leaves beyond what the process maps (VmSize) or
// holds as data (VmData) now. A limit or a size it cannot read counts as
// no room.
func limitReason(n int) string {
	for _, l := range []struct {
		resource int
		field    string
		name     string
	}{
		{unix.RLIMIT_AS, "VmSize:", "address-space limit (ulimit -v)"},
		{unix.RLIMIT_DATA, "VmData:", "data limit (ulimit -d)"},
	} {
		var lim unix.Rlimit
		if err := getrlimit(l.resource, &lim); err != nil {
			return "the " + l.name + " is unknown"
		}
		if lim.Cur == unix.RLIM_INFINITY {
			continue
		}
		used, err := statusBytes(l.field)
		if err != nil {
			return "the " + l.name + " is set and " + strings.TrimSuffix(l.field, ":") + " is unknown"
		}
		if used > lim.Cur || (lim.Cur-used)/4 < uint64(n) {
			return fmt.Sprintf("the %s of %d MiB leaves %d MiB, under four times the block",
				l.name, lim.Cur>>20, (lim.Cur-min(used, lim.Cur))>>20)
		}
	}
	return ""
}

// statusBytes is a kB line of /proc/self/status (VmSize:, VmData:) in
// bytes.
func statusBytes(field string) (uint64, error) {
	b, err := proc.Self().ReadFile("status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseUint(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, fmt.Errorf("%s has no %s line", proc.Self().Path("status"), field)
}

// selected is the bracketed word of a sysfs choice ("always [madvise]
// never" → "madvise").
func selected(b []byte) string {
	_, after, ok := bytes.Cut(b, []byte("["))
	if !ok {
		return strings.TrimSpace(string(b))
	}
	word, _, _ := bytes.Cut(after, []byte("]"))
	return string(word)
}

func hugePageSize() (uintptr, error) {
	b, err := os.ReadFile(thpSizeFile)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n == 0 || n&(n-1) != 0 {
		return 0, fmt.Errorf("%s: %q is not a power of two", thpSizeFile, strings.TrimSpace(string(b)))
	}
	return uintptr(n), nil
}

// memAvailable is /proc/meminfo's MemAvailable in bytes.
func memAvailable() (int64, error) {
	b, err := proc.ReadFile("meminfo")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, fmt.Errorf("%s has no MemAvailable line", proc.Path("meminfo"))
}

func alignUp(x, a uintptr) uintptr   { return (x + a - 1) &^ (a - 1) }
func alignDown(x, a uintptr) uintptr { return x &^ (a - 1) }
