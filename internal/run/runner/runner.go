package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/hostinfo"
	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/internal/profile/symbols"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// defaultTail is how long the load keeps running after the window closes,
// so that the window's last reads happen under load, with room for the
// window's opening to come late on a busy machine.
const defaultTail = 3 * time.Second

// Sentinel errors of Run.
var (
	// ErrInterrupted: the run was cancelled (Ctrl-C, SIGTERM). What was
	// measured is written, marked partial.
	ErrInterrupted = errors.New("interrupted")
	// ErrStepsFailed: the plan ran to its end but some measurements
	// failed; their Records say why.
	ErrStepsFailed = errors.New("some measurements failed")
	// errRecordsExist: measurements to run already have Records in the
	// output folder, and Options.Resume was not given.
	errRecordsExist = errors.New("records already exist")
	// ErrUnknownStep: an Options.Only entry names no step of the plan.
	ErrUnknownStep = errors.New("no such step in the plan")
	// ErrRecordsNotWritten: the Records of some measurements could not be
	// written (a full disk); Summary.Unwritten says which, and where they
	// were kept instead.
	ErrRecordsNotWritten = errors.New("records not written")
)

// Options tune Run. The zero value runs the whole plan into the plan's
// output folder, printing nothing.
type Options struct {
	// Out is the output folder; empty means the plan's (Plan.OutDir).
	Out string
	// Resume skips the measurements that have an ok Record in Out already.
	// Failed and partial ones run again; their old Records are moved to
	// records/.replaced/.
	Resume bool
	// Only runs these steps alone: step names (every range of the step),
	// labels ("read-only_range=100") or custom step names.
	Only []string
	// Progress receives progress, warnings and the final summary (stderr).
	Progress io.Writer
	// Terminal redraws a one-line progress bar on Progress instead of
	// printing a line per measurement; Width is the terminal's width.
	Terminal bool
	Width    int
	// Command is perfbench's command line and Perfbench its version, for
	// the Records' provenance.
	Command   []string
	Perfbench string
	// Tail is how long the load runs after the window closes (defaultTail
	// when zero).
	Tail time.Duration
	// DataRemovedWhenOK says the caller removes the servers' data
	// directories after a run in which every measurement succeeded (perfbench
	// demo): the summary then does not offer them for --resume.
	DataRemovedWhenOK bool
	// PMUBudget, when set, is the number of events a repeat counts besides
	// task-clock (--pmu-budget): more are counted in rotation over the
	// repeats. It overrides the plan's run.pmu_budget; 0 means the plan's,
	// else the core PMU's counters.
	PMUBudget int

	// meter opens the counters of a measurement; nil means measure.Start.
	meter meter
	// write writes a Record; nil means record.Write.
	write func(path string, r *record.Record) error
}

// Summary is what a run did.
type Summary struct {
	// Out is the output folder; Records the folder of the Records.
	Out, Records string
	// Planned is the number of measurements the plan (less --only) has.
	Planned int
	// Skipped are the IDs of the measurements that had ok Records
	// (--resume).
	Skipped []string
	// Ran counts the measurements attempted; OK, Failed and Partial the
	// outcomes of those whose Records were written and read back.
	Ran                 int
	OK, Failed, Partial int
	// Files are the Records written, in order.
	Files []string
	// Failures are "<measurement ID>: <reason>" of the failed ones.
	Failures []string
	// Unwritten are the measurements whose Records could not be written.
	Unwritten []unwritten
	Elapsed   time.Duration
}

// unwritten is a measurement whose Record could not be written to the
// output folder.
type unwritten struct {
	ID      string
	Outcome record.Outcome
	// Path is where the Record was to go; Err why it did not.
	Path string
	Err  error
	// Kept is where the Record was written instead (a temporary folder),
	// "" when it could not be written there either.
	Kept string
}

