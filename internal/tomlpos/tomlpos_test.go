package tomlpos

import (
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestIndexPlan is a plan's shapes: comments, a multi-line string whose
// text looks like keys, a multi-line array with comments, arrays of tables
// and a table of the last element, quoted dotted headers, inline tables.
func TestIndexPlan(t *testing.T) {
	l := Index(`# comment
a = 1
s = """
x = 2
"""
[t]
b = [
  "one", # c
  'two',
]
[[arr]]
c = 1
[[arr]]
c = 2
[arr.sub]
d = "}" # ]
[q."x.y"]
e = { f = 1 }
g = 3
`)
	want := Lines{"a": 2, "s": 3, "t": 6, "t.b": 7, "t.b=one": 8, "t.b=two": 9, "arr[0]": 11, "arr[0].c": 12,
		"arr[1]": 13, "arr[1].c": 14, "arr[1].sub": 15, "arr[1].sub.d": 16, "q.x.y": 17, "q.x.y.e": 18, "q.x.y.g": 19}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("index:\n got %v\nwant %v", l, want)
	}
	if n := l.Line("arr[1].sub.missing"); n != 15 {
		t.Errorf("line of a missing key = %d, want its table's 15", n)
	}
}

// TestIndexHosts is a hosts file's shapes: a multi-line string holding a
// [[host]] header, an array whose comment holds a ], quoted keys, a dotted
// key with a literal quoted part.
func TestIndexHosts(t *testing.T) {
	l := Index(`top = 1
[[host]]
name = "a"
notes = """
[[host]]
name = "fake"
"""
list = ["x", # comment ]
  "y"]
[host.basedirs]
"1.0" = "/a"
[[host]]
name = 'b'
basedirs.'2.0' = "/b"
`)
	for path, want := range map[string]int{
		"top": 1, "host[0]": 2, "host[0].name": 3, "host[0].notes": 4, "host[0].list": 8,
		"host[0].list=x": 8, "host[0].list=y": 9, "host[0].basedirs": 10, "host[0].basedirs.1.0": 11,
		"host[1]": 12, "host[1].name": 13, "host[1].basedirs.2.0": 14,
		"host[1].port": 12, "host[2]": 0,
	} {
		if got := l.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
}

// TestIndexNestedArrays: the elements of an array of tables inside another
// are numbered within their parent element, as the decoder builds them
// (a[1] has one b, a[1].b[0]). internal/remote's copy of the index numbered
// them across the document (a[1].b[2]); plan's did as here.
func TestIndexNestedArrays(t *testing.T) {
	src := `[[a]]
[[a.b]]
x = 1
[[a.b]]
x = 2
[[a]]
[[a.b]]
x = 3
`
	var doc struct {
		A []struct {
			B []struct{ X int }
		}
	}
	if _, err := toml.Decode(src, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.A) != 2 || len(doc.A[1].B) != 1 || doc.A[1].B[0].X != 3 {
		t.Fatalf("decoded %+v, want a[1].b[0].x = 3", doc)
	}
	l := Index(src)
	for path, want := range map[string]int{"a[0]": 1, "a[0].b[0]": 2, "a[0].b[1].x": 5, "a[1]": 6, "a[1].b[0]": 7, "a[1].b[0].x": 8} {
		if got := l.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
	if _, ok := l["a[1].b[2]"]; ok {
		t.Errorf("a[1].b[2] indexed: elements numbered across parents")
	}
}

// TestIndexEscapes: quoted keys and strings in arrays are indexed as the
// decoder gives them. plan's copy of the index kept the byte after a
// backslash ("a\tb" as "atb", "\u00e9" as "u00e9"), so a step or option
// spelt with an escape had no line; internal/remote's unquoted them.
func TestIndexEscapes(t *testing.T) {
	src := `"k\u0065y" = 1
list = [
  "a\tb", "\u00e9", 'c\d',
  "q\"uote", "\U0001F600\\",
  "\x41\e",
]
`
	var doc map[string]any
	if _, err := toml.Decode(src, &doc); err != nil {
		t.Fatal(err)
	}
	l := Index(src)
	if _, ok := doc["key"]; !ok || l["key"] != 1 {
		t.Errorf("quoted key: decoded %v, line %d, want key on line 1", doc, l["key"])
	}
	wantLine := []int{3, 3, 3, 4, 4, 5}
	list, _ := doc["list"].([]any)
	if len(list) != len(wantLine) {
		t.Fatalf("decoded list %q, want %d strings", list, len(wantLine))
	}
	for i, s := range list {
		if got := l["list="+s.(string)]; got != wantLine[i] {
			t.Errorf("string %q: line %d, want %d (index %v)", s, got, wantLine[i], l)
		}
	}
}

// TestIndexFirstLineKeeps: a path two lines name keeps the first line
// (here a quoted key with a dot and a table header, which join to the same
// path). plan's copy did so for table headers and strings, remote's only
// for strings.
func TestIndexFirstLineKeeps(t *testing.T) {
	l := Index(`"x.y" = 1
[x.y]
z = 2
`)
	if l["x.y"] != 1 || l["x.y.z"] != 3 {
		t.Errorf("index %v, want x.y on line 1 and x.y.z on 3", l)
	}
}

// TestIndexBroken: input the decoder refuses is indexed as far as it reads
// and never panics. plan's copy panicked on an unclosed quoted key.
func TestIndexBroken(t *testing.T) {
	for src, want := range map[string]int{
		`"abc = 1`: 2, `["a`: 2, `[[a`: 2, `[ ]`: 2, `= 1`: 2, `a = "b`: 2, `"\u12" = 1`: 2,
		// An array left open takes the lines after it as its own.
		`a = [ "x`: 0, `k = ["\`: 0,
	} {
		if n := Index(src + "\nok = 1\n").Line("ok"); n != want {
			t.Errorf("Index(%q): ok on line %d, want %d", src, n, want)
		}
	}
}

// FuzzIndex: any input is indexed without panicking, to lines the input
// has.
func FuzzIndex(f *testing.F) {
	for _, s := range []string{"a = 1\n[t]\nb = [\"x\",\n'y']\n", "[[a]]\n[[a.b]]\n[a.b.c]\nd = \"\\u00e9\"\n", "s = '''\n[x]\n'''\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		lines := strings.Count(src, "\n") + 1
		for path, n := range Index(src) {
			if n < 1 || n > lines {
				t.Errorf("%q on line %d of %d", path, n, lines)
			}
		}
	})
}

// TestPath: a decoder key, which has no element numbers, is found as the
// first element of its array of tables that has it.
func TestPath(t *testing.T) {
	src := `top = 1
[[host]]
name = "a"
[[host]]
name = "b"
port = 22
[host.basedirs]
"1.0" = "/x"
`
	md, err := toml.Decode(src, new(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	l := Index(src)
	got := map[string]string{}
	for _, k := range md.Keys() {
		got[k.String()] = l.Path(k)
	}
	want := map[string]string{"top": "top", "host": "host[0]", "host.name": "host[0].name", "host.port": "host[1].port",
		"host.basedirs": "host[1].basedirs", `host.basedirs."1.0"`: "host[1].basedirs.1.0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths:\n got %v\nwant %v", got, want)
	}
	if p := l.Path([]string{"nowhere", "x"}); p != "nowhere.x" {
		t.Errorf("Path of a key not in the document = %q, want the parts joined", p)
	}
}
