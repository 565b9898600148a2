package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestTable writes a tree and a README whose Layout table misses a package
// and names a folder that is not there.
func TestTable(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"a/a.go":             "package a\n",
		"a/sub/sub.go":       "package sub\n",
		"b/b.go":             "package b\n",
		"c/c_test.go":        "package c\n", // tests only: no package to list
		"a/testdata/x/x.go":  "package x\n",
		".git/hooks/hook.go": "package hook\n",
		"testdata/data.json": "{}\n",
		"README.md": "# x\n\n## Layout\n\n| path | what |\n|---|---|\n" +
			"| `a/`, `a/sub` | the a packages; not `b/` |\n" +
			"| `gone/` | removed |\n" +
			"| `testdata/` | data |\n\n" +
			"## Next\n\n| `b/` | a table of another section |\n",
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
	n, err := run(&out, root)
	if err != nil {
		t.Fatal(err)
	}
	want := "packages not in README.md's layout table: b/\n" +
		"in README.md's layout table but no folder of the tree: gone/\n" +
		"layout: 1 packages missing from README.md's layout table, 1 names there that the tree does not have\n"
	if n != 2 || out.String() != want {
		t.Errorf("%d differences:\n%s\nwant 2:\n%s", n, out.String(), want)
	}
}

func TestNoTable(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# x\n\n## Layout\n\nNo table.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(&bytes.Buffer{}, root); err == nil {
		t.Error("a README without a layout table: no error")
	}
}