// runner is one run of a plan.
type runner struct {
	plan    *plan.Plan
	opts    Options
	out     string
	recDir  string
	logDir  string
	profDir string
	scripts string
	planSHA string
	tail    time.Duration
	meter   meter
	sys     *perfevent.System
	// events are the plan's, or measure.DefaultEvents once a server runs.
	events perfevent.List
	// rot, when set, splits the events over the repeats (see rotation.go);
	// rotated says it was decided, rotErr why it could not be.
	rot     *rotation
	rotated bool
	rotErr  error
	// resolver names the frames of every profile of the run, so that each
	// binary is read once.
	resolver *symbols.Resolver
	prov     record.Provenance
	place    placement
	servers  map[string]*server
	// flushNotes are warnings of the post-write flush, for the Record of
	// the measurement it preceded.
	flushNotes map[string][]string
	// existing are the Records found in the output folder, by ID.
	existing map[string]record.Loaded
	// unreadable are files at the path of a measurement to run that are
	// not its Record (a newer schema, a truncated file), by measurement ID:
	// they are moved aside before it runs (--resume).
	unreadable map[string]string
	// problems are the files of the records folder that could not be read.
	problems []error
	// keepDir is the temporary folder Records that could not be written to
	// the output folder go to instead; made when first needed.
	keepDir string
	write   func(path string, r *record.Record) error
	prog    *progress
	sum     *Summary
	// ran are the Records of the measurements this run made, kept for
	// repeats = "auto"; settledSaid the cells it said were precise enough.
	ran         []*record.Record
	settledSaid map[cell]bool
}

