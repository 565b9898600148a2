package main

import (
	"bytes"
	"testing"
)

// TestFixture: testdata/mod has comments that name what exists and what
// does not, prose and examples that look like names, and a name only
// Linux's files declare (a.OnLinux, missing on darwin only: not listed).
func TestFixture(t *testing.T) {
	var out bytes.Buffer
	n, err := run(&out, "testdata/mod", []string{"linux/amd64", "darwin/arm64"}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"a/a.go:1: package a: b.Gone\n" +
		"a/a.go:9: Options.Rate: Options.Burst\n" +
		"a/a.go:11: Options.limit: Options.Limit\n" +
		"a/a.go:15: catalog: Catalog (is catalog)\n" +
		"a/a.go:29: portable: ParseThing, b.NewThing\n" +
		"a/a.go:33: parseThing: Options.cfg.Gone\n" +
		"a/a_linux.go:3: OnLinux: Options.Gone\n" +
		"b/b.go:16: newThing: NewThing\n" +
		"b/other.go:1: package b: Package c\n" +
		"docnames: 9 doc comments name identifiers that do not exist\n"
	if n != 9 || out.String() != want {
		t.Errorf("%d listed:\n%s\nwant 9:\n%s", n, out.String(), want)
	}
}
