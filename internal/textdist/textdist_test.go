package textdist

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0},
		{"stat", "stat", 0},
		{"sta", "stat", 1},  // insertion
		{"stta", "stat", 1}, // adjacent swap
		{"task-clok", "task-clock", 1},
		{"kitten", "sitting", 3}, // two substitutions, one insertion
		{"ca", "abc", 3},         // OSA, not full Damerau: 3, not 2
		{"", "abc", 3},
		{strings.Repeat("x", 300), strings.Repeat("x", 300), 0},
		{strings.Repeat("x", 300), strings.Repeat("y", 300), 300},
	} {
		if got := Distance(tc.a, tc.b); got != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
		if got := Distance(tc.b, tc.a); got != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", tc.b, tc.a, got, tc.d)
		}
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"stat", "start", "run", "report"}
	for _, tc := range []struct {
		s     string
		limit int
		want  string
	}{
		{"stta", 2, "stat"},
		{"rnu", 2, "run"},
		{"repotr", 2, "report"},
		{"xyzzy", 2, ""},
		{"sta", 1, "stat"},   // stat (1) beats start (2)
		{"star", 1, "start"}, // stat and start are both 1 away: "start" sorts first
	} {
		if got := Nearest(tc.s, cands, tc.limit); got != tc.want {
			t.Errorf("Nearest(%q, %d) = %q, want %q", tc.s, tc.limit, got, tc.want)
		}
	}
}
