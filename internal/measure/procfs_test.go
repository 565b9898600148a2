package measure

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/host/osstat"
	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/record"
)

// fixtureSession is a session on pid of the fixture tree testdata/proc,
// with a server connection that is never used.
func fixtureSession(pid int) *Session {
	return &Session{cfg: Config{Pid: pid, DB: &mysqld.DB{}}, fs: osstat.FS{Root: "testdata"}}
}

// TestWindowProcReads: the window's reads of the server in /proc, on the
// fixture tree: its CPU time for the series, the threads a reattach
// compares with those attached, and what a failed window says of a server
// whose status could not be read at its end.
func TestWindowProcReads(t *testing.T) {
	s := fixtureSession(12122)
	cpu, ok := s.processCPU()
	// utime 1114 + stime 772 ticks in testdata/proc/12122/stat.
	if ticks := cpu * float64(procfs.ClockTicks()); !ok || math.Abs(ticks-1886) > 1e-9 {
		t.Errorf("CPU of the fixture mariadbd: %v s (%v ticks), %v; want 1886 ticks", cpu, ticks, ok)
	}
	tids, err := s.proc().Tasks()
	want := []int{12122, 12125, 12127, 12129, 12130, 12132, 12133, 12135, 12139, 12147, 13645}
	if err != nil || !reflect.DeepEqual(tids, want) {
		t.Errorf("threads of the fixture mariadbd: %v, %v; want %v", tids, err, want)
	}
	if _, ok := fixtureSession(4).processCPU(); ok {
		t.Error("CPU of a pid that is not in the tree: read")
	}

	for _, c := range []struct {
		pid  int
		says string
	}{
		// Still running: the status query failed for another reason.
		{12122, "the server status could not be read at both edges of the window"},
		{4, "the server (pid 4) exited during the window (it no longer exists)"},
		{30008, "the server (pid 30008) exited during the window (it is a zombie now)"},
		// Its main thread exited, its other threads run: not a zombie.
		{29791, "the server status could not be read at both edges of the window"},
	} {
		r := &record.Record{Server: &record.Server{}}
		failed := fixtureSession(c.pid).statusAndOps(r, edge{}, edge{})
		if !strings.HasPrefix(failed, c.says) || r.Outcome != record.OutcomeFailed || r.Error != failed {
			t.Errorf("pid %d: failed %q, outcome %q; want a failed window saying %q", c.pid, failed, r.Outcome, c.says)
		}
	}
}
