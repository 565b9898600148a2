package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/internal/load/sysbench"
	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// startTimeout bounds the wait for sysbench's threads to start (connecting
// hundreds of clients to a busy server takes a while).
const startTimeout = 60 * time.Second

// opSpec is the op source of a step as package measure takes it:
// "Questions", "Rows_read/1000", "client.queries", "client.events/10".
func opSpec(st *plan.Step) string {
	if st.OpsPer > 0 && st.OpsPer != 1 {
		return st.Ops + "/" + strconv.FormatFloat(st.OpsPer, 'f', -1, 64)
	}
	return st.Ops
}

// newRecord returns a step Record of a measurement with its identity and
// the run's provenance: the Record of a measurement that failed before its
// window was measured.
func (r *runner) newRecord(it plan.Item) *record.Record {
	rec := record.New(record.KindStep)
	rec.Provenance = r.prov
	rec.Host = r.prov.Hostname
	rec.Provenance.Command = measure.ScrubArgs(r.opts.Command)
	rec.Provenance.Perfbench = r.opts.Perfbench
	r.identity(it).Apply(rec)
	return rec
}

// identity is what a Record of a measurement of this run says about
// itself: version, step, threads, repeat, group, A/A pair, plan. The
// window's Record gets it from package measure (measure.Config.Identity),
// the Record of a measurement that failed before from newRecord.
func (r *runner) identity(it plan.Item) measure.Identity {
	id := measure.Identity{Kind: record.KindStep, Version: it.Version.Label, Step: it.Step.Label, Threads: it.Threads, Repeat: it.Repeat,
		Group: string(it.Step.Group), AAOf: it.Version.AAOf, Plan: r.plan.File, PlanSHA256: r.planSHA}
	if abs, err := filepath.Abs(r.plan.File); err == nil {
		id.Plan = abs
	}
	if a := r.plan.Auto; a != nil {
		id.AutoRepeats = &record.AutoRepeats{Precision: a.Precision, Max: a.Max, Base: r.plan.Base}
	}
	return id
}

func failed(rec *record.Record, format string, args ...any) *record.Record {
	rec.Outcome = record.OutcomeFailed
	rec.Error = fmt.Sprintf(format, args...)
	return rec
}

// measure runs one measurement and returns its Record (never nil).
func (r *runner) measure(ctx context.Context, s *server, it plan.Item) *record.Record {
	r.setAside(it)
	s.placed = nil
	return r.complete(ctx, r.runStep(ctx, s, it), s, it)
}

// complete sets what a measurement's Record takes from the run besides its
// identity: the rotation's group, the placement, the notes of the flush
// and of the server, the server's my.cnf, the engine of a suite step's
// tables.
func (r *runner) complete(ctx context.Context, rec *record.Record, s *server, it plan.Item) *record.Record {
	r.rotate(rec, it)
	r.recordPlacement(rec, s, it.Threads)
	for _, n := range slices.Concat(r.flushNotes[it.ID], s.notes) {
		rec.Warnf(record.WarnGeneral, "%s", n)
	}
	s.notes = nil
	if rec.Server != nil && s.v.Managed != nil && rec.Server.Config == "" {
		rec.Server.Config = s.v.Managed.Mycnf
	}
	if it.Step != nil && it.Step.Suite != nil {
		r.recordEngine(ctx, rec, s)
	}
	return rec
}

func (r *runner) runStep(ctx context.Context, s *server, it plan.Item) *record.Record {
	if err := s.ensure(ctx); err != nil {
		return r.abandoned(ctx, it, "the server is not available: %v", err)
	}
	if err := s.ensureData(ctx); err != nil {
		return r.abandoned(ctx, it, "the data set is not loaded: %v", err)
	}
	if err := r.defaultEvents(s.pid); err != nil {
		return failed(r.newRecord(it), "%v", err)
	}
	if err := r.setRotation(); err != nil {
		return failed(r.newRecord(it), "%v", err)
	}
	if it.Step.Insert != nil {
		return r.runInsert(ctx, &stepRun{r: r, s: s, it: it, st: it.Step, logPath: r.logPath(it)})
	}
	cmd, removeOptions, err := r.stepCommand(s, it, r.tail)
	if err != nil {
		return failed(r.newRecord(it), "%v", err)
	}
	defer removeOptions()
	sr := &stepRun{r: r, s: s, it: it, st: it.Step, cmd: cmd, logPath: r.logPath(it)}
	return sr.run(ctx)
}

