package measure

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perfbench/perfbench/internal/host/osstat"
	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// CPU per op is the CPU time the kernel charged to what the counters
// counted (record.KernelCPU): in cgroup mode the cgroup's cpu.stat
// usage_usec; per thread the process's CPU clock plus its children's
// (reaped ones from its cutime+cstime), or the usage_usec of the cgroup v2
// it is alone in with its descendants. Each is read right before and
// right after the counters at both edges of the window; the value is the
// midpoint of the interval the reads give. task-clock stays in the Record
// as a counter and is checked against it (checkCPU).
//
// What is read at an edge, in order: every process's stat (the process
// list, which also gives the busy check's edge and the process's children:
// one pass over /proc, where the children files of each of the server's
// threads took a read per thread), whether the process is still there,
// whether it ignores SIGCHLD, its cgroup; then the reference, the counter
// read, the reference again and the cgroup again.

// edgeRef is what is read around one edge's counter read for the kernel's
// CPU time and the CPU check.
type edgeRef struct {
	// usage is the cgroup's usage_usec (cgroup mode, or per thread a
	// cgroup the process is alone in); proc the process's CPU clock and
	// its children's (per thread).
	usage, proc cpuRef
	// cgroup is the process's cgroup v2 path read before and after the
	// counter read ("" when it could not be read).
	cgroup []string
	// noWait: the process ignored SIGCHLD.
	noWait bool
	// hadChildren: the process list showed children of the process.
	hadChildren bool
	// gone says why the process was no longer there (nil: it was).
	gone error
	// list is the process list (nil when it could not be read); kids
	// its children lists.
	list *busyEdge
	kids osstat.Children
}

// before reads what comes before an edge's counter read into e.
func (s *Session) before(e *edgeRef) {
	*e = edgeRef{}
	if l, err := readBusyEdge(s.fs.Root); err == nil {
		e.list, e.kids = l, l.children()
		e.hadChildren = len(l.descendants(s.cfg.Pid)) > 0
	}
	e.gone = s.left()
	if st, err := s.proc().Status(); err == nil {
		e.noWait = st.IgnoresChildren()
	}
	e.cgroup = append(e.cgroup, s.cgroupNow())
	s.readRefs(e, false)
}

// after reads what comes after an edge's counter read into e.
func (s *Session) after(e *edgeRef) {
	s.readRefs(e, true)
	e.cgroup = append(e.cgroup, s.cgroupNow())
}

// readRefs reads the references the session needs into e: before the
// counter read (into lo), or after it (into hi, with the slack).
func (s *Session) readRefs(e *edgeRef, after bool) {
	if dir := s.usageDir(); dir != "" {
		v, err := cgroupUsage(dir)
		e.usage.set(v, s.refSlack, true, err, after)
	}
	if s.att.CgroupDir() == "" {
		c, ok := s.fs.ProcessCPU(s.cfg.Pid, e.kids, s.oldChildren)
		if !ok {
			e.proc.set(0, 0, false, fmt.Errorf("the CPU clock of pid %d could not be read", s.cfg.Pid), after)
			return
		}
		v, slack := float64(c.Clock), s.refSlack
		if c.HasChildren {
			v += float64(c.Children)
			slack += float64(c.Slack)
		}
		e.proc.set(v, slack, c.HasChildren, nil, after)
	}
}

// set records one read of the reference: before the counter read (lo)
// or after it (hi, raised by slack).
func (r *cpuRef) set(v, slack float64, children bool, err error, after bool) {
	if !after {
		*r = cpuRef{lo: v, children: children, err: err}
		return
	}
	r.hi, r.slack = v+slack, slack
	r.children = r.children && children
	r.err = errors.Join(r.err, err)
}

// usageDir is the cgroup whose usage_usec is read: the one cgroup mode
// counts, else the one the process is alone in ("" for neither).
func (s *Session) usageDir() string {
	if dir := s.att.CgroupDir(); dir != "" {
		return dir
	}
	return s.aloneIn
}

// cgroupNow is the process's cgroup v2 path, "" when it cannot be read.
func (s *Session) cgroupNow() string {
	cg, err := s.proc().Cgroup()
	if err != nil {
		return ""
	}
	return cg
}

