package suite

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// scripts are the project's own sysbench 1.0 scripts, for the statements the
// stock scripts cannot run: in-lists of random or hot keys, covered and
// not-covered point and range lookups on the primary and the secondary
// index, COUNT(*) ranges, updates by in-list, of one row and with zipfian
// keys, and full scans.
//
//go:embed lua/*.lua
var scripts embed.FS

// scriptNames returns the file names of the project's scripts, sorted.
func scriptNames() []string {
	entries, _ := fs.ReadDir(scripts, "lua")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// script returns the text of one of the project's scripts.
func script(name string) ([]byte, error) {
	b, err := scripts.ReadFile("lua/" + name)
	if err != nil {
		return nil, fmt.Errorf("read script %s: %w", name, err)
	}
	return b, nil
}

// WriteScripts writes the project's scripts into dir (created if missing),
// where Command expects them when Options.ScriptDir is dir. The scripts
// find their shared module next to themselves, so they work from any
// folder. A symbolic link at dir or at a script's path is refused with its
// path: perfbench runs as root, and would write over the link's target.
func WriteScripts(dir string) error {
	if isLink(dir) {
		return fmt.Errorf("write sysbench scripts: %s is a symbolic link, which perfbench does not write through: remove it", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write sysbench scripts: %w", err)
	}
	for _, name := range scriptNames() {
		b, err := script(name)
		if err != nil {
			return err
		}
		if err := writeScript(filepath.Join(dir, name), b); err != nil {
			return fmt.Errorf("write sysbench scripts: %w", err)
		}
	}
	return nil
}

// isLink reports whether path is a symbolic link.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// writeScript writes a script through a new file renamed over path, which
// never follows a link; a link already at path is refused with its path.
func writeScript(path string, b []byte) error {
	if isLink(path) {
		return fmt.Errorf("%s is a symbolic link, which perfbench does not write through: remove it", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	err = errors.Join(err, f.Chmod(0o644), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
