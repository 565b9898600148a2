package mysqld

import (
	"context"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerPid returns the pid of the process at the other end of a unix socket
// connection (SO_PEERCRED): for a connection to a listening socket, the
// process that called listen(2).
func peerPid(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("peer credentials: not a unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var serr error
	err = raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return 0, fmt.Errorf("peer credentials (SO_PEERCRED): %w", err)
	}
	return int(cred.Pid), nil
}

// SocketPid connects to the unix socket at path and returns the pid of the
// process listening on it, without speaking the MySQL protocol (no
// credentials needed).
func SocketPid(ctx context.Context, path string) (int, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return 0, fmt.Errorf("connect to socket %s: %w", path, unreachable(err))
	}
	defer c.Close()
	pid, err := peerPid(c)
	if err != nil {
		return 0, fmt.Errorf("find the process behind socket %s: %w", path, err)
	}
	return pid, nil
}
