package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// errLink: a file or folder perfbench writes is a symbolic link. perfbench
// runs as root: a link planted in its output folder would have it write
// over the link's target.
var errLink = errors.New("is a symbolic link, which perfbench does not write through")

// linkError is the error of a link at path, which names it.
func linkError(path string) error {
	return fmt.Errorf("%s %w: remove it, or give the run another --out", path, errLink)
}

// isLink reports whether path is a symbolic link.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// openOut opens a file that perfbench writes (a log, a marker) without
// following a symbolic link: an existing link at path is refused with its
// path (O_NOFOLLOW where the system has it, so that a link put there after
// the check is refused too).
func openOut(path string, flag int, perm os.FileMode) (*os.File, error) {
	if isLink(path) {
		return nil, linkError(path)
	}
	f, err := os.OpenFile(path, flag|noFollow, perm)
	if err != nil && (errors.Is(err, syscall.ELOOP) || isLink(path)) {
		return nil, linkError(path)
	}
	return f, err
}

// createOut creates or truncates a file perfbench writes, as os.Create,
// without following a symbolic link.
func createOut(path string) (*os.File, error) {
	return openOut(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// appendOut opens a log perfbench appends to, without following a
// symbolic link.
func appendOut(path string) (*os.File, error) {
	return openOut(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// writeOut writes a small file perfbench owns, without following a
// symbolic link.
func writeOut(path string, b []byte) error {
	f, err := openOut(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}

// mkdirOut creates the folders dirs (as os.MkdirAll) that perfbench writes
// into, and refuses each that is a symbolic link, with its path.
func mkdirOut(dirs ...string) error {
	for _, d := range dirs {
		if isLink(d) {
			return linkError(d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if isLink(d) {
			return linkError(d)
		}
	}
	return nil
}
