package demo

import (
	"os"
	"reflect"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	// Expectations worked out by hand from the ordering rules of Debian
	// Policy 5.6.12 (and checked with dpkg --compare-versions).
	tests := []struct {
		a, b string
		want int
	}{
		{"1:10.11.18-0+deb12u1", "1:10.11.19-0+deb12u1", -1},
		{"1:10.11.19-0+deb12u1", "1:10.11.19-0+deb12u1", 0},
		{"1:10.11.19-0+deb12u2", "1:10.11.19-0+deb12u1", 1},
		{"1:10.11.9-0+deb12u1", "1:10.11.18-0+deb12u1", -1}, // numbers, not text
		{"1:10.11.6-0+deb12u1", "11.4.3-1", 1},              // the epoch wins
		{"10.11.06", "10.11.6", 0},                          // leading zeros
		{"1.0~rc1", "1.0", -1},                              // ~ sorts before the end
		{"1.0~rc1", "1.0~rc2", -1},
		{"1.0~~", "1.0~", -1},
		{"1.0+b1", "1.0", 1},                     // + after the end
		{"1.0a", "1.0+", -1},                     // letters before other characters
		{"1.0-1", "1.0", 1},                      // any revision after none
		{"1:11.4.5-1~bpo12+1", "1:11.4.5-1", -1}, // a backport sorts before its source
		{"2.1-3", "2.1-10", -1},
		{"0:1.2", "1.2", 0}, // epoch 0 is no epoch
	}
	for _, tt := range tests {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := compareVersions(tt.b, tt.a); got != -tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

func TestUpstream(t *testing.T) {
	tests := map[string]string{
		"1:10.11.18-0+deb12u1":       "10.11.18",
		"10.11.19-MariaDB-0+deb12u1": "10.11.19",
		"11.4.3-MariaDB":             "11.4.3",
		"1:11.4.5-1~bpo12+1":         "11.4.5",
		"8.0.39":                     "8.0.39",
		"10.11.":                     "10.11",
		"MariaDB":                    "",
	}
	for in, want := range tests {
		if got := upstream(in); got != want {
			t.Errorf("Upstream(%q) = %q, want %q", in, got, want)
		}
	}
	if got := series("10.11.18"); got != "10.11" {
		t.Errorf("Series(10.11.18) = %q", got)
	}
}

func TestParseMadisonBookworm(t *testing.T) {
	// Typed from `apt-cache madison mariadb-server-core` on the Debian 12
	// development machine.
	data, err := os.ReadFile("testdata/madison-bookworm.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := parseMadison(data, serverPackage)
	want := []string{"1:10.11.19-0+deb12u1", "1:10.11.18-0+deb12u1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseMadison = %q, want %q", got, want)
	}
	if v := pickOther("10.11.19", got); v != "1:10.11.18-0+deb12u1" {
		t.Errorf("installed 10.11.19: PickOther = %q, want 1:10.11.18-0+deb12u1", v)
	}
	if v := pickOther("10.11.18", got); v != "1:10.11.19-0+deb12u1" {
		t.Errorf("installed 10.11.18: PickOther = %q, want 1:10.11.19-0+deb12u1", v)
	}
	if v := pickOther("10.11.17", got); v != "1:10.11.19-0+deb12u1" {
		t.Errorf("installed 10.11.17: PickOther = %q, want the newest, 1:10.11.19-0+deb12u1", v)
	}
}

func TestParseMadisonMixed(t *testing.T) {
	// Made by hand: two architectures, an updates suite with a second
	// revision of one release, a backport of another series, a source
	// line, another package and a notice.
	data, err := os.ReadFile("testdata/madison-mixed.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := parseMadison(data, serverPackage)
	want := []string{"1:10.11.20-0+deb12u1", "1:10.11.19-0+deb12u2", "1:10.11.19-0+deb12u1", "1:11.4.5-1~bpo12+1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseMadison = %q, want %q", got, want)
	}
	tests := []struct{ installed, want string }{
		{"10.11.19", "1:10.11.20-0+deb12u1"},
		// Not another revision of the installed release: another release.
		{"10.11.20", "1:10.11.19-0+deb12u2"},
		{"10.11.18", "1:10.11.20-0+deb12u1"},
		// The backport's series has no other release on offer.
		{"11.4.5", ""},
		{"10.6.21", ""},
	}
	for _, tt := range tests {
		if v := pickOther(tt.installed, got); v != tt.want {
			t.Errorf("installed %s: PickOther = %q, want %q", tt.installed, v, tt.want)
		}
	}
	if got := parseMadison(nil, serverPackage); len(got) != 0 {
		t.Errorf("no output: %q", got)
	}
}
