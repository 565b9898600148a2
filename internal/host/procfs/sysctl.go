package procfs

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Sysctl reads the kernel setting name, as sysctl(8) spells it
// ("kernel.osrelease"), from root/proc/sys, without surrounding space.
func (f FS) Sysctl(name string) (string, error) {
	b, err := readFile(f.path("sys", strings.ReplaceAll(name, ".", "/")))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return string(bytes.TrimSpace(b)), nil
}

// SysctlInt reads an integer kernel setting ("kernel.ns_last_pid").
func (f FS) SysctlInt(name string) (int, error) {
	s, err := f.Sysctl(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number: %w", name, s, errFormat)
	}
	return n, nil
}

// PerfEventParanoid reads kernel.perf_event_paranoid: who may count what
// without CAP_PERFMON (-1 anything, 0 no raw tracepoints, 1 no CPU-wide
// events either, 2 no kernel code either; Debian's kernels add 3, nothing
// at all). The file is missing on a kernel without perf events.
func (f FS) PerfEventParanoid() (int, error) {
	return f.SysctlInt("kernel.perf_event_paranoid")
}