// left says why the process is no longer the one Start attached to: it
// exited (gone, or a zombie) or its pid is another process's now; nil
// while it runs, and when its start time was not read at Start.
func (s *Session) left() error {
	if s.startTime == 0 {
		return nil
	}
	st, err := s.proc().Stat()
	switch {
	case err != nil:
		return err
	case st.StartTime != s.startTime:
		return fmt.Errorf("pid %d is another process now (%s)", s.cfg.Pid, st.Comm)
	case st.State == 'Z' && st.NumThreads <= 1, st.State == 'X':
		return fmt.Errorf("pid %d (%s) has exited: %w", s.cfg.Pid, st.Comm, procfs.ErrZombie)
	}
	return nil
}

// refreshAlone decides, before a window, whether the per-thread reference
// is the usage_usec of a cgroup v2 the process is alone in with its
// descendants: none of the children it had at the attach (which no
// counter counts) is left, and no other process is in its cgroup or
// below. The cgroup's path is kept, so that a move away from it is seen.
func (s *Session) refreshAlone() {
	if s.att.CgroupDir() != "" || (s.fs.Root != "" && s.fs.Root != "/") {
		return
	}
	for c, start := range s.oldChildren {
		if st, err := procfs.New(s.fs.Root).Proc(c).Stat(); err != nil || st.StartTime != start {
			delete(s.oldChildren, c)
		}
	}
	s.aloneIn, s.aloneCg = "", ""
	if len(s.oldChildren) > 0 {
		return
	}
	cg := s.cgroupNow()
	if cg == "" {
		return
	}
	if dir, _ := perfevent.AloneInCgroup(s.cfg.Pid); dir != "" {
		s.aloneIn, s.aloneCg = dir, cg
	}
}

// cgroupMove says how the process left cgroup want over the reads of the
// window's edges ("" when it stayed in it or below it, or want is "").
func cgroupMove(want string, start, end edgeRef) string {
	if want == "" {
		return ""
	}
	for i, cg := range append(append([]string(nil), start.cgroup...), end.cgroup...) {
		if cg == "" || cg == want || strings.HasPrefix(cg, strings.TrimSuffix(want, "/")+"/") {
			continue
		}
		if i < len(start.cgroup) {
			return fmt.Sprintf("it was in cgroup %s, not %s, when the window opened", cg, want)
		}
		return fmt.Sprintf("it moved from cgroup %s to %s inside the window", want, cg)
	}
	return ""
}

// kernelCPU decides the window's reference from what was read at its
// edges, marks r when the process left the window or its cgroup, sets
// r.KernelCPU, and checks task-clock against it (checkCPU). all is the
// window's reading with perfbench's own connection thread still in it,
// total without it: the kernel's CPU time leaves out that thread's
// task-clock as the counters do (its status and thread queries).
func (s *Session) kernelCPU(r *record.Record, all, total perfevent.Reading, start, end edgeRef) cpuGap {
	s.checkLeft(r, start, end)
	kind := s.refKind()
	switch {
	case kind == refCgroup:
		if move := cgroupMove(s.startCg, start, end); move != "" {
			markPartial(r, fmt.Sprintf("pid %d left the cgroup that cgroup mode counts: %s (read from /proc/%d/cgroup at the window's edges); "+
				"the counters count %s alone, so they hold the process's counts only while it was there", s.cfg.Pid, move, s.cfg.Pid, s.startCg))
		}
	case kind == refAlone:
		if move := cgroupMove(s.aloneCg, start, end); move != "" {
			r.Warnf(record.WarnGeneral, "pid %d: %s (read from /proc/%d/cgroup at the window's edges): "+
				"its CPU time is its CPU clock plus its children's, not that cgroup's usage_usec", s.cfg.Pid, move, s.cfg.Pid)
			kind = refProcess
		}
	}
	a, b := start.proc, end.proc
	if kind != refProcess {
		a, b = start.usage, end.usage
	}
	leaves := ""
	if kind == refProcess && (start.noWait || end.noWait) {
		// Children the kernel reaps are in no reading: task-clock
		// above the reference says nothing.
		a.children, b.children = false, false
		if tc, ok := all.Event("task-clock"); start.hadChildren || end.hadChildren ||
			ok && tc.Status.Measured() && a.err == nil && b.err == nil && tc.Value > b.hi-a.lo+minExitGap {
			leaves = record.KernelCPUNotWaited
		}
	}
	if a.err == nil && b.err == nil && b.hi-a.lo < 0 {
		// Less at the end than at the start: not a CPU time of this
		// window (a cgroup made anew, a counter reset). No CPU time is
		// better than a 0 that reads as measured, and task-clock is not
		// checked against it.
		r.Warnf(record.WarnGeneral, "the kernel's CPU time of pid %d went backward over the window (%s: %.3f s at the start, %.3f s at the end): "+
			"it is not this window's, so CPU per op comes from task-clock", s.cfg.Pid, refName(kind), a.lo/1e9, b.hi/1e9)
		b.err = errBackward
	}
	if a.err == nil && b.err == nil {
		own := 0.0
		x, ok1 := all.Event("task-clock")
		y, ok2 := total.Event("task-clock")
		if ok1 && ok2 && x.Status.Measured() && y.Status.Measured() {
			own = max(x.Value-y.Value, 0)
		}
		r.KernelCPU = &record.KernelCPU{
			Source:    kindSource(kind),
			Seconds:   max((b.lo+b.hi-b.slack-a.lo-a.hi+a.slack)/2-own, 0) / 1e9,
			Low:       max(b.lo-a.hi-own, 0) / 1e9,
			High:      max(b.hi-a.lo-own, 0) / 1e9,
			LeavesOut: leaves,
		}
		if leaves != "" {
			r.Warnf(record.WarnGeneral, "pid %d ignores SIGCHLD, so the kernel reaps its children itself and their CPU reaches none of its CPU times: "+
				"CPU per op (its CPU clock plus its children's) leaves out the %s, which its counters, inherited by the children, count; "+
				"in a cgroup v2 of its own with them (cgroup mode, or per thread) their CPU is in the cgroup's usage_usec", s.cfg.Pid, leaves)
		}
	}
	g := checkCPU(r, all, a, b, kind)
	if k := r.KernelCPU; k != nil && g.switches > 0 && g.taskClock > 0 {
		k.ContextSwitches = g.switches
		k.GapPerSwitch = (b.lo + b.hi - b.slack - a.lo - a.hi + a.slack) / 2
		k.GapPerSwitch = (g.taskClock - k.GapPerSwitch) / g.switches / 1e3
	}
	return g
}

