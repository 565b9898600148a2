//go:build !unix

package remote

import (
	"context"
	"errors"
	"io"
	"time"
)

// Guard runs a command as the remote side of a run on a host; hosts run
// Linux, so here it only says so.
func Guard(ctx context.Context, argv []string, beats io.Reader, stdout, stderr io.Writer, timeout, grace time.Duration) (int, error) {
	return 1, errors.New("guard: hosts run Linux; perfbench hosts guard runs there only")
}

// endSSHSession: no sshd to end here.
func endSSHSession() {}

// Clean stops what earlier campaigns left on a host; hosts run Linux.
func Clean(dir string, w io.Writer) error {
	return errors.New("clean: hosts run Linux; perfbench hosts clean runs there only")
}
