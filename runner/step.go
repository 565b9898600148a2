package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfbench/perfbench/internal/proc"
	"github.com/perfbench/perfbench/measure"
	"github.com/perfbench/perfbench/plan"
	"github.com/perfbench/perfbench/record"
	"github.com/perfbench/perfbench/suite"
	"github.com/perfbench/perfbench/sysbench"
)

// startTimeout bounds the wait for sysbench's threads to start (connecting
// hundreds of clients to a busy server takes a while).
const startTimeout = 60 * time.Second

// opSpec is the op source of a step as package measure takes it:
// "Questions", "Rows_read/1000", "client.queries" (the client's counts are
// divided by OpsPer after measure.ApplyClient).
func opSpec(st *plan.Step) string {
	if st.OpsPer > 0 && st.OpsPer != 1 && !measure.IsClientOp(st.Ops) {
		return st.Ops + "/" + strconv.FormatFloat(st.OpsPer, 'f', -1, 64)
	}
	return st.Ops
}

// newRecord returns a step Record of a measurement with its identity and
// the run's provenance.
func (r *runner) newRecord(it plan.Item) *record.Record {
	rec := record.New(record.KindStep)
	rec.Provenance = r.prov
	r.identify(rec, it)
	return rec
}

// identify sets what a Record of a measurement of this run says about
// itself: version, step, threads, repeat, host, plan and command.
func (r *runner) identify(rec *record.Record, it plan.Item) {
	rec.Kind = record.KindStep
	rec.Version, rec.Step, rec.Threads, rec.Repeat = it.Version.Label, it.Step.Label, it.Threads, it.Repeat
	rec.Group = string(it.Step.Group)
	if rec.Provenance.Hostname == "" {
		rec.Provenance.Hostname = r.prov.Hostname
	}
	rec.Host = rec.Provenance.Hostname
	rec.Provenance.Plan = r.plan.File
	if abs, err := filepath.Abs(r.plan.File); err == nil {
		rec.Provenance.Plan = abs
	}
	rec.Provenance.PlanSHA256 = r.planSHA
	rec.Provenance.Command = r.opts.Command
	rec.Provenance.Perfbench = r.opts.Perfbench
}

func failed(rec *record.Record, format string, args ...any) *record.Record {
	rec.Outcome = record.OutcomeFailed
	rec.Error = fmt.Sprintf(format, args...)
	return rec
}

