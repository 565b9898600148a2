package perfevent

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// System is what this machine offers for counting: its event-source PMUs
// (from sysfs) and its tracepoints (from tracefs). LoadSystem builds it from
// a root directory; tests point the root at fixture trees.
type System struct {
	// Root is the directory sysfs, procfs and tracefs were read under ("/"
	// for the real machine).
	Root string
	// PMUs are the event sources under sys/bus/event_source/devices,
	// sorted by name.
	PMUs []*PMU
	// TraceFS is the tracefs "events" directory tracepoints are read from,
	// empty when tracefs is mounted at neither sys/kernel/tracing nor
	// sys/kernel/debug/tracing.
	TraceFS string
	// Paranoid is /proc/sys/kernel/perf_event_paranoid, nil when it could
	// not be read.
	Paranoid *int
	// CPU is what /proc/cpuinfo says of the processor (first CPU).
	CPU cpuInfo
	// Warnings are problems met while reading sysfs that did not stop it:
	// a PMU without a readable type, a malformed format file.
	Warnings []string
}

// cpuInfo is the part of /proc/cpuinfo that decides counter budgets.
type cpuInfo struct {
	Vendor   string // "GenuineIntel", "AuthenticAMD", ...
	Family   int
	Model    int
	Stepping int
	Flags    []string // sorted
}

// HasFlag reports whether /proc/cpuinfo lists flag.
func (c cpuInfo) HasFlag(flag string) bool {
	i := sort.SearchStrings(c.Flags, flag)
	return i < len(c.Flags) && c.Flags[i] == flag
}

// PMU is one event source under /sys/bus/event_source/devices.
type PMU struct {
	Name string
	// Type is the perf_event_attr.type value of the PMU.
	Type uint32
	// Core is true for a CPU's core PMU: "cpu", or on hybrid x86
	// "cpu_core" and "cpu_atom", or an Arm core PMU.
	Core bool
	// CPUs is the PMU's cpus or cpumask file ("0-15"), empty when absent.
	CPUs string
	// Formats maps a term name (event, umask, cmask, ...) to its bit layout
	// from the PMU's format/ folder.
	Formats map[string]format
	// Aliases maps the lower-cased name of each file of the PMU's events/
	// folder to the alias it defines.
	Aliases map[string]alias
	// Caps holds the files of the PMU's caps/ folder (pmu_name,
	// max_precise, branches, ...).
	Caps map[string]string
	// Counters is the PMU's counter budget, for core PMUs where known.
	Counters Counters
}

// Counters is how many events a core PMU counts at once without
// multiplexing.
type Counters struct {
	// Known is false when perfbench cannot tell; Generic and Fixed are then
	// meaningless.
	Known bool
	// Generic is the number of general-purpose counters per logical CPU.
	Generic int
	// Fixed is the number of fixed-function counters (Intel: instructions,
	// cycles, ref-cycles, and on newer cores topdown slots).
	Fixed int
	// Source says where the numbers came from ("cpuid leaf 0xa",
	// "cpuinfo flag perfctr_core", ...).
	Source string
}

func (c Counters) String() string {
	if !c.Known {
		return "unknown"
	}
	return fmt.Sprintf("%d generic + %d fixed", c.Generic, c.Fixed)
}

// format is the bit layout of one PMU term, from a format/ file such as
// "config:0-7,32-35".
type format struct {
	// Spec is the file's text, trimmed.
	Spec string
	// Word is 0, 1 or 2 for config, config1, config2.
	Word int
	// Bits are the ranges the value's bits go to, lowest value bits first.
	Bits []bitRange
}

// bitRange is an inclusive range of bits of a config word.
type bitRange struct{ Lo, Hi int }

// Width is the number of value bits the format holds.
func (f format) Width() int {
	n := 0
	for _, r := range f.Bits {
		n += r.Hi - r.Lo + 1
	}
	return n
}

// alias is a named event from a PMU's events/ folder.
type alias struct {
	Name string
	// Terms is the file's text: "event=0x3c,umask=0x00".
	Terms string
	// Unit and Scale come from NAME.unit and NAME.scale when present.
	Unit  string
	Scale float64
}

// wordNames are the config words a format may name.
var wordNames = []string{"config", "config1", "config2"}

// parseFormat parses a format/ file: "config:0-7,32-35", "config1:0-63",
// "config:21".
func parseFormat(spec string) (format, error) {
	spec = strings.TrimSpace(spec)
	f := format{Spec: spec}
	word, bits, ok := strings.Cut(spec, ":")
	if !ok {
		return f, fmt.Errorf("format %q has no config word (want config:LO-HI)", spec)
	}
	switch word {
	case "config":
		f.Word = 0
	case "config1":
		f.Word = 1
	case "config2":
		f.Word = 2
	default:
		return f, fmt.Errorf("format %q names config word %q (want config, config1 or config2)", spec, word)
	}
	used := uint64(0)
	for _, part := range strings.Split(bits, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		l, err := strconv.Atoi(lo)
		if err != nil {
			return f, fmt.Errorf("format %q: bad bit %q", spec, lo)
		}
		h := l
		if isRange {
			if h, err = strconv.Atoi(hi); err != nil {
				return f, fmt.Errorf("format %q: bad bit %q", spec, hi)
			}
		}
		if l < 0 || h > 63 || l > h {
			return f, fmt.Errorf("format %q: bit range %q outside 0-63", spec, part)
		}
		for b := l; b <= h; b++ {
			if used&(1<<b) != 0 {
				return f, fmt.Errorf("format %q: bit %d used twice", spec, b)
			}
			used |= 1 << b
		}
		f.Bits = append(f.Bits, bitRange{l, h})
	}
	return f, nil
}

