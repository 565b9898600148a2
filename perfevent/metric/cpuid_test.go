package metric

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeRoot writes a /proc/cpuinfo (x86) or a midr_el1 file (arm64) under a
// temporary root.
func fakeRoot(t *testing.T, cpuinfo, midr string) string {
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

func TestReadCPUIDAndLookup(t *testing.T) {
	cases := []struct {
		name, cpuinfo, midr string
		cpuid, set          string
	}{
		{"sapphire rapids", x86Info("GenuineIntel", "6", "143", "8"), "", "GenuineIntel-6-8F-8", "sapphirerapids"},
		{"ice lake server", x86Info("GenuineIntel", "6", "106", "6"), "", "GenuineIntel-6-6A-6", "icelakex"},
		{"skylake server stepping 4", x86Info("GenuineIntel", "6", "85", "4"), "", "GenuineIntel-6-55-4", "skylakex"},
		{"cascade lake: same model, stepping 7", x86Info("GenuineIntel", "6", "85", "7"), "", "GenuineIntel-6-55-7", "cascadelakex"},
		{"alder lake: perf has tables, perfbench no set", x86Info("GenuineIntel", "6", "151", "2"), "", "GenuineIntel-6-97-2", ""},
		{"zen 1 is not taken by the zen 2 line", x86Info("AuthenticAMD", "23", "1", "2"), "", "AuthenticAMD-23-1-2", ""},
		{"zen 2", x86Info("AuthenticAMD", "23", "49", "0"), "", "AuthenticAMD-23-31-0", "amdzen2"},
		{"zen 3", x86Info("AuthenticAMD", "25", "1", "1"), "", "AuthenticAMD-25-1-1", "amdzen3"},
		{"zen 3 model 0x21", x86Info("AuthenticAMD", "25", "33", "0"), "", "AuthenticAMD-25-21-0", "amdzen3"},
		{"zen 4", x86Info("AuthenticAMD", "25", "17", "1"), "", "AuthenticAMD-25-11-1", "amdzen4"},
		{"zen 5 (this project's VM)", x86Info("AuthenticAMD", "26", "2", "1"), "", "AuthenticAMD-26-2-1", "amdzen5"},
		{"neoverse n1 r3p1", "", "0x00000000413fd0c1\n", "0x00000000413fd0c1", "neoverse-n1"},
		{"neoverse v1", "", "0x410fd401", "0x00000000410fd401", "neoverse-v1"},
		{"neoverse v2 shares the n2 tables", "", "0x00000000410fd4f0\n", "0x00000000410fd4f0", "neoverse-n2-v2"},
		{"cortex-a72: no set", "", "0x00000000410fd083\n", "0x00000000410fd083", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := ReadCPUID(fakeRoot(t, c.cpuinfo, c.midr))
			if err != nil {
				t.Fatal(err)
			}
			if id != c.cpuid {
				t.Fatalf("ReadCPUID = %q, want %q", id, c.cpuid)
			}
			s := Lookup(id)
			got := ""
			if s != nil {
				got = s.Name
			}
			if got != c.set {
				t.Errorf("Lookup(%s) = %q, want %q", id, got, c.set)
			}
		})
	}
}

func TestReadCPUIDErrors(t *testing.T) {
	if _, err := ReadCPUID(t.TempDir()); err == nil {
		t.Error("no cpuinfo and no midr: no error")
	}
	if _, err := ReadCPUID(fakeRoot(t, "processor\t: 0\n", "")); err == nil {
		t.Error("cpuinfo without vendor_id: no error")
	}
	if _, err := ReadCPUID(fakeRoot(t, "", "zero\n")); err == nil {
		t.Error("midr that is no number: no error")
	}
}

// The x86 rules of perf's strcmp_cpuid_str: a pattern with a stepping needs
// a cpuid with one; a pattern without one ignores the cpuid's; the match
// must cover the whole (shortened) cpuid.
func TestX86Matches(t *testing.T) {
	cases := []struct {
		pattern, cpuid string
		want           bool
	}{
		{"GenuineIntel-6-55-[01234]", "GenuineIntel-6-55-4", true},
		{"GenuineIntel-6-55-[01234]", "GenuineIntel-6-55-5", false},
		{"GenuineIntel-6-55-[01234]", "GenuineIntel-6-55", false},
		{"GenuineIntel-6-8F", "GenuineIntel-6-8F-0", true},
		{"GenuineIntel-6-8F", "GenuineIntel-6-8F", true},
		{"GenuineIntel-6-8F", "GenuineIntel-6-8F1-0", false},
		{"GenuineIntel-6-(7D|7E|A7)", "GenuineIntel-6-A7-1", true},
		{"AuthenticAMD-25-([245][[:xdigit:]]|[[:xdigit:]])", "AuthenticAMD-25-11-0", false},
		{"AuthenticAMD-25-[[:xdigit:]]+", "AuthenticAMD-25-11-0", true},
	}
	for _, c := range cases {
		if got := x86Matches(c.pattern, c.cpuid); got != c.want {
			t.Errorf("x86Matches(%q, %q) = %v, want %v", c.pattern, c.cpuid, got, c.want)
		}
	}
}

// strcmp_cpuid_str in the Neoverse N2/V2 expressions: the same part at a
// revision at least the table's.
func TestMIDRMatches(t *testing.T) {
	cases := []struct {
		table, cpuid string
		want         bool
	}{
		{"0x410fd493", "0x00000000410fd493", true},  // N2 r0p3
		{"0x410fd493", "0x00000000410fd490", false}, // N2 r0p0
		{"0x410fd493", "0x00000000411fd490", true},  // N2 r1p0
		{"0x410fd490", "0x00000000410fd4f0", false}, // V2 is another part
		{"0x00000000410fd0c0", "0x00000000413fd0c1", true},
	}
	for _, c := range cases {
		if got := midrMatches(c.table, c.cpuid); got != c.want {
			t.Errorf("midrMatches(%s, %s) = %v, want %v", c.table, c.cpuid, got, c.want)
		}
	}
}
