package measure

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/perfbench/perfbench/internal/host/hostinfo"
	"github.com/perfbench/perfbench/internal/host/osstat"
	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/profile/pprofout"
	"github.com/perfbench/perfbench/internal/profile/symbols"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// Client op sources: the count comes from the load generator (ApplyClient).
const (
	opClientQueries      = "client.queries"
	opClientTransactions = "client.transactions"
	opClientEvents       = "client.events"
)

// noOpCount begins the warning of a Record whose op source was not counted.
const noOpCount = "no op count"

// maxStatusRead is how long a status query at a window's edge may take
// before its status is not the edge's: the window fails.
const maxStatusRead = 2 * time.Second

// maxStatusLag is how long a status query next to a counter read may take
// before the Record says that the two edges are apart.
const maxStatusLag = 50 * time.Millisecond

// MinInterval is the shortest series interval perfbench measures honestly.
// Each interval reads SHOW GLOBAL STATUS, which costs the server about
// 1.4 ms of CPU (MariaDB 10.11, scripts/bench-interval.sh): 1.4% of one CPU
// at 100 ms, 14% at 10 ms, swamping an idle or lightly loaded server's own
// work.
const MinInterval = 100 * time.Millisecond

// errConfig marks a Config that cannot be measured (no pid, no events, an op
// source that needs a server connection without one).
var errConfig = errors.New("invalid measurement")

// Config is what to measure. The zero value of each optional field is the
// default.
type Config struct {
	// Pid is the server (or any process when DB is nil).
	Pid int
	// Events is the parsed -e list, user groups kept.
	Events perfevent.List
	// System is this machine's PMUs (perfevent.LoadSystem); nil uses the
	// catalogue only.
	System *perfevent.System
	// DB is a connection to the server; nil measures a plain process: no
	// status, no identity, no roles, no per-op values unless the op
	// source is the client's.
	DB *mysqld.DB
	// Op is the op source spec for mysqld.ResolveOp ("" = Questions),
	// or opClientQueries, opClientTransactions, opClientEvents (counted by
	// the client: see ApplyClient).
	Op string
	// Interval, when positive, adds a series point every Interval inside
	// the window.
	Interval time.Duration
	// Datadir is the folder whose block device's stats are recorded; ""
	// means the server's datadir from its identity.
	Datadir string
	// PerRole splits the counters by thread role (see docs/measure.md).
	PerRole bool
	// Cgroup counts in cgroup mode (perfevent.Options.Cgroup).
	Cgroup bool
	// CgroupMade says the cgroup is one perfbench made for the server
	// alone (perfbench run's sandbox servers): its Records leave out the
	// note that cgroup mode counts every process in the cgroup, which
	// is there for a cgroup the user gave.
	CgroupMade bool

	// Perfbench and Command are perfbench's version and command line, for
	// the Record's provenance. Passwords in Command are masked (ScrubArgs).
	Perfbench string
	Command   []string
	// Identity is what the Records say they measured; the zero value is
	// perfbench stat's.
	Identity Identity

	// Profile, when set, also samples call stacks of the process over each
	// window and writes them as a pprof profile (Record.Profile).
	Profile *Profile

	// OnWarning, when set, is told about problems as they happen inside a
	// window (a status or /proc read that failed), for live messages; the
	// Record has them too.
	OnWarning func(msg string)
}

// Profile says how to sample a window's call stacks.
type Profile struct {
	// Sample is what to sample and how often (pprofout.Flags gives it).
	Sample perfevent.SampleOptions
	// Path is the profile file to write.
	Path string
	// RecordFile is where the caller writes the Record: Record.Profile is
	// Path relative to its folder. Empty: Record.Profile is Path as given.
	RecordFile string
	// Resolver names frames; nil makes one per window. Share one across
	// windows to read each binary once.
	Resolver *symbols.Resolver
	// Version and Step name the window in the profile's comments, for
	// readers of the profile alone; empty: the Record's (the server's
	// version string, "stat").
	Version, Step string
}

