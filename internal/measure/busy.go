package measure

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/osstat"
	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/record"
)

// A window is busy when the CPU that other processes used on the host
// (record.Interference.OtherSeconds) averages more than busyCPUs CPUs and
// more than busyShare of the host's CPUs over it. On a machine of 2 to 20
// CPUs one busy loop (1 CPU) is over both, as is a tenth of a CPU on 2; on a
// large host the share keeps the daemons and kernel threads of a quiet
// machine, which add up to more than a tenth of a CPU there, from flagging
// every window. The measurement itself is exact to a few clock ticks (10 ms
// each) per window edge, well below either bound in a 1 s window.
const (
	busyCPUs  = 0.1
	busyShare = 0.05
)

// busyTop is how many other processes a busy warning names.
const busyTop = 3

// isBusy decides whether other CPU-seconds over a window of seconds, on a
// host of hostCPUs CPUs, make the window busy.
func isBusy(other, seconds, hostCPUs float64) bool {
	if seconds <= 0 || hostCPUs <= 0 {
		return false
	}
	rate := other / seconds
	return rate > busyCPUs && rate > busyShare*hostCPUs
}

// procTimes is one process's CPU time read at a window edge.
type procTimes struct {
	comm  string
	ppid  int
	start uint64 // start time: tells a reused pid apart
	ticks uint64 // utime + stime
}

// busyEdge is the host's CPU times and every process's at one edge.
type busyEdge struct {
	at    time.Time
	host  osstat.HostCPU
	procs map[int]procTimes
	took  time.Duration
}

// readBusyEdge reads /proc/stat then every process's stat under root. A
// process that exits while the list is read is left out. The error is that
// of /proc/stat or of the process list.
func readBusyEdge(root string) (*busyEdge, error) {
	fs := procfs.New(root)
	e := &busyEdge{at: time.Now()}
	b, err := fs.ReadFile("stat")
	if err != nil {
		return nil, err
	}
	if e.host, err = osstat.ParseHostCPU(b); err != nil {
		return nil, err
	}
	pids, err := fs.PIDs()
	if err != nil {
		return nil, err
	}
	e.procs = make(map[int]procTimes, len(pids))
	for _, pid := range pids {
		st, err := fs.Proc(pid).Stat()
		if err != nil {
			continue
		}
		e.procs[pid] = procTimes{comm: st.Comm, ppid: st.PPID, start: st.StartTime, ticks: st.UTime + st.STime}
	}
	e.took = time.Since(e.at)
	return e, nil
}

// children lists the children of each process of e.
func (e *busyEdge) children() osstat.Children {
	parents := make(map[int]int, len(e.procs))
	for p, t := range e.procs {
		parents[p] = t.ppid
	}
	return osstat.ChildrenFromList(parents)
}

// descendants returns the processes of e below pid (pid not included).
func (e *busyEdge) descendants(pid int) map[int]bool {
	children := map[int][]int{}
	for p, t := range e.procs {
		children[t.ppid] = append(children[t.ppid], p)
	}
	out := map[int]bool{}
	todo := children[pid]
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if !out[p] {
			out[p] = true
			todo = append(todo, children[p]...)
		}
	}
	return out
}

// interference is what other processes did between edges a and b: the
// server is pid, with its descendants at either edge (a server that forks)
// and reaped, the CPU its reaped children's added to its cutime+cstime
// between the edges, in ticks; perfbench is self; the load client is
// self's other descendants at either edge.
func interference(a, b *busyEdge, pid, self int, reaped uint64, ticks float64) record.Interference {
	own := map[int]bool{pid: true, self: true}
	forked := map[int]bool{} // the server's descendants
	client := false
	for _, e := range []*busyEdge{a, b} {
		for p := range e.descendants(pid) {
			own[p], forked[p] = true, true
		}
		for p := range e.descendants(self) {
			if !own[p] {
				own[p], client = true, true
			}
		}
	}
	sub := func(x, y uint64) float64 { return tickDelta(x, y, ticks) }
	in := record.Interference{
		Seconds:      b.at.Sub(a.at).Seconds(),
		StealSeconds: sub(a.host.Steal, b.host.Steal),
		ClientKnown:  client,
	}
	if in.Seconds > 0 {
		in.HostCPUs = sub(hostTotal(a.host), hostTotal(b.host)) / in.Seconds
	}
	other := sub(hostBusy(a.host), hostBusy(b.host))
	for p, end := range b.procs {
		was, ok := a.procs[p]
		if !ok || was.start != end.start {
			was = procTimes{} // started inside the window
		}
		used := sub(was.ticks, end.ticks)
		if own[p] {
			other -= used
		} else if used > 0 {
			in.Top = append(in.Top, record.OtherProcess{Pid: p, Comm: end.comm, Seconds: used})
		}
	}
	// The server's children reaped inside the window: their CPU came to
	// its cutime+cstime whole, what they ran before the window too.
	gone := reaped
	for p, was := range a.procs {
		if _, ok := b.procs[p]; !ok && forked[p] {
			gone -= min(gone, was.ticks)
		}
	}
	other -= float64(gone) / ticks
	in.OtherSeconds = max(other, 0)
	slices.SortFunc(in.Top, func(x, y record.OtherProcess) int {
		return cmp.Or(cmp.Compare(y.Seconds, x.Seconds), cmp.Compare(x.Pid, y.Pid))
	})
	in.Top = in.Top[:min(len(in.Top), busyTop)]
	return in
}

