package metric

import (
	"regexp"
	"strconv"
	"strings"
)

// mapEntry is one core line of perf's mapfile.csv. Lines of models
// perfbench has no set for are kept, so that their CPUs match them (and get
// no set) rather than a later line.
type mapEntry struct {
	// Arch is "x86" or "arm64": how CPUID is matched.
	Arch string
	// CPUID is the mapfile's first column: a POSIX extended regular
	// expression on x86, a MIDR on arm64.
	CPUID string
	// Set is the Name of the set (the folder of perf's tables).
	Set string
	// Release is the Linux release whose mapfile the line is from.
	Release string
}

// Lookup returns the set for a perf cpuid string, chosen as perf chooses
// its tables: the first mapfile line that matches. It returns nil when
// perfbench has no set for that CPU.
func Lookup(cpuid string) *Set {
	for _, m := range cpuMap {
		if m.matches(cpuid) {
			return setNamed(m.Set)
		}
	}
	return nil
}

// setNamed returns the set called name, or nil.
func setNamed(name string) *Set {
	for i := range sets {
		if sets[i].Name == name {
			return &sets[i]
		}
	}
	return nil
}

// Sets returns every set perfbench knows, in the generator's order.
func Sets() []*Set {
	out := make([]*Set, len(sets))
	for i := range sets {
		out[i] = &sets[i]
	}
	return out
}

func (m mapEntry) matches(cpuid string) bool {
	if m.Arch == "arm64" {
		return midrMatches(m.CPUID, cpuid)
	}
	return x86Matches(m.CPUID, cpuid)
}

// cpuidMatches is strcmp_cpuid_str of perf's expressions: whether the CPU
// is test (an arm64 MIDR, or an x86 cpuid pattern).
func cpuidMatches(test, cpuid string) bool {
	if strings.HasPrefix(cpuid, "0x") {
		return midrMatches(test, cpuid)
	}
	return x86Matches(test, cpuid)
}

// x86Matches is perf's x86 strcmp_cpuid_str (tools/perf/arch/x86/util/
// header.c): the leftmost-longest match of the pattern must be as long as
// the cpuid, without its stepping when the pattern has none.
func x86Matches(pattern, cpuid string) bool {
	fullPattern := strings.Count(pattern, "-") == 3
	fullID := strings.Count(cpuid, "-") == 3
	if fullPattern && !fullID {
		return false
	}
	re, err := regexp.CompilePOSIX(pattern)
	if err != nil {
		return false
	}
	loc := re.FindStringIndex(cpuid)
	if loc == nil {
		return false
	}
	want := len(cpuid)
	if !fullPattern && fullID {
		want = strings.LastIndexByte(cpuid, '-')
	}
	return loc[1]-loc[0] == want
}

// MIDR fields perf's arm64 strcmp_cpuid_str compares as a version.
const (
	midrVariant  = 0xf << 20
	midrRevision = 0xf
)

// midrMatches is perf's arm64 strcmp_cpuid_str (Linux 6.12): the same
// implementer, architecture and part, and a variant.revision at least the
// table's.
func midrMatches(table, cpuid string) bool {
	t, err1 := strconv.ParseUint(table, 0, 64)
	c, err2 := strconv.ParseUint(cpuid, 0, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	mask := ^uint64(midrVariant | midrRevision)
	if t&mask != c&mask {
		return false
	}
	tv, cv := t&midrVariant>>20, c&midrVariant>>20
	return cv > tv || cv == tv && c&midrRevision >= t&midrRevision
}