// WindowSpec is the plan of one window.
type WindowSpec struct {
	// Warmup is waited before the window opens.
	Warmup time.Duration
	// Duration is the window's planned length; 0 means until Done is closed
	// or ctx ends.
	Duration time.Duration
	// Done, when not nil, ends the window when it is closed (a load command
	// exited): a planned end, like Duration.
	Done <-chan struct{}
	// Opened, when not nil, is called once the window has opened (its
	// start edge read), with the instant it opened: a load started there
	// is inside the window from its first operation.
	Opened func(at time.Time)
	// Ticks, when not nil, reads a series point (counters, server status,
	// the server's CPU time) at each value received instead of every
	// Config.Interval, and the Record gets Comparison.Slices, one per
	// point, with each slice's status deltas: several servers measured
	// at once are read at the same instants (perfbench run's duet and
	// slices). TickEvery is the planned time between ticks (for the
	// stall warnings). The caller fills in the comparison's mode, turns
	// and what ran in each slice.
	Ticks     <-chan time.Time
	TickEvery time.Duration
	// OnPoint, when not nil, is called once each series point has been
	// read, with the number of points read so far.
	OnPoint func(n int)
}

// Session is a measurement in progress on one process: counters open from
// Start to Close.
type Session struct {
	cfg  Config
	att  *perfevent.Attachment
	opts perfevent.Options
	// byThread, in cgroup mode with PerRole, are per-thread counters of
	// the events that need no hardware counter, opened beside the
	// cgroup's for the split by thread role (nil otherwise: in thread
	// mode att is split itself).
	byThread *threadCounters
	op       *mysqld.Op // nil: no server op (none, or a client op)
	server   *record.Server
	prov     record.Provenance
	disk     string // block device name for osstat, "" for none
	notes    []record.Warning
	// ownTid is the server thread of perfbench's own connection (its
	// start time in ownStart), 0 when unknown: its counts are left out
	// of the windows, as its statements are left out of Questions.
	ownTid   int
	ownStart uint64
	fs       osstat.FS
	mark     *mark
	// endFS, from the end counter read to the end edge's /proc reading,
	// takes the threads that did not run in the window from the start
	// edge's reading instead of reading them again (osstat.FS.Since).
	endFS *osstat.FS
	// refSlack is how far the CPU time task-clock is checked against
	// may lag (see refSlack), in ns; gap is the last window's check
	// (tests log it).
	refSlack float64
	gap      cpuGap
	// aloneIn, per thread, is the cgroup v2 the process was alone in
	// (with its descendants) when the window opened, aloneCg its path
	// in /proc/PID/cgroup: its usage_usec is the reference, to the
	// nanosecond where the reaped children's cutime comes in clock
	// ticks, and it holds the children the kernel reaps itself. ""
	// otherwise (see refreshAlone).
	aloneIn, aloneCg string
	// oldChildren are the process's child processes at the attach (pid
	// to start time) still alive. Per thread their CPU is in no counter
	// (a child inherits counters opened before it is forked), so while
	// they live the CPU reference leaves them out, and the usage of a
	// cgroup they share with the process is no reference.
	oldChildren map[int]uint64
	// startTime is the process's start time at the attach (0: not
	// read), startCg its cgroup v2 path then: a window whose process is
	// gone or another, or no longer in that cgroup, is marked
	// (checkLeft, kernelCPU). exit notes when it exits.
	startTime uint64
	startCg   string
	exit      *exitWatch
}

// IsClientOp reports whether an op source is counted by the client:
// client.queries, client.transactions or client.events, alone or with how
// many of them make one op ("client.queries/10").
func IsClientOp(op string) bool {
	_, _, ok := clientOp(op)
	return ok
}

// clientOp splits a client op source into its count and how many of it
// make one op (1 unless it says "/N").
func clientOp(op string) (source string, per float64, ok bool) {
	source, n, found := strings.Cut(op, "/")
	per = 1
	if found {
		v, err := strconv.ParseFloat(n, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return "", 0, false
		}
		per = v
	}
	switch source {
	case opClientQueries, opClientTransactions, opClientEvents:
		return source, per, true
	}
	return "", 0, false
}