// Run runs plan p: it starts and stops the managed servers, loads the data,
// runs the post-write flushes and measures every step, writing one Record per
// measurement under <out>/records/ (see docs/run.md for the
// folder's layout). A failed measurement is recorded as failed and the plan
// goes on; Run then returns ErrStepsFailed with the Summary. When ctx ends
// (Ctrl-C), the load is stopped, what was measured is written marked
// partial, every server the run started is stopped, and Run returns
// ErrInterrupted. Other errors stop the run before anything is measured.
func Run(ctx context.Context, p *plan.Plan, o Options) (*Summary, error) {
	start := time.Now()
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	r := &runner{plan: p, opts: o, tail: o.Tail, meter: o.meter, write: o.write,
		servers: map[string]*server{}, flushNotes: map[string][]string{}, settledSaid: map[cell]bool{}}
	if r.tail <= 0 {
		r.tail = defaultTail
	}
	if r.meter == nil {
		r.meter = startMeasure
	}
	if r.write == nil {
		r.write = record.Write
	}
	out := o.Out
	if out == "" {
		out = p.OutDir
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	r.out = out
	r.recDir = filepath.Join(out, "records")
	r.logDir = filepath.Join(out, "logs")
	r.profDir = filepath.Join(out, "profiles")
	r.scripts = filepath.Join(out, "scripts")
	r.sum = &Summary{Out: out, Records: r.recDir}
	lock, err := lockFolder(out)
	if err != nil {
		return nil, err
	}
	defer lock.unlock()
	if lock.stale != "" {
		fmt.Fprintf(o.Progress, "perfbench run: the lock file of %s was left by a perfbench (pid %s) that has ended: taken over\n", out, lock.stale)
	}
	for _, d := range suite.RemoveStaleConfigs() {
		fmt.Fprintf(o.Progress, "perfbench run: removed %s, the sysbench option file (the data password) of a perfbench that was killed\n", d)
	}
	r.keptEarlier(true)
	defer r.keptEarlier(false)
	if b, err := os.ReadFile(p.File); err == nil {
		sum := sha256.Sum256(b)
		r.planSHA = hex.EncodeToString(sum[:])
	}

	pending, err := r.schedule()
	if err != nil {
		return nil, err
	}
	n := plan.Measurements(pending)
	if n == 0 {
		if r.sum.Planned == 0 {
			fmt.Fprintf(o.Progress, "perfbench run: the plan has no measurement to run\n")
		} else {
			fmt.Fprintf(o.Progress, "perfbench run: nothing to run: all %d measurements have Records in %s\n", r.sum.Planned, r.recDir)
		}
		return r.sum, nil
	}

	if err := r.prepare(pending); err != nil {
		return nil, err
	}
	r.prog = newProgress(o.Progress, o.Terminal, o.Width, pending, r.tail)
	defer r.prog.close()
	if err := r.setRotation(); err != nil {
		return nil, err
	}
	r.prog.printf("perfbench run: %s: %s (%s, %s), about %s; output in %s",
		p.Name, count(n, "measurement"), count(len(p.Versions), "version"), count(len(p.Steps), "step"), fmtDuration(r.prog.plannedTotal), out)

	interrupted := r.loop(ctx, pending)
	r.stopAll()
	r.sum.Elapsed = time.Since(start)
	r.prog.close()
	r.summary(interrupted)
	return r.sum, r.result(interrupted, n)
}

// result is Run's error once the items ran: n measurements were pending.
func (r *runner) result(interrupted bool, n int) error {
	s := r.sum
	switch {
	case interrupted:
		return fmt.Errorf("%w: %d of %d measurements done; run again with --resume to finish", ErrInterrupted, s.OK, n)
	case len(s.Unwritten) > 0:
		return fmt.Errorf("%w: %d of %d measurements have no Record in %s (%v): free space there and run again with --resume",
			ErrRecordsNotWritten, len(s.Unwritten), s.Ran, r.recDir, cause(s.Unwritten[0].Err))
	case s.Failed > 0:
		return fmt.Errorf("%w: %d of %d (their Records say why)", ErrStepsFailed, s.Failed, s.Ran)
	}
	return nil
}

// defaultEvents chooses the events when the plan names none: those of
// measure.DefaultEvents that open on the server pid, said once.
func (r *runner) defaultEvents(pid int) error {
	if len(r.events.Events) > 0 {
		return nil
	}
	spec, why := measure.DefaultEvents(r.sys, pid, nil)
	l, err := perfevent.Parse(spec, r.sys)
	if err != nil {
		return fmt.Errorf("default events %s: %w", spec, err)
	}
	r.events = l
	r.prog.printf("perfbench run: counting %s: %s", why, spec)
	return nil
}

// schedule reads the Records already in the output folder and returns the
// items to run: the plan's, less what --only leaves out and, with --resume,
// the measurements done. It says what it skipped.
func (r *runner) schedule() ([]plan.Item, error) {
	selected, err := selectSteps(r.plan, r.opts.Only)
	if err != nil {
		return nil, err
	}
	if err := r.readExisting(); err != nil {
		return nil, err
	}
	items := r.plan.Expand()
	var done func(plan.Item) bool
	if r.opts.Resume {
		done = func(it plan.Item) bool {
			l, ok := r.existing[it.ID]
			return ok && l.Record.Outcome == record.OutcomeOK
		}
	}
	all := plan.Pending(items, nil, selected)
	pending := plan.WholeComparisons(items, plan.Pending(items, done, selected))
	r.sum.Planned = plan.Measurements(all)
	for _, it := range all {
		if it.Action == plan.ActionMeasure && done != nil && done(it) {
			r.sum.Skipped = append(r.sum.Skipped, it.ID)
		}
	}
	if !r.opts.Resume {
		var clash []string
		for _, it := range pending {
			if l, ok := r.existing[it.ID]; ok && it.Action == plan.ActionMeasure {
				clash = append(clash, l.Path)
			}
		}
		if len(clash) > 0 {
			return nil, fmt.Errorf("%w: %d measurements to run have Records in %s already (%s%s): add --resume to run only what "+
				"is missing or failed, or choose another --out",
				errRecordsExist, len(clash), r.recDir, filepath.Base(clash[0]), more(len(clash)-1))
		}
	}
	if err := r.findUnreadable(pending); err != nil {
		return nil, err
	}
	for _, w := range r.plan.Warnings {
		fmt.Fprintf(r.opts.Progress, "perfbench run: warning: %s\n", w)
	}
	if len(r.sum.Skipped) > 0 {
		r.reportSkipped()
	}
	return pending, nil
}

// findUnreadable finds the files at the path of a measurement to run that
// are not its Record: a Record of a newer schema, a truncated or damaged
// file, another measurement's Record. Without --resume the run refuses to
// replace them; with it they are moved to records/.replaced/ when their
// measurement runs (setAside), and the run says so.
func (r *runner) findUnreadable(pending []plan.Item) error {
	at := map[string]string{}
	for id, l := range r.existing {
		at[l.Path] = id
	}
	r.unreadable = map[string]string{}
	var found []string
	for _, it := range pending {
		if it.Action != plan.ActionMeasure {
			continue
		}
		path := filepath.Join(r.recDir, recordName(it)+".json")
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		id, ok := at[path]
		if ok && id == it.ID {
			continue
		}
		why := "it holds the Record of " + id
		if !ok {
			_, err := record.Read(path)
			if u := errors.Unwrap(err); u != nil {
				err = u
			}
			why = fmt.Sprint(err)
		}
		r.unreadable[it.ID] = path
		found = append(found, fmt.Sprintf("%s (%s)", filepath.Base(path), why))
	}
	for _, p := range r.problems {
		mine := false
		for _, path := range r.unreadable {
			mine = mine || strings.HasPrefix(p.Error(), path+": ")
		}
		if !mine {
			fmt.Fprintf(r.opts.Progress, "perfbench run: warning: %v (left as it is)\n", p)
		}
	}
	if len(found) == 0 {
		return nil
	}
	if !r.opts.Resume {
		also := ""
		if len(found) > 1 {
			also = fmt.Sprintf(" (and %d more)", len(found)-1)
		}
		return fmt.Errorf("%w: %s in %s is not the Record of its measurement%s, and this run would replace it: move it out of "+
			"the folder, or add --resume to keep it in records/.replaced/ and measure again",
			errRecordsExist, found[0], r.recDir, also)
	}
	for _, f := range found {
		fmt.Fprintf(r.opts.Progress, "perfbench run: --resume: %s is not the Record of its measurement: it moves to "+
			"records/.replaced/ when the measurement runs again\n", f)
	}
	return nil
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

// selectSteps turns --only into a filter of measurements.
func selectSteps(p *plan.Plan, only []string) (func(plan.Item) bool, error) {
	if len(only) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, name := range only {
		name = strings.TrimSpace(name)
		found := false
		for i := range p.Steps {
			if stepMatches(&p.Steps[i], name) {
				want[p.Steps[i].Label] = true
				found = true
			}
		}
		if !found {
			labels := make([]string, len(p.Steps))
			for i := range p.Steps {
				labels[i] = p.Steps[i].Label
			}
			hint := ""
			if s := suite.Nearest(name); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			return nil, fmt.Errorf("--only %s: %w%s; the plan's steps are %s", name, ErrUnknownStep, hint, strings.Join(labels, ", "))
		}
	}
	return func(it plan.Item) bool { return it.Step != nil && want[it.Step.Label] }, nil
}

func stepMatches(st *plan.Step, name string) bool {
	if st.Label == name {
		return true
	}
	return st.Suite != nil && st.Suite.Name == name
}

// readExisting loads the Records already in the output folder.
func (r *runner) readExisting() error {
	r.existing = map[string]record.Loaded{}
	if _, err := os.Stat(r.recDir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	recs, problems, err := record.Load([]string{r.recDir}, true)
	if err != nil {
		return fmt.Errorf("read the Records in %s: %w", r.recDir, err)
	}
	r.problems = problems
	for _, l := range recs {
		if l.Record.Kind != record.KindStep {
			continue
		}
		r.existing[plan.RecordID(l.Record)] = l
	}
	return nil
}

func (r *runner) reportSkipped() {
	s := r.sum.Skipped
	const show = 10
	list := s
	if len(list) > show {
		list = list[:show]
	}
	fmt.Fprintf(r.opts.Progress, "perfbench run: --resume: skipping %d of %d measurements that have ok Records in %s: %s%s\n",
		len(s), r.sum.Planned, r.recDir, strings.Join(list, ", "), more(len(s)-len(list)))
	other := 0
	for _, id := range s {
		if l := r.existing[id]; l.Record.Provenance.PlanSHA256 != "" && r.planSHA != "" && l.Record.Provenance.PlanSHA256 != r.planSHA {
			other++
		}
	}
	if other > 0 {
		fmt.Fprintf(r.opts.Progress, "perfbench run: warning: %d of the skipped Records were written by another version of the plan file\n", other)
	}
}

// prepare checks what the run needs before anything starts: the output
// folders, the Lua scripts, sysbench, the events, the provenance.
func (r *runner) prepare(pending []plan.Item) error {
	if err := mkdirOut(r.recDir, r.logDir); err != nil {
		return fmt.Errorf("create the output folder: %w", err)
	}
	needSysbench := r.plan.Data.Load
	for _, it := range pending {
		if it.Step != nil && !it.Step.Custom() {
			needSysbench = true
			if it.Step.Suite.Own {
				if err := suite.WriteScripts(r.scripts); err != nil {
					return err
				}
			}
		}
	}
	if needSysbench {
		if _, err := exec.LookPath(r.plan.Data.Sysbench); err != nil {
			return fmt.Errorf("find sysbench (%s): %w (install it: apt-get install sysbench)", r.plan.Data.Sysbench, err)
		}
	}
	sys, err := perfevent.LoadSystem("/")
	if err != nil {
		return fmt.Errorf("read this machine's perf events: %w", err)
	}
	r.sys = sys
	if len(r.plan.Events) > 0 {
		if r.events, err = perfevent.Parse(strings.Join(r.plan.Events, ","), sys); err != nil {
			return fmt.Errorf("events of the plan: %w", err)
		}
	}
	if err := r.prepareProfiles(pending); err != nil {
		return err
	}
	if err := r.resolvePlacement(); err != nil {
		return err
	}
	if err := r.checkDuet(pending); err != nil {
		return err
	}
	if r.prov, err = hostinfo.Provenance("/"); err != nil {
		fmt.Fprintf(r.opts.Progress, "perfbench run: warning: provenance: %v\n", err)
	}
	return nil
}

// loop runs the items in order; it reports whether ctx ended first.
func (r *runner) loop(ctx context.Context, pending []plan.Item) (interrupted bool) {
	i, round := 0, 0
	for j := 0; j < len(pending); j++ {
		if ctx.Err() != nil {
			return true
		}
		if it := pending[j]; it.Repeat > round {
			round = it.Repeat
			if pending = append(pending[:j:j], r.nextRound(round, pending[j:])...); j == len(pending) {
				break
			}
		}
		it := pending[j]
		s := r.server(it.Version)
		switch it.Action {
		case plan.ActionStart:
			r.prog.activity("start " + it.Version.Label)
			if err := s.start(ctx); err != nil {
				if ctx.Err() != nil {
					return true
				}
				r.prog.printf("perfbench run: %v", err)
			}
		case plan.ActionLoad:
			r.prog.activity("load " + it.Version.Label)
			if err := r.load(ctx, s); err != nil {
				if ctx.Err() != nil {
					return true
				}
				// A server that did not start was said to at its start.
				if s.startErr == nil || err != s.startErr {
					r.prog.printf("perfbench run: load %s: %v", it.Version.Label, err)
				}
			}
		case plan.ActionFlush:
			r.prog.activity("flush " + it.Version.Label)
			r.flush(ctx, s, it)
			if ctx.Err() != nil {
				return true
			}
		case plan.ActionMeasure:
			if it.Comparison != "" {
				k := j + 1
				for k < len(pending) && pending[k].Action == plan.ActionMeasure && pending[k].Comparison == it.Comparison {
					k++
				}
				if r.compare(ctx, pending[j:k], &i) {
					return true
				}
				j = k - 1
				continue
			}
			i++
			r.prog.begin(i, it)
			rec := r.measure(ctx, s, it)
			rec = r.retryBusy(ctx, it, rec, func() *record.Record { return r.measure(ctx, s, it) })
			if r.plan.Auto != nil {
				r.ran = append(r.ran, rec)
			}
			werr := r.finish(rec)
			r.prog.end(it, rec, werr)
			if rec.Outcome == record.OutcomePartial && ctx.Err() != nil { // interrupted, not a window marked partial for a CPU gap
				return true
			}
		case plan.ActionStop:
			r.prog.activity("stop " + it.Version.Label)
			if err := s.stop(); err != nil {
				r.prog.printf("perfbench run: stop %s: %v", it.Version.Label, err)
			}
		}
	}
	return ctx.Err() != nil
}

// server returns the state of a version's server.
func (r *runner) server(v *plan.Version) *server {
	s := r.servers[v.Label]
	if s == nil {
		s = &server{r: r, v: v}
		if v.Managed != nil {
			s.dir = filepath.Join(r.serversDir(), v.Label)
		}
		r.servers[v.Label] = s
	}
	return s
}

// stopAll stops every server the run started and still runs.
func (r *runner) stopAll() {
	labels := make([]string, 0, len(r.servers))
	for l := range r.servers {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		s := r.servers[l]
		if s.owned() {
			r.prog.activity("stop " + l)
		}
		if err := s.stop(); err != nil {
			r.prog.printf("perfbench run: stop %s: %v", l, err)
		}
	}
}

// finish writes a measurement's Record and counts it by its outcome once
// it is on disk (written and read back). A Record that cannot be written
// (a full disk) is counted apart and written to a temporary folder instead,
// so that the measurement is not lost; the error says what happened.
func (r *runner) finish(rec *record.Record) error {
	r.sum.Ran++
	path := filepath.Join(r.recDir, record.FileName(rec))
	rec.Provenance.Written = time.Now().UTC()
	if err := r.write(path, rec); err != nil {
		u := unwritten{ID: plan.RecordID(rec), Outcome: rec.Outcome, Path: path, Err: err, Kept: r.keep(rec)}
		r.sum.Unwritten = append(r.sum.Unwritten, u)
		if u.Kept != "" {
			return fmt.Errorf("%w; kept in %s", err, u.Kept)
		}
		return fmt.Errorf("%w; it could not be kept elsewhere either: run again with --resume to measure it again", err)
	}
	r.sum.Files = append(r.sum.Files, path)
	switch rec.Outcome {
	case record.OutcomeOK:
		r.sum.OK++
	case record.OutcomeFailed:
		r.sum.Failed++
		r.sum.Failures = append(r.sum.Failures, plan.RecordID(rec)+": "+firstLine(rec.Error))
	case record.OutcomePartial:
		r.sum.Partial++
	}
	return nil
}

// keepPrefix starts the names of the temporary folders of the Records an
// output folder could not take: perfbench-unwritten-KEY-RANDOM, KEY named
// after the output folder (keepKey), so that later runs into it find them.
const keepPrefix = "perfbench-unwritten-"

// keepKey is the part of the name of a kept Records' folder that names the
// output folder out: the start of the SHA-256 of its path.
func keepKey(out string) string {
	sum := sha256.Sum256([]byte(out))
	return hex.EncodeToString(sum[:6])
}

// keptEarlier looks for the Records an earlier run into the output folder
// could not write (a full disk) and kept in a temporary folder: a folder
// whose Records all have a Record of the same name in records/ now (--resume
// measured them again) is removed, and, with name, the others are named
// again, with what to do. This run's own folder is left to the summary.
func (r *runner) keptEarlier(name bool) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), keepPrefix+keepKey(r.out)+"-*"))
	for _, d := range dirs {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || d == r.keepDir {
			continue
		}
		files, err := record.Files(d)
		if err != nil {
			continue
		}
		missing := 0
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(r.recDir, filepath.Base(f))); err != nil {
				missing++
			}
		}
		if missing > 0 {
			if !name {
				continue
			}
			fmt.Fprintf(r.opts.Progress, "perfbench run: %s of an earlier run that %s could not take %s kept in %s: free space there and run with --resume, or copy them into %s\n",
				count(missing, "Record"), r.recDir, map[bool]string{true: "is", false: "are"}[missing == 1], d, r.recDir)
			continue
		}
		if os.RemoveAll(d) == nil {
			fmt.Fprintf(r.opts.Progress, "perfbench run: removed %s: its %s of an earlier run are in %s now\n", d, count(len(files), "Record"), r.recDir)
		}
	}
}

