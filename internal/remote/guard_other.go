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
