package measure

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/mysqld/sandbox"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// helperProc is a helper process of this test binary (testenv.Helpers).
type helperProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	exited chan time.Time // when Wait returned
}

// startHelper starts helper name with args and waits for its "ready".
func startHelper(t *testing.T, name string, args ...string) *helperProc {
	t.Helper()
	cmd := testenv.HelperCommand(t, name, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperProc{cmd: cmd, in: in, out: bufio.NewScanner(out), exited: make(chan time.Time, 1)}
	h.expect(t, "ready")
	go func() { cmd.Wait(); h.exited <- time.Now() }()
	t.Cleanup(func() { cmd.Process.Kill(); in.Close() })
	return h
}

// expect reads the helper's next line and fails t unless it is want.
func (h *helperProc) expect(t *testing.T, want string) {
	t.Helper()
	if !h.out.Scan() || h.out.Text() != want {
		t.Fatalf("helper said %q (%v), want %q", h.out.Text(), h.out.Err(), want)
	}
}

// moveTo puts process pid into cgroup dir.
func moveTo(t *testing.T, dir string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatalf("move pid %d into %s: %v", pid, dir, err)
	}
}

// testCPUClock is process pid's CPU-time clock in ns, read by the test
// itself (clock_getcpuclockid's clock of a pid, CPUCLOCK_SCHED).
func testCPUClock(t *testing.T, pid int) float64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(^uint32(pid)<<3)|2, &ts); err != nil {
		t.Fatalf("CPU clock of pid %d: %v", pid, err)
	}
	return float64(ts.Nano())
}

// hasWarning reports whether r has a warning of code whose text holds s.
func hasWarning(r *record.Record, code record.Code, s string) bool {
	return slices.ContainsFunc(r.Warnings, func(w record.Warning) bool { return w.Code == code && strings.Contains(w.Text, s) })
}

// kernelOff is how far r's kernel CPU time is from ref (ns), as a share
// of ref.
func kernelOff(t *testing.T, r *record.Record, ref float64) float64 {
	t.Helper()
	if r.KernelCPU == nil {
		t.Fatalf("no kernel CPU time in the Record: %s %q", r.Error, r.WarningTexts())
	}
	return (r.KernelCPU.Seconds*1e9 - ref) / ref
}

var exitedInside = regexp.MustCompile(`pid \d+ exited ([0-9.]+) s into the window of ([0-9.]+) s: its counts cover its ` +
	`life up to its exit, and the window's rates per second divide by all`)