// stepRun is one measurement of a step on a running server: the load, what
// it printed, and the window measured beside it.
type stepRun struct {
	r       *runner
	s       *server
	it      plan.Item
	st      *plan.Step
	cmd     plan.Command
	logPath string
	load    *measure.Load
}

// run opens the counters, starts the load, measures the window and
// decides the step's outcome.
func (sr *stepRun) run(ctx context.Context) *record.Record {
	log, err := createOut(sr.logPath)
	if err != nil {
		return failed(sr.newRecord(), "create the load's log: %v", err)
	}
	defer log.Close()
	fmt.Fprintf(log, "# %s\n", strings.Join(sr.cmd.Shown, " "))

	sess, rec := sr.open(ctx)
	if rec != nil {
		return rec
	}
	defer sess.Close()

	sr.s.placeServer(sr.it.Threads)
	_, client := sr.r.place.at(sr.it.Threads)
	sr.load, err = sr.startLoad(log, client)
	if err != nil {
		return failed(sr.newRecord(), "%v", err)
	}
	defer sr.load.Stop(2 * time.Second)
	if !sr.st.Custom() {
		select {
		case <-sr.load.ThreadsStarted():
		case <-sr.load.Exited():
		case <-ctx.Done():
		case <-time.After(startTimeout):
		}
	}
	if !sr.load.Running() && ctx.Err() == nil {
		return sr.endedBeforeWindow(ctx)
	}
	sr.s.placed = sr.r.observePlacement(sr.s, client, sr.load.Pid())
	rec, merr := sr.window(ctx, sess)
	return sr.finish(ctx, rec, merr)
}

func (sr *stepRun) newRecord() *record.Record { return sr.r.newRecord(sr.it) }

// startLoad starts the step's load, its output to log, on cpus: as
// perfbench stat starts a command (measure.StartLoad).
func (sr *stepRun) startLoad(log io.Writer, cpus cpuset.Set) (*measure.Load, error) {
	return measure.StartLoad(sr.cmd.Argv, measure.LoadOptions{Out: log, Env: sr.cmd.Env, CPUs: cpus, Shown: sr.cmd.Shown, Sysbench: !sr.st.Custom()})
}

// result is what the load printed so far, as sysbench's parser read it.
func (sr *stepRun) result() *sysbench.Result { return sr.load.Result() }

// open opens the counters; on failure it returns the step's Record instead.
// Counters come first: the load's connections are counted from their first
// instant (threads inherit the counters of the thread creating them).
func (sr *stepRun) open(ctx context.Context) (session, *record.Record) {
	r, s := sr.r, sr.s
	prof, err := r.profile(sr.it)
	if err != nil {
		return nil, failed(sr.newRecord(), "%v", err)
	}
	cfg := measure.Config{
		Pid:       s.pid,
		Events:    r.eventsOf(sr.it),
		System:    r.sys,
		DB:        s.db,
		Op:        opSpec(sr.st),
		Interval:  r.plan.Interval,
		Datadir:   s.datadir,
		PerRole:   true,
		Cgroup:    s.cgroup() != "",
		Perfbench: r.opts.Perfbench,
		Command:   r.opts.Command,
		Identity:  r.identity(sr.it),
		Profile:   prof,
	}
	cfg.CgroupMade = cfg.Cgroup // the sandbox's cgroup is perfbench's: no note on it
	sess, err := r.meter(ctx, cfg)
	if err != nil && cfg.Cgroup && errors.Is(err, perfevent.ErrPermission) && s.running() {
		// Cgroup mode needs CPU-wide counting rights, per-thread
		// counting does not: count per thread.
		s.notes = append(s.notes, fmt.Sprintf("cgroup mode could not open its counters (%v): the server is counted per thread, which misses some of its CPU", err))
		cfg.Cgroup = false
		sess, err = r.meter(ctx, cfg)
	}
	if err != nil {
		if !s.running() {
			return nil, r.crashed(sr.newRecord(), s)
		}
		return nil, r.abandoned(ctx, sr.it, "open the counters: %v", err)
	}
	return sess, nil
}

// applyClient sets the load's results on rec.
func (sr *stepRun) applyClient(rec *record.Record) {
	sr.r.applyClient(rec, sr.st, sr.load.Client())
}

// endedBeforeWindow is the Record of a load that ended before the window
// opened.
func (sr *stepRun) endedBeforeWindow(ctx context.Context) *record.Record {
	sr.load.Wait(0)
	res := sr.result()
	rec := failed(sr.newRecord(), "%s before the window opened%s", sr.r.loadEnd(sr.st, sr.load), loadDetail(res, sr.logPath))
	sr.applyClient(rec)
	if sr.s.down(ctx) {
		sr.r.crashed(rec, sr.s)
	}
	return rec
}

