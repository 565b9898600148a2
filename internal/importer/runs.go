package importer

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/perfbench/perfbench/internal/eventname"
	"github.com/perfbench/perfbench/internal/importer/perfstat"
	"github.com/perfbench/perfbench/internal/load/sysbench"
	"github.com/perfbench/perfbench/record"
)

// maxSeries is the most series points an imported Record keeps (a
// variable so that tests can lower it). A -I run
// with more intervals has them merged, k consecutive intervals to a point,
// so that a Record stays small enough to write, read and chart whole.
var maxSeries = 100000

// run is one perf stat run, summed up as it is read: one window, or the
// intervals of one -I run. Its windows are not kept.
type run struct {
	file string
	// first is the run's first window, without its counters.
	first     perfstat.Window
	endLine   int
	truncated bool
	totals    []perfstat.Counter
	seconds   float64
	// intervals is how many windows the run has; series holds them, merged
	// merged at a time.
	intervals int
	merged    int
	series    []record.Point
}

func (r *run) events() []string {
	var ev []string
	for _, c := range r.totals {
		ev = append(ev, c.Event)
	}
	return ev
}

// runShape is what the first reading of a file tells of one run: its event
// set and how many windows it has.
type runShape struct {
	sig       string
	intervals int
}

// scanRuns reads path with perfstat and calls each for every window, with
// newRun set on the first window of each run. With report set, the
// scanner's warnings and errors go to res (a file that cannot be opened is
// a failure either way).
func scanRuns(path string, opts Options, res *Result, report bool, each func(w *perfstat.Window, newRun bool)) {
	f, err := openFile(path)
	if err != nil {
		res.fail(fmt.Errorf("import perf stat output: %w", err))
		return
	}
	defer f.Close()
	cr := &countingReader{r: f}
	sc := perfstat.NewScanner(cr, perfstat.Options{Name: path, Separator: opts.Separator, Decimal: opts.Decimal})
	prevRun, any := 0, false
	for sc.Scan() {
		w := sc.Window()
		each(w, !any || w.Interval <= 0 || w.Run != prevRun)
		prevRun, any = w.Run, true
	}
	if !report {
		return
	}
	err = sc.Err()
	if !errors.Is(err, perfstat.ErrNoCounters) {
		// A file that is not perf stat output is one failure, not a
		// warning for each of its lines.
		for _, w := range sc.Warnings() {
			res.Warnings = append(res.Warnings, w.String())
		}
	}
	switch {
	case err != nil:
		res.fail(fmt.Errorf("import perf stat output: %w", err))
	case cr.n == 0:
		res.fail(fmt.Errorf("import perf stat output %s: %w: give a file perf stat wrote (perf stat -o FILE, or its stderr)", path, errEmpty))
	}
}

// openFile opens an input file (tests read from memory instead): a
// regular file, opened without blocking (a FIFO is refused, not waited
// on), read to at most maxInputBytes.
var openFile = func(path string) (io.ReadCloser, error) {
	f, _, err := record.OpenInput(path, maxInputBytes, "perf stat and sysbench output")
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{record.LimitInput(f, path, maxInputBytes, "perf stat and sysbench output"), f}, nil
}

// maxInputBytes is the largest file import reads: 100 MB of perf stat
// output imports in under 300 MB.
const maxInputBytes = 512 << 20

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// shapeRuns is the first reading of path: the shape of each of its runs,
// and the scanner's warnings and errors into res.
func shapeRuns(path string, opts Options, res *Result, sigs map[string]string) []runShape {
	var shapes []runShape
	var events map[string]bool
	var cur *runShape
	done := func() {
		if cur == nil {
			return
		}
		ev := make([]string, 0, len(events))
		for e := range events {
			ev = append(ev, e)
		}
		sort.Strings(ev)
		key := strings.Join(ev, ",")
		if s, ok := sigs[key]; ok {
			key = s // one string per event set, however many runs
		} else {
			sigs[key] = key
		}
		cur.sig = key
		shapes = append(shapes, *cur)
	}
	scanRuns(path, opts, res, true, func(w *perfstat.Window, newRun bool) {
		if newRun {
			done()
			cur, events = &runShape{}, map[string]bool{}
		}
		cur.intervals++
		for _, c := range w.Counters {
			events[c.Event] = true
		}
	})
	done()
	return shapes
}

