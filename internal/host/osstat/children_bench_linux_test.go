package osstat

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// BenchmarkProcessCPU reads this process's CPU time with 2,000 more
// threads than it has (each locked to a goroutine that waits), as the CPU
// check reads a server's four times a window: its children from each
// thread's children file (a read per thread), from a process list read
// for the purpose (every process's stat), and from a process list already
// read (perfbench reads one at each edge for the busy check).
func BenchmarkProcessCPU(b *testing.B) {
	const threads = 2000
	var started, done sync.WaitGroup
	stop := make(chan struct{})
	for range threads {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			started.Done()
			<-stop
		}()
	}
	started.Wait()
	defer func() { close(stop); done.Wait() }()
	f := FS{Root: "/"}
	pid := os.Getpid()
	list := func() Children {
		fs := procfs.New("")
		pids, err := fs.PIDs()
		if err != nil {
			b.Fatal(err)
		}
		parents := map[int]int{}
		for _, p := range pids {
			if st, err := fs.Proc(p).Stat(); err == nil {
				parents[p] = st.PPID
			}
		}
		return ChildrenFromList(parents)
	}
	read := func(b *testing.B, kids Children) {
		if _, ok := f.ProcessCPU(pid, kids, nil); !ok {
			b.Fatal("not read")
		}
	}
	b.Run("children files", func(b *testing.B) {
		for b.Loop() {
			read(b, nil)
		}
	})
	b.Run("process list read", func(b *testing.B) {
		for b.Loop() {
			read(b, list())
		}
	})
	kids := list()
	b.Run("process list given", func(b *testing.B) {
		for b.Loop() {
			read(b, kids)
		}
	})
}
