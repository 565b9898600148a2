package measure

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

// churnProc is perfevent's test workload (perfevent/internal/workload),
// driven by one-line commands.
type churnProc struct {
	cmd *exec.Cmd
	in  *os.File
	out *bufio.Scanner
}

// startChurnProc builds and starts the workload, in cgroup dir (where it
// starts when dir is "").
func startChurnProc(t *testing.T, dir string) *churnProc {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "workload")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/perfbench/perfbench/perfevent/internal/workload").CombinedOutput(); err != nil {
		t.Fatalf("build the workload: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
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
	p := &churnProc{cmd: cmd, in: in.(*os.File), out: bufio.NewScanner(out)}
	t.Cleanup(func() {
		fmt.Fprintln(p.in, "quit")
		p.in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	if line := p.do(t, ""); !strings.HasPrefix(line, "ready ") {
		t.Fatalf("workload said %q", line)
	}
	if dir == "" {
		return p
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatalf("move the workload into %s: %v", dir, err)
	}
	return p
}

// do sends a command (none when "") and returns the reply.
func (p *churnProc) do(t *testing.T, command string) string {
	t.Helper()
	if command != "" {
		fmt.Fprintln(p.in, command)
	}
	if !p.out.Scan() {
		t.Fatalf("workload: no reply to %q: %v", command, p.out.Err())
	}
	return p.out.Text()
}

// delayFirstOpen has strace delay the return of this test process's first
// perf_event_open by 3 ms (fault injection); stop detaches it.
func delayFirstOpen(t *testing.T, strace string) (stop func()) {
	t.Helper()
	cmd := exec.Command(strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=perf_event_open",
		"-e", "inject=perf_event_open:delay_exit=3000:when=1", "-p", strconv.Itoa(os.Getpid()))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() {
		if cmd.Process != nil {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			cmd.Process = nil
		}
	}
	t.Cleanup(stop)
	// Every thread of this process is traced: TracerPid is set.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc/self/task")
		traced := len(ents) > 0
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join("/proc/self/task", e.Name(), "status"))
			if !bytes.Contains(b, []byte("\nTracerPid:\t")) || bytes.Contains(b, []byte("\nTracerPid:\t0\n")) {
				traced = false
			}
		}
		if traced {
			return stop
		}
		if time.Now().After(deadline) {
			t.Fatal("strace did not attach in 10 s")
		}
	}
}

