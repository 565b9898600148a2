package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixture: unexport renames testdata/mod's names in place, in its
// darwin file too, leaves those it cannot rename with the reason, and the
// module still builds and passes its tests; a second run changes nothing.
func TestFixture(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/mod")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(&out, dir, true, map[string]string{"p.Op": "opcode"}, []string{"darwin/amd64"}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"p                             10  Counts→counts ErrX→errX(alias) F→f HTTP→http(unused) HTTPServer→httpServer(unused) " +
		"Kind→kind(alias) Op→opcode OpAdd→opAdd Point→point Table→table\n" +
		"q                              1  Q→q(unused)\n" +
		"left: p.Error: error is predeclared\n" +
		"left: p.Gen: the external tests use it and a generic func has no alias\n" +
		"left: p.Hook: the external tests use it and something assigns it (an alias would be a copy)\n" +
		"left: p.Local: local is declared at p/p.go:20, in scope where it is used at p/p.go:21\n" +
		"left: p.Strings: strings is imported at p/p.go:7\n" +
		"left: p.Tested: other packages' tests use it: q/q_test.go:9\n" +
		"left: p.Type: type is a keyword\n" +
		"unexport: 11 names renamed (2 with an alias for the external tests), 7 left\n"
	if out.String() != want {
		t.Errorf("plan:\n%s\nwant:\n%s", out.String(), want)
	}
	src := read(t, filepath.Join(dir, "p/p.go"))
	for _, s := range []string{
		"// table is renamed with its doc comment",
		"const table = \"qps\"",
		"strings.ToUpper(table)",
		"type opcode int",
		"func op() opcode { return opAdd }",
		"var names = map[opcode]string{opAdd: \"opAdd\"}",
		"var errX = errors.New",
		"var Local = 1",
		"return local + Local",
		"type point struct {\n\tcounts\n",
		"return pt.counts.N + pt.N + pt.M",
	} {
		if !strings.Contains(src, s) {
			t.Errorf("p.go has no %q:\n%s", s, src)
		}
	}
	if s := read(t, filepath.Join(dir, "p/darwin.go")); !strings.Contains(s, "return table") {
		t.Errorf("the file for another platform is not renamed:\n%s", s)
	}
	if s := read(t, filepath.Join(dir, "p/p_test.go")); !strings.Contains(s, `if table != "qps"`) {
		t.Errorf("the in-package test is not renamed:\n%s", s)
	}
	wantAliases := "package p\n\n// Names the external tests use, unexported in the package.\nvar ErrX = errX\n\ntype Kind = kind\n"
	if s := read(t, filepath.Join(dir, "p/export_test.go")); s != wantAliases {
		t.Errorf("export_test.go:\n%s\nwant:\n%s", s, wantAliases)
	}
	cmd := exec.Command("go", "test", "-count=1", "./...")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the renamed module does not pass its tests: %v\n%s", err, b)
	}

	out.Reset()
	if err := run(&out, dir, true, map[string]string{"p.Op": "opcode"}, []string{"darwin/amd64"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "unexport: 0 names renamed (0 with an alias for the external tests), 7 left\n") {
		t.Errorf("second run:\n%s", out.String())
	}
	if s := read(t, filepath.Join(dir, "p/p.go")); s != src {
		t.Errorf("the second run changed p.go:\n%s", s)
	}
	if s := read(t, filepath.Join(dir, "p/export_test.go")); s != wantAliases {
		t.Errorf("the second run changed export_test.go:\n%s", s)
	}
}

func read(t *testing.T, name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLower(t *testing.T) {
	for in, want := range map[string]string{"TableQPS": "tableQPS", "IO": "io", "TCPSocket": "tcpSocket",
		"X": "x", "MySQL": "mySQL", "ErrFormat": "errFormat", "A1": "a1"} {
		if got := lower(in); got != want {
			t.Errorf("lower(%s) = %s, want %s", in, got, want)
		}
	}
}