// window measures the step's window, which ends early when the load or the
// server exits. The Record is never nil.
func (sr *stepRun) window(ctx context.Context, sess session) (*record.Record, error) {
	wctx, stopWatch := context.WithCancel(ctx)
	ended := make(chan struct{})
	go func() {
		select {
		case <-sr.load.Exited():
		case <-sr.s.exited(wctx):
		case <-wctx.Done():
			return
		}
		close(ended)
	}()
	rec, merr := sess.Measure(ctx, measure.WindowSpec{Warmup: sr.st.Warmup, Duration: sr.st.Duration, Done: ended})
	stopWatch()
	if rec == nil {
		rec = sr.newRecord()
		if merr == nil {
			merr = errors.New("no record")
		}
	}
	return rec, merr
}

// finish lets the load end, sets its results on rec and decides the step's
// outcome.
func (sr *stepRun) finish(ctx context.Context, rec *record.Record, merr error) *record.Record {
	st, load := sr.st, sr.load
	interrupted := ctx.Err() != nil
	loadEnded := !load.Running()
	serverDown := !sr.s.running()
	if !serverDown && !interrupted && (loadEnded || merr != nil) {
		serverDown = sr.s.down(ctx)
	}
	sr.endLoad(rec, interrupted || serverDown || loadEnded)
	res := sr.result()
	sr.applyClient(rec)

	f := stepFacts{
		interrupted:   interrupted,
		serverDown:    serverDown,
		measureErr:    merr != nil,
		loadEnded:     loadEnded,
		custom:        st.Custom(),
		exitCode:      load.ExitCode(),
		fatal:         len(res.Fatal) > 0,
		endedInWarmup: loadEnded && !rec.Window.Start.IsZero() && load.Ended().Before(rec.Window.Start),
	}
	switch decideOutcome(f) {
	case stepInterrupted:
		// measure marks a window cut short partial, and a warm-up cut
		// short failed (nothing was measured).
		if rec.Outcome == record.OutcomeOK {
			rec.Outcome = record.OutcomePartial
		}
		if rec.Error == "" {
			rec.Error = fmt.Sprintf("interrupted after %.1f s of the %s window", rec.Window.Seconds, st.Duration)
		}
	case stepServerDown:
		sr.r.crashed(rec, sr.s)
	case stepMeasureFailed:
		failed(rec, "measure the window: %v", merr)
	case stepEndedInWarmup:
		failed(rec, "%s during the %s warm-up, before the window opened%s", sr.r.loadEnd(st, load), st.Warmup, loadDetail(res, sr.logPath))
	case stepEndedInWindow:
		late := ""
		if d := rec.Window.Warmup - st.Warmup.Seconds(); d > 0.5 && f.exitCode == 0 {
			late = fmt.Sprintf("; the window opened %.1f s after the warm-up (the measurement's preparation was slow: a busy "+
				"machine?) and the load runs only %s past the window", d, sr.r.tail)
		}
		failed(rec, "%s before the window closed (%.1f s of %s)%s%s", sr.r.loadEnd(st, load), rec.Window.Seconds, st.Duration, late, loadDetail(res, sr.logPath))
	case stepShortWindow:
		rec.Warnf(record.WarnGeneral, "the command ended %.1f s into the %s window: the window is that long", rec.Window.Seconds, st.Duration)
	case stepLoadFailed:
		failed(rec, "%s%s", sr.r.loadEnd(st, load), loadDetail(res, sr.logPath))
	case stepFailedAfterWindow:
		failed(rec, "%s (after the window closed)%s", sr.r.loadEnd(st, load), loadDetail(res, sr.logPath))
	}
	return rec
}

// endLoad lets the load end by itself (its tail), or ends it now.
func (sr *stepRun) endLoad(rec *record.Record, now bool) {
	switch {
	case now:
		sr.load.Stop(2 * time.Second)
	case sr.st.Custom():
		// A custom command still running after the window (and the tail
		// its {time} gives it) is stopped.
		sr.load.Wait(sr.r.tail + 2*time.Second)
	default:
		if sr.load.Wait(sr.r.tail + 30*time.Second) {
			rec.Warnf(record.WarnGeneral, "sysbench did not end %s after the window closed: stopped", sr.r.tail+30*time.Second)
		}
	}
}

