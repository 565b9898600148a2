//go:build unix

package symbols

import (
	"io/fs"
	"syscall"
)

// inodeOf returns the inode number of a file, to tell a file replaced since
// it was mapped.
func inodeOf(st fs.FileInfo) (uint64, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino), true
	}
	return 0, false
}