// measure runs one measurement and returns its Record (never nil).
func (r *runner) measure(ctx context.Context, s *server, it plan.Item) *record.Record {
	r.setAside(it)
	rec := r.runStep(ctx, s, it)
	r.identify(rec, it)
	for _, n := range slices.Concat(r.flushNotes[it.ID], s.notes) {
		rec.Warnf(record.WarnGeneral, "%s", n)
	}
	s.notes = nil
	if rec.Server != nil && s.v.Managed != nil && rec.Server.Config == "" {
		rec.Server.Config = s.v.Managed.Mycnf
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
	st := it.Step
	cmd, removeOptions, err := r.stepCommand(s, it)
	if err != nil {
		return failed(r.newRecord(it), "%v", err)
	}
	defer removeOptions()
	logPath := r.logPath(it)
	log, err := os.Create(logPath)
	if err != nil {
		return failed(r.newRecord(it), "create the load's log: %v", err)
	}
	defer log.Close()
	fmt.Fprintf(log, "# %s\n", strings.Join(cmd.Shown, " "))

	prof, err := r.profile(it)
	if err != nil {
		return failed(r.newRecord(it), "%v", err)
	}
	// Counters first: the load's connections are counted from their first
	// instant (threads inherit the counters of the thread creating them).
	op := opSpec(st)
	sess, err := r.meter(ctx, measure.Config{
		Pid:       s.pid,
		Events:    r.events,
		System:    r.sys,
		DB:        s.db,
		Op:        op,
		Interval:  r.plan.Interval,
		Datadir:   s.datadir,
		PerRole:   true,
		Perfbench: r.opts.Perfbench,
		Command:   r.opts.Command,
		Profile:   prof,
	})
	if err != nil {
		if !s.running() {
			return r.crashed(r.newRecord(it), s)
		}
		return r.abandoned(ctx, it, "open the counters: %v", err)
	}
	defer sess.Close()

	var (
		mu     sync.Mutex
		parser = sysbench.NewParser()
	)
	load, err := proc.Start(cmd.Argv, proc.Options{Log: log, Env: cmd.Env, OnLine: func(line string) {
		mu.Lock()
		defer mu.Unlock()
		parser.Line(line)
	}})
	if err != nil {
		return failed(r.newRecord(it), "%v", err)
	}
	defer load.Stop(2 * time.Second)
	// The warm-up counts from the moment sysbench's clients run; sysbench's
	// per-second lines count from then too.
	clientStart := func() time.Time {
		if at, ok := load.ThreadsStartedAt(); ok {
			return at
		}
		return load.Started()
	}
	if !st.Custom() {
		select {
		case <-load.ThreadsStarted():
		case <-load.Exited():
		case <-ctx.Done():
		case <-time.After(startTimeout):
		}
	}

	if !load.Running() && ctx.Err() == nil {
		load.Wait(0)
		mu.Lock()
		res := parser.Result()
		mu.Unlock()
		rec := failed(r.newRecord(it), "%s before the window opened%s", r.loadEnd(st, load), loadDetail(res, logPath))
		r.applyClient(rec, st, r.client(st, cmd.Shown, res, load, clientStart()))
		if s.down(ctx) {
			r.crashed(rec, s)
		}
		return rec
	}

	// The window ends early when the load or the server exits.
	wctx, stopWatch := context.WithCancel(ctx)
	ended := make(chan struct{})
	go func() {
		select {
		case <-load.Exited():
		case <-s.exited(wctx):
		case <-wctx.Done():
			return
		}
		close(ended)
	}()
	rec, merr := sess.Measure(ctx, measure.WindowSpec{Warmup: st.Warmup, Duration: st.Duration, Done: ended})
	stopWatch()
	if rec == nil {
		rec = r.newRecord(it)
		if merr == nil {
			merr = errors.New("no record")
		}
	}
	interrupted := ctx.Err() != nil
	loadEnded := !load.Running()
	serverDown := !s.running()
	if !serverDown && !interrupted && (loadEnded || merr != nil) {
		serverDown = s.down(ctx)
	}

	// Let the load end by itself (its tail), or end it.
	switch {
	case interrupted || serverDown || loadEnded:
		load.Stop(2 * time.Second)
	case st.Custom():
		// A custom command still running after the window (and the tail
		// its {time} gives it) is stopped.
		load.Wait(r.tail + 2*time.Second)
	default:
		if load.Wait(r.tail + 30*time.Second) {
			rec.Warnf(record.WarnGeneral, "sysbench did not end %s after the window closed: stopped", r.tail+30*time.Second)
		}
	}
	mu.Lock()
	res := parser.Result()
	mu.Unlock()
	r.applyClient(rec, st, r.client(st, cmd.Shown, res, load, clientStart()))

	switch {
	case interrupted:
		// measure marks a window cut short partial, and a warm-up cut
		// short failed (nothing was measured).
		if rec.Outcome == record.OutcomeOK {
			rec.Outcome = record.OutcomePartial
		}
		if rec.Error == "" {
			rec.Error = fmt.Sprintf("interrupted after %.1f s of the %s window", rec.Window.Seconds, st.Duration)
		}
	case serverDown:
		r.crashed(rec, s)
	case merr != nil:
		failed(rec, "measure the window: %v", merr)
	case loadEnded && !rec.Window.Start.IsZero() && load.Ended().Before(rec.Window.Start):
		failed(rec, "%s during the %s warm-up, before the window opened%s", r.loadEnd(st, load), st.Warmup, loadDetail(res, logPath))
	case loadEnded && (load.ExitCode() != 0 || !st.Custom()):
		late := ""
		if d := rec.Window.Warmup - st.Warmup.Seconds(); d > 0.5 && load.ExitCode() == 0 {
			late = fmt.Sprintf("; the window opened %.1f s after the warm-up (the measurement's preparation was slow: a busy machine?) and the load runs only %s past the window", d, r.tail)
		}
		failed(rec, "%s before the window closed (%.1f s of %s)%s%s", r.loadEnd(st, load), rec.Window.Seconds, st.Duration, late, loadDetail(res, logPath))
	case loadEnded:
		rec.Warnf(record.WarnGeneral, "the command ended %.1f s into the %s window: the window is that long", rec.Window.Seconds, st.Duration)
	case !st.Custom() && (load.ExitCode() != 0 || len(res.Fatal) > 0):
		failed(rec, "%s%s", r.loadEnd(st, load), loadDetail(res, logPath))
	case st.Custom() && load.ExitCode() > 0:
		failed(rec, "%s (after the window closed)%s", r.loadEnd(st, load), loadDetail(res, logPath))
	}
	return rec
}

// applyClient sets the load's results on rec, and the op count when the
// step counts ops by the client.
func (r *runner) applyClient(rec *record.Record, st *plan.Step, c *record.Client) {
	if !measure.IsClientOp(st.Ops) {
		measure.ApplyClient(rec, c, opSpec(st))
		return
	}
	measure.ApplyClient(rec, c, st.Ops)
	if st.OpsPer > 0 && st.OpsPer != 1 && rec.Ops.Count > 0 {
		rec.Ops.Count /= st.OpsPer
		rec.Ops.Per = st.OpsPer
		measure.SetPerOp(rec)
	}
}

// client is the load's results for the Record; shown is its command line
// as logs and Records show it (no secret in it).
func (r *runner) client(st *plan.Step, shown []string, res *sysbench.Result, load *proc.Cmd, started time.Time) *record.Client {
	var c *record.Client
	if !st.Custom() || res.Version != "" {
		c = res.Client()
	} else {
		c = &record.Client{Tool: "command"}
	}
	c.Whole = true
	c.Started = started
	c.Command = shown
	if !load.Running() {
		c.ExitCode = load.ExitCode()
	}
	return c
}

func (r *runner) loadEnd(st *plan.Step, load *proc.Cmd) string {
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
// Shown is the command line for logs and Records.
func (r *runner) stepCommand(s *server, it plan.Item) (cmd plan.Command, remove func(), err error) {
	conn := s.conn
	conn.ScriptDir = r.scripts
	conn.Tail = r.tail
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
	if it.Step.Custom() {
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
		if err := os.MkdirAll(dir, 0o755); err != nil {
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
