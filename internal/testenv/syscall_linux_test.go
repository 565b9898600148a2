package testenv

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// TestWaitInSyscall: a goroutine blocked in read(2) on a pipe is found by
// its fd; no thread reads the pipe's other end.
func TestWaitInSyscall(t *testing.T) {
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	self := procfs.New("/").Self()
	if inSyscall(self, unix.SYS_READ, p[0]) {
		t.Fatal("a read on the pipe before any")
	}
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		var b [1]byte
		unix.Read(p[0], b[:])
		close(done)
	}()
	WaitInSyscall(t, unix.SYS_READ, p[0])
	if inSyscall(self, unix.SYS_READ, p[1]) {
		t.Error("a read on the pipe's write end")
	}
	if _, err := unix.Write(p[1], []byte{1}); err != nil {
		t.Fatal(err)
	}
	<-done
	unix.Close(p[0])
}
