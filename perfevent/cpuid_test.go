package perfevent

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeCPURoot writes a /proc/cpuinfo (x86) or a midr_el1 file (arm64)
// under a temporary root.
func fakeCPURoot(t *testing.T, cpuinfo, midr string) string {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if cpuinfo != "" {
		write("proc/cpuinfo", cpuinfo)
	}
	if midr != "" {
		write(midrPath, midr)
		write("proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n")
	}
	return root
}

func x86Info(vendor, family, model, stepping string) string {
	return "processor\t: 0\nvendor_id\t: " + vendor + "\ncpu family\t: " + family +
		"\nmodel\t\t: " + model + "\nmodel name\t: a cpu\nstepping\t: " + stepping +
		"\n\nprocessor\t: 1\nvendor_id\t: " + vendor + "\ncpu family\t: 99\nmodel\t\t: 99\nstepping\t: 9\n"
}

// TestReadCPUID makes perf's cpuid string of a machine: x86 from the first
// processor of cpuinfo, model and stepping in hex; arm64 from MIDR_EL1.
func TestReadCPUID(t *testing.T) {
	cases := []struct {
		name, cpuinfo, midr string
		cpuid               string
	}{
		{"sapphire rapids", x86Info("GenuineIntel", "6", "143", "8"), "", "GenuineIntel-6-8F-8"},
		{"ice lake server", x86Info("GenuineIntel", "6", "106", "6"), "", "GenuineIntel-6-6A-6"},
		{"skylake server stepping 4", x86Info("GenuineIntel", "6", "85", "4"), "", "GenuineIntel-6-55-4"},
		{"zen 1", x86Info("AuthenticAMD", "23", "1", "2"), "", "AuthenticAMD-23-1-2"},
		{"zen 2", x86Info("AuthenticAMD", "23", "49", "0"), "", "AuthenticAMD-23-31-0"},
		{"zen 3 model 0x21", x86Info("AuthenticAMD", "25", "33", "0"), "", "AuthenticAMD-25-21-0"},
		{"zen 4", x86Info("AuthenticAMD", "25", "17", "1"), "", "AuthenticAMD-25-11-1"},
		{"zen 5 (this project's VM)", x86Info("AuthenticAMD", "26", "2", "1"), "", "AuthenticAMD-26-2-1"},
		{"neoverse n1 r3p1", "", "0x00000000413fd0c1\n", "0x00000000413fd0c1"},
		{"neoverse v1, short", "", "0x410fd401", "0x00000000410fd401"},
		{"cortex-a72", "", "0x00000000410fd083\n", "0x00000000410fd083"},
	}
	for _, c := range cases {
		id, err := ReadCPUID(fakeCPURoot(t, c.cpuinfo, c.midr))
		if err != nil || id != c.cpuid {
			t.Errorf("%s: ReadCPUID = %q, %v; want %q", c.name, id, err, c.cpuid)
		}
	}
}

func TestReadCPUIDErrors(t *testing.T) {
	if _, err := ReadCPUID(t.TempDir()); err == nil {
		t.Error("no cpuinfo and no midr: no error")
	}
	if _, err := ReadCPUID(fakeCPURoot(t, "processor\t: 0\n", "")); err == nil {
		t.Error("cpuinfo without vendor_id: no error")
	}
	if _, err := ReadCPUID(fakeCPURoot(t, "", "zero\n")); err == nil {
		t.Error("midr that is no number: no error")
	}
}
