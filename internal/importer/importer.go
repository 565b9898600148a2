// Package importer turns archived perf stat and sysbench outputs into
// Records of kind "imported", so every report works on results that were
// measured before perfbench existed.
//
// # perf stat files
//
// PerfStat reads files in any form package perfstat reads. Each run in a
// file is one window; several runs appended to one file (perf stat -o FILE
// --append, or stderr appended by a script) give one Record each, numbered
// Repeat 1, 2, 3 in file order (files in the order given). A run printed
// with -I is one Record whose Series holds its intervals (merged, k
// consecutive intervals to a point, when there are more than maxSeries).
// Records are built one run at a time and, with Options.Sink, handed over
// as soon as they are complete, so memory does not grow with the files.
// When the runs
// count disjoint sets of events (one event group per window, as the legacy
// scripts did), the k-th run of every set is merged into Record k, with a
// warning that its ratios across groups mix windows. Runs whose event sets
// differ otherwise are kept as they are, with a warning naming the file and
// line.
//
// Values are what perf printed: for a multiplexed event the scaled count,
// with Status "scaled". perf's text output prints the share of time an event
// ran ("(62.50%)") but not the times themselves, so for text input Enabled is
// the window's length in ns rounded to 10 µs (1 s when unknown) and Running
// is that share of it: Counter.RunningFraction() equals the printed
// fraction, and Raw is derived (Value × Running / Enabled). With -x and -j, Running is the
// printed running time and Enabled is Running × 100 / percentage.
// "<not supported>" imports as status "not supported", "<not counted>" as
// "not counted": neither has a value.
//
// The operation count comes from Options.Ops, or from the sysbench output of
// the same step: sysbench's whole-run queries per second times the window's
// length (perf's window and sysbench's run are not aligned; the Record says
// so in a warning and sets Ops.Estimated, which reports mark). The window's
// length is perf's "seconds time elapsed", the sum of the -I intervals, or
// Options.Seconds for -x and -j output, which does not print it.
//
// # sysbench files
//
// Sysbench reads sysbench 1.0.x outputs: one Record each, with the client's
// results (Client), Ops = the "queries:" count and the window = sysbench's
// total time. A run with no final report is kept as "partial" (its interval
// lines) or "failed" (a FATAL error).
//
// # Folders
//
// Dir reads a results folder laid out as the legacy scripts left it: one
// folder per version, holding files named
//
//	<prefix>.<step>.range<R>.pk<N>[.<sample>]
//
// where the prefix is "sb.perf.hw" for perf stat output and "sb.o" for
// sysbench output, for example base/sb.perf.hw.point-query.range100.pk1.1 and
// base/sb.o.point-query.range100.pk1. The Record's Version is the folder's
// name and its Step is "<step>_range=<R>", as tables print it
// (point-query_range=100). Samples of a step are read in numeric order. A
// step's sysbench output gives the perf windows their operation counts and
// the Records their client results; a step with sysbench output only gives
// sysbench Records. DirOptions.Naming (NewNaming) maps other naming schemes: a regular
// expression matched against the path below the folder, with named groups
// "step" (required), and "version", "range", "pk", "sample", "prefix"
// (optional; without "version" the first folder of the path is the version,
// without "prefix" the file's content tells perf stat from sysbench output).
package importer

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/eventname"
	"github.com/perfbench/perfbench/internal/importer/perfstat"
	"github.com/perfbench/perfbench/internal/load/sysbench"
	"github.com/perfbench/perfbench/record"
)

