package osstat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/perfbench/perfbench/record"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/testenv"
)

// The test binary doubles as a child process that does known work on
// command, so the test can read its /proc files around it.
func TestMain(m *testing.M) {
	if os.Getenv("OSSTAT_TEST_CHILD") == "1" {
		// Keep the main thread for this goroutine: a locked goroutine that
		// exits on the main thread wedges it instead of ending it.
		runtime.LockOSThread()
		if err := child(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child runs commands, one a line, answering each with one line:
//
//	io PATH N    write N bytes to PATH in 64 KiB writes, fsync, close
//	sleeps K     sleep 1 ms K times on a thread of its own
//	spin MS      burn CPU for MS milliseconds
//	rusage       print "utime_us stime_us" of the whole process
//	thread       start a thread that waits; print its TID
//	endthread    let that thread sleep 20 times and exit
func child(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	var release chan struct{}
	var finished chan struct{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		reply := "ok"
		switch f[0] {
		case "io":
			n, _ := strconv.Atoi(f[2])
			file, err := os.Create(f[1])
			if err != nil {
				return err
			}
			buf := make([]byte, 64<<10)
			for i := range buf {
				buf[i] = byte(i)
			}
			for n > 0 {
				k := min(n, len(buf))
				if _, err := file.Write(buf[:k]); err != nil {
					return err
				}
				n -= k
			}
			if err := file.Sync(); err != nil {
				return err
			}
			if err := file.Close(); err != nil {
				return err
			}
		case "sleeps":
			k, _ := strconv.Atoi(f[1])
			done := make(chan struct{})
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				for i := 0; i < k; i++ {
					time.Sleep(time.Millisecond) // the workload: k voluntary switches
				}
				close(done)
			}()
			<-done
		case "spin":
			ms, _ := strconv.Atoi(f[1])
			end := time.Now().Add(time.Duration(ms) * time.Millisecond)
			x := 0
			for time.Now().Before(end) {
				for i := 0; i < 1000; i++ {
					x += i * i
				}
			}
			reply = "ok " + strconv.Itoa(x&1)
		case "rusage":
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
				return err
			}
			reply = fmt.Sprintf("%d %d", ru.Utime.Sec*1e6+ru.Utime.Usec, ru.Stime.Sec*1e6+ru.Stime.Usec)
		case "thread":
			release, finished = make(chan struct{}), make(chan struct{})
			tid := make(chan int)
			go func() {
				// Exiting while locked terminates the OS thread.
				runtime.LockOSThread()
				tid <- syscall.Gettid()
				<-release
				for i := 0; i < 20; i++ {
					time.Sleep(time.Millisecond) // the thread's work before it exits
				}
				close(finished)
			}()
			reply = strconv.Itoa(<-tid)
		case "endthread":
			close(release)
			<-finished
		default:
			return fmt.Errorf("unknown command %q", f[0])
		}
		if _, err := fmt.Fprintln(out, reply); err != nil {
			return err
		}
	}
	return sc.Err()
}

type childProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startChild(t *testing.T) *childProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "OSSTAT_TEST_CHILD=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &childProc{cmd: cmd, in: in, out: bufio.NewReader(outPipe)}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return c
}

func (c *childProc) do(t *testing.T, command string) string {
	t.Helper()
	if _, err := fmt.Fprintln(c.in, command); err != nil {
		t.Fatalf("send %q: %v", command, err)
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		t.Fatalf("%q: %v", command, err)
	}
	return strings.TrimSpace(line)
}

func rusageTicks(t *testing.T, s string, ticks float64) float64 {
	var ut, st float64
	if _, err := fmt.Sscanf(s, "%g %g", &ut, &st); err != nil {
		t.Fatalf("rusage %q: %v", s, err)
	}
	return (ut + st) / 1e6 * ticks
}

