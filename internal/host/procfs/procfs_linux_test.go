package procfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test binary doubles as the child process the tests read through the
// real /proc: PROCFS_TEST_CHILD=serve answers commands on stdin,
// PROCFS_TEST_CHILD=exit exits at once.
func TestMain(m *testing.M) {
	switch os.Getenv("PROCFS_TEST_CHILD") {
	case "exit":
		os.Exit(0)
	case "serve":
		// Keep the main thread for this goroutine, so that no thread
		// the commands end is the main one (the runtime never ends it).
		runtime.LockOSThread()
		if err := serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serve runs commands, one a line, answering each with one line:
//
//	threads N   start N threads that live as long as the process; print their tids
//	thread      start a thread that waits; print its tid
//	endthread   end that thread
//	churn       start and end threads continuously, each living about 200 µs
//	stop        stop churning; print how many threads were started
func serve(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	var end, ended chan struct{}
	var stop atomic.Bool
	churned := make(chan int)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		reply := "ok"
		switch f[0] {
		case "threads":
			n, _ := strconv.Atoi(f[1])
			tids := make(chan int)
			for range n {
				go func() {
					runtime.LockOSThread()
					tids <- unix.Gettid()
					select {}
				}()
			}
			var s []string
			for range n {
				s = append(s, strconv.Itoa(<-tids))
			}
			reply = strings.Join(s, " ")
		case "thread":
			end, ended = make(chan struct{}), make(chan struct{})
			tid := make(chan int)
			go func() {
				// A goroutine that returns while locked ends its
				// thread.
				runtime.LockOSThread()
				tid <- unix.Gettid()
				<-end
				close(ended)
			}()
			reply = strconv.Itoa(<-tid)
		case "endthread":
			close(end)
			<-ended
		case "churn":
			stop.Store(false)
			go func() {
				n := 0
				for !stop.Load() {
					done := make(chan struct{})
					go func() {
						runtime.LockOSThread()
						time.Sleep(200 * time.Microsecond) // the short-lived thread's life
						close(done)
					}()
					<-done
					n++
				}
				churned <- n
			}()
		case "stop":
			stop.Store(true)
			reply = strconv.Itoa(<-churned)
		default:
			return fmt.Errorf("unknown command %q", f[0])
		}
		if _, err := fmt.Fprintln(out, reply); err != nil {
			return err
		}
	}
	return sc.Err()
}

type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	pid int
}

func startChild(t *testing.T) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCFS_TEST_CHILD=serve")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return &child{cmd: cmd, in: in, out: bufio.NewReader(out), pid: cmd.Process.Pid}
}

func (c *child) do(t *testing.T, command string) string {
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

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkSorted fails unless tids rise strictly and hold every id of want.
func checkSorted(t *testing.T, tids, want []int) {
	t.Helper()
	for i := 1; i < len(tids); i++ {
		if tids[i] <= tids[i-1] {
			t.Fatalf("tasks not sorted and unique: %v", tids)
		}
	}
	for _, w := range want {
		if !slices.Contains(tids, w) {
			t.Fatalf("tasks %v miss tid %d", tids, w)
		}
	}
}

// TestChildThreads reads a child with threads of its own: the threads it
// reports from gettid(2) are listed, each thread's stat and status say it
// belongs to the child, and the child's identity is the test binary's.
func TestChildThreads(t *testing.T) {
	c := startChild(t)
	p := New("/").Proc(c.pid)
	stable := []int{c.pid}
	for _, s := range strings.Fields(c.do(t, "threads 4")) {
		stable = append(stable, atoi(t, s))
	}
	tids, err := p.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	checkSorted(t, tids, stable)

	st, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	comm := filepath.Base(exe)
	comm = comm[:min(len(comm), 15)]
	if st.PID != c.pid || st.PPID != os.Getpid() || st.Comm != comm || st.State == 'Z' || st.MinFlt == 0 {
		t.Errorf("stat of the child: %+v; want pid %d, parent %d, comm %q, alive, page faults", st, c.pid, os.Getpid(), comm)
	}
	for _, tid := range stable {
		ts, err := p.Task(tid).Stat()
		if err != nil {
			t.Fatal(err)
		}
		if ts.PID != tid || ts.StartTime < st.StartTime || ts.Comm != comm || ts.Exited() {
			t.Errorf("stat of tid %d: %+v (process started at %d)", tid, ts, st.StartTime)
		}
		status, err := p.Task(tid).Status()
		if err != nil {
			t.Fatal(err)
		}
		if status.Tgid != c.pid || status.Pid != tid || status.PPid != os.Getpid() || !status.HasCtxt || !status.HasRSS {
			t.Errorf("status of tid %d: %+v", tid, status)
		}
		// /proc/TID answers for a thread too, though it is not listed.
		if s, err := New("/").Proc(tid).Status(); err != nil || s.Tgid != c.pid {
			t.Errorf("status of /proc/%d: %+v, %v", tid, s, err)
		}
	}
	// The thread count of stat and status match the listing when nothing
	// changed around them (the runtime may start a thread at any time).
	matched := false
	for try := 0; try < 20 && !matched; try++ {
		a, err1 := p.Tasks()
		s, err2 := p.Stat()
		status, err3 := p.Status()
		b, err4 := p.Tasks()
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatal(err)
		}
		matched = slices.Equal(a, b) && s.NumThreads == len(a) && status.Threads == len(a)
	}
	if !matched {
		t.Errorf("stat's and status's thread counts never matched the listing")
	}

	if got, deleted, err := p.Exe(); got != exe || deleted || err != nil {
		t.Errorf("exe: %q %v %v, want %q", got, deleted, err, exe)
	}
	if got, err := p.Comm(); got != comm || err != nil {
		t.Errorf("comm: %q, %v", got, err)
	}
	if err := p.Alive(); err != nil {
		t.Errorf("alive: %v", err)
	}
	cg, err := p.Cgroup()
	if err != nil {
		t.Fatal(err)
	}
	if own, err := New("/").Self().Cgroup(); own != cg || err != nil {
		t.Errorf("the child is in cgroup %s, this process in %s (%v)", cg, own, err)
	}
}