// readRuns is the second reading of path: each run, summed up, is given to
// each as soon as it ends. shapes are the runs' shapes from shapeRuns.
func readRuns(path string, opts Options, res *Result, shapes []runShape, each func(*run)) {
	var b *runBuilder
	i := 0
	scanRuns(path, opts, res, false, func(w *perfstat.Window, newRun bool) {
		if newRun {
			if b != nil {
				each(b.finish())
			}
			n := 1
			if i < len(shapes) {
				n = shapes[i].intervals
			}
			i++
			b = newRunBuilder(path, w, n)
		}
		b.add(w)
	})
	if b != nil {
		each(b.finish())
	}
}

// runBuilder sums up the windows of one run.
type runBuilder struct {
	r     *run
	order []string
	acc   map[string]*perfstat.Counter
	secs  float64
	// point is the series point being merged from pointN intervals;
	// pointHas counts, per event, the intervals that measured it.
	point    record.Point
	pointN   int
	pointHas map[string]int
}

func newRunBuilder(file string, first *perfstat.Window, intervals int) *runBuilder {
	w := *first
	w.Counters = nil
	merged := 1
	if intervals > maxSeries {
		merged = (intervals + maxSeries - 1) / maxSeries
	}
	return &runBuilder{r: &run{file: file, first: w, merged: merged}, acc: map[string]*perfstat.Counter{}}
}

func (b *runBuilder) add(w *perfstat.Window) {
	r := b.r
	r.intervals++
	r.endLine = w.EndLine
	r.truncated = r.truncated || w.Truncated
	totals := w.Totals()
	if r.intervals == 1 {
		// A single window is its own total.
		r.totals, r.seconds = totals, w.Seconds()
	}
	b.sum(totals, w.Seconds())
	b.addPoint(w, totals)
}

// sum adds the totals of one interval into the run's.
func (b *runBuilder) sum(totals []perfstat.Counter, seconds float64) {
	basis := textBasis(seconds)
	for _, c := range totals {
		if !c.HasRunning && c.Measured() {
			c.Running = uint64(math.Round(basis * c.Percent / 100))
		}
		a, ok := b.acc[c.Event]
		if !ok {
			b.order = append(b.order, c.Event)
			cc := c
			cc.Value, cc.Running = 0, 0
			cc.HasRunning = true
			cc.Status = record.StatusNotSupported
			cc.Percent = 0 // holds the enabled time while summing
			a = &cc
			b.acc[c.Event] = a
		}
		switch {
		case c.Measured():
			if a.Status != record.StatusScaled {
				a.Status = c.Status
			}
			a.Value += c.Value
			a.Running += c.Running
			if c.HasRunning {
				a.Percent += float64(c.Enabled())
			} else {
				a.Percent += basis
			}
		case c.Status == record.StatusNotCounted && !a.Measured():
			a.Status = record.StatusNotCounted
		}
	}
	b.secs += seconds
}

// addPoint adds an interval to the series point being merged; an event is
// in a merged point only when every one of its intervals measured it.
func (b *runBuilder) addPoint(w *perfstat.Window, totals []perfstat.Counter) {
	if b.pointN == 0 {
		b.point = record.Point{Counters: map[string]float64{}}
		b.pointHas = map[string]int{}
	}
	b.pointN++
	b.point.T = w.Interval
	b.point.Seconds += w.Seconds()
	for _, c := range totals {
		if c.Measured() {
			name := eventname.Canonical(c.Event)
			b.point.Counters[name] += c.Value
			b.pointHas[name]++
		}
	}
	if b.pointN == b.r.merged {
		b.flushPoint()
	}
}

func (b *runBuilder) flushPoint() {
	if b.pointN == 0 {
		return
	}
	for ev, n := range b.pointHas {
		if n < b.pointN {
			delete(b.point.Counters, ev)
		}
	}
	b.r.series = append(b.r.series, b.point)
	b.pointN = 0
}

func (b *runBuilder) finish() *run {
	b.flushPoint()
	r := b.r
	if r.intervals > 1 {
		r.totals = nil
		for _, ev := range b.order {
			a := b.acc[ev]
			enabled := a.Percent
			a.Percent = 100
			if enabled > 0 && a.Status == record.StatusScaled {
				a.Percent = float64(a.Running) * 100 / enabled
			}
			r.totals = append(r.totals, *a)
		}
		r.seconds = b.secs
	}
	return r
}