// keep writes a Record that could not go to the output folder into a
// temporary folder (another filesystem, often) named after the output
// folder, and returns its path, or "" when that fails too.
func (r *runner) keep(rec *record.Record) string {
	if r.keepDir == "" {
		d, err := os.MkdirTemp("", keepPrefix+keepKey(r.out)+"-")
		if err != nil {
			return ""
		}
		r.keepDir = d
	}
	path := filepath.Join(r.keepDir, record.FileName(rec))
	if err := r.write(path, rec); err != nil {
		return ""
	}
	return path
}

// cause is the innermost error of a chain: "no space left on device".
func cause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func (r *runner) summary(interrupted bool) {
	w := r.opts.Progress
	s := r.sum
	how := "done"
	if interrupted {
		how = "interrupted"
	}
	skipped := ""
	if len(s.Skipped) > 0 {
		skipped = fmt.Sprintf(", %d skipped (Records there already)", len(s.Skipped))
	}
	unwritten := ""
	if len(s.Unwritten) > 0 {
		unwritten = fmt.Sprintf(", %d not written", len(s.Unwritten))
	}
	fmt.Fprintf(w, "perfbench run: %s in %s: %s: %d ok, %d failed, %d partial%s%s\n",
		how, fmtDuration(s.Elapsed), count(s.Ran, "measurement"), s.OK, s.Failed, s.Partial, unwritten, skipped)
	for _, f := range s.Failures {
		fmt.Fprintf(w, "perfbench run: failed: %s\n", f)
	}
	for _, u := range s.Unwritten {
		kept := "; not kept anywhere"
		if u.Kept != "" {
			kept = "; kept in " + u.Kept
		}
		fmt.Fprintf(w, "perfbench run: not written: %s (%s): %v%s\n", u.ID, u.Outcome, u.Err, kept)
	}
	fmt.Fprintf(w, "perfbench run: Records in %s, load and server logs in %s\n", r.recDir, r.logDir)
	allOK := !interrupted && s.Failed == 0 && s.Partial == 0 && len(s.Unwritten) == 0
	if managed := r.managedDirs(); managed != "" && !(r.opts.DataRemovedWhenOK && allOK) {
		fmt.Fprintf(w, "perfbench run: the servers' data directories stay in %s for --resume; remove that folder to load from nothing next time\n", managed)
	}
	switch {
	case len(s.Unwritten) > 0:
		fmt.Fprintf(w, "perfbench run: to finish: free space in %s, then perfbench run %s --out %s --resume (or copy the kept Records into %s)\n",
			r.recDir, r.plan.File, r.out, r.recDir)
	case interrupted:
		fmt.Fprintf(w, "perfbench run: to finish: perfbench run %s --out %s --resume\n", r.plan.File, r.out)
	}
	fmt.Fprintf(w, "perfbench run: next: perfbench report %s --base %s\n", r.recDir, r.plan.Base)
	if r.resolver != nil {
		fmt.Fprintf(w, "perfbench run: profiles in %s: perfbench profile %s --base %s\n", r.profDir, r.recDir, r.plan.Base)
	}
}

func (r *runner) managedDirs() string {
	for _, s := range r.servers {
		if s.v.Managed != nil {
			return r.serversDir()
		}
	}
	return ""
}

// serversDir is the folder of the managed servers' folders.
func (r *runner) serversDir() string {
	if r.plan.ServersDir != "" {
		return r.plan.ServersDir
	}
	return filepath.Join(r.out, "servers")
}

// count is "1 step", "2 steps".
func count(n int, what string) string {
	return fmt.Sprintf("%d %s%s", n, what, plural(n))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