// TestChurnRecords measures, through measure's Records, a process in a
// cgroup v2 of its own that creates 500 short-lived threads a second, with
// 4 software events and 1 s windows; and the same process forking a child
// every 2 ms as well, with a 1 s warm-up and its first perf_event_open
// delayed 3 ms by strace. Each per thread and in cgroup mode. The
// reference is the cgroup's CPU time (cpu.stat usage_usec: the process and
// its children, exits included), read around each Measure, at its rate
// over the window's seconds.
//
// Every attach succeeds with every event supported. Every Record's
// task-clock is within 5% of the reference, or the Record is partial and
// its Error gives task-clock and the CPU time it missed (per thread with
// forks: 8–11% below, the CPU of the forks and exits its counters miss),
// or the Record's own check found task-clock within 5% of the CPU time
// read right at its counters and the host was busy (the reference's rate
// is unsteady then); per thread with threads alone, a cpu-gap warning
// (the context switches' slice) marks it too, and above the CPU time, in
// any case, a cpu-gap warning saying so. Each window's task-clock
// against the interval the Record checked it with is logged.
func TestChurnRecords(t *testing.T) {
	needLinux(t)
	testenv.NeedRoot(t, "cgroup mode opens counters on every CPU")
	strace := testenv.NeedBinary(t, "strace", "strace")
	n := testenv.ChurnWindows(t, 2)
	list, sys := events(t, "task-clock,context-switches,cpu-migrations,page-faults")
	for _, tc := range []struct {
		name   string
		fork   bool
		cgroup bool
	}{
		{"threads, per thread", false, false},
		{"threads, cgroup mode", false, true},
		{"threads and forks, first open delayed, per thread", true, false},
		{"threads and forks, first open delayed, cgroup mode", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testenv.Cgroup(t)
			w := startChurnProc(t, dir)
			w.do(t, "park 10")
			iters, warmup := 700_000, time.Duration(0)
			if tc.fork {
				iters, warmup = 300_000, time.Second
			}
			w.do(t, fmt.Sprintf("spawn 500 %d", iters))
			defer w.do(t, "spawn off")
			if tc.fork {
				w.do(t, "fork 2")
				defer w.do(t, "fork off")
			}
			stop := func() {}
			if tc.fork {
				stop = delayFirstOpen(t, strace)
			}
			s, err := Start(context.Background(), Config{Pid: w.cmd.Process.Pid, Events: list, System: sys, Cgroup: tc.cgroup})
			stop()
			if err != nil {
				t.Fatalf("attach: %v", err)
			}
			defer s.Close()
			if un := s.Attachment().Unsupported(); len(un) > 0 {
				t.Fatalf("not supported: %q", un)
			}
			partial, marked, beyond3, busy := 0, 0, 0, 0
			worst := 0.0 // the largest share task-clock was outside the Record's own interval, below < 0
			for i := range n {
				// The warm-up is waited here, so that the reference
				// spans the window alone: the workload's rate of CPU
				// changes when the host is busy.
				time.Sleep(warmup)
				u0, t0 := testenv.CgroupUsage(t, dir), time.Now()
				r, err := s.Measure(context.Background(), WindowSpec{Duration: time.Second})
				u1, t1 := testenv.CgroupUsage(t, dir), time.Now()
				if err != nil {
					t.Fatal(err)
				}
				c, ok := r.Counter("task-clock")
				if !ok || !c.Measured() {
					t.Fatalf("window %d: task-clock %+v: %s", i+1, c, r.Error)
				}
				ref := (u1 - u0) / t1.Sub(t0).Seconds() * r.Window.Seconds
				off := (c.Value - ref) / ref
				g := s.gap
				own := g.share()
				if g.off < 0 {
					own = -own
				}
				if math.Abs(own) > math.Abs(worst) {
					worst = own
				}
				has := func(code record.Code) bool {
					return slices.ContainsFunc(r.Warnings, func(w record.Warning) bool { return w.Code == code })
				}
				t.Logf("window %d: task-clock %.1f ms, cgroup CPU %.1f ms (%+.2f%%); the Record's interval %.1f–%.1f ms (%+.2f%% outside): %s %s",
					i+1, c.Value/1e6, ref/1e6, 100*off, g.lo/1e6, g.hi/1e6, 100*own, r.Outcome, r.Error)
				if math.Abs(off) > 0.03 {
					beyond3++
				}
				switch {
				case r.Outcome == record.OutcomePartial:
					if !strings.Contains(r.Error, fmt.Sprintf("task-clock %.1f ms is ", c.Value/1e6)) || !strings.Contains(r.Error, "CPU time over the window") {
						t.Errorf("window %d: partial without the gap as the reason: %q", i+1, r.Error)
					}
					partial++
				case r.Outcome != record.OutcomeOK:
					t.Errorf("window %d: %s: %s", i+1, r.Outcome, r.Error)
				case math.Abs(off) <= 0.05:
				case !tc.fork && has(record.WarnCPUGap):
					// Threads alone, per thread: the Record says
					// how far below the CPU time it is, and that
					// it is the context switches' slice.
					marked++
				case off > 0 && slices.ContainsFunc(r.Warnings, func(w record.Warning) bool {
					return w.Code == record.WarnCPUGap && strings.Contains(w.Text, "% above the CPU time the kernel had charged")
				}):
					// Above the CPU time: the Record says so (a
					// warning: not explained, no status).
					marked++
				case math.Abs(own) <= MaxCPUGap && has(record.WarnBusy):
					// Other processes used the host's CPUs over the
					// window, and the reference's rate with them; the
					// Record's own reference agrees.
					busy++
				default:
					t.Errorf("window %d: task-clock %.1f ms is %+.2f%% off the cgroup's CPU time %.1f ms, and the Record is ok: %q",
						i+1, c.Value/1e6, 100*off, ref/1e6, r.WarningTexts())
				}
			}
			t.Logf("%d windows of %d partial, %d more than 5%% off the cgroup's CPU time with a cpu-gap warning; %d more than 3%% off it; %d more than 5%% off it on a busy host and within 5%% of the Record's interval; worst %+.2f%% outside the Record's interval",
				partial, n, marked, beyond3, busy, 100*worst)
		})
	}
}