// Options labels imported Records and fills what the files lack.
type Options struct {
	Version string // the version label (table column)
	Step    string // the step label as tables print it
	Host    string
	Threads int // client threads; 0 takes sysbench's "Number of threads"
	// Ops is the operation count of every window; 0 derives it from
	// Sysbench.
	Ops float64
	// Seconds is the window length for output that does not print it
	// (perf stat -x and -j without -I).
	Seconds float64
	// Sysbench is the path of the sysbench output of the same step.
	Sysbench string
	// Separator and Decimal are passed to perfstat (empty/0: detect).
	Separator string
	Decimal   byte
	// Now stamps Provenance.Written (time.Now when nil).
	Now func() time.Time
	// Command is perfbench's command line and Perfbench its version, for
	// Provenance.
	Command   []string
	Perfbench string
	// Sink, when set, is given each Record as soon as it is built, instead
	// of Result.Records keeping it: an import then holds one run at a time
	// whatever the size of its files. A Record the Sink refuses (returns an
	// error) is a failure.
	Sink func(*record.Record) error
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

// Result is what an import produced.
type Result struct {
	// Records are the Records built, in order; empty when Options.Sink
	// took them.
	Records []*record.Record
	// Count is how many Records were built (kept in Records or given to
	// Options.Sink, whether or not the Sink accepted them).
	Count int
	// Warnings are problems that weaken or skip part of an input, each
	// naming the file and line ("perf.txt:12: ...").
	Warnings []string
	// Failures are inputs (or parts of them) that could not be imported,
	// each naming the file and, when it helps, the line. An import goes on
	// after a failure; the caller reports failure at the end.
	Failures []error

	sink      func(*record.Record) error
	noThreads int // Records built with Threads 0
}

func newResult(opts Options) *Result { return &Result{sink: opts.Sink} }

func (r *Result) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

func (r *Result) fail(err error) { r.Failures = append(r.Failures, err) }

// emit hands a Record to the sink, or keeps it.
func (r *Result) emit(rec *record.Record) {
	r.Count++
	if rec.Threads == 0 {
		r.noThreads++
	}
	if r.sink == nil {
		r.Records = append(r.Records, rec)
		return
	}
	if err := r.sink(rec); err != nil {
		r.fail(err)
	}
}

// errNoLabel is returned when a Record would have no version or step label.
var errNoLabel = errors.New("no version or step label: give --version and --step")

// errEmpty is returned for an input file with nothing in it.
var errEmpty = errors.New("the file is empty")

// PerfStat imports perf stat output files for one version and step.
func PerfStat(files []string, opts Options) *Result {
	res := newResult(opts)
	if opts.Version == "" || opts.Step == "" {
		res.fail(errNoLabel)
		return res
	}
	var sb *sysbench.Result
	if opts.Sysbench != "" {
		sb = readSysbench(opts.Sysbench, res)
	}
	importRuns(files, sb, opts, res, res.emit)
	warnNoThreads(res)
	return res
}

// warnNoThreads says once when Records have no thread count: Threads 0
// means unknown, and reports say so rather than guess.
func warnNoThreads(res *Result) {
	if res.noThreads > 0 {
		res.warn("%d of %d records have no thread count (the files do not say it): threads 0 means unknown; give --threads N, "+
			"or --sysbench with the step's sysbench output", res.noThreads, res.Count)
	}
}

// sysbenchThreads returns the thread count of a sysbench command line as
// perf stat printed it ("sysbench oltp_point_select --threads=8 run"): its
// --threads (--num-threads before sysbench 1.0), else sysbench's default 1;
// 0 when the command is not sysbench.
func sysbenchThreads(command string) int {
	f := strings.Fields(command)
	if len(f) == 0 || filepath.Base(f[0]) != "sysbench" {
		return 0
	}
	for _, a := range f[1:] {
		for _, opt := range []string{"--threads=", "--num-threads="} {
			if v, ok := strings.CutPrefix(a, opt); ok {
				if n, err := strconv.Atoi(v); err == nil && n > 0 {
					return n
				}
				return 0
			}
		}
	}
	return 1
}

func readSysbench(path string, res *Result) *sysbench.Result {
	f, err := openFile(path)
	if err != nil {
		res.fail(fmt.Errorf("import sysbench output: %w", err))
		return nil
	}
	defer f.Close()
	sb, err := sysbench.Parse(f)
	for _, w := range sb.Warnings {
		if w.Line > 0 {
			res.warn("%s:%d: %s", path, w.Line, w.Msg)
		} else {
			res.warn("%s: %s", path, w.Msg)
		}
	}
	if err != nil {
		res.fail(fmt.Errorf("import sysbench output %s: %w", path, err))
		return nil
	}
	return sb
}

// perfRecord builds one Record from runs measured as one window (one run, or
// one run per event group).
func perfRecord(runs []*run, repeat int, sb *sysbench.Result, opts Options) *record.Record {
	rec := record.New(record.KindImported)
	rec.Version, rec.Step, rec.Host, rec.Repeat = opts.Version, opts.Step, opts.Host, repeat
	rec.Threads = opts.Threads
	rec.Provenance = record.Provenance{Hostname: opts.Host, Perfbench: opts.Perfbench, Command: opts.Command, Written: opts.now(), Origin: map[string]string{}}
	origin := rec.Provenance.Origin
	var secs []float64
	for gi, r := range runs {
		w := &r.first
		rec.Source = appendUnique(rec.Source, r.file)
		sfx := ""
		if len(runs) > 1 {
			sfx = fmt.Sprintf(".%d", gi+1)
		}
		origin["perf.format"+sfx] = w.Format.String()
		origin["perf.lines"+sfx] = fmt.Sprintf("%s:%d-%d", r.file, w.Line, r.endLine)
		origin["perf.run"+sfx] = strconv.Itoa(w.Run)
		setIf(origin, "perf.target"+sfx, w.Target)
		setIf(origin, "perf.command"+sfx, w.Command)
		setIf(origin, "perf.started"+sfx, w.Started)
		if w.Repeats > 0 {
			origin["perf.repeats"+sfx] = strconv.Itoa(w.Repeats)
			rec.Warnf(record.WarnGeneral, "counts are means of %d runs (perf stat -r %d)", w.Repeats, w.Repeats)
		}
		if w.HasUserSys {
			origin["perf.user_seconds"+sfx] = strconv.FormatFloat(w.User, 'f', -1, 64)
			origin["perf.sys_seconds"+sfx] = strconv.FormatFloat(w.Sys, 'f', -1, 64)
		}
		if pid := targetPid(w.Target); pid > 0 && rec.Server == nil {
			rec.Server = &record.Server{Pid: pid}
		}
		seconds := r.seconds
		if seconds <= 0 {
			seconds = opts.Seconds
		}
		secs = append(secs, seconds)
		for _, c := range r.totals {
			rc := toRecordCounter(c, seconds)
			if len(runs) > 1 {
				rc.Group = gi + 1
			}
			if c.Status == record.StatusScaled {
				rec.AddWarning(record.Warning{Code: record.WarnMultiplexed, Events: []string{rc.Event},
					Text: fmt.Sprintf("%s ran %.2f%% of the time (multiplexed): its value is perf's scaled estimate", c.Event, c.Percent)})
			}
			rec.Counters = append(rec.Counters, rc)
		}
		if r.truncated {
			rec.Outcome = record.OutcomePartial
			rec.Error = fmt.Sprintf("%s ends inside perf stat run %d: counters may be missing", r.file, w.Run)
		}
		if r.intervals > 1 || w.Interval > 0 {
			rec.Series = append(rec.Series, r.series...)
			if r.merged > 1 {
				rec.Warnf(record.WarnGeneral, "%s: the %d intervals of perf stat run %d are merged %d at a time into %d series "+
					"points (a Record keeps at most %d): each point adds up its intervals' counts",
					r.file, r.intervals, w.Run, r.merged, len(r.series), maxSeries)
			}
		}
	}
	var total float64
	for _, s := range secs {
		total += s
	}
	rec.Window.Seconds = total / float64(len(secs))
	if rec.Window.Seconds <= 0 {
		rec.Warnf(record.WarnGeneral, "window length unknown (perf stat -x and -j print none): give --seconds for per-second values and sysbench-derived op counts")
	}
	switch {
	case opts.Ops > 0:
		rec.Ops = record.Ops{Source: "given", Count: opts.Ops, Counted: true}
	case sb != nil && sb.TotalTime > 0 && sb.HasSQL && rec.Window.Seconds > 0:
		qps := sb.Queries / sb.TotalTime
		rec.Ops = record.Ops{Source: "client.queries", Count: qps * rec.Window.Seconds, Counted: true, Estimated: true}
		rec.Warnf(record.WarnOpsEstimated, "ops estimated as sysbench's whole-run QPS (%.2f) × the perf window (%.3f s): the "+
			"two are not aligned", qps, rec.Window.Seconds)
	case sb != nil:
		rec.Warnf(record.WarnOpsNotCounted, "no op count: the sysbench output has no query count or the window length is unknown")
	default:
		rec.Warnf(record.WarnOpsNotCounted, "no op count: give --ops or --sysbench for per-op values")
	}
	if rec.Threads == 0 {
		// perf stat ran the sysbench command itself.
		for _, r := range runs {
			if n := sysbenchThreads(r.first.Command); n > 0 {
				rec.Threads = n
				break
			}
		}
	}
	if sb != nil {
		c := sb.Client()
		c.Whole = true
		rec.Client = c
		if rec.Threads == 0 {
			rec.Threads = sb.Threads
		}
		setIf(origin, "sysbench.version", sb.Version)
		if opts.Sysbench != "" {
			rec.Source = appendUnique(rec.Source, opts.Sysbench)
		}
	}
	if len(origin) == 0 {
		rec.Provenance.Origin = nil
	}
	return rec
}

func setIf(m map[string]string, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// targetPid reads the pid of "process id '4121'".
func targetPid(target string) int {
	s, ok := strings.CutPrefix(target, "process id '")
	if !ok {
		return 0
	}
	s, ok = strings.CutSuffix(s, "'")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// toRecordCounter converts a perf stat total into a Record counter; seconds
// is the window's length, used as the enabled time of text output.
func toRecordCounter(c perfstat.Counter, seconds float64) record.Counter {
	rc := record.Counter{Event: eventname.Canonical(c.Event), Status: c.Status, Unit: c.Unit}
	switch c.Status {
	case record.StatusNotSupported:
		rc.Reason = "perf stat printed <not supported>: the event could not be opened where perf ran (no PMU or no such event)"
		return rc
	case record.StatusNotCounted:
		rc.Reason = "perf stat printed <not counted>: the event was enabled but never ran (no thread ran it, or a group never scheduled)"
		if c.HasRunning {
			rc.Running, rc.Enabled = c.Running, c.Enabled()
		}
		return rc
	}
	rc.Value = c.Value
	if c.HasRunning {
		rc.Running, rc.Enabled = c.Running, c.Enabled()
		if rc.Enabled == 0 {
			rc.Enabled = rc.Running
		}
	} else {
		basis := textBasis(seconds)
		rc.Enabled = uint64(basis)
		rc.Running = uint64(basis/1e4) * uint64(math.Round(c.Percent*100))
	}
	if c.Status == record.StatusCounted || rc.Enabled == 0 {
		rc.Raw = uint64(math.Round(c.Value))
		if c.Status == record.StatusCounted {
			rc.Running = rc.Enabled
		}
	} else {
		rc.Raw = uint64(math.Round(c.Value * float64(rc.Running) / float64(rc.Enabled)))
	}
	return rc
}
