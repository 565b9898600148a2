//go:build unix

package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// lockFolder takes the lock of output folder dir, creating the folder: an
// flock(2) on <dir>/.perfbench.lock, which then holds this process's pid.
// The kernel releases the lock when its holder dies, even by SIGKILL, so a
// lock file left behind is recognised as stale (and taken over) by the
// next run. A folder locked by a running perfbench is an error wrapping
// errFolderInUse that names its pid.
func lockFolder(dir string) (*folderLock, error) {
	if err := ensureDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, lockName)
	// A holder that ends removes the file before releasing it: a lock taken
	// on a file no longer at path is let go and tried again.
	for attempt := 0; attempt < 10; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
		if errors.Is(err, unix.ELOOP) {
			err = linkError(path)
		}
		if err != nil {
			return nil, fmt.Errorf("lock the output folder: %w", err)
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, inUse(dir, path, holder(path))
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock the output folder: flock %s: %w", path, err)
		}
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) != nil || unix.Stat(path, &now) != nil || held.Ino != now.Ino || held.Dev != now.Dev {
			f.Close()
			continue
		}
		old, _ := io.ReadAll(f)
		l := &folderLock{f: f, path: path, stale: strings.TrimSpace(string(old))}
		if err := l.writePid(); err != nil {
			l.unlock()
			return nil, fmt.Errorf("lock the output folder: write %s: %w", path, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("lock the output folder: %s was replaced 10 times while being locked", path)
}

// noFollow makes an open fail on a symbolic link (ELOOP).
const noFollow = unix.O_NOFOLLOW
