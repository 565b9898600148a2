package perfevent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// midrPath is where arm64 kernels publish the first CPU's MIDR_EL1.
const midrPath = "sys/devices/system/cpu/cpu0/regs/identification/midr_el1"

// ReadCPUID returns this machine's cpuid string in perf's format, read
// under root ("/" for this machine; tests use fixture trees): on x86
// VENDOR-FAMILY-MODEL-STEPPING from /proc/cpuinfo, family in decimal and
// model and stepping in upper-case hex ("GenuineIntel-6-8F-8",
// "AuthenticAMD-25-11-1"); on arm64 the MIDR_EL1 register from sysfs as
// 0x%016x ("0x00000000413fd0c1").
func ReadCPUID(root string) (string, error) {
	if b, err := os.ReadFile(filepath.Join(root, midrPath)); err == nil {
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 0, 64)
		if err != nil {
			return "", fmt.Errorf("read cpu identity from %s: %q is not a number", filepath.Join(root, midrPath), strings.TrimSpace(string(b)))
		}
		return fmt.Sprintf("0x%016x", v), nil
	}
	b, err := procfs.New(root).ReadFile("cpuinfo")
	if err != nil {
		return "", fmt.Errorf("read cpu identity: %w", err)
	}
	c := parseCPUInfo(b)
	if c.Vendor == "" {
		return "", fmt.Errorf("read cpu identity: cpuinfo has no vendor_id line, and there is no %s", filepath.Join(root, midrPath))
	}
	return fmt.Sprintf("%s-%d-%X-%X", c.Vendor, c.Family, c.Model, c.Stepping), nil
}