// textBasis is the enabled time given to counters of text output, which
// does not print it: the window's length, or 1 s when unknown.
// It is rounded to 10 µs so that Running, the printed two-decimal
// percentage of it, is a whole number of ns and Running/Enabled is exactly
// the printed fraction.
func textBasis(seconds float64) float64 {
	if seconds > 0 {
		if b := math.Round(seconds*1e5) * 1e4; b > 0 {
			return b
		}
	}
	return 1e9
}

// importRuns reads the perf stat files of one step and gives each Record to
// emit as soon as it is complete. The files are read twice: first for the
// event set of every run, which decides how runs become Records (see the
// package comment), then for the counts, one run at a time, so that memory
// does not grow with the files.
func importRuns(files []string, sb *sysbench.Result, opts Options, res *Result, emit func(*record.Record)) {
	sigs := map[string]string{}
	shapes := make([][]runShape, len(files))
	var order []string // event sets in order of first appearance
	count := map[string]int{}
	for i, f := range files {
		shapes[i] = shapeRuns(f, opts, res, sigs)
		for _, s := range shapes[i] {
			if count[s.sig] == 0 {
				order = append(order, s.sig)
			}
			count[s.sig]++
		}
	}
	switch {
	case len(order) == 0:
		return
	case len(order) == 1:
		n := 0
		for i, f := range files {
			if len(shapes[i]) == 0 {
				continue
			}
			readRuns(f, opts, res, shapes[i], func(r *run) {
				n++
				emit(perfRecord([]*run{r}, n, sb, opts))
			})
		}
	case disjoint(order):
		// Record k holds the k-th run of every event set; it is built
		// once each set that has a k-th run has delivered it.
		queue := map[string][]*run{}
		k := 1
		flush := func() {
			for {
				var group []*run
				for _, s := range order {
					if count[s] < k {
						continue
					}
					if len(queue[s]) == 0 {
						return
					}
					group = append(group, queue[s][0])
				}
				if len(group) == 0 {
					return
				}
				for _, s := range order {
					if count[s] >= k {
						queue[s] = queue[s][1:]
					}
				}
				rec := perfRecord(group, k, sb, opts)
				if len(group) > 1 {
					rec.Warnf(record.WarnGeneral, "counters come from %d perf stat windows (one per event group): ratios of counters "+
						"from different groups mix windows", len(group))
				}
				if len(group) < len(order) {
					rec.Warnf(record.WarnGeneral, "repeat %d lacks %d of the %d event groups", k, len(order)-len(group), len(order))
				}
				emit(rec)
				k++
			}
		}
		for i, f := range files {
			if len(shapes[i]) == 0 {
				continue
			}
			j := 0
			readRuns(f, opts, res, shapes[i], func(r *run) {
				s := r.sigOr(shapes[i], j)
				j++
				queue[s] = append(queue[s], r)
				flush()
			})
		}
	default:
		n := 0
		for i, f := range files {
			if len(shapes[i]) == 0 {
				continue
			}
			var firstEvents string
			var firstRun int
			readRuns(f, opts, res, shapes[i], func(r *run) {
				n++
				rec := perfRecord([]*run{r}, n, sb, opts)
				ev := strings.Join(r.events(), ",")
				if firstRun == 0 {
					firstEvents, firstRun = ev, r.first.Run
				} else if sortedKey(ev) != sortedKey(firstEvents) {
					msg := fmt.Sprintf("%s:%d: events differ between runs: run %d counts %s, run %d counted %s",
						r.file, r.first.Line, r.first.Run, ev, firstRun, firstEvents)
					res.Warnings = append(res.Warnings, msg)
					rec.Warnf(record.WarnGeneral, "%s", msg)
				}
				emit(rec)
			})
		}
	}
}

// sigOr is the event set of the j-th run of a file: as its first reading
// found it, or, should the file have changed since, as read now.
func (r *run) sigOr(shapes []runShape, j int) string {
	if j < len(shapes) {
		return shapes[j].sig
	}
	return strings.Join(sortedCopy(r.events()), ",")
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func sortedKey(csv string) string { return strings.Join(sortedCopy(strings.Split(csv, ",")), ",") }

func disjoint(sigs []string) bool {
	seen := map[string]bool{}
	for _, s := range sigs {
		for _, e := range strings.Split(s, ",") {
			if seen[e] {
				return false
			}
			seen[e] = true
		}
	}
	return true
}
