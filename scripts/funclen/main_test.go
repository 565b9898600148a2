package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// body is a function body of n lines in all, from func to the closing
// brace.
func body(head string, n int) string {
	return head + " {\n" + strings.Repeat("\t_ = 0\n", n-2) + "}\n"
}

// TestLimit writes a tree with functions of 120 and 121 lines, where only
// the non-test code outside testdata counts.
func TestLimit(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"p/p.go": "package p\n\ntype T struct{}\n\ntype G[K any] struct{}\n\n" +
			body("func Short()", 120) + body("func Long()", 121) + body("func (t *T) Method()", 130) +
			body("func (g G[K]) Generic()", 122),
		"p/p_test.go":     "package p\n\n" + body("func longTest()", 300),
		"p/testdata/x.go": "package x\n\n" + body("func Fixture()", 300),
	}
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	n, err := run(&out, root, 120)
	if err != nil {
		t.Fatal(err)
	}
	// Six lines of declarations, then Short on lines 7-126, Long on
	// 127-247, Method on 248-377, Generic from 378.
	p := filepath.ToSlash(filepath.Join(root, "p", "p.go"))
	want := p + ":248: (*T).Method: 130 lines\n" +
		p + ":378: G.Generic: 122 lines\n" +
		p + ":127: Long: 121 lines\n" +
		"funclen: 3 functions of non-test code over 120 lines\n"
	if n != 3 || out.String() != want {
		t.Errorf("%d listed:\n%s\nwant 3:\n%s", n, out.String(), want)
	}
}
