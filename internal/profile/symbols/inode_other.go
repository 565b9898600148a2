//go:build !unix

package symbols

import "io/fs"

// inodeOf is not known here.
func inodeOf(fs.FileInfo) (uint64, bool) { return 0, false }
