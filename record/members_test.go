package record

import (
	"bytes"
	"slices"
	"testing"
)

// TestParseTrimsLabels checks that a label with white space at an end
// is read as the same label without it, as a CSV table's cells are: a
// Record of "v1 " is one of "v1", not a column of its own that prints
// alike; a label of white space alone is no label.
func TestParseTrimsLabels(t *testing.T) {
	full, err := Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(data []byte, old, new string) []byte {
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("%s not in the Record", old)
		}
		return bytes.Replace(data, []byte(old), []byte(new), 1)
	}
	spaced := edit(full, `"version": "v1"`, `"version": "v1 "`)
	spaced = edit(spaced, `"step": "point"`, `"step": "\tpoint  "`)
	spaced = edit(spaced, `"host": "h\"1"`, `"host": " h\"1"`)
	for _, sel := range selections {
		r, err := NewSelective(sel).Parse(spaced)
		if err != nil {
			t.Fatal(err)
		}
		if r.Version != "v1" || r.Step != "point" || r.Host != `h"1` {
			t.Errorf("%+v: read version %q, step %q, host %q; want v1, point, h\"1", sel, r.Version, r.Step, r.Host)
		}
	}
	if _, err := Parse(edit(full, `"version": "v1"`, `"version": "  "`)); err == nil {
		t.Error("a version of spaces alone read")
	}
}

// TestMemberWarnings checks the warnings on member names: none for the
// members of a Record, in any case; one for each unknown name, with the
// member it is nearest to; one for a member given more than once.
func TestMemberWarnings(t *testing.T) {
	texts := func(names ...string) []string {
		var out []string
		for _, w := range memberWarnings(names) {
			out = append(out, w.Text)
		}
		return out
	}
	if got := texts(memberNamesOf...); got != nil {
		t.Errorf("a Record's own members: %q", got)
	}
	if got := texts("OPS", "Schema", "warnings"); got != nil {
		t.Errorf("members in another case: %q", got)
	}
	want := []string{
		`the Record has a member "opps", which is not a Record member: it was not read (did you mean "ops"?)`,
		`the Record has a member "zzz", which is not a Record member: it was not read`,
		`the Record gives its member "ops" more than once: the values were read one over the other, the last one winning; keep one`,
	}
	if got := texts("ops", "opps", "zzz", "Ops", "ops"); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
