package testenv

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// WaitInSyscall waits until a thread of this process is blocked in system
// call nr (unix.SYS_READ, ...) with arg0 as its first argument (any first
// argument when arg0 is negative), as /proc/self/task/TID/syscall shows
// it: a goroutine that a test started, to block there, has got there. It
// fails t after 10 s. Linux only.
func WaitInSyscall(t testing.TB, nr, arg0 int) {
	t.Helper()
	self := procfs.New("/").Self()
	for deadline := time.Now().Add(10 * time.Second); !inSyscall(self, nr, arg0); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no thread of this process was blocked in system call %d (first argument %d) within 10 s", nr, arg0)
		}
	}
}

// inSyscall reports whether a thread of p is in system call nr with
// arg0 first (any when negative).
func inSyscall(p procfs.Proc, nr, arg0 int) bool {
	tids, err := p.Tasks()
	if err != nil {
		return false
	}
	for _, tid := range tids {
		b, err := p.Task(tid).ReadFile("syscall")
		if err != nil {
			continue
		}
		// "nr arg0 arg1 ... sp pc" while blocked; "running" or "-1 sp pc"
		// otherwise.
		f := strings.Fields(string(b))
		if len(f) < 2 || f[0] != strconv.Itoa(nr) {
			continue
		}
		if a, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64); arg0 < 0 || err == nil && a == uint64(arg0) {
			return true
		}
	}
	return false
}