// Start checks the op source against the server, opens the counters on every
// thread of cfg.Pid at once (call it before the load connects), then reads the
// server's identity, the machine's provenance and the data directory's block
// device. Problems with the last three are warnings on the Records.
func Start(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Pid <= 0 {
		return nil, fmt.Errorf("measure: no process to count (pid %d): %w", cfg.Pid, errConfig)
	}
	if len(cfg.Events.Events) == 0 {
		return nil, fmt.Errorf("measure pid %d: no events to count: %w", cfg.Pid, errConfig)
	}
	s := &Session{cfg: cfg, refSlack: refSlack()}
	// The op source first: an op the server lacks fails before anything is
	// attached or any load runs.
	switch {
	case IsClientOp(cfg.Op):
	case cfg.DB == nil && cfg.Op != "":
		return nil, fmt.Errorf("measure pid %d: op source %q is a server status variable and needs a connection to the server (or use %s, %s or %s): %w",
			cfg.Pid, cfg.Op, opClientQueries, opClientTransactions, opClientEvents, errConfig)
	case cfg.DB != nil:
		spec := cfg.Op
		if spec == "" {
			spec = mysqld.DefaultOp
		}
		st, err := cfg.DB.Status(ctx)
		if err != nil {
			return nil, fmt.Errorf("measure pid %d: %w", cfg.Pid, err)
		}
		op, err := mysqld.ResolveOp(spec, st)
		if err != nil {
			return nil, fmt.Errorf("measure pid %d: %w", cfg.Pid, err)
		}
		s.op = &op
	}
	s.opts = perfevent.Options{Groups: cfg.Events.Groups, System: cfg.System, Cgroup: cfg.Cgroup}
	if cfg.PerRole && cfg.DB != nil && !cfg.Cgroup {
		// The main thread accepts connections and creates their
		// threads: counted with and without inherit, the connections
		// it creates inside a window are told from its own work.
		s.opts.Own = []int{cfg.Pid}
	}
	if cfg.System != nil {
		s.opts.Budgets = perfevent.BudgetsFrom(cfg.System)
	}
	att, err := perfevent.Attach(cfg.Pid, cfg.Events.Events, s.opts)
	if err != nil {
		return nil, err
	}
	s.att = att
	s.exit = watchExit(cfg.Pid)
	if st, err := s.proc().Stat(); err == nil {
		s.startTime = st.StartTime
	}
	s.startCg = s.cgroupNow()
	var kids osstat.Children
	if l, err := readBusyEdge(s.fs.Root); err == nil {
		kids = l.children()
	}
	s.oldChildren = s.fs.ChildrenOf(cfg.Pid, kids)
	if cfg.PerRole && cfg.DB != nil && cfg.Cgroup {
		s.byThread = s.openByThread()
	}
	s.mark = newMark(cfg.Pid)

	// perfbench's own connection thread.
	if cfg.DB != nil && (!cfg.Cgroup || s.byThread != nil) {
		if tid, err := cfg.DB.ConnectionThread(ctx); err == nil {
			s.ownTid, s.ownStart = tid, threadStart(cfg.Pid, tid)
		} else {
			s.note("perfbench's own connection is counted with the server (its statements are left out of Questions, its CPU time is not): %v", err)
		}
	}
	// Identity.
	if cfg.DB != nil {
		srv, warns, err := cfg.DB.Server(ctx, cfg.Pid)
		if err != nil {
			s.note("server identity could not be read: %v", err)
			srv = &record.Server{Pid: cfg.Pid}
		}
		for _, w := range warns {
			s.note("%s", w)
		}
		srv.Pid = cfg.Pid
		s.server = srv
	} else {
		s.server = &record.Server{Pid: cfg.Pid}
	}
	if s.server.Exe == "" {
		if exe, _, err := s.proc().Exe(); err == nil {
			s.server.Exe = exe
		}
	}
	// Provenance.
	prov, err := hostinfo.Provenance("/")
	if err != nil {
		s.note("machine provenance incomplete: %v", err)
	}
	prov.Perfbench = cfg.Perfbench
	prov.Command = ScrubArgs(cfg.Command)
	s.prov = prov
	// Disk of the data directory.
	dir := cfg.Datadir
	if dir == "" {
		dir = s.server.Datadir
	}
	if dir != "" {
		if dev, err := s.fs.DeviceOf(dir); err == nil {
			s.disk = dev.Name
		} else {
			s.note("no disk stats for %s: %v", dir, err)
		}
	}
	return s, nil
}

// note adds a general warning to every Record of the session.
func (s *Session) note(format string, args ...any) {
	s.notes = append(s.notes, general(format, args...))
}

// general is a warning of code general, its text formatted as by
// fmt.Sprintf.
func general(format string, args ...any) record.Warning {
	return record.Warning{Code: record.WarnGeneral, Text: fmt.Sprintf(format, args...)}
}

// Attachment returns the counters currently open (Measure may replace them
// with PerRole; see docs/measure.md).
func (s *Session) Attachment() *perfevent.Attachment { return s.att }

