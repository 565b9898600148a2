//go:build !unix

package measure

import (
	"errors"
	"os"
)

// lockFile is not available here: no marks are written, and none is taken
// for a leftover.
func lockFile(*os.File, bool) error { return errors.New("file locks are not supported on this system") }