// TestWindowProcessLeft: a window the measured process left is never ok.
// A process that exits inside the window makes it partial, its Error
// saying when (after the last moment the test saw it alive, and not long
// after the test saw it gone) and that the rates divide by the whole
// window; one that exited during the warm-up makes it failed, saying that
// nothing of it was measured. Per thread, and in cgroup mode (as root).
// On the code before, both windows were ok with only a warning that /proc
// could not be read at the window's end.
func TestWindowProcessLeft(t *testing.T) {
	needLinux(t)
	list, sys := events(t, "task-clock,context-switches")
	for _, cgroup := range []bool{false, true} {
		t.Run(fmt.Sprintf("cgroup=%v", cgroup), func(t *testing.T) {
			dir := ""
			if cgroup {
				testenv.NeedRoot(t, "cgroup mode opens counters on every CPU")
				dir = testenv.Cgroup(t)
			}
			// Exits 400 ms after its start, inside a 1 s window.
			h := startHelper(t, "spin", "400", "go")
			if dir != "" {
				moveTo(t, dir, h.cmd.Process.Pid)
			}
			var lastAlive atomic.Int64 // ns after base
			base := time.Now()
			stop := make(chan struct{})
			go func() {
				p := procfs.New("").Proc(h.cmd.Process.Pid)
				for {
					at := time.Since(base)
					if p.Alive() == nil {
						lastAlive.Store(int64(at))
					}
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			s, err := Start(context.Background(), Config{Pid: h.cmd.Process.Pid, Events: list, System: sys, Cgroup: cgroup})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			fmt.Fprintln(h.in, "go")
			r, err := s.Measure(context.Background(), WindowSpec{Duration: time.Second})
			close(stop)
			if err != nil {
				t.Fatal(err)
			}
			gone := <-h.exited
			m := exitedInside.FindStringSubmatch(r.Error)
			if r.Outcome != record.OutcomePartial || m == nil {
				t.Fatalf("outcome %s (%q), want partial saying when the process exited inside the window", r.Outcome, r.Error)
			}
			into, _ := strconv.ParseFloat(m[1], 64)
			at := r.Window.Start.Add(time.Duration(into * 1e9))
			alive := base.Add(time.Duration(lastAlive.Load()))
			slack := time.Duration(0.1 * r.Window.Seconds * 1e9)
			t.Logf("exited %.3f s into the window of %.3f s; last seen alive %.3f s, reaped %.3f s into it", into, r.Window.Seconds,
				alive.Sub(r.Window.Start).Seconds(), gone.Sub(r.Window.Start).Seconds())
			if into <= 0 || into >= r.Window.Seconds || at.Before(alive.Add(-time.Millisecond)) || at.After(gone.Add(slack)) {
				t.Errorf("exit %.3f s into the window: want after it was last seen alive (%.3f s) and before it was reaped (%.3f s, give or take a tenth of the window)",
					into, alive.Sub(r.Window.Start).Seconds(), gone.Sub(r.Window.Start).Seconds())
			}

			// Gone during the warm-up: failed.
			h = startHelper(t, "spin", "50", "go")
			if dir != "" {
				moveTo(t, dir, h.cmd.Process.Pid)
			}
			s2, err := Start(context.Background(), Config{Pid: h.cmd.Process.Pid, Events: list, System: sys, Cgroup: cgroup})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			fmt.Fprintln(h.in, "go")
			r, err = s2.Measure(context.Background(), WindowSpec{Warmup: 500 * time.Millisecond, Duration: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != record.OutcomeFailed || !strings.Contains(r.Error, fmt.Sprintf("pid %d exited before the window opened", h.cmd.Process.Pid)) ||
				!strings.Contains(r.Error, "nothing of it was measured") {
				t.Errorf("gone before the window: outcome %s (%q), want failed saying it exited before the window opened", r.Outcome, r.Error)
			}
		})
	}
}

// TestWindowCgroupMove: a process alone in a cgroup v2, spinning, moved to
// another cgroup inside the window. In cgroup mode, which counts the first
// cgroup, the window is partial, saying where it went (on the code before
// it was ok, counting part of the process's CPU). Per thread, where the
// first cgroup's usage_usec was the reference, the Record's CPU time falls
// back to the process's CPU clock and a warning says why: it is within 3%
// of the process's CPU clock read by the test around the window (at its
// rate), unless the host was busy, and no cpu-gap warning says task-clock
// ran above (on the code before: 40–59% above the first cgroup's).
func TestWindowCgroupMove(t *testing.T) {
	needLinux(t)
	testenv.NeedRoot(t, "moving a process between cgroups")
	list, sys := events(t, "task-clock,context-switches")
	for _, cgroup := range []bool{true, false} {
		t.Run(fmt.Sprintf("cgroup=%v", cgroup), func(t *testing.T) {
			a, b := testenv.Cgroup(t), testenv.Cgroup(t)
			h := startHelper(t, "spin", "30000")
			pid := h.cmd.Process.Pid
			moveTo(t, a, pid)
			s, err := Start(context.Background(), Config{Pid: pid, Events: list, System: sys, Cgroup: cgroup})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c0, t0 := testCPUClock(t, pid), time.Now()
			r, err := s.Measure(context.Background(), WindowSpec{Duration: time.Second, Opened: func(time.Time) {
				time.AfterFunc(400*time.Millisecond, func() { os.WriteFile(filepath.Join(b, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644) })
			}})
			c1, t1 := testCPUClock(t, pid), time.Now()
			if err != nil {
				t.Fatal(err)
			}
			to := "/" + filepath.Base(b)
			if cgroup {
				if r.Outcome != record.OutcomePartial || !strings.Contains(r.Error, "left the cgroup that cgroup mode counts: it moved from cgroup ") ||
					!strings.Contains(r.Error, to+" inside the window") {
					t.Errorf("outcome %s (%q), want partial saying the process moved to %s", r.Outcome, r.Error, to)
				}
				return
			}
			ref := (c1 - c0) / t1.Sub(t0).Seconds() * r.Window.Seconds
			off := kernelOff(t, r, ref)
			t.Logf("kernel CPU %.1f ms (%s), the process's clock %.1f ms at its rate around the window (%+.2f%%): %s %q",
				r.KernelCPU.Seconds*1e3, r.KernelCPU.Source, ref/1e6, 100*off, r.Outcome, r.WarningTexts())
			if r.KernelCPU.Source != record.KernelCPUProcess || !hasWarning(r, record.WarnGeneral, "moved from cgroup ") {
				t.Errorf("kernel CPU time from %s, warnings %q: want the process's CPU clock and a warning that it moved", r.KernelCPU.Source, r.WarningTexts())
			}
			if math.Abs(off) > 0.03 && !hasWarning(r, record.WarnBusy, "") {
				t.Errorf("kernel CPU time %+.2f%% off the process's CPU clock on a host that was not busy", 100*off)
			}
			if hasWarning(r, record.WarnCPUGap, "% above") || r.Outcome != record.OutcomeOK {
				t.Errorf("outcome %s (%q), warnings %q: want ok, task-clock not above the CPU time", r.Outcome, r.Error, r.WarningTexts())
			}
		})
	}
}

// TestWindowChildrenNotWaited: a process that ignores SIGCHLD, so that the
// kernel reaps its children itself, starts a child of about 20 ms of CPU
// every 50 ms; its counters, inherited, count the children. Per thread:
//   - in a cgroup it shares with other processes, the Record's CPU time
//     (its CPU clock and its children's) says it leaves out the children
//     not waited for, and so does a warning; no cpu-gap warning says
//     task-clock ran above it (on the code before: "N% above");
//   - alone in a cgroup v2 with its children, once the child it had at
//     the attach (a short sleep, which no counter counts) is gone, the
//     Record's CPU time is the cgroup's usage_usec: within 3% of the
//     usage_usec the test reads around the window (at its rate), unless
//     the host was busy, and no cpu-gap warning says task-clock ran above
//     it (on the code before, the sleep at the attach kept the process's
//     clock as the reference, which misses the children: "N% above").
func TestWindowChildrenNotWaited(t *testing.T) {
	needLinux(t)
	list, sys := events(t, "task-clock,context-switches")
	for _, alone := range []bool{false, true} {
		t.Run(fmt.Sprintf("alone=%v", alone), func(t *testing.T) {
			h := startHelper(t, "forker", "0.3", "50")
			pid := h.cmd.Process.Pid
			dir := ""
			if alone {
				testenv.NeedRoot(t, "a cgroup of the test's own")
				dir = testenv.Cgroup(t)
				moveTo(t, dir, pid)
			}
			fmt.Fprintln(h.in, "go")
			sleeper := 0
			if !h.out.Scan() || !strings.HasPrefix(h.out.Text(), "forking ") {
				t.Fatalf("helper said %q (%v), want forking and its sleep's pid", h.out.Text(), h.out.Err())
			} else if sleeper, _ = strconv.Atoi(strings.TrimPrefix(h.out.Text(), "forking ")); sleeper <= 0 {
				t.Fatalf("helper said %q, want its sleep's pid", h.out.Text())
			}
			if st, err := procfs.New("").Proc(pid).Status(); err != nil || !st.IgnoresChildren() {
				t.Fatalf("the helper does not ignore SIGCHLD: %+v %v", st, err)
			}
			s, err := Start(context.Background(), Config{Pid: pid, Events: list, System: sys})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// The sleep child is gone (the kernel reaped it).
			gone := func() bool { return errors.Is(procfs.New("").Proc(sleeper).Alive(), procfs.ErrGone) }
			if !testenv.Await(10*time.Second, gone) {
				t.Fatalf("the helper's sleep (pid %d) did not end within 10 s", sleeper)
			}
			var u0, u1 float64
			if alone {
				u0 = testenv.CgroupUsage(t, dir)
			}
			t0 := time.Now()
			r, err := s.Measure(context.Background(), WindowSpec{Duration: time.Second})
			t1 := time.Now()
			if alone {
				u1 = testenv.CgroupUsage(t, dir)
			}
			if err != nil {
				t.Fatal(err)
			}
			tc, _ := r.Counter("task-clock")
			k := r.KernelCPU
			if k == nil {
				t.Fatalf("no kernel CPU time: %s %q", r.Error, r.WarningTexts())
			}
			t.Logf("task-clock %.1f ms, kernel CPU %.1f ms (%s, leaving out %q): %s %q", tc.Value/1e6, k.Seconds*1e3, k.Source, k.LeavesOut, r.Outcome, r.WarningTexts())
			if hasWarning(r, record.WarnCPUGap, "% above") {
				t.Errorf("a cpu-gap warning says task-clock ran above the CPU time: %q", r.WarningTexts())
			}
			if !alone {
				if k.Source != record.KernelCPUProcess || k.LeavesOut != record.KernelCPUNotWaited || !hasWarning(r, record.WarnGeneral, "children not waited for") {
					t.Errorf("kernel CPU time from %s leaving out %q, warnings %q: want the process's, leaving out the children not waited for, and a warning saying so",
						k.Source, k.LeavesOut, r.WarningTexts())
				}
				return
			}
			ref := (u1 - u0) / t1.Sub(t0).Seconds() * r.Window.Seconds
			off := kernelOff(t, r, ref)
			t.Logf("the cgroup's usage_usec at its rate around the window %.1f ms (%+.2f%%)", ref/1e6, 100*off)
			if k.Source != record.KernelCPUAlone || k.LeavesOut != "" {
				t.Errorf("kernel CPU time from %s leaving out %q: want the usage_usec of the cgroup it is alone in, leaving out nothing", k.Source, k.LeavesOut)
			}
			if math.Abs(off) > 0.03 && !hasWarning(r, record.WarnBusy, "") {
				t.Errorf("kernel CPU time %+.2f%% off the cgroup's usage_usec on a host that was not busy", 100*off)
			}
		})
	}
}

// TestKernelCPUPerQuery: CPU per query from Records of a sandbox server
// under sysbench point-select (2 threads, 1.5 s windows mid-load) is the
// kernel's accounting of the server's CPU: cpu/o as package analysis
// computes it is within 2% of the CPU time the test reads itself around
// each window (at its rate over the window's seconds) divided by the
// window's queries, unless the host was busy: in cgroup mode and per
// thread with the server alone in its cgroup, the cgroup's usage_usec; per
// thread with the server in a cgroup it shares, its CPU clock. The Records
// say which source they took.
func TestKernelCPUPerQuery(t *testing.T) {
	needLinux(t)
	testenv.NeedRoot(t, "cgroup mode opens counters on every CPU")
	testdb.NeedSysbench(t)
	alone := testdb.New(t, testdb.Options{Cgroup: true})
	if alone.Cgroup == "" {
		t.Fatalf("the server is in no cgroup of its own: %v", alone.CgroupErr)
	}
	shared := testdb.Shared(t)
	list, sys := events(t, "task-clock,context-switches")
	for _, tc := range []struct {
		name   string
		srv    *sandbox.Server
		cgroup bool
		source string
	}{
		{"cgroup mode", alone, true, record.KernelCPUCgroup},
		{"per thread, alone in its cgroup", alone, false, record.KernelCPUAlone},
		{"per thread, sharing its cgroup", shared, false, record.KernelCPUProcess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := Start(ctx, Config{Pid: tc.srv.Pid, Events: list, System: sys, DB: rootDB(t, tc.srv), Cgroup: tc.cgroup})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			read := func() float64 {
				if tc.source == record.KernelCPUProcess {
					return testCPUClock(t, tc.srv.Pid)
				}
				return testenv.CgroupUsage(t, tc.srv.Cgroup)
			}
			_, output := runLoad(t, tc.srv, "--threads=2", "--time=5")
			testdb.WaitStatus(t, tc.srv, "Handler_read_key", 100) // sysbench is connected and running
			for i := range 2 {
				c0, t0 := read(), time.Now()
				r, err := s.Measure(ctx, WindowSpec{Duration: 1500 * time.Millisecond})
				c1, t1 := read(), time.Now()
				if err != nil {
					t.Fatal(err)
				}
				if r.Outcome != record.OutcomeOK || r.Ops.Count <= 0 || r.KernelCPU == nil {
					t.Fatalf("window %d: outcome %s (%s), %v queries, kernel CPU %+v", i+1, r.Outcome, r.Error, r.Ops.Count, r.KernelCPU)
				}
				ref := (c1 - c0) / t1.Sub(t0).Seconds() * r.Window.Seconds
				want := ref / 1e3 / r.Ops.Count
				cmp, err := analysis.New([]*record.Record{r}, r.Version, analysis.Options{})
				if err != nil {
					t.Fatal(err)
				}
				got := cmp.Value(r.Key(), analysis.CPUPerOp)
				tclock, _ := r.Counter("task-clock")
				off := got.Value/want - 1
				t.Logf("window %d: cpu/o %.2f µs, the test's %s %.2f µs (%+.2f%%); task-clock %.2f µs a query, %+.2f µs a context switch; busy %v",
					i+1, got.Value, tc.source, want, 100*off, tclock.Value/1e3/r.Ops.Count, r.KernelCPU.GapPerSwitch, hasWarning(r, record.WarnBusy, ""))
				if r.KernelCPU.Source != tc.source {
					t.Errorf("window %d: the Record's CPU time is from %s, want %s", i+1, r.KernelCPU.Source, tc.source)
				}
				if !got.OK() || math.Abs(off) > 0.02 && !hasWarning(r, record.WarnBusy, "") {
					t.Errorf("window %d: cpu/o %+v is %+.2f%% off the CPU time the test read (%.2f µs a query), on a host that was not busy", i+1, got, 100*off, want)
				}
			}
			output()
		})
	}
}

// TestKernelCPUBackward: a reference that reads less at the window's end
// than at its start (a cgroup made anew, a counter reset) is not the
// window's CPU time: the Record gets no KernelCPU (CPU per op falls back to
// task-clock) and a warning saying so, instead of a CPU time of 0 that
// reads as measured; task-clock is not judged against it.
func TestKernelCPUBackward(t *testing.T) {
	testenv.NeedRoot(t, "counters on this test's own threads")
	l, _ := events(t, "task-clock,context-switches")
	att, err := perfevent.Attach(os.Getpid(), l.Events, perfevent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	all, err := att.Read()
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{cfg: Config{Pid: os.Getpid()}, att: att}
	for _, tc := range []struct {
		name       string
		start, end float64 // the reference, ns
		backward   bool
	}{
		{"forward", 5e9, 5.8e9, false},
		{"backward", 5e9, 1e9, true},
	} {
		r := &record.Record{Outcome: record.OutcomeOK, Window: record.Window{Start: time.Now(), Seconds: 1}}
		start := edgeRef{proc: cpuRef{lo: tc.start, hi: tc.start}}
		end := edgeRef{proc: cpuRef{lo: tc.end, hi: tc.end}}
		s.kernelCPU(r, all, all, start, end)
		warned := false
		for _, w := range r.Warnings {
			warned = warned || strings.Contains(w.Text, "went backward over the window")
		}
		switch {
		case tc.backward && (r.KernelCPU != nil || !warned):
			t.Errorf("%s: KernelCPU %+v, warnings %v; want none and a warning that it went backward", tc.name, r.KernelCPU, r.Warnings)
		case tc.backward && r.Outcome != record.OutcomeOK:
			t.Errorf("%s: outcome %s (%s): task-clock was judged against a reference that went backward", tc.name, r.Outcome, r.Error)
		case !tc.backward && (r.KernelCPU == nil || math.Abs(r.KernelCPU.Seconds-0.8) > 1e-9 || warned):
			t.Errorf("%s: KernelCPU %+v, warnings %v; want 0.8 s and no warning", tc.name, r.KernelCPU, r.Warnings)
		}
	}
}