// stepFacts is what is known of a step once its window closed and its load
// ended.
type stepFacts struct {
	interrupted   bool // the run was interrupted
	serverDown    bool // the server exited
	measureErr    bool // measuring the window failed
	loadEnded     bool // the load had ended when the window closed
	endedInWarmup bool // the load ended before the window opened
	custom        bool // the load is the plan's command, not sysbench
	exitCode      int  // the load's exit status; -1 for a signal
	fatal         bool // sysbench printed FATAL lines
}

// stepOutcome is how a step's measurement ended.
type stepOutcome int

const (
	stepOK                stepOutcome = iota
	stepInterrupted                   // partial, or failed in the warm-up
	stepServerDown                    // failed: the server exited
	stepMeasureFailed                 // failed: measuring the window failed
	stepEndedInWarmup                 // failed: the load ended during the warm-up
	stepEndedInWindow                 // failed: the load ended before the window closed
	stepShortWindow                   // ok: a custom command ended in the window, which is that long
	stepLoadFailed                    // failed: sysbench failed after the window
	stepFailedAfterWindow             // failed: a custom command failed after the window
)

// decideOutcome decides how a step's measurement ended, the first cause
// winning.
func decideOutcome(f stepFacts) stepOutcome {
	switch {
	case f.interrupted:
		return stepInterrupted
	case f.serverDown:
		return stepServerDown
	case f.measureErr:
		return stepMeasureFailed
	case f.endedInWarmup:
		return stepEndedInWarmup
	case f.loadEnded && (f.exitCode != 0 || !f.custom):
		return stepEndedInWindow
	case f.loadEnded:
		return stepShortWindow
	case !f.custom && (f.exitCode != 0 || f.fatal):
		return stepLoadFailed
	case f.custom && f.exitCode > 0:
		return stepFailedAfterWindow
	}
	return stepOK
}

// applyClient sets the load's results on rec, and the op count and the
// values per op when the step counts ops by the client.
func (r *runner) applyClient(rec *record.Record, st *plan.Step, c *record.Client) {
	measure.ApplyClient(rec, c, opSpec(st))
}

func (r *runner) loadEnd(st *plan.Step, load *measure.Load) string {
	what := "sysbench"
	if st.Custom() {
		what = "the command"
	}
	return what + " ended with " + load.DescribeExit()
}

// loadDetail is what the load said before it failed: its FATAL lines, else
// the last lines of its output; and where its output is.
func loadDetail(res *sysbench.Result, logPath string) string {
	var said []string
	if len(res.Fatal) > 0 {
		said = res.Fatal
	} else if b, err := os.ReadFile(logPath); err == nil {
		for _, l := range strings.Split(tailLines(b, 3), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "# ") && !strings.HasPrefix(l, "sysbench ") {
				said = append(said, l)
			}
		}
	}
	if len(said) > 3 {
		said = said[:3]
	}
	if len(said) == 0 {
		return " (output in " + logPath + ")"
	}
	text := strings.Join(said, "; ")
	return ": " + text + loadAccountHint(text) + " (output in " + logPath + ")"
}

// crashed marks rec failed because the server exited, with the end of its
// error log.
func (r *runner) crashed(rec *record.Record, s *server) *record.Record {
	msg := fmt.Sprintf("the server (pid %d) exited during the step", s.pid)
	if tail := s.errorLogTail(15); tail != "" {
		msg += "\nits error log ends:\n" + tail
	}
	s.crashRecorded = true
	rec.Outcome = record.OutcomeFailed
	rec.Error = msg
	return rec
}

// abandoned is the Record of a measurement that could not start: failed, or
// partial when the run was interrupted meanwhile.
func (r *runner) abandoned(ctx context.Context, it plan.Item, format string, args ...any) *record.Record {
	rec := failed(r.newRecord(it), format, args...)
	if ctx.Err() != nil {
		rec.Error = "interrupted before the window opened: nothing was measured"
	}
	return rec
}

