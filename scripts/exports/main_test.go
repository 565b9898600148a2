package main

import (
	"bytes"
	"testing"
)

// TestFixture: testdata/mod is a module whose packages use each other's
// names by name, through a method or a field of a returned value, by instantiating a
// generic function, only in tests, and through a test helper package; its
// internal/in and cmd/tool have unused exported names that are not listed
// (only the public surface is checked).
func TestFixture(t *testing.T) {
	var out bytes.Buffer
	n, err := run(&out, "testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"a                              2  OnlyTested Unused\n" +
		"b                              1  Run\n" +
		"h                              1  Unhelpful\n" +
		"exports: 4 exported names in 3 packages used by no other package (record is public)\n"
	if n != 4 || out.String() != want {
		t.Errorf("%d names listed:\n%s\nwant 4:\n%s", n, out.String(), want)
	}
}
