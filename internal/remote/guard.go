package remote

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Nothing of perfbench stays on a host when its link drops.
//
// ssh alone does not see to it: when the link is cut, the host's sshd
// learns of it only when TCP gives up (hours with the kernel's keepalive),
// and until then the remote commands run on, their input open. So the
// controller sends a heartbeat (a newline every heartbeatEvery) on the
// standard input of every long remote command, and the host's side ends
// when heartbeatTimeout passes without one, or when its input ends:
//
//   - perfbench run on a host runs under "perfbench hosts guard", which
//     stops it (SIGTERM, and SIGKILL to what is left of its session after
//     the grace period) when the heartbeat stops or its input ends;
//   - "perfbench hosts watch" (see Pull) ends the same way.
//
// Either of them, when the heartbeat stops, also ends the host's sshd
// process of the connection (its session process, an ancestor), which
// would otherwise stay: every channel of that connection is perfbench's
// own (a Group's shared connection).
//
// As a backstop, each of them touches a file of its own,
// .perfbench-live/PID in the work folder, at every heartbeat, and Prepare
// runs "perfbench hosts clean" on the host before anything else: it stops
// what an earlier campaign left (a guard or watcher whose file is older
// than twice heartbeatTimeout, a watcher without heartbeats or a run
// without a guard, as perfbench left them before heartbeats), with its
// session and its sshd process, and says what it stopped.

const (
	// heartbeatEvery is how often the controller sends a heartbeat.
	heartbeatEvery = 2 * time.Second
	// heartbeatTimeout is how long a host's side waits for one before it
	// takes the controller for gone.
	heartbeatTimeout = 15 * time.Second
)

// errNoHeartbeat: the controller's heartbeat stopped (the link dropped).
var errNoHeartbeat = errors.New("no heartbeat from the controller")

// heartbeats writes a newline to w every heartbeatEvery until stop is
// called, which then closes w.
func heartbeats(w io.WriteCloser) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			if _, err := w.Write([]byte{'\n'}); err != nil {
				return
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			w.Close()
		})
	}
}

// heartbeat reads a controller's heartbeats from r: beat receives after
// each read, eof is closed when r ends. With live set, each read also
// touches that file (see liveDir).
type heartbeat struct {
	beat chan struct{}
	eof  chan struct{}
	live string
}

// liveDir holds a file per guard and watcher on a host, touched at each
// heartbeat, under the work folder (their working folder).
const liveDir = ".perfbench-live"

func readHeartbeats(r io.Reader, live bool) *heartbeat {
	h := &heartbeat{beat: make(chan struct{}, 1), eof: make(chan struct{})}
	if live && os.MkdirAll(liveDir, 0o755) == nil {
		h.live = filepath.Join(liveDir, strconv.Itoa(os.Getpid()))
		os.WriteFile(h.live, nil, 0o644)
	}
	go func() {
		defer close(h.eof)
		buf := make([]byte, 512)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if h.live != "" {
					now := time.Now()
					os.Chtimes(h.live, now, now)
				}
				select {
				case h.beat <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return h
}

// close removes the live file.
func (h *heartbeat) close() {
	if h.live != "" {
		os.Remove(h.live)
	}
}

// wait waits until the input ends (ended), timeout passes without a
// heartbeat (errNoHeartbeat), or done or exited is closed (neither).
func (h *heartbeat) wait(timeout time.Duration, done, exited <-chan struct{}) (ended bool, err error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case <-h.beat:
			t.Reset(timeout)
		case <-h.eof:
			return true, nil
		case <-t.C:
			return false, errNoHeartbeat
		case <-done:
			return false, nil
		case <-exited:
			return false, nil
		}
	}
}
