//go:build !linux

package insertbench

import (
	"context"
	"net"
	"time"
)

// kernelTimeouts is false: connections are Go's, and the driver's read and
// write timeouts bound their statements.
const kernelTimeouts = false

func dialServer(ctx context.Context, network, addr string, _ time.Duration) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
