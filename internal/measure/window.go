package measure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/osstat"
	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/profile/pprofout"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// series builds a window's series points, one per interval delta: the
// counters, the ops from the server status and the server's CPU time read
// next to each interval's end (at the window's end, those of its end edge).
type series struct {
	s      *Session
	ctx    context.Context
	end    *edge // the window's end edge, once endSet
	endSet bool
	warn   func(code record.Code, format string, args ...any)

	points     []record.Point
	prevStatus *mysqld.Status
	prevCPU    float64
	prevCPUok  bool
	// opWarned and cpuWarned: a failed status or CPU read was warned
	// about (once per window).
	opWarned, cpuWarned bool
	// slices keeps, for each point, its status deltas and whether its ops
	// were counted (extra), for Record.Comparison; onPoint is told of each
	// point read (WindowSpec.OnPoint).
	slices  bool
	extra   []pointExtra
	onPoint func(n int)
}

// pointExtra is what a comparison's slice keeps of a series point beyond
// the point itself.
type pointExtra struct {
	status     map[string]float64 // the counters that changed
	opsCounted bool
	err        string // why the point has no ops
}

// begin starts the series from the window's start edge.
func (x *series) begin(start edge) {
	x.prevStatus = start.status
	if start.os != nil && start.os.Process != nil {
		x.prevCPU, x.prevCPUok = cpuSeconds(start.os.Process.Stat, start.os.Ticks), true
	}
}

// point adds the point of interval delta d.
func (x *series) point(d perfevent.Reading) {
	s := x.s
	d = s.withoutOwn(d)
	p := record.Point{Seconds: d.Seconds(), Counters: map[string]float64{}}
	for _, ec := range d.Events {
		if ec.Status.Measured() {
			p.Counters[ec.Event.RecordName()] = ec.Value
		}
	}
	var st *mysqld.Status
	var cpu float64
	var cpuOK bool
	if x.endSet && d.End.Equal(x.end.at) {
		st = x.end.status
		if x.end.os != nil && x.end.os.Process != nil {
			cpu, cpuOK = cpuSeconds(x.end.os.Process.Stat, x.end.os.Ticks), true
		}
	} else {
		if s.op != nil {
			got, err := s.cfg.DB.Status(x.ctx)
			if err != nil && !x.opWarned {
				x.opWarned = true
				x.warn(record.WarnGeneral, "series: server status could not be read: %v", err)
			}
			st = got
		}
		cpu, cpuOK = s.processCPU()
	}
	var ex pointExtra
	if x.slices && st != nil && x.prevStatus != nil {
		// A status read long after its counter read puts the ops of
		// one slice in the next: such a slice is not paired.
		lag := max(statusLag(x.prevStatus, d.Start), statusLag(st, d.End))
		if limit := max(maxSliceLag, time.Duration(float64(d.End.Sub(d.Start))*maxSliceLagShare)); lag > limit {
			ex.err = fmt.Sprintf("the server's status was read %.0f ms away from its counters (more than %.0f ms): its ops are "+
				"not the counters' slice", float64(lag)/1e6, float64(limit)/1e6)
		}
	}
	if s.op != nil && st != nil && x.prevStatus != nil {
		if diff, err := mysqld.Delta(x.prevStatus, st); err == nil {
			if n, err := diff.Ops(*s.op); err == nil {
				p.Ops, ex.opsCounted = n, ex.err == ""
			} else {
				ex.err = err.Error()
			}
			if x.slices {
				ex.status = changed(diff.Counters)
			}
		} else {
			ex.err = "ops could not be counted: " + err.Error()
			if !x.opWarned {
				x.opWarned = true
				x.warn(record.WarnGeneral, "series: ops could not be counted: %v", err)
			}
		}
	} else if s.op != nil {
		ex.err = "the server status could not be read at both ends of the slice"
	}
	if st != nil {
		x.prevStatus = st
	} else if x.slices {
		// The next slice has no start: its delta would span two slices.
		x.prevStatus = nil
	}
	if cpuOK && x.prevCPUok {
		p.CPUSeconds = max(cpu-x.prevCPU, 0)
	} else if !cpuOK && !x.cpuWarned {
		x.cpuWarned = true
		x.warn(record.WarnGeneral, "series: the server's CPU time could not be read from /proc")
	}
	if cpuOK {
		x.prevCPU, x.prevCPUok = cpu, true
	}
	x.points = append(x.points, p)
	if x.slices {
		x.extra = append(x.extra, ex)
	}
	if x.onPoint != nil {
		x.onPoint(len(x.points))
	}
}

