package cpuset

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/perfbench/perfbench/internal/testenv"
)

// lastCPU is the last CPU this test may run on, as a Set; the test skips
// on a machine of one CPU, where pinning cannot be told from not pinning.
func lastCPU(t *testing.T) (own, last Set) {
	t.Helper()
	own, err := Own()
	if err != nil {
		t.Fatal(err)
	}
	if len(own) < 2 {
		testenv.Skip(t, "one CPU only: a pinned process cannot be told from one that is not", "run on a machine of 2 CPUs or more")
	}
	return own, own[len(own)-1:]
}

// cpusAllowedList reads Cpus_allowed_list from /proc/PID/status itself,
// apart from the package's reader.
func cpusAllowedList(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return allowedLine(string(b))
}

func allowedLine(status string) string {
	for line := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "(none)"
}

// TestPinnedExec starts a command with StartOn: the command runs on the
// one CPU, and the thread that started it is back where it was.
func TestPinnedExec(t *testing.T) {
	own, last := lastCPU(t)
	cmd := exec.Command("sleep", "10")
	errc := make(chan error, 1)
	after := make(chan Set, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		errc <- StartOn(last, cmd.Start)
		s, _ := Own()
		after <- s
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if s := <-after; !s.Equal(own) {
		t.Errorf("the starting thread may run on %v after the start, want %v", s, own)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	status := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"
	if got := cpusAllowedList(t, status); got != last.String() {
		t.Errorf("the command may run on %q, want %q", got, last)
	}
	main, others, err := allowed(cmd.Process.Pid)
	if err != nil || !main.Equal(last) || others != 0 {
		t.Errorf("Allowed = %v, %d, %v; want %v, 0", main, others, err, last)
	}
}

// TestPinProcess pins every thread of a running process of several
// threads (a Go program: its runtime starts threads at once).
func TestPinProcess(t *testing.T) {
	own, last := lastCPU(t)
	cmd := testenv.HelperCommand(t, "threads")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil { // "ready\n": its threads run
		t.Fatal(err)
	}
	status := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"
	if got := cpusAllowedList(t, status); got != own.String() {
		t.Fatalf("before PinProcess the process may run on %q, want %q", got, own)
	}
	n, err := PinProcess(cmd.Process.Pid, last)
	if err != nil || n == 0 {
		t.Fatalf("PinProcess = %d, %v; want every thread", n, err)
	}
	tids, err := os.ReadDir("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/task/" + tid.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		if got := allowedLine(string(b)); got != last.String() {
			t.Errorf("thread %s may run on %q, want %q", tid.Name(), got, last)
		}
	}
}

func TestMain(m *testing.M) {
	helpers := testenv.Helpers{"threads": func([]string) int {
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				runtime.LockOSThread()
				wg.Done()
				select {}
			}()
		}
		wg.Wait()
		os.Stdout.WriteString("ready\n")
		select {}
	}}
	if code, ok := helpers.Run(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestObserve reads back where a pinned load and an unpinned server (this
// test process) may run; a pid of 0 is not read.
func TestObserve(t *testing.T) {
	own, last := lastCPU(t)
	cmd := exec.Command("sleep", "10")
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		errc <- StartOn(last, cmd.Start)
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	o := Observe(os.Getpid(), cmd.Process.Pid)
	if o.Server.String() != cpusAllowedList(t, "/proc/self/status") || o.Load.String() != last.String() {
		t.Errorf("Observe = %+v, want server %s, load %s", o, cpusAllowedList(t, "/proc/self/status"), last)
	}
	if !o.Server.Equal(own) {
		t.Errorf("the test process may run on %s, want %s (all of its CPUs)", o.Server, own)
	}
	if o := Observe(0, 0); o.Server != nil || o.Load != nil || o.ServerElsewhere != 0 {
		t.Errorf("Observe with pids 0 = %+v, want nothing read", o)
	}
}