// hostBusy is the host's CPU time spent running tasks, hostTotal all of
// its CPU time (idle and stolen included), in ticks.
func hostBusy(c osstat.HostCPU) uint64 { return c.User + c.Nice + c.System }
func hostTotal(c osstat.HostCPU) uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// tickDelta is y-x ticks in seconds, 0 when the count went backward.
func tickDelta(x, y uint64, ticks float64) float64 {
	if y < x {
		return 0
	}
	return float64(y-x) / ticks
}

// busyWarning is the warning of a busy window, "" for a window that is not.
func busyWarning(in record.Interference) string {
	if !isBusy(in.OtherSeconds, in.Seconds, in.HostCPUs) {
		return ""
	}
	var top []string
	for _, p := range in.Top {
		top = append(top, fmt.Sprintf("%s (pid %d) %.2f CPU", p.Comm, p.Pid, p.Seconds/in.Seconds))
	}
	msg := fmt.Sprintf("busy host: other processes used %.2f CPU over the window (%.0f%% of the host's %.0f CPUs; more than %g CPU and %.0f%% counts as busy)",
		in.OtherSeconds/in.Seconds, 100*in.OtherSeconds/(in.Seconds*in.HostCPUs), in.HostCPUs, busyCPUs, 100*busyShare)
	if len(top) > 0 {
		msg += ": " + strings.Join(top, ", ")
	}
	if !in.ClientKnown {
		msg += "; the load client was not started by perfbench: if it ran on this host, its CPU is counted here"
	}
	return msg + "; every number of this window may be off: repeat it on a quiet host"
}

// checkBusy sets r.Interference from the edges and flags r busy when
// other processes used too much of the host's CPU; a missing edge leaves r
// alone (/proc could not be read: other warnings say so).
func (s *Session) checkBusy(r *record.Record, start, end edge) {
	a, b := start.busy, end.busy
	if a == nil || b == nil {
		return
	}
	ticks := s.fs.Ticks
	if ticks <= 0 {
		ticks = float64(procfs.ClockTicks())
	}
	var reaped uint64
	if start.os != nil && end.os != nil && start.os.Process != nil && end.os.Process != nil {
		x, y := start.os.Process.Stat, end.os.Process.Stat
		if x.StartTime == y.StartTime && y.CUTime+y.CSTime >= x.CUTime+x.CSTime {
			reaped = y.CUTime + y.CSTime - x.CUTime - x.CSTime
		}
	}
	in := interference(a, b, s.cfg.Pid, os.Getpid(), reaped, ticks)
	r.Interference = &in
	if msg := busyWarning(in); msg != "" {
		r.AddWarning(record.Warning{Code: record.WarnBusy, Text: msg})
	}
}

// HostEdge is the host's CPU times and every process's, read at one
// instant: two of them tell how much CPU other processes used in between
// (OtherCPU). perfbench run reads one at every slice edge of a comparison.
type HostEdge struct{ e *busyEdge }

// ReadHostEdge reads /proc/stat and every process's CPU time.
func ReadHostEdge() (HostEdge, error) {
	e, err := readBusyEdge("")
	if err != nil {
		return HostEdge{}, fmt.Errorf("read the host's CPU times: %w", err)
	}
	return HostEdge{e}, nil
}

// OtherCPU is the CPU time, in seconds, that processes other than own, their
// descendants, perfbench and its descendants (the loads, the servers it
// started) used on the host between a and b, and whether that makes the
// span busy as it would a window (more than 0.1 CPU and 5% of the host's
// CPUs on average). Clock-tick truncation makes it exact to a few ticks.
// known is false when either edge could not be read (a zero HostEdge):
// then nothing is known of the span, busy or not.
func OtherCPU(a, b HostEdge, own []int) (seconds float64, busy, known bool) {
	if a.e == nil || b.e == nil {
		return 0, false, false
	}
	mine := map[int]bool{os.Getpid(): true}
	for _, p := range own {
		mine[p] = true
	}
	for _, e := range []*busyEdge{a.e, b.e} {
		for _, p := range append(own, os.Getpid()) {
			for d := range e.descendants(p) {
				mine[d] = true
			}
		}
	}
	ticks := float64(procfs.ClockTicks())
	sub := func(x, y uint64) float64 { return tickDelta(x, y, ticks) }
	other := sub(hostBusy(a.e.host), hostBusy(b.e.host))
	for p, end := range b.e.procs {
		was, ok := a.e.procs[p]
		if !ok || was.start != end.start {
			was = procTimes{}
		}
		if mine[p] {
			other -= sub(was.ticks, end.ticks)
		}
	}
	other = max(other, 0)
	secs := b.e.at.Sub(a.e.at).Seconds()
	cpus := 0.0
	if secs > 0 {
		cpus = sub(hostTotal(a.e.host), hostTotal(b.e.host)) / secs
	}
	return other, isBusy(other, secs, cpus), true
}
