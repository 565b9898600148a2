// Package gosrc lists the tree's non-test Go files for the structure checks
// of scripts/test.sh (scripts/funclen, scripts/layout).
package gosrc

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// Files returns the non-test .go files under root in walk order, leaving out
// testdata, vendor and folders whose names start with "." or "_".
func Files(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			out = append(out, path)
		}
		return nil
	})
	return out, err
}
