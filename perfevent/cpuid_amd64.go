package perfevent

const haveCPUID = true

// cpuid executes the CPUID instruction on the current CPU.
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
