// Command kcpucheck checks the CPU time perfbench's Records give for their
// windows against the kernel's accounting read by another program at other
// instants. While it runs a command (perfbench run, perfbench demo), it reads
// the process CPU clock (clock_gettime of CLOCK_PROCESS_CPUTIME_ID's per-pid
// form: every thread's run time, those that exited included) of every
// process whose name is -comm, every -interval, with the wall-clock time of
// each read. When the command ends, it reads the Records in the folders
// given and, for each Record whose server it sampled, interpolates the
// clock at the window's start and end: the server's CPU time over the
// window. It prints that beside the Record's KernelCPU (what cpu/o divides)
// and task-clock, with their differences, and the largest difference.
//
//	go run ./scripts/kcpucheck -records /tmp/demo/records -- go run ./cmd/perfbench demo --out /tmp/demo
//
// The Record's CPU time leaves out the task-clock of perfbench's own
// connection thread (its status reads), which the process clock holds: a
// few milliseconds a window, printed as part of the difference.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/record"
)

func main() {
	comm := flag.String("comm", "mariadbd", "the name (/proc/PID/comm) of the processes to sample")
	interval := flag.Duration("interval", 10*time.Millisecond, "how often to read their CPU clocks")
	records := flag.String("records", "", "the folder of the Records the command writes (required)")
	flag.Parse()
	if *records == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: kcpucheck -records DIR [-comm mariadbd] [-interval 10ms] -- COMMAND ARGS...")
		os.Exit(2)
	}
	s := &sampler{comm: *comm, series: map[int][]point{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { s.run(*interval, stop); close(done) }()
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	runErr := cmd.Run()
	close(stop)
	<-done
	if runErr != nil {
		fmt.Fprintf(os.Stderr, "kcpucheck: %s: %v (checking the Records it wrote)\n", flag.Arg(0), runErr)
	}
	recs, _, err := record.Load([]string{*records}, true)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kcpucheck: read the Records: %v\n", err)
		os.Exit(1)
	}
	rows := check(recs, s.series)
	print(os.Stdout, rows)
	if runErr != nil {
		os.Exit(1)
	}
}

// point is one read of a process's CPU clock.
type point struct {
	at  time.Time
	cpu time.Duration
}

// sampler reads the CPU clocks of the processes named comm.
type sampler struct {
	comm   string
	mu     sync.Mutex
	series map[int][]point
}

func (s *sampler) run(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var pids []int
	next := time.Time{}
	for {
		if now := time.Now(); now.After(next) {
			pids, next = s.find(), now.Add(500*time.Millisecond)
		}
		for _, pid := range pids {
			if c, ok := processCPU(pid); ok {
				s.mu.Lock()
				s.series[pid] = append(s.series[pid], point{time.Now(), c})
				s.mu.Unlock()
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// find lists the processes named s.comm.
func (s *sampler) find() []int {
	fs := procfs.New("")
	pids, _ := fs.PIDs()
	var out []int
	for _, pid := range pids {
		if c, err := fs.Proc(pid).Comm(); err == nil && c == s.comm {
			out = append(out, pid)
		}
	}
	return out
}

// at interpolates a series (in time order) at t; ok is false when t is
// outside it or the reads around it are more than gap apart.
func at(series []point, t time.Time, gap time.Duration) (time.Duration, bool) {
	i := sort.Search(len(series), func(i int) bool { return !series[i].at.Before(t) })
	if i == 0 || i == len(series) {
		return 0, false
	}
	a, b := series[i-1], series[i]
	span := b.at.Sub(a.at)
	if span > gap {
		return 0, false
	}
	if span <= 0 {
		return a.cpu, true
	}
	f := float64(t.Sub(a.at)) / float64(span)
	return a.cpu + time.Duration(f*float64(b.cpu-a.cpu)), true
}

// row is one Record checked.
type row struct {
	name                string
	kernel, independent float64 // seconds
	taskClock           float64 // seconds, NaN-free: -1 when not measured
	why                 string  // why it was not checked
}

func check(recs []record.Loaded, series map[int][]point) []row {
	var rows []row
	for _, l := range recs {
		r := l.Record
		if r.Kind != record.KindStep && r.Kind != record.KindStat {
			continue
		}
		w := row{name: filepath.Base(l.Path), taskClock: -1}
		for _, c := range r.Counters {
			if c.Event == "task-clock" && c.Measured() {
				w.taskClock = c.Value / 1e9
			}
		}
		s := series[r.Server.Pid]
		a, ok1 := at(s, r.Window.Start, 100*time.Millisecond)
		b, ok2 := at(s, r.Window.End, 100*time.Millisecond)
		switch {
		case r.KernelCPU == nil:
			w.why = "no kernel CPU time in the Record"
		case len(s) == 0:
			w.why = fmt.Sprintf("server pid %d was not sampled", r.Server.Pid)
		case !ok1 || !ok2:
			w.why = "the window's edges fall outside the samples or between reads far apart"
		default:
			w.kernel, w.independent = r.KernelCPU.Seconds, (b - a).Seconds()
		}
		rows = append(rows, w)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	return rows
}

func print(w *os.File, rows []row) {
	fmt.Fprintf(w, "%-60s %10s %10s %8s %10s\n", "record", "kernel_s", "clock_s", "diff", "task-clock")
	worst, n := 0.0, 0
	for _, r := range rows {
		if r.why != "" {
			fmt.Fprintf(w, "%-60s %s\n", r.name, r.why)
			continue
		}
		d := diff(r.kernel, r.independent)
		tc := "-"
		if r.taskClock >= 0 {
			tc = fmt.Sprintf("%+.1f%%", 100*diff(r.taskClock, r.independent))
		}
		fmt.Fprintf(w, "%-60s %10.4f %10.4f %+7.2f%% %10s\n", r.name, r.kernel, r.independent, 100*d, tc)
		worst = max(worst, abs(d))
		n++
	}
	fmt.Fprintf(w, "%d windows checked; largest difference of the Record's kernel CPU time from the independently read clock: %.2f%%\n", n, 100*worst)
}

func diff(x, ref float64) float64 {
	if ref == 0 {
		return 0
	}
	return x/ref - 1
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
