package perfevent

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// swEvent is a software event built by hand, the way the catalogue encodes
// it (PERF_TYPE_SOFTWARE = 1).
func swEvent(name string, config uint64) Event {
	e := Event{Name: name, Kind: KindSoftware, Encodings: []Encoding{{PMU: "software", Type: 1, Config: config}}}
	if config == 0 || config == 1 {
		e.Unit = "ns"
	}
	return e
}

var (
	taskClock       = swEvent("task-clock", 1)
	cpuClock        = swEvent("cpu-clock", 0)
	pageFaults      = swEvent("page-faults", 2)
	contextSwitches = swEvent("context-switches", 3)
	cpuMigrations   = swEvent("cpu-migrations", 4)
	minorFaults     = swEvent("minor-faults", 5)
	majorFaults     = swEvent("major-faults", 6)
	alignmentFaults = swEvent("alignment-faults", 7)

	// eightSoftware are the 8 events of the attach benchmark.
	eightSoftware = []Event{taskClock, cpuClock, contextSwitches, cpuMigrations, pageFaults, minorFaults, majorFaults, alignmentFaults}
)

var (
	workloadOnce sync.Once
	workloadPath string
	workloadErr  error
)

// workloadBinary builds perfevent/internal/workload once per test binary.
func workloadBinary(tb testing.TB) string {
	tb.Helper()
	workloadOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			workloadErr = fmt.Errorf("build the workload: the go command is not in PATH: %v", err)
			return
		}
		dir, err := os.MkdirTemp("", "perfevent-workload")
		if err != nil {
			workloadErr = err
			return
		}
		workloadPath = filepath.Join(dir, "workload")
		out, err := exec.Command(goTool, "build", "-o", workloadPath, "./internal/workload").CombinedOutput()
		if err != nil {
			workloadErr = fmt.Errorf("build the workload: %v\n%s", err, out)
		}
	})
	if workloadErr != nil {
		tb.Fatal(workloadErr)
	}
	return workloadPath
}

// workProc is a running workload process.
type workProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	pid int
}

// startWorkload starts the workload; cleanup stops it.
func startWorkload(tb testing.TB) *workProc {
	tb.Helper()
	cmd := exec.Command(workloadBinary(tb))
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	w := &workProc{cmd: cmd, in: in, out: bufio.NewScanner(out), pid: cmd.Process.Pid}
	tb.Cleanup(w.stop)
	if line := w.reply(tb); !strings.HasPrefix(line, "ready ") {
		tb.Fatalf("workload said %q", line)
	}
	return w
}

func (w *workProc) stop() {
	fmt.Fprintln(w.in, "quit")
	w.in.Close()
	done := make(chan struct{})
	go func() { w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		w.cmd.Process.Kill()
		<-done
	}
}

func (w *workProc) reply(tb testing.TB) string {
	tb.Helper()
	if !w.out.Scan() {
		tb.Fatalf("workload %d ended: %v", w.pid, w.out.Err())
	}
	line := w.out.Text()
	if strings.HasPrefix(line, "error") {
		tb.Fatalf("workload: %s", line)
	}
	return line
}

// do sends one command and returns the answer.
func (w *workProc) do(tb testing.TB, format string, args ...any) string {
	tb.Helper()
	if _, err := fmt.Fprintf(w.in, format+"\n", args...); err != nil {
		tb.Fatal(err)
	}
	return w.reply(tb)
}

// ints parses the comma-separated ids after the first word of a reply.
func ints(tb testing.TB, reply string) []int {
	tb.Helper()
	_, list, _ := strings.Cut(reply, " ")
	var out []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			tb.Fatalf("bad reply %q", reply)
		}
		out = append(out, n)
	}
	return out
}

// openFDs counts this process's open descriptors.
func countFDs(tb testing.TB) int {
	tb.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Fatal(err)
	}
	return len(ents)
}

// processCPUClock is process pid's CPU time in ns from its CPU-time clock
// (clock_gettime of the clock id the kernel makes of the pid, as
// clock_getcpuclockid(3) does): the scheduler's run time of all its threads,
// those that exited included, which /proc/PID/stat's utime+stime are cut
// from in 10 ms ticks.
func processCPUClock(tb testing.TB, pid int) float64 {
	tb.Helper()
	const cpuClockSched = 2 // CPUCLOCK_SCHED
	clock := int32(^uint32(pid)<<3) | cpuClockSched
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		tb.Fatalf("read the CPU clock of pid %d: %v", pid, err)
	}
	return float64(ts.Nano())
}
