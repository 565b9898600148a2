package perfevent

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// cpuidCounters reads the counter budget of the core PMU whose CPUs are cpus
// with CPUID, run on the first of those CPUs (on hybrid CPUs each core type
// answers for itself). It reports false when CPUID is not available or the
// thread could not be moved there.
func cpuidCounters(vendor, cpus string) (Counters, bool) {
	if !haveCPUID {
		return Counters{}, false
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if n, ok := firstCPU(cpus); ok {
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			return Counters{}, false
		}
		var set unix.CPUSet
		set.Set(n)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return Counters{}, false
		}
		defer unix.SchedSetaffinity(0, &old)
	}
	switch vendor {
	case "GenuineIntel":
		if max, _, _, _ := cpuid(0, 0); max < 0xa {
			return Counters{}, false
		}
		eax, _, _, edx := cpuid(0xa, 0)
		c := decodeIntelLeafA(eax, edx)
		return c, c.Known
	case "AuthenticAMD", "HygonGenuine":
		maxExt, _, _, _ := cpuid(0x80000000, 0)
		if maxExt < 0x80000001 {
			return Counters{}, false
		}
		_, _, ecx81, _ := cpuid(0x80000001, 0)
		var v2 bool
		var ebx22 uint32
		if maxExt >= 0x80000022 {
			var eax22 uint32
			eax22, ebx22, _, _ = cpuid(0x80000022, 0)
			v2 = eax22&1 != 0
		}
		return decodeAMDCounters(v2, ebx22, ecx81), true
	}
	return Counters{}, false
}