// TestChildProcess reads a child that writes a known number of bytes with
// fsync, sleeps a known number of times on one thread and burns CPU, and
// checks the deltas against those numbers and against the child's own
// getrusage.
func TestChildProcess(t *testing.T) {
	fs := FS{}
	c := startChild(t)
	pid := c.cmd.Process.Pid
	dir := t.TempDir()

	// write_bytes and the disk's counters count only on a block device.
	dev, err := fs.DeviceOf(dir)
	testenv.SkipUnless(t, err, "set TMPDIR to a folder on a disk", errNoBlockDevice)
	disk := dev.Name
	t.Logf("%s is on %s", dir, dev)

	const size = 8 << 20
	const sleeps = 100
	ru1 := c.do(t, "rusage")
	a, err := fs.Snapshot(pid, disk)
	if err != nil {
		t.Fatal(err)
	}
	c.do(t, fmt.Sprintf("io %s %d", filepath.Join(dir, "data"), size))
	c.do(t, fmt.Sprintf("sleeps %d", sleeps))
	c.do(t, "spin 300")
	b, err := fs.Snapshot(pid, disk)
	if err != nil {
		t.Fatal(err)
	}
	ru2 := c.do(t, "rusage")

	d, warn, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("delta %+v, warnings %q", *d, warn)
	if len(warn) != 0 {
		t.Errorf("warnings %q, want none", warn)
	}
	if d.WriteBytes < size || d.WriteChars < size || d.WriteCalls < size/(64<<10) {
		t.Errorf("write_bytes %v, wchar %v, syscw %v: want at least %d bytes in %d writes", d.WriteBytes, d.WriteChars, d.WriteCalls, size, size/(64<<10))
	}
	if d.VoluntaryCS < sleeps {
		t.Errorf("voluntary context switches %v, want at least %d (one per sleep)", d.VoluntaryCS, sleeps)
	}
	ticks := float64(procfs.ClockTicks())
	got := (d.UserSeconds + d.SystemSeconds) * ticks
	want := rusageTicks(t, ru2, ticks) - rusageTicks(t, ru1, ticks)
	if diff := got - want; diff > 3+0.05*want || diff < -(3+0.05*want) {
		t.Errorf("CPU %.1f ticks from /proc, %.1f from getrusage: want within 3 ticks + 5%%", got, want)
	}
	// The CPU clock is the time utime+stime are cut from in ticks (each
	// of the two truncated, at both readings).
	if !a.HasCPUClock || !b.HasCPUClock {
		t.Errorf("CPU clock not read (%v, %v)", a.HasCPUClock, b.HasCPUClock)
	} else if clock := (b.CPUClock - a.CPUClock).Seconds() * ticks; math.Abs(clock-got) > 2 {
		t.Errorf("CPU clock %.2f ticks, /proc utime+stime %.0f: want within 2 ticks", clock, got)
	}
	if d.RSSBytes <= 0 || d.HostCPUSeconds <= 0 {
		t.Errorf("rss %v, host CPU %v: want both positive", d.RSSBytes, d.HostCPUSeconds)
	}
	if d.Disk == nil || d.Disk.Device != disk || d.Disk.Writes < 1 || d.Disk.WriteSectors < size/512 {
		t.Errorf("disk %+v: want at least %d sectors written to %s", d.Disk, size/512, disk)
	}
}

// TestExitedThread checks that a thread exiting inside the window is
// reported.
func TestExitedThread(t *testing.T) {
	fs := FS{}
	c := startChild(t)
	pid := c.cmd.Process.Pid
	tid := c.do(t, "thread")
	a, err := fs.Snapshot(pid, "")
	if err != nil {
		t.Fatal(err)
	}
	c.do(t, "endthread")
	task := filepath.Join("/proc", strconv.Itoa(pid), "task", tid)
	if !testenv.Await(10*time.Second, func() bool { _, err := os.Stat(task); return errors.Is(err, os.ErrNotExist) }) {
		t.Fatalf("thread %s did not exit", tid)
	}
	b, err := fs.Snapshot(pid, "")
	if err != nil {
		t.Fatal(err)
	}
	_, warn, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(warn) != 1 || warn[0].Code != record.WarnCSSplit || !strings.Contains(warn[0].Text, "1 threads exited inside the window") {
		t.Errorf("warnings %q, want one about the exited thread", warn)
	}
}

