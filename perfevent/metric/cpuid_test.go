package metric

import "testing"

// TestLookup chooses perf's tables for cpuid strings as perf's mapfile
// does (perfevent.ReadCPUID makes them of a machine).
func TestLookup(t *testing.T) {
	cases := []struct {
		name       string
		cpuid, set string
	}{
		{"sapphire rapids", "GenuineIntel-6-8F-8", "sapphirerapids"},
		{"ice lake server", "GenuineIntel-6-6A-6", "icelakex"},
		{"skylake server stepping 4", "GenuineIntel-6-55-4", "skylakex"},
		{"cascade lake: same model, stepping 7", "GenuineIntel-6-55-7", "cascadelakex"},
		{"alder lake: perf has tables, perfbench no set", "GenuineIntel-6-97-2", ""},
		{"zen 1 is not taken by the zen 2 line", "AuthenticAMD-23-1-2", ""},
		{"zen 2", "AuthenticAMD-23-31-0", "amdzen2"},
		{"zen 3", "AuthenticAMD-25-1-1", "amdzen3"},
		{"zen 3 model 0x21", "AuthenticAMD-25-21-0", "amdzen3"},
		{"zen 4", "AuthenticAMD-25-11-1", "amdzen4"},
		{"zen 5 (this project's VM)", "AuthenticAMD-26-2-1", "amdzen5"},
		{"neoverse n1 r3p1", "0x00000000413fd0c1", "neoverse-n1"},
		{"neoverse v1", "0x00000000410fd401", "neoverse-v1"},
		{"neoverse v2 shares the n2 tables", "0x00000000410fd4f0", "neoverse-n2-v2"},
		{"cortex-a72: no set", "0x00000000410fd083", ""},
	}
	for _, c := range cases {
		s := Lookup(c.cpuid)
		got := ""
		if s != nil {
			got = s.Name
		}
		if got != c.set {
			t.Errorf("%s: Lookup(%s) = %q, want %q", c.name, c.cpuid, got, c.set)
		}
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
