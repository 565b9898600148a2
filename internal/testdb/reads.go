package testdb

import (
	"errors"
	"fmt"
	"time"

	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/mysqld/sandbox"
)

// WaitOthersRead waits until clients other than the test have sent n SHOW
// STATUS statements (the server's Com_show_status) to the server at socket
// (root without a password, as the sandbox made it) since the call: a
// window of perfbench's has opened on the server, whose opening edge reads
// its status, where nothing else reads it (after a load's threads started,
// or after perfbench stat said it counts). The test's own reads, one per
// poll on one connection, are taken out. It gives up with an error after a
// minute, or as soon as stop is closed (a perfbench that exited, a test
// that ended).
func WaitOthersRead(socket string, n int, stop <-chan struct{}) error {
	db, err := sandbox.OpenRoot(socket)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var rerr error
	read := func() float64 {
		var k string
		var v float64
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Com_show_status'").Scan(&k, &v); err != nil {
			rerr = fmt.Errorf("read Com_show_status at %s: %w", socket, err)
		}
		return v
	}
	v0, own := read(), 0.0
	stopped := false
	held := testenv.Await(time.Minute, func() bool {
		select {
		case <-stop:
			stopped = true
			return true
		default:
		}
		own++
		return rerr != nil || read()-v0-own >= float64(n)
	})
	switch {
	case rerr != nil:
		return rerr
	case stopped:
		return errors.New("stopped before the server's status was read by others")
	case !held:
		return fmt.Errorf("the server at %s was not read %d times by others in a minute: no window opened on it", socket, n)
	}
	return nil
}
