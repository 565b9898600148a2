package cpuset

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAndString(t *testing.T) {
	for _, c := range []struct {
		in, out string
		n       int
	}{
		{"0", "0", 1},
		{"3,1", "1,3", 2},
		{"0-3", "0-3", 4},
		{" 0 - 1 , 4 ", "0-1,4", 3},
		{"0-2,1-4,7,9-10", "0-4,7,9-10", 8},
		{"5-5", "5", 1},
	} {
		s, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if s.String() != c.out || len(s) != c.n {
			t.Errorf("Parse(%q) = %v (%q), want %q of %d CPUs", c.in, s, s.String(), c.out, c.n)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ in, says string }{
		{"", "empty"},
		{"  ", "empty"},
		{"a", `"a" is not a CPU number`},
		{"1,", `"" is not a CPU number`},
		{"-1", `"-1" is not`},
		{"3-1", "runs backwards (write it 1-3)"},
		{"0-", `"0-" is not`},
		{"+1", `"+1" is not`},
		{"9000", "CPU 9000 is beyond 8191"},
	} {
		_, err := Parse(c.in)
		if !errors.Is(err, errSyntax) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line saying %q", c.in, err, c.says)
		}
	}
}

func TestMinus(t *testing.T) {
	a, _ := Parse("0-5")
	b, _ := Parse("1,3-4,9")
	if got := a.Minus(b).String(); got != "0,2,5" {
		t.Errorf("0-5 minus 1,3-4,9 = %s, want 0,2,5", got)
	}
	if !a.Equal(Set{0, 1, 2, 3, 4, 5}) || a.Equal(b) {
		t.Error("Equal")
	}
}
