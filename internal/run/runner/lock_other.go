//go:build !unix

package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// lockFolder takes the lock of output folder dir, creating the folder: the
// file <dir>/.perfbench.lock, created only when missing, holds this
// process's pid. Without flock(2) a lock left by a run that was killed is
// not told apart from a held one: the error says to remove it.
func lockFolder(dir string) (*folderLock, error) {
	if err := ensureDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, lockName)
	if isLink(path) {
		return nil, fmt.Errorf("lock the output folder: %w", linkError(path))
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%w (if no perfbench runs, remove the lock file)", inUse(dir, path, holder(path)))
	}
	if err != nil {
		return nil, fmt.Errorf("lock the output folder: %w", err)
	}
	l := &folderLock{f: f, path: path}
	if err := l.writePid(); err != nil {
		l.unlock()
		return nil, fmt.Errorf("lock the output folder: write %s: %w", path, err)
	}
	return l, nil
}

// noFollow: the system has no O_NOFOLLOW; openOut's check before the open
// refuses a link.
const noFollow = 0