// Server returns the server's identity as read by Start (a copy).
func (s *Session) Server() record.Server { return *s.server }

// Close closes the counters. Closing twice is a no-op.
func (s *Session) Close() error {
	if s.mark != nil {
		s.mark.close()
	}
	s.exit.close()
	s.exit = nil
	if s.byThread != nil && s.byThread.att != nil {
		s.byThread.att.Close()
	}
	if s.att == nil {
		return nil
	}
	return s.att.Close()
}

// Concurrent is a warning when another perfbench measures the same server
// (see mark), "" otherwise. Measure looks again when the window closes and
// puts the warning in the Record.
func (s *Session) Concurrent() string {
	if s.mark == nil {
		return ""
	}
	return s.mark.warning()
}

// edge is what was read at one edge of the window (or of an interval).
type edge struct {
	at     time.Time // the counter read
	status *mysqld.Status
	lag    time.Duration // counter read → end of the status query
	os     *osstat.Snapshot
	busy   *busyEdge // nil when /proc/stat or the process list was not read
	err    []record.Warning
}

// readEdge reads the server status then /proc, right after a counter read
// at instant at; list is the process list read right before it (nil: it
// is read now).
func (s *Session) readEdge(ctx context.Context, at time.Time, what string, list *busyEdge) edge {
	e := edge{at: at}
	if s.cfg.DB != nil {
		st, err := s.cfg.DB.Status(ctx)
		switch {
		case err != nil:
			e.err = append(e.err, general("server status at the window's %s could not be read: %v", what, err))
		case st.Took > maxStatusRead:
			// Not this edge's status: the window fails (statusAndOps).
			e.err = append(e.err, general("server status at the window's %s took %.1f s to read (more than %s): the server stalled or was stopped, and its status is not that of the window's %s", what, st.Took.Seconds(), maxStatusRead, what))
		default:
			e.status = st
			e.lag = st.Time.Add(st.Took / 2).Sub(at)
		}
	}
	fs := s.fs
	if s.endFS != nil {
		fs, s.endFS = *s.endFS, nil
	}
	snap, err := fs.Snapshot(s.cfg.Pid, s.disk)
	if err != nil {
		e.err = append(e.err, general("/proc at the window's %s could not be read: %v", what, err))
	} else {
		e.os = snap
	}
	e.busy = list
	if list == nil {
		e.busy, _ = readBusyEdge(s.fs.Root)
	}
	return e
}

