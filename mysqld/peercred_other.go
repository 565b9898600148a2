//go:build !linux

package mysqld

import (
	"context"
	"errors"
	"fmt"
	"net"
)

var errNoPeerCred = errors.New("peer credentials of a unix socket are only read on Linux")

func peerPid(c net.Conn) (int, error) { return 0, errNoPeerCred }

// SocketPid returns the pid of the process listening on the unix socket at
// path. Only Linux has it.
func SocketPid(ctx context.Context, path string) (int, error) {
	return 0, fmt.Errorf("find the process behind socket %s: %w", path, errNoPeerCred)
}