// stepCommand is the load's command line: sysbench for a suite step, the
// plan's command with its placeholders filled for a custom one. The
// password is never on it: a suite step's goes to a sysbench option file
// ({sysbench_options} of a custom step), which remove deletes once the load
// has ended; a custom step's {password} is in the environment of its shell
// script, or, as an argument, where the plan put it (the plan warned).
// Shown is the command line for logs and Records. The load runs tail past
// the window.
func (r *runner) stepCommand(s *server, it plan.Item, tail time.Duration) (cmd plan.Command, remove func(), err error) {
	conn := s.conn
	conn.ScriptDir = r.scripts
	conn.Tail = tail
	o := r.plan.SysbenchOptions(it, conn)
	if !it.Step.Custom() {
		o, remove, err := withOptionFile(o)
		if err != nil {
			return plan.Command{}, nil, err
		}
		argv, err := suite.Command(*it.Step.Suite, o)
		if err != nil {
			remove()
			return plan.Command{}, nil, err
		}
		return plan.Command{Argv: argv, Shown: measure.ScrubArgs(argv)}, remove, nil
	}
	secs := func(d time.Duration) string { return strconv.Itoa(int((d + time.Second - 1) / time.Second)) }
	host := o.Host
	if host == "" {
		host = "localhost"
	}
	values := map[string]string{
		"host":       host,
		"port":       strconv.Itoa(o.Port),
		"socket":     s.socket(),
		"user":       o.User,
		"password":   o.Password,
		"db":         o.DB,
		"tables":     strconv.Itoa(o.Tables),
		"table_size": strconv.Itoa(o.TableSize),
		"threads":    strconv.Itoa(it.Threads),
		"warmup":     secs(o.Warmup),
		"duration":   secs(o.Time),
		"time":       strconv.Itoa(o.RunSeconds()),
		"out":        r.out,
		"sysbench":   o.Sysbench,
		"rand_type":  o.RandType,
	}
	if values["socket"] == "" {
		values["socket"] = o.Socket
	}
	remove = func() {}
	if strings.Contains(strings.Join(it.Step.Command, " "), "{sysbench_options}") {
		path, rm, err := suite.WriteConfig(o)
		if err != nil {
			return plan.Command{}, nil, err
		}
		values["sysbench_options"], remove = path, rm
	}
	cmd, err = plan.Expand(it.Step.Command, values, "password")
	if err != nil {
		remove()
		return plan.Command{}, nil, err
	}
	cmd.Shown = measure.ScrubArgs(cmd.Shown)
	return cmd, remove, nil
}

// withOptionFile puts the password of o into a sysbench option file
// (suite.WriteConfig) and returns the options that read it, and the
// function that removes it once sysbench has ended.
func withOptionFile(o suite.Options) (suite.Options, func(), error) {
	if o.Password == "" {
		return o, func() {}, nil
	}
	path, remove, err := suite.WriteConfig(o)
	if err != nil {
		return o, nil, err
	}
	o.ConfigFile = path
	return o, remove, nil
}

// logPath is where a measurement's load output goes, next to its Record's
// name: <out>/logs/<record>.sysbench.txt (or .command.txt).
func (r *runner) logPath(it plan.Item) string {
	kind := "sysbench"
	switch {
	case it.Step.Insert != nil:
		kind = "insert"
	case it.Step.Custom():
		kind = "command"
	}
	return filepath.Join(r.logDir, recordName(it)+"."+kind+".txt")
}

// setAside moves the Record (and load log and profile) an earlier run left
// for a measurement that runs again (a failed or partial one, or a file
// there that is not its Record, with --resume) into a hidden .replaced/
// folder next to it: Records are never rewritten, and readers of the folder
// skip hidden ones.
func (r *runner) setAside(it plan.Item) {
	var path string
	var when time.Time
	if l, ok := r.existing[it.ID]; ok {
		path, when = l.Path, l.Record.Provenance.Written
	} else if p, ok := r.unreadable[it.ID]; ok {
		path = p
		if fi, err := os.Stat(p); err == nil {
			when = fi.ModTime()
		}
	} else {
		return
	}
	_, unreadable := r.unreadable[it.ID]
	stamp := when.UTC().Format("20060102T150405Z")
	for _, p := range []string{path, r.logPath(it), r.profilePath(it)} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		dir := filepath.Join(filepath.Dir(p), ".replaced")
		if err := mkdirOut(dir); err != nil {
			r.prog.printf("perfbench run: warning: keep the earlier %s: %v", p, err)
			continue
		}
		base := filepath.Base(p)
		ext := filepath.Ext(base)
		if strings.HasSuffix(base, ".pb.gz") {
			ext = ".pb.gz"
		}
		to := filepath.Join(dir, strings.TrimSuffix(base, ext)+"."+stamp+ext)
		for n := 2; ; n++ {
			if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
				break
			}
			to = filepath.Join(dir, strings.TrimSuffix(base, ext)+"."+stamp+"-"+strconv.Itoa(n)+ext)
		}
		if err := os.Rename(p, to); err != nil {
			r.prog.printf("perfbench run: warning: keep the earlier %s: %v", p, err)
		} else if unreadable && p == path {
			r.prog.printf("perfbench run: %s, which is not the Record of %s, is kept as %s", p, it.ID, to)
		}
	}
	delete(r.existing, it.ID)
	delete(r.unreadable, it.ID)
}