// Measure waits w.Warmup, measures one window and returns its Record (Kind
// stat, Step "stat", Version the server's version string or the process
// name; the caller may change them). See docs/measure.md for the window's
// edges, early ends and failures. The error is ctx.Err() when ctx ended the
// window early (the Record is then partial and complete otherwise), or an
// error of the counters themselves (then the Record is nil).
func (s *Session) Measure(ctx context.Context, w WindowSpec) (*record.Record, error) {
	if s.att == nil {
		return nil, errors.New("measure: the session is closed")
	}
	called := time.Now()
	r := record.New(record.KindStat)
	if !warmUp(ctx, w.Warmup) {
		s.fill(r, nil)
		r.Outcome = record.OutcomeFailed
		r.Error = fmt.Sprintf("interrupted during the %s warm-up: nothing was measured", w.Warmup)
		return r, ctx.Err()
	}
	live := &liveWarnings{on: s.cfg.OnWarning}
	warn := live.add
	perRole, roles, err := s.startRoles(ctx, warn)
	if err != nil {
		return nil, err
	}

	// The window.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	doneFirst := endOnDone(ctx, wctx, w.Done, cancel)
	// Reads at the edges must not be cut short by the end of ctx.
	rctx := context.WithoutCancel(ctx)
	var start, end edge
	var refStart, refEnd edgeRef     // the kernel's CPU time, read around the counters
	var roleTotal *perfevent.Reading // cgroup mode: the per-thread counters of the split by role
	ser := &series{s: s, ctx: rctx, end: &end, warn: warn, slices: w.Ticks != nil, onPoint: w.OnPoint}
	stopWatch := func() {}
	opts := perfevent.WindowOptions{
		Duration: w.Duration,
		Interval: s.cfg.Interval,
		OnStart: func(at time.Time) error {
			s.after(&refStart)
			s.readByThread(perRole, warn, nil)
			start = s.readEdge(rctx, at, "start", refStart.list)
			ser.begin(start)
			if roles != nil {
				stopWatch = s.watchRoles(rctx, roles)
			}
			if w.Opened != nil {
				w.Opened(at)
			}
			return nil
		},
		OnEnd: func(at time.Time) error {
			s.after(&refEnd)
			s.readByThread(perRole, warn, &roleTotal)
			end = s.readEdge(rctx, at, "end", refEnd.list)
			ser.endSet = true
			return nil
		},
	}
	if s.cfg.Interval > 0 || w.Ticks != nil {
		opts.OnInterval = ser.point
	}
	opts.Tick = w.Ticks
	s.refreshAlone()
	sampling := s.startProfile(&opts, warn)
	opts.BeforeStart = s.beforeRead(&refStart, opts.BeforeStart)
	opts.BeforeEnd = s.beforeRead(&refEnd, opts.BeforeEnd)
	opts.EndRead = s.readSince(&start)
	opened := time.Now()
	win, err := perfevent.Measure(wctx, s.att, opts)
	stopWatch()
	if err != nil {
		if sampling != nil {
			sampling.Cancel()
		}
		return nil, fmt.Errorf("measure pid %d: %w", s.cfg.Pid, err)
	}
	all := win.Total
	win.Total = s.withoutOwn(win.Total)
	interrupted := wasInterrupted(ctx.Err() != nil, doneFirst.Load(), w, win.Partial)

	s.endRoles(rctx, roles, warn)

	s.fill(r, win)
	r.Window.Warmup = opened.Sub(called).Seconds()
	if w.Warmup == 0 {
		r.Window.Warmup = 0
	}
	r.Counters = recordCounters(win.Total)
	r.AddWarning(noteWarnings(s.notesOf(win.Total))...)
	r.AddWarning(start.err...)
	r.AddWarning(end.err...)
	r.AddWarning(live.list...)
	s.edgeWarnings(r, start, end)

	failed := s.statusAndOps(r, start, end)
	if m := win.Total.Missing(); m != "" {
		// A counter the window could not measure: the Record fails,
		// its other numbers stand, that one is not counted.
		r.Outcome = record.OutcomeFailed
		r.Error = strings.TrimPrefix(r.Error+"; "+m, "; ")
	}

	s.osDelta(r, start, end)
	s.checkBusy(r, start, end)
	s.gap = s.kernelCPU(r, all, win.Total, refStart, refEnd)
	s.finishPoints(r, ser, failed != "", w, ownOf(win, start))
	split, ok := s.roleSplit(win.Total, roleTotal)
	s.finishRoles(r, split, roles, perRole && ok)

	if s.op != nil {
		setPerOp(r) // a client op source is divided by in ApplyClient
	}
	if sampling != nil {
		s.finishProfile(r, sampling, roles, failed != "")
	}
	if interrupted {
		markInterrupted(r, w.Duration)
		return r, ctx.Err()
	}
	return r, nil
}

// readSince is the window's EndRead: the end edge's /proc reading takes
// the threads that did not run in the window (by their clocks, from the
// start and end counter readings) from the start edge's reading.
func (s *Session) readSince(start *edge) func(a, b perfevent.Reading) {
	return func(a, b perfevent.Reading) {
		if ran, ok := b.Ran(a); ok && start.os != nil {
			fs := s.fs.Since(start.os.Process, ran)
			s.endFS = &fs
		}
	}
}

// ownOf is what perfbench's own reading at the edges of win took.
func ownOf(win *perfevent.Window, start edge) ownReading {
	own := ownReading{startTook: win.StartTook, beforeEnd: win.BeforeEndTook}
	if start.os != nil && start.os.Process != nil {
		own.threads = len(start.os.Process.Threads)
	}
	return own
}

// endOnDone ends the window (cancel, which ends wctx) when done is closed
// first; the flag it returns is set when done came while ctx was still
// live. A nil done never ends it.
func endOnDone(ctx, wctx context.Context, done <-chan struct{}, cancel func()) *atomic.Bool {
	var first atomic.Bool
	if done != nil {
		go func() {
			select {
			case <-done:
				first.Store(ctx.Err() == nil)
				cancel()
			case <-wctx.Done():
			}
		}()
	}
	return &first
}