// apply writes value into the format's bits of words, clearing what was
// there. It fails when value does not fit.
func (f format) apply(words *[3]uint64, value uint64) error {
	if w := f.Width(); w < 64 && value>>w != 0 {
		return fmt.Errorf("value %#x does not fit in %d bits (%s)", value, w, f.Spec)
	}
	v := value
	for _, r := range f.Bits {
		n := r.Hi - r.Lo + 1
		var mask uint64
		if n == 64 {
			mask = ^uint64(0)
		} else {
			mask = (uint64(1)<<n - 1) << r.Lo
		}
		words[f.Word] = words[f.Word]&^mask | (v<<r.Lo)&mask
		if n == 64 {
			v = 0
		} else {
			v >>= n
		}
	}
	return nil
}

// CorePMUs returns the core PMUs: one on most machines, two (cpu_core and
// cpu_atom) on hybrid Intel CPUs, none in a VM without a virtual PMU.
func (s *System) CorePMUs() []*PMU {
	if s == nil {
		return nil
	}
	var out []*PMU
	for _, p := range s.PMUs {
		if p.Core {
			out = append(out, p)
		}
	}
	return out
}

// HasHardwarePMU reports whether the machine has a core PMU at all. Without
// one, generic hardware, cache and raw events fail to open (ENOENT).
func (s *System) HasHardwarePMU() bool { return len(s.CorePMUs()) > 0 }

// Hybrid reports whether the CPU has more than one core PMU.
func (s *System) Hybrid() bool { return len(s.CorePMUs()) > 1 }

// PMU returns the PMU called name, or nil.
func (s *System) PMU(name string) *PMU {
	if s == nil {
		return nil
	}
	for _, p := range s.PMUs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// PMUNames returns the names of the PMUs, sorted.
func (s *System) PMUNames() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.PMUs))
	for i, p := range s.PMUs {
		out[i] = p.Name
	}
	return out
}

// isCorePMU reports whether a PMU directory is a CPU's core PMU, the way perf
// tells: "cpu", the hybrid x86 "cpu_*" PMUs, and Arm core PMUs (which list
// their CPUs in a cpus file).
func isCorePMU(name string, hasCPUsFile bool) bool {
	switch {
	case name == "cpu":
		return true
	case name == "cpu_core" || name == "cpu_atom" || name == "cpu_lowpower":
		return true
	case hasCPUsFile && (strings.HasPrefix(name, "armv") || strings.HasPrefix(name, "arm_")):
		return true
	}
	return false
}

// setBudget fills the counter budget of the core PMUs: from CPUID when
// reading the real machine on x86 (exact for the CPU the kernel sees), else
// from /proc/cpuinfo facts where they decide it (AMD), else unknown.
func (s *System) setBudget(real bool) {
	for _, p := range s.CorePMUs() {
		if real {
			if c, ok := cpuidCounters(s.CPU.Vendor, p.CPUs); ok {
				p.Counters = c
				continue
			}
		}
		p.Counters = cpuinfoCounters(s.CPU)
	}
}

// cpuinfoCounters derives the budget from /proc/cpuinfo where it can: AMD
// family 15h and later with the perfctr_core flag have 6 general-purpose
// core counters, earlier AMD CPUs 4; AMD has no fixed counters. Intel's
// counts are only in CPUID.
func cpuinfoCounters(c cpuInfo) Counters {
	if c.Vendor == "AuthenticAMD" || c.Vendor == "HygonGenuine" {
		if c.HasFlag("perfctr_core") {
			return Counters{Known: true, Generic: 6, Fixed: 0, Source: "cpuinfo flag perfctr_core"}
		}
		return Counters{Known: true, Generic: 4, Fixed: 0, Source: "cpuinfo: AMD without perfctr_core"}
	}
	return Counters{}
}

// decodeIntelLeafA decodes CPUID leaf 0xA (architectural performance
// monitoring): EAX[7:0] version, EAX[15:8] general-purpose counters per
// logical CPU, EDX[4:0] fixed counters (version 2 and later).
func decodeIntelLeafA(eax, edx uint32) Counters {
	version := eax & 0xff
	if version == 0 {
		return Counters{}
	}
	c := Counters{Known: true, Generic: int(eax >> 8 & 0xff), Source: "cpuid leaf 0xa"}
	if version > 1 {
		c.Fixed = int(edx & 0x1f)
	}
	return c
}

// decodeAMDCounters decodes AMD's counter count: CPUID 0x80000022 EBX[3:0]
// when PerfMonV2 is present, else 6 with PerfCtrExtCore (0x80000001
// ECX[23]), else 4.
func decodeAMDCounters(perfMonV2 bool, ebx22, ecx81 uint32) Counters {
	if perfMonV2 && ebx22&0xf != 0 {
		return Counters{Known: true, Generic: int(ebx22 & 0xf), Source: "cpuid leaf 0x80000022"}
	}
	if ecx81&(1<<23) != 0 {
		return Counters{Known: true, Generic: 6, Source: "cpuid PerfCtrExtCore"}
	}
	return Counters{Known: true, Generic: 4, Source: "cpuid (legacy AMD counters)"}
}

// firstCPU returns the first CPU of a cpu list such as "0-7,16-23".
func firstCPU(list string) (int, bool) {
	list = strings.TrimSpace(list)
	if list == "" {
		return 0, false
	}
	first, _, _ := strings.Cut(list, ",")
	first, _, _ = strings.Cut(first, "-")
	n, err := strconv.Atoi(first)
	return n, err == nil
}
