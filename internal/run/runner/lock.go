package runner

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// errFolderInUse: another perfbench run uses the output folder (its lock
// file names the pid).
var errFolderInUse = errors.New("the output folder is in use")

// lockName is the lock file of an output folder: it holds the pid of the
// perfbench that runs into the folder, and is removed when that run ends.
const lockName = ".perfbench.lock"

// folderLock is a held output folder lock.
type folderLock struct {
	f    *os.File
	path string
	// stale is the pid an earlier run left in the lock file when it ended
	// without removing it (killed), "" when the file was new.
	stale string
}

// unlock removes the lock file and releases the lock. The file goes first:
// a run waiting on the old file then finds it gone and locks a new one.
func (l *folderLock) unlock() {
	if l == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
}

// writePid puts this process's pid into the lock file.
func (l *folderLock) writePid() error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// holder reads the pid a lock file holds. The holder writes it right after
// taking the lock: an empty file is read again for a moment.
func holder(path string) string {
	for i := 0; i < 10; i++ {
		b, err := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); err == nil && s != "" {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "unknown"
}

func inUse(dir, path, pid string) error {
	return fmt.Errorf("%w: perfbench (pid %s) is running into %s (lock file %s): wait for it to end, or give this run another --out",
		errFolderInUse, pid, dir, path)
}

// ensureDir creates the output folder, for its lock.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create the output folder: %w", err)
	}
	return nil
}