// errBackward: the reference read less at the window's end than at its
// start.
var errBackward = errors.New("the kernel's CPU time went backward over the window")

// refName says in a few words what a reference kind reads.
func refName(k refKind) string {
	switch k {
	case refCgroup, refAlone:
		return "the cgroup's usage_usec"
	}
	return "its CPU clock and its children's"
}

// kindSource is the record.KernelCPU source of a reference kind.
func kindSource(k refKind) string {
	switch k {
	case refCgroup:
		return record.KernelCPUCgroup
	case refAlone:
		return record.KernelCPUAlone
	}
	return record.KernelCPUProcess
}

// markPartial makes r partial (unless it failed) and puts why first in
// its Error.
func markPartial(r *record.Record, why string) {
	if r.Outcome == record.OutcomeOK {
		r.Outcome = record.OutcomePartial
	}
	r.Error = strings.TrimSuffix(why+"; "+r.Error, "; ")
}

// checkLeft marks r when the process left the window: failed when it was
// gone before the window opened (nothing of it was measured), partial
// when it exited inside, saying when (from its pidfd when it could be
// watched: see exitWatch) and that the rates do not cover its life alone.
func (s *Session) checkLeft(r *record.Record, start, end edgeRef) {
	at, known := s.exit.exited()
	secs := r.Window.Seconds
	switch {
	case start.gone != nil || known && !at.After(r.Window.Start):
		when := ""
		if known {
			when = fmt.Sprintf(", %.3f s before it", r.Window.Start.Sub(at).Seconds())
		}
		why := fmt.Sprintf("pid %d exited before the window opened%s: nothing of it was measured", s.cfg.Pid, when)
		if s.att.CgroupDir() != "" {
			why += " (cgroup mode counted what else ran in its cgroup)"
		}
		r.Outcome = record.OutcomeFailed
		if strings.HasPrefix(r.Error, fmt.Sprintf("the server (pid %d) exited during the window", s.cfg.Pid)) {
			r.Error = "" // the status check saw it gone at the end only
		}
		r.Error = strings.TrimSuffix(why+"; "+r.Error, "; ")
	case end.gone != nil || known && at.Before(r.Window.End):
		when := "inside the window (gone at its end; when is not known)"
		if known {
			when = fmt.Sprintf("%.3f s into the window", at.Sub(r.Window.Start).Seconds())
		}
		why := fmt.Sprintf("pid %d exited %s of %.3f s: its counts cover its life up to its exit, "+
			"and the window's rates per second divide by all %.3f s, so they are not its rates", s.cfg.Pid, when, secs, secs)
		if r.Outcome == record.OutcomeFailed {
			// The failure (its status at the end, say) comes first.
			r.Error = strings.TrimPrefix(r.Error+"; "+why, "; ")
			return
		}
		markPartial(r, why)
	}
}
