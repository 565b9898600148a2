// Command layout checks that the table of README.md's "Layout" section
// names every package of the tree, and nothing that is not there. The
// table's first column names folders in backquotes (`runner/`, `plan/`);
// a folder the table names must exist, and if it holds Go code, be a
// package (a folder of data such as `testdata/` may be named too).
//
//	go run ./scripts/layout [-fail]
//
// It prints the packages the table misses and the names it has that the
// tree does not, and a total. With -fail it exits 1 when there are any.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/perfbench/perfbench/scripts/internal/gosrc"
)

func main() {
	fail := flag.Bool("fail", false, "exit 1 when the table and the tree differ")
	flag.Parse()
	n, err := run(os.Stdout, ".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "layout:", err)
		os.Exit(2)
	}
	if *fail && n > 0 {
		os.Exit(1)
	}
}

func run(w io.Writer, root string) (int, error) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return 0, err
	}
	listed, err := tableFolders(readme)
	if err != nil {
		return 0, err
	}
	pkgs, err := packages(root)
	if err != nil {
		return 0, err
	}
	var missing, extra []string
	for _, p := range pkgs {
		if !slices.Contains(listed, p) {
			missing = append(missing, p+"/")
		}
	}
	for _, l := range listed {
		if slices.Contains(pkgs, l) {
			continue
		}
		if st, err := os.Stat(filepath.Join(root, l)); err != nil || !st.IsDir() {
			extra = append(extra, l+"/")
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(w, "packages not in README.md's layout table: %s\n", strings.Join(missing, " "))
	}
	if len(extra) > 0 {
		fmt.Fprintf(w, "in README.md's layout table but no folder of the tree: %s\n", strings.Join(extra, " "))
	}
	fmt.Fprintf(w, "layout: %d packages missing from README.md's layout table, %d names there that the tree does not have\n", len(missing), len(extra))
	return len(missing) + len(extra), nil
}

var backquoted = regexp.MustCompile("`([^`]+)`")

// tableFolders returns the folders the first column of the Layout
// section's table names, without their trailing slash.
func tableFolders(readme []byte) ([]string, error) {
	sc := bufio.NewScanner(bytes.NewReader(readme))
	in, rows := false, 0
	var out []string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(strings.TrimLeft(line, "#")) == "Layout"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		rows++
		cells := strings.Split(line, "|")
		if rows <= 2 || len(cells) < 3 { // the heading and the rule under it
			continue
		}
		for _, m := range backquoted.FindAllStringSubmatch(cells[1], -1) {
			out = append(out, strings.TrimSuffix(m[1], "/"))
		}
	}
	if len(out) == 0 {
		return nil, errors.New("README.md has no Layout section with a table naming folders")
	}
	return out, nil
}

// packages returns the folders under root that hold non-test Go code,
// relative to root, leaving out testdata, vendor and hidden folders.
func packages(root string) ([]string, error) {
	files, err := gosrc.Files(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, path := range files {
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return nil, err
		}
		if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out, nil
}