// TestThreadExits ends a thread the listing showed: reading it then says
// gone, and it leaves the listing.
func TestThreadExits(t *testing.T) {
	c := startChild(t)
	p := New("/").Proc(c.pid)
	tid := atoi(t, c.do(t, "thread"))
	tids, err := p.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	checkSorted(t, tids, []int{c.pid, tid})
	c.do(t, "endthread")
	// The thread ends just after its goroutine returned.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err = p.Task(tid).Stat()
		if err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond) // a deadline poll (testenv imports procfs: no testenv.Await here)
	}
	want := fmt.Sprintf("tid %d of pid %d: no such process", tid, c.pid)
	if !errors.Is(err, ErrGone) || !errors.Is(err, fs.ErrNotExist) || err.Error() != want {
		t.Fatalf("stat of the ended thread: %v, want ErrGone saying %q", err, want)
	}
	if err := p.Task(tid).Alive(); !errors.Is(err, ErrGone) {
		t.Errorf("alive: %v", err)
	}
	tids, err = p.Tasks()
	if err != nil || slices.Contains(tids, tid) {
		t.Errorf("tasks after the thread ended: %v, %v", tids, err)
	}
}

// TestTasksWhileThreadsComeAndGo lists a child that starts and ends threads
// without pause: every listing succeeds, is sorted and holds the threads
// that stay; reading a listed thread either works or says it is gone. It
// lists until it has seen 20 of the passing threads.
func TestTasksWhileThreadsComeAndGo(t *testing.T) {
	c := startChild(t)
	p := New("/").Proc(c.pid)
	stable := []int{c.pid}
	for _, s := range strings.Fields(c.do(t, "threads 2")) {
		stable = append(stable, atoi(t, s))
	}
	before, err := p.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	c.do(t, "churn")
	seen := map[int]bool{}
	gone := 0
	// At least 300 listings, and on until 20 threads that came and went
	// were seen.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < 300 || len(seen) < 20 && time.Now().Before(deadline); i++ {
		tids, err := p.Tasks()
		if err != nil {
			t.Fatalf("tasks while threads come and go: %v", err)
		}
		checkSorted(t, tids, stable)
		for _, tid := range tids {
			if slices.Contains(before, tid) {
				continue
			}
			seen[tid] = true
			s, err := p.Task(tid).Stat()
			switch {
			case errors.Is(err, ErrGone):
				gone++
			case err != nil:
				t.Fatalf("stat of tid %d: %v", tid, err)
			case s.PID != tid:
				t.Fatalf("stat of tid %d says %d", tid, s.PID)
			}
		}
	}
	started := atoi(t, c.do(t, "stop"))
	if len(seen) < 20 {
		t.Errorf("the listings saw %d of the %d threads started meanwhile, want 20", len(seen), started)
	}
	t.Logf("%d threads started, %d seen, %d gone before their stat was read", started, len(seen), gone)
}