func TestDeviceOfRoot(t *testing.T) {
	dev, err := FS{}.DeviceOf("/")
	testenv.SkipUnless(t, err, "run the tests where / is on a disk", errNoBlockDevice)
	if _, err := (FS{}).ReadDisk(dev.Name); err != nil {
		t.Errorf("device of / is %s, which diskstats lacks: %v", dev, err)
	}
	if _, err := (FS{}).DeviceOf("/no/such/folder"); err == nil {
		t.Error("DeviceOf a missing folder: no error")
	}
}

// TestProcessCPU: ProcessCPU of this process reads its CPU clock and its
// children's CPU; a child that burned CPU and was reaped raises Children
// by its CPU (its rusage), give or take Slack; a child still running is
// in Children by its clock, found through the threads' children files
// and through a process list alike; a fixture root reads nothing.
func TestProcessCPU(t *testing.T) {
	f := FS{Root: "/"}
	before, ok := f.ProcessCPU(os.Getpid(), nil, nil)
	if !ok || before.Clock <= 0 || !before.HasChildren || before.Slack <= 0 {
		t.Fatalf("ProcessCPU(self) = %+v, %v", before, ok)
	}
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	after, ok := f.ProcessCPU(os.Getpid(), nil, nil)
	if !ok {
		t.Fatal("ProcessCPU(self) after the child: not read")
	}
	grew := after.Children - before.Children
	if grew < used-after.Slack || grew > used+after.Slack {
		t.Errorf("children's CPU grew by %s, the reaped child used %s (slack %s)", grew, used, after.Slack)
	}
	if after.Clock < before.Clock {
		t.Errorf("clock went back: %s, then %s", before.Clock, after.Clock)
	}
	if _, ok := (FS{Root: t.TempDir()}).ProcessCPU(os.Getpid(), nil, nil); ok {
		t.Errorf("ProcessCPU under a fixture root read something")
	}

	// A live child that has used some CPU, stopped so that its clock
	// stays put between the readings.
	live := exec.Command("sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; kill -STOP $$; sleep 60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	var st procfs.Stat
	var err error
	if !testenv.Await(10*time.Second, func() bool {
		st, err = procfs.New("").Proc(live.Process.Pid).Stat()
		return err == nil && st.State == 'T'
	}) {
		t.Fatalf("the child did not stop: %+v %v", st, err)
	}
	walked, ok1 := f.ProcessCPU(os.Getpid(), nil, nil)
	parents := map[int]int{}
	pids, _ := procfs.New("").PIDs()
	for _, p := range pids {
		if st, err := procfs.New("").Proc(p).Stat(); err == nil {
			parents[p] = st.PPID
		}
	}
	listed, ok2 := f.ProcessCPU(os.Getpid(), ChildrenFromList(parents), nil)
	if !ok1 || !ok2 || walked.Children != listed.Children || walked.Children-after.Children < time.Millisecond {
		t.Errorf("children's CPU with a stopped child: walked %s, listed %s (%v, %v); reaped alone %s", walked.Children, listed.Children, ok1, ok2, after.Children)
	}
}

// TestIODeniedWithPtrace: where reading another process's /proc/PID/io is
// refused to this process although it has CAP_SYS_PTRACE (here pid 1, which
// runs in another user namespace or is not dumpable), the problem names the
// file once and does not tell it to grant CAP_SYS_PTRACE.
func TestIODeniedWithPtrace(t *testing.T) {
	st, err := procfs.New("/").Self().Status()
	if err != nil {
		t.Fatal(err)
	}
	ptrace := st.HasCapEff && st.CapEff&(1<<19) != 0 // CAP_SYS_PTRACE
	if _, err := os.ReadFile("/proc/1/io"); !errors.Is(err, os.ErrPermission) || !ptrace {
		t.Skipf("needs a machine whose /proc/1/io this process, with CAP_SYS_PTRACE, may not read (here: %v, CAP_SYS_PTRACE %v)", err, ptrace)
	}
	s, err := FS{}.Snapshot(1, "")
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, p := range s.Problems {
		if p.Code == record.WarnIONotMeasured {
			text = p.Text
		}
	}
	if strings.Count(text, "/proc/1/io") != 1 || strings.Contains(text, "without CAP_SYS_PTRACE") || strings.Contains(text, "grant") {
		t.Errorf("the problem says %q; want /proc/1/io named once and no advice to grant CAP_SYS_PTRACE", text)
	}
}
