package plan

import (
	"strconv"
	"strings"
	"testing"
)

// TestNestingBound: a plan whose arrays nest 3,000,000 deep is refused
// with the bound and its line (the decoder exhausted the stack: "fatal
// error: stack overflow", which no recover catches); one at the bound
// reaches the decoder; brackets in strings and comments do not count.
func TestNestingBound(t *testing.T) {
	deep := func(n int) string {
		return "# plan\nname = \"p\"\nx = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n"
	}
	_, err := parse("deep.toml", []byte(deep(3_000_000)))
	if err == nil || !strings.Contains(err.Error(), "deep.toml:3") || !strings.Contains(err.Error(), "bound of "+strconv.Itoa(maxNesting)) {
		t.Errorf("3,000,000 levels: %v, want the bound and line 3", err)
	}
	_, err = parse("edge.toml", []byte(deep(maxNesting)))
	if err == nil || strings.Contains(err.Error(), "bound of") {
		t.Errorf("%d levels: %v, want the decoder's own verdict (x is no key of a plan)", maxNesting, err)
	}
	for _, c := range []struct {
		src   string
		depth int
		line  int
	}{
		{"a = \"[[[[\"\nb = [1, [2]]\n", 2, 2},
		{"a = '{{{{' # [[[[\nb = {c = [1]}\n", 2, 2},
		{"a = \"\"\"\n[[[\n\"\"\"\"\n[t]\n", 1, 4},
		{"a = '''x'''''\nb = [[]]\n", 2, 2},
		{"a = \"\\\"[[\"\n[[s]]\n", 2, 2},
	} {
		if d, l := nesting(c.src); d != c.depth || l != c.line {
			t.Errorf("%q: depth %d on line %d, want %d on line %d", c.src, d, l, c.depth, c.line)
		}
	}
}