// TestZombieChild: a child that exited and was not waited for is a zombie
// named with its parent; once reaped, every reader says gone.
func TestZombieChild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCFS_TEST_CHILD=exit")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := false
	t.Cleanup(func() {
		if !reaped {
			cmd.Wait()
		}
	})
	pid := cmd.Process.Pid
	p := New("/").Proc(pid)
	deadline := time.Now().Add(10 * time.Second)
	for err = p.Alive(); err == nil && time.Now().Before(deadline); err = p.Alive() {
		time.Sleep(5 * time.Millisecond) // a deadline poll, as above
	}
	st, serr := p.Stat()
	want := fmt.Sprintf("pid %d (%s) is a zombie: it has exited and its parent, pid %d, has not reaped it: the process has exited", pid, st.Comm, os.Getpid())
	if !errors.Is(err, ErrZombie) || errors.Is(err, ErrGone) || err.Error() != want || serr != nil {
		t.Fatalf("alive: %v (stat: %v); want ErrZombie saying %q", err, serr, want)
	}
	if st.State != 'Z' || st.NumThreads != 1 || st.PPID != os.Getpid() {
		t.Errorf("stat of the zombie: %+v", st)
	}
	if tids, err := p.Tasks(); err != nil || !slices.Equal(tids, []int{pid}) {
		t.Errorf("tasks of the zombie: %v, %v; want its main thread alone", tids, err)
	}
	if s, err := p.Status(); err != nil || s.State != 'Z' || s.HasRSS {
		t.Errorf("status of the zombie: %+v, %v", s, err)
	}
	if _, _, err := p.Exe(); err == nil || errors.Is(err, ErrGone) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("exe of the zombie: %v; want no executable, but not gone", err)
	}

	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	reaped = true
	gone := fmt.Sprintf("pid %d: no such process", pid)
	check := func(what string, err error) {
		if !errors.Is(err, ErrGone) || !errors.Is(err, fs.ErrNotExist) || err.Error() != gone {
			t.Errorf("%s once reaped: %v; want ErrGone saying %q", what, err, gone)
		}
	}
	check("alive", p.Alive())
	_, err = p.Stat()
	check("stat", err)
	_, err = p.Status()
	check("status", err)
	_, err = p.Comm()
	check("comm", err)
	_, _, err = p.Exe()
	check("exe", err)
	_, err = p.Tasks()
	check("tasks", err)
	_, err = p.Cgroup()
	check("cgroup", err)
}

// TestSelf reads this process: its pid, the calling thread among its tasks,
// its executable as os.Executable finds it, and its cgroup's folder, whose
// cgroup.procs lists it.
func TestSelf(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f := New("/")
	self := f.Self()
	if s, err := self.Status(); err != nil || s.Pid != os.Getpid() || s.Tgid != os.Getpid() || s.EUID != os.Geteuid() {
		t.Errorf("status of self: %+v, %v", s, err)
	}
	if tids, err := self.Tasks(); err != nil || !slices.Contains(tids, unix.Gettid()) {
		t.Errorf("tasks of self: %v, %v; want tid %d among them", tids, err, unix.Gettid())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := self.Exe(); got != exe || err != nil {
		t.Errorf("exe of self: %q, %v; want %q", got, err, exe)
	}
	if err := f.Proc(os.Getpid()).Alive(); err != nil {
		t.Errorf("alive: %v", err)
	}
	// A file this test opens is among the descriptors, and its link
	// names it; one closed since is not.
	tmp, err := os.CreateTemp(t.TempDir(), "fd")
	if err != nil {
		t.Fatal(err)
	}
	fds, err := self.FDs()
	if err != nil || !slices.Contains(fds, int(tmp.Fd())) || !slices.Contains(fds, 0) || !slices.IsSorted(fds) {
		t.Errorf("fds of self: %v, %v; want them sorted, with 0 and %d", fds, err, tmp.Fd())
	}
	if got, err := self.FDTarget(int(tmp.Fd())); got != tmp.Name() || err != nil {
		t.Errorf("fd %d of self: %q, %v; want %s", tmp.Fd(), got, err, tmp.Name())
	}
	fd := int(tmp.Fd())
	tmp.Close()
	if got, err := self.FDTarget(fd); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("closed fd %d of self: %q, %v; want it gone", fd, got, err)
	}
	if _, err := f.Proc(1 << 30).FDs(); !errors.Is(err, ErrGone) {
		t.Errorf("fds of a missing pid: %v", err)
	}
	if _, err := f.PerfEventParanoid(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("perf_event_paranoid: %v", err)
	}

	cg, err := self.Cgroup()
	if errors.Is(err, errNoCgroup2) {
		return // cgroup v1 only: nothing more to find
	}
	if err != nil {
		t.Fatal(err)
	}
	dir, err := f.CgroupDir(cg)
	if errors.Is(err, errNoCgroup2) {
		if _, merr := f.Cgroup2Mount(); !errors.Is(merr, errNoCgroup2) {
			t.Errorf("CgroupDir says no cgroup2 mount, Cgroup2Mount: %v", merr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Fields(string(b)), strconv.Itoa(os.Getpid())) {
		t.Errorf("%s/cgroup.procs does not list pid %d", dir, os.Getpid())
	}
}

// TestMountinfoMatchesMounts compares the parsed mount table with
// /proc/self/mounts, the kernel's other listing of the same mounts.
func TestMountinfoMatchesMounts(t *testing.T) {
	ms, err := New("/").Mountinfo()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line) // source, mount point, type, options
		want = append(want, unescape(f[1])+" "+unescape(f[2]))
	}
	for _, m := range ms {
		got = append(got, m.MountPoint+" "+m.FSType)
	}
	if !slices.Equal(got, want) {
		t.Errorf("mountinfo:\n%s\nmounts:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !slices.ContainsFunc(ms, func(m mount) bool { return m.MountPoint == "/proc" && m.FSType == "proc" }) {
		t.Errorf("no proc mount at /proc in %+v", ms)
	}
}