// A comparison's slice whose status was read further than maxSliceLag, and
// than maxSliceLagShare of the slice, from its counters at either edge has
// no op count: its ops would not be those of its counters' interval.
const (
	maxSliceLag      = 25 * time.Millisecond
	maxSliceLagShare = 0.025
)

// statusLag is how far the middle of status st's query was from the
// counter read at instant at.
func statusLag(st *mysqld.Status, at time.Time) time.Duration {
	return st.Time.Sub(at).Abs()
}

// changed returns the counters of m that are not 0.
func changed(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// comparisonSlices turns the window's series points (with their ends set)
// into a comparison's slices: Ran, Turn and CPUs are the caller's to set.
// In a failed window no slice has an op count.
func (x *series) comparisonSlices(points []record.Point, failed bool) []record.Slice {
	out := make([]record.Slice, len(points))
	for i, p := range points {
		sl := record.Slice{Start: p.T - p.Seconds, Seconds: p.Seconds, Ops: p.Ops, Counters: p.Counters, CPUSeconds: p.CPUSeconds}
		if i < len(x.extra) {
			ex := x.extra[i]
			sl.OpsCounted, sl.Status, sl.Error = ex.opsCounted && !failed, ex.status, ex.err
		}
		if failed && sl.Error == "" {
			sl.Error = "the window failed"
		}
		if failed {
			sl.Ops = 0
		}
		out[i] = sl
	}
	return out
}

// statusAndOps sets r's status deltas and op count from the window's edges
// and returns why the window failed ("" when it did not): the status could
// not be read at both edges (the server exited, say), or the server
// restarted or its status was reset in between. A failed window keeps no
// status and no op count.
func (s *Session) statusAndOps(r *record.Record, start, end edge) (failed string) {
	if s.cfg.DB != nil {
		switch {
		case start.status == nil || end.status == nil:
			failed = "the server status could not be read at both edges of the window: no status deltas and no op count"
			if err := s.proc().Alive(); err != nil {
				now := "no longer exists"
				if errors.Is(err, procfs.ErrZombie) {
					now = "is a zombie now"
				}
				failed = fmt.Sprintf("the server (pid %d) exited during the window (it %s): no status at the window's end, so no "+
					"status deltas and no op count; its counts up to its exit are kept", s.cfg.Pid, now)
			}
		default:
			diff, err := mysqld.Delta(start.status, end.status)
			if err != nil {
				failed = err.Error()
				if errors.Is(err, mysqld.ErrRestarted) || errors.Is(err, mysqld.ErrStatusReset) {
					r.Server.UptimeStart = start.status.Values["Uptime"]
					r.Server.UptimeEnd = end.status.Values["Uptime"]
				}
				break
			}
			r.Status = diff.Counters
			r.Gauges = diff.Gauges
			r.AddWarning(diff.Warnings...)
			diff.FillServer(r.Server)
			if s.op != nil {
				n, err := diff.Ops(*s.op)
				r.Ops = record.Ops{Source: s.op.Source(), Per: s.op.Per}
				if err != nil {
					r.Warnf(record.WarnOpsNotCounted, noOpCount+": %v", err)
				} else {
					r.Ops.Count, r.Ops.Counted = n, true
				}
			}
		}
	}
	if src, per, ok := clientOp(s.cfg.Op); ok {
		r.Ops = record.Ops{Source: src, Per: per}
	}
	if failed != "" {
		r.Outcome = record.OutcomeFailed
		r.Error = failed
		r.Status, r.Gauges, r.Ops = nil, nil, record.Ops{}
	}
	return failed
}

// osDelta sets r's /proc deltas from the window's edges.
func (s *Session) osDelta(r *record.Record, start, end edge) {
	if start.os == nil || end.os == nil {
		return
	}
	o, ws, err := osstat.Delta(start.os, end.os)
	if err != nil {
		r.Warnf(record.WarnGeneral, "no /proc deltas: %v", err)
		return
	}
	r.OS = o
	r.AddWarning(ws...)
}

// finishPoints puts the window's series points in r and, when they were
// read at the caller's ticks, its comparison's slices.
func (s *Session) finishPoints(r *record.Record, ser *series, failed bool, w WindowSpec, own ownReading) {
	every := s.cfg.Interval
	if w.Ticks != nil {
		every = w.TickEvery
	}
	s.finishSeries(r, ser.points, failed, w.Duration, every, own)
	if w.Ticks != nil {
		r.Comparison = &record.Comparison{Slices: ser.comparisonSlices(r.Series, failed)}
	}
}

// finishSeries puts points in r (their ends, and no ops when there is no
// server op or the window failed) and warns about stalls: a window planned
// to last planned, or an interval, that lasted much longer, saying when
// perfbench's own reading (own) made it so.
func (s *Session) finishSeries(r *record.Record, points []record.Point, failed bool, planned, every time.Duration, own ownReading) {
	if len(points) > 0 {
		t := 0.0
		for i := range points {
			t += points[i].Seconds
			points[i].T = t
			if s.op == nil || failed {
				points[i].Ops = 0
			}
		}
		r.Series = points
	}
	for _, msg := range stallWarnings(planned, r.Window.Seconds, every, r.Series, own) {
		r.Warnf(record.WarnGeneral, "%s", msg)
		if s.cfg.OnWarning != nil {
			s.cfg.OnWarning(msg)
		}
	}
}

// finishRoles adds the thread naming's warnings to r and, with perRole,
// the split of win by role, with the threads started inside the window.
func (s *Session) finishRoles(r *record.Record, total perfevent.Reading, roles *roleLog, perRole bool) {
	if roles != nil {
		r.AddWarning(roles.warnings...)
	}
	if !perRole {
		return
	}
	r.Roles = splitRoles(total, roles.roleOf)
	att := s.att
	if s.byThread != nil {
		att = s.byThread.att
		r.Warnf(record.WarnRoles, "the split by thread role comes from per-thread counters of %s, opened beside the cgroup's: "+
			"each role's share is of their sum, which leaves out the CPU per-thread counters miss at context switches and thread exits; "+
			"events that need hardware counters are not split by role in cgroup mode (counted twice, they would multiplex)", s.byThread.names())
	}
	// The connections the main thread created inside the window are in
	// the connection role through its descendants' row.
	inside := roles.startedInside(att)
	for i := range r.Roles {
		if r.Roles[i].Name == mysqld.RoleConnection {
			r.Roles[i].Threads += inside[mysqld.RoleConnection]
		}
	}
	if w, ok := inheritedNote(inside); ok {
		r.AddWarning(w)
	}
}

// startRoles prepares the naming of thread roles: they are named when the
// window opens (here), while it runs and when it closes (see roleLog);
// with PerRole, threads that appeared since the attach get counters of
// their own first. perRole says whether the window is split by role;
// roles is nil when no role is named.
func (s *Session) startRoles(ctx context.Context, warn func(record.Code, string, ...any)) (perRole bool, roles *roleLog, err error) {
	perRole = s.cfg.PerRole
	switch {
	case perRole && s.cfg.Cgroup && (s.byThread == nil || s.byThread.att == nil):
		why := "the counters are per CPU, not per thread"
		if s.byThread != nil {
			why = s.byThread.why
		}
		warn(record.WarnRoles, "no split by thread role in cgroup mode: %s", why)
		perRole = false
	case perRole && s.cfg.DB == nil:
		warn(record.WarnRoles, "no split by thread role without a connection to the server")
		perRole = false
	}
	if s.cfg.DB != nil && (perRole || s.cfg.Profile != nil) {
		roles = newRoleLog(s.cfg.Pid)
	}
	if perRole {
		if err := s.reattachForRoles(); err != nil && s.byThread != nil {
			// Only the split is lost: the cgroup's counters count.
			s.byThread.why = err.Error()
			warn(record.WarnRoles, "no split by thread role in cgroup mode: %v", err)
			perRole = false
		} else if err != nil {
			return false, nil, err
		}
	}
	if roles != nil {
		m, err := s.cfg.DB.ThreadRoles(ctx, s.cfg.Pid)
		if err != nil {
			warn(record.WarnRoles, "thread roles at the window's start could not be read: %v", err)
		} else {
			roles.add(m)
		}
	}
	return perRole, roles, nil
}

// endRoles names the threads when the window closes.
func (s *Session) endRoles(ctx context.Context, roles *roleLog, warn func(record.Code, string, ...any)) {
	if roles == nil {
		return
	}
	m, err := s.cfg.DB.ThreadRoles(ctx, s.cfg.Pid)
	if err != nil {
		if roles.listings() == 0 {
			warn(record.WarnRoles, "thread roles at the window's end could not be read: %v", err)
		}
		return
	}
	roles.add(m)
}

// startProfile starts sampling call stacks when the session profiles, and
// has opts open and close the samples with the counters' window: from
// right before their first read to right before their last, not
// perfbench's status and thread queries after it. nil when it does not
// profile, or sampling could not start (a warning says why).
func (s *Session) startProfile(opts *perfevent.WindowOptions, warn func(record.Code, string, ...any)) *pprofout.Window {
	p := s.cfg.Profile
	if p == nil {
		return nil
	}
	sw, err := pprofout.Start(s.cfg.Pid, p.Sample)
	if err != nil {
		warn(record.WarnGeneral, "no profile: %v", err)
		return nil
	}
	opts.BeforeStart, opts.BeforeEnd = sw.Begin, sw.End
	return sw
}

// edgeWarnings warns about what weakens the window's edges: another
// perfbench measuring the server, and a status read long after the
// counters (the lag is kept in r.Window.StatusLag).
func (s *Session) edgeWarnings(r *record.Record, start, end edge) {
	if s.mark != nil {
		s.mark.look()
		if msg := s.mark.warning(); msg != "" {
			r.Warnf(record.WarnGeneral, "%s", msg)
		}
	}
	if lag := max(start.lag, end.lag); lag > 0 {
		r.Window.StatusLag = lag.Seconds()
		if lag > maxStatusLag {
			r.Warnf(record.WarnGeneral, "the server status was read %.0f ms after the counters at an edge of the window (more "+
				"than %s): counters and status cover slightly different windows", lag.Seconds()*1e3, maxStatusLag)
		}
	}
}

// threadCounters are per-thread counters opened beside cgroup mode's for
// the split by thread role: the events that need no hardware counter
// (software events: per thread and per CPU at once they take none from
// each other), with the main thread counted with and without inherit.
type threadCounters struct {
	att    *perfevent.Attachment // nil when they could not be opened
	events []perfevent.Event
	opts   perfevent.Options
	// why none could be opened, or the reattach failed.
	why string
	// start is the reading at the window's start (nil when it failed).
	start *perfevent.Reading
}

// openByThread opens the per-thread counters of the split by role in
// cgroup mode. When there is no event to open or the attach fails, the
// result has no attachment and says why: the windows are not split.
func (s *Session) openByThread() *threadCounters {
	tc := &threadCounters{opts: perfevent.Options{System: s.cfg.System, Own: []int{s.cfg.Pid}}}
	for _, e := range s.cfg.Events.Events {
		if e.Counterless() {
			tc.events = append(tc.events, e)
		}
	}
	if len(tc.events) == 0 {
		tc.why = "every event needs hardware counters, which counted per thread as well would multiplex with the cgroup's; add task-clock to split by role"
		return tc
	}
	att, err := perfevent.Attach(s.cfg.Pid, tc.events, tc.opts)
	if err != nil {
		tc.why = fmt.Sprintf("the per-thread counters of the split could not be opened: %v", err)
		return tc
	}
	tc.att = att
	return tc
}

// names lists the events counted per thread: "task-clock, page-faults".
func (tc *threadCounters) names() string {
	var out []string
	for _, e := range tc.events {
		out = append(out, e.RecordName())
	}
	return strings.Join(out, ", ")
}

// roleSplit is the reading the split by role divides: the window's own
// (total), or in cgroup mode the per-thread counters' beside it (byThread,
// without perfbench's own connection); false when those were not read.
func (s *Session) roleSplit(total perfevent.Reading, byThread *perfevent.Reading) (perfevent.Reading, bool) {
	switch {
	case s.byThread == nil:
		return total, true
	case byThread == nil:
		return perfevent.Reading{}, false
	}
	return s.withoutOwn(*byThread), true
}

// readByThread reads the per-thread counters of the split by role in
// cgroup mode, right after the cgroup's at an edge of the window: at its
// start when total is nil, else at its end, setting *total to the
// window's delta. A read that fails leaves the window unsplit, saying why.
func (s *Session) readByThread(perRole bool, warn func(record.Code, string, ...any), total **perfevent.Reading) {
	tc := s.byThread
	if !perRole || tc == nil || tc.att == nil {
		return
	}
	if total == nil {
		tc.start = nil
	}
	r, err := tc.att.Read()
	if err != nil {
		warn(record.WarnRoles, "no split by thread role: the per-thread counters beside the cgroup's could not be read: %v", err)
		return
	}
	if total == nil {
		tc.start = &r
		return
	}
	if tc.start == nil {
		return // the start's failure said so
	}
	d, err := r.Sub(*tc.start)
	if err != nil {
		warn(record.WarnRoles, "no split by thread role: %v", err)
		return
	}
	*total = &d
}