// warmUp waits d, or until ctx ends: then it returns false.
func warmUp(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// liveWarnings are the warnings of a window met while it runs, told to on
// (Config.OnWarning) as they come.
type liveWarnings struct {
	list []record.Warning
	on   func(msg string)
}

// add adds a warning of the given code, its text formatted as by
// fmt.Sprintf.
func (l *liveWarnings) add(code record.Code, format string, args ...any) {
	w := record.Warning{Code: code, Text: fmt.Sprintf(format, args...)}
	l.list = append(l.list, w)
	if l.on != nil {
		l.on(w.Text)
	}
}

// wasInterrupted decides whether ctx ending (ctxDone) interrupted a window
// planned as w: only when the window had a planned end (Duration, or Done)
// that had not come yet: perfevent found the window Partial (ended before
// Duration), or Done was not closed first.
func wasInterrupted(ctxDone, doneFirst bool, w WindowSpec, partial bool) bool {
	switch {
	case !ctxDone || doneFirst:
		return false
	case w.Duration > 0:
		return partial
	}
	return w.Done != nil
}

// markInterrupted makes r partial (unless it failed) and puts the
// interruption first in its error.
func markInterrupted(r *record.Record, planned time.Duration) {
	if r.Outcome == record.OutcomeOK {
		r.Outcome = record.OutcomePartial
	}
	why := fmt.Sprintf("interrupted after %.3f s, before the load ended", r.Window.Seconds)
	if planned > 0 {
		why = fmt.Sprintf("interrupted after %.3f s of the %s planned", r.Window.Seconds, planned)
	}
	if r.Error == "" {
		r.Error = why
	} else {
		r.Error = why + "; " + r.Error
	}
}

// Failed returns the Record of a window whose counters failed (Measure
// returned no Record): the server and machine as Start read them, outcome
// failed, and err as the reason. Nothing in it was counted.
func (s *Session) Failed(err error) *record.Record {
	r := record.New(record.KindStat)
	s.fill(r, nil)
	r.Outcome = record.OutcomeFailed
	r.Error = err.Error()
	return r
}

// fill sets what the Record takes from the session and the counters' window.
func (s *Session) fill(r *record.Record, win *perfevent.Window) {
	srv := *s.server
	if s.server.Variables != nil {
		srv.Variables = make(map[string]string, len(s.server.Variables))
		for k, v := range s.server.Variables {
			srv.Variables[k] = v
		}
	}
	r.Server = &srv
	r.Provenance = s.prov
	r.Provenance.Written = time.Now().UTC()
	r.Host = s.prov.Hostname
	if r.Host == "" {
		r.Host, _ = os.Hostname()
	}
	r.Version = srv.Version
	r.AddWarning(s.notes...)
	if win != nil {
		if r.Version == "" {
			r.Version = win.Name
		}
		r.Window = record.Window{Start: win.Total.Start, End: win.Total.End, Seconds: win.Total.Seconds(), Counting: record.CountingThread}
		if win.Cgroup {
			r.Window.Counting = record.CountingCgroup
		}
	}
	if r.Version == "" {
		r.Version = fmt.Sprintf("pid %d", s.cfg.Pid)
	}
	s.cfg.Identity.Apply(r)
}

// Identity is what a window's Record says it measured: perfbench run's
// measurement of a version's step at a thread count and repeat. The zero
// value is perfbench stat's: kind stat, step "stat", the server's version
// string (or the process's name) as the version.
type Identity struct {
	Kind                       record.Kind
	Version, Step, Group, AAOf string
	Threads, Repeat            int
	// Plan and PlanSHA256 are the plan file and its SHA-256, for the
	// provenance; AutoRepeats the plan's repeats = "auto".
	Plan, PlanSHA256 string
	AutoRepeats      *record.AutoRepeats
}

// Apply sets id on r: what it gives, and step "stat" when it gives no step.
func (id Identity) Apply(r *record.Record) {
	if id.Kind != "" {
		r.Kind = id.Kind
	}
	if id.Version != "" {
		r.Version = id.Version
	}
	r.Step = cmp.Or(id.Step, r.Step, "stat")
	if id.Threads > 0 {
		r.Threads = id.Threads
	}
	if id.Repeat > 0 {
		r.Repeat = id.Repeat
	}
	r.Group, r.AAOf, r.AutoRepeats = id.Group, id.AAOf, id.AutoRepeats
	if id.Plan != "" {
		r.Provenance.Plan, r.Provenance.PlanSHA256 = id.Plan, id.PlanSHA256
	}
}

// setPerOp sets PerOp on every measured counter of r (and of its roles) from
// r.Ops, and clears it where the counter or the op count was not measured.
func setPerOp(r *record.Record) {
	set := func(cs []record.Counter) {
		for i := range cs {
			cs[i].PerOp = nil
			if cs[i].Measured() && r.Ops.Count > 0 {
				v := cs[i].Value / r.Ops.Count
				cs[i].PerOp = &v
			}
		}
	}
	set(r.Counters)
	for i := range r.Roles {
		set(r.Roles[i].Counters)
	}
}

// proc is the server in /proc (under the session's root).
func (s *Session) proc() procfs.Proc { return procfs.New(s.fs.Root).Proc(s.cfg.Pid) }

// processCPU reads the server's user+system CPU seconds from /proc/PID/stat.
func (s *Session) processCPU() (float64, bool) {
	st, err := s.proc().Stat()
	if err != nil {
		return 0, false
	}
	return cpuSeconds(st, float64(procfs.ClockTicks())), true
}

func cpuSeconds(st procfs.Stat, ticks float64) float64 {
	if ticks <= 0 {
		ticks = float64(procfs.ClockTicks())
	}
	return float64(st.UTime+st.STime) / ticks
}

// withoutOwn leaves the counts of perfbench's own connection thread out of
// r: its status and thread queries inside the window, whose statements are
// left out of Questions.
func (s *Session) withoutOwn(r perfevent.Reading) perfevent.Reading {
	if s.ownTid != 0 {
		r, _ = r.Without(s.ownTid, s.ownStart)
	}
	return r
}

// reattachForRoles opens the counters that are split by role again when
// threads appeared since they were attached, so that each live thread
// carries counters of its own: the session's, or in cgroup mode the
// per-thread ones beside them.
func (s *Session) reattachForRoles() error {
	if s.byThread != nil {
		if s.byThread.att == nil {
			return nil
		}
		att, err := s.reattach(s.byThread.att, s.byThread.events, s.byThread.opts)
		s.byThread.att = att
		return err
	}
	att, err := s.reattach(s.att, s.cfg.Events.Events, s.opts)
	s.att = att
	return err
}

// reattach closes att and opens events with opts again, when threads
// appeared since att was attached; it returns the attachment to use (nil
// when the new one could not be opened).
func (s *Session) reattach(att *perfevent.Attachment, events []perfevent.Event, opts perfevent.Options) (*perfevent.Attachment, error) {
	live, err := s.proc().Tasks()
	if err != nil {
		return att, nil // the attachment's own reads will say what happened
	}
	attached := map[int]bool{}
	for _, tid := range att.Threads() {
		attached[tid] = true
	}
	fresh := 0
	for _, tid := range live {
		if !attached[tid] {
			fresh++
		}
	}
	if fresh == 0 {
		return att, nil
	}
	if err := att.Close(); err != nil {
		return nil, fmt.Errorf("measure pid %d: close counters to reattach them per thread: %w", s.cfg.Pid, err)
	}
	att, err = perfevent.Attach(s.cfg.Pid, events, opts)
	if err != nil {
		return nil, fmt.Errorf("measure pid %d: reattach counters per thread: %w", s.cfg.Pid, err)
	}
	return att, nil
}

// finishProfile writes the window's profile, labelled with thread roles and
// the op count, and points the Record at it.
func (s *Session) finishProfile(r *record.Record, w *pprofout.Window, roles *roleLog, failed bool) {
	p := s.cfg.Profile
	opts := pprofout.Options{Version: r.Version, Step: r.Step, Resolver: p.Resolver}
	if p.Version != "" {
		opts.Version = p.Version
	}
	if p.Step != "" {
		opts.Step = p.Step
	}
	if !failed && r.Ops.Count > 0 {
		opts.Ops, opts.OpsSource = r.Ops.Count, r.Ops.Source
	}
	if roles != nil {
		opts.Roles = roles.all()
	}
	if s.ownTid != 0 {
		opts.Exclude = []int{s.ownTid}
	}
	res, err := w.Finish(p.Path, opts)
	if err != nil {
		r.Warnf(record.WarnGeneral, "no profile: %v", err)
		return
	}
	for _, w := range res.Warnings {
		r.Warnf(record.WarnGeneral, "%s", w)
	}
	r.Profile = res.Path
	if p.RecordFile != "" {
		if rel, err := pprofout.RelPath(p.RecordFile, res.Path); err == nil {
			r.Profile = rel
		}
	}
}
