package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/eventname"
	"github.com/perfbench/perfbench/internal/textdist"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// errCSV is wrapped by every error of readCSV.
var errCSV = errors.New("bad long-format CSV")

// readCSV parses a long-format CSV table into Records of kind table, so the
// report renders numbers from anywhere the same way. The header names the
// columns, in any order: version, step, threads, metric and value are
// required, host, repeat and group optional. One Record is made per (host,
// version, step, threads, repeat), in order of first appearance. metric is
// one of (see MetricNames; spellings are listed with the canonical name):
//
//	qps, ops, seconds        throughput, operations and length of the window
//	a perf event name        the event's total over the window ("cs" is
//	                         context-switches, as perf takes it)
//	cpu/o, cs/o, r/o, w/o,   per-op metrics given directly (cpu/q, QPS and
//	rKB/o, wKB/o             the other spellings of the posts map to them)
//	<event>/o                an event per op given directly
//	IPC, CPI, MPKI(<event>)  given directly
//	ips, rps, ..., maxop     an insert-benchmark column (metrics reference);
//	                         with ips given, qps is the queries/s column;
//	                         its per-op columns (cpupq, cspq, rpq, rkbpq,
//	                         and wpi, wkbpi on steps without queries) stand
//	                         for the per-op metrics not given
//	target_ips               the target insert rate of a read+write step
//	hist:<kind>:<bucket>     % of the query, insert or delete operations in
//	                         a response-time bucket ("hist:delete:1ms")
//	max:<kind>               slowest operation of that kind, s
//
// Any other metric is refused, naming the nearest known names. A value is
// a finite number of at least 0; an event's value may also be "n/a" (not
// supported) or "nc" (not counted). group names the section a step's rows
// go to in the tables ("Read-only before write-heavy"); every row of a step
// must give the same group. name is used in errors and Record.Source.
func readCSV(r io.Reader, name string) ([]*record.Record, error) {
	t := newCSVTables()
	if err := t.read(r, name); err != nil {
		return nil, err
	}
	return t.order, nil
}

// csvKey identifies the Record a row belongs to.
type csvKey struct {
	record.Key
	repeat int
}

// csvRecord is a Record being built from rows, with where each of its
// metrics came from.
type csvRecord struct {
	rec   *record.Record
	lines map[string]csvPlace
}

// csvPlace is a file (index in csvTables.files) and line.
type csvPlace struct {
	file int32
	line int32
}

// csvTables builds Records from one or more long-format CSV files. A row
// that repeats one of another file (same Record, metric and value) is the
// same observation given twice: it counts once, and Duplicates says how
// many there were. Rows of one Record may come from several files (qps in
// one, counters in another).
type csvTables struct {
	recs   map[csvKey]*csvRecord
	order  []*record.Record
	groups map[string]string // step → group
	// groupAt is where a step's group was first given.
	groupAt map[string]string
	// Duplicates counts rows given again in a later file; dupFiles names
	// the files, in order.
	Duplicates int
	dupFiles   []string
	files      []string
	strs       map[string]string
}

func newCSVTables() *csvTables {
	return &csvTables{recs: map[csvKey]*csvRecord{}, groups: map[string]string{}, groupAt: map[string]string{}, strs: map[string]string{}}
}

// intern returns s, shared with every equal string read before: a long
// table repeats its versions, steps and metrics on every line.
func (t *csvTables) intern(s string) string {
	if v, ok := t.strs[s]; ok {
		return v
	}
	s = strings.Clone(s)
	t.strs[s] = s
	return s
}

var csvColumns = []string{"version", "step", "threads", "metric", "value", "host", "repeat", "group"}

// read adds the rows of one file. Rows are read one at a time: memory
// grows with the Records and metrics, not with the file.
func (t *csvTables) read(r io.Reader, name string) error {
	f := &csvFile{t: t, name: name, file: int32(len(t.files)), cr: csv.NewReader(r)}
	t.files = append(t.files, name)
	f.cr.FieldsPerRecord = -1
	f.cr.TrimLeadingSpace = true
	f.cr.Comment = '#'
	f.cr.ReuseRecord = true
	if err := f.header(); err != nil {
		return err
	}
	rows := 0
	for {
		row, err := f.cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvReadError(name, err)
		}
		line, _ := f.cr.FieldPos(0)
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue
		}
		if len(row) != f.width {
			return f.bad(line, "%d fields, the header has %d", len(row), f.width)
		}
		rows++
		if err := f.row(row, line); err != nil {
			return err
		}
	}
	if rows == 0 {
		return fmt.Errorf("%w: %s has a header but no rows", errCSV, name)
	}
	return nil
}

// csvFile is one file being read into a csvTables.
type csvFile struct {
	t    *csvTables
	name string
	file int32 // index in t.files
	cr   *csv.Reader
	// col is the index of each column the header names; width is the
	// number of fields of every line.
	col   map[string]int
	width int
}

func (f *csvFile) bad(line int, format string, args ...any) error {
	return fmt.Errorf("%w: %s line %d: %s", errCSV, f.name, line, fmt.Sprintf(format, args...))
}

// get is the field of column c in row, "" where the file has no such
// column.
func (f *csvFile) get(row []string, c string) string {
	i, ok := f.col[c]
	if !ok || i >= len(row) {
		return ""
	}
	return strings.TrimSpace(row[i])
}

// header reads the header line: known columns, each once, the required
// ones all there.
func (f *csvFile) header() error {
	header, err := f.cr.Read()
	if err != nil {
		if err == io.EOF {
			return fmt.Errorf("%w: %s is empty: want a header line version,step,threads,metric,value", errCSV, f.name)
		}
		return csvReadError(f.name, err)
	}
	f.col = map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !slices.Contains(csvColumns, h) {
			line, _ := f.cr.FieldPos(i)
			return f.bad(line, "unknown column %q: the columns are version, step, threads, metric, value and optionally host, repeat, group", h)
		}
		if _, dup := f.col[h]; dup {
			line, _ := f.cr.FieldPos(i)
			return f.bad(line, "column %q appears twice", h)
		}
		f.col[h] = i
	}
	headerLine, _ := f.cr.FieldPos(0)
	for _, need := range []string{"version", "step", "threads", "metric", "value"} {
		if _, ok := f.col[need]; !ok {
			return f.bad(headerLine, "no %q column (the header must name version, step, threads, metric, value)", need)
		}
	}
	f.width = len(header)
	return nil
}

// row adds one line's metric to its Record.
func (f *csvFile) row(row []string, line int) error {
	t := f.t
	k, err := f.key(row, line)
	if err != nil {
		return err
	}
	given, value := f.get(row, "metric"), f.get(row, "value")
	if given == "" {
		return f.bad(line, "empty metric")
	}
	metric, event, err := canonicalMetric(given)
	if err != nil {
		return f.bad(line, "%v", err)
	}
	metric = t.intern(metric)
	cur := t.recs[k]
	if cur == nil {
		rec := record.New(record.KindTable)
		rec.Host, rec.Version, rec.Step, rec.Threads, rec.Repeat = k.Host, k.Version, k.Step, k.Threads, k.repeat
		rec.Metrics = map[string]float64{}
		rec.Source = []string{f.name}
		cur = &csvRecord{rec: rec, lines: map[string]csvPlace{}}
		t.recs[k] = cur
		t.order = append(t.order, rec)
	}
	status, v, err := f.value(given, value, event, line)
	if err != nil {
		return err
	}
	// The same metric of the same Record again: a typo inside one
	// file; the same observation when another file repeats it.
	if prev, dup := cur.lines[metric]; dup {
		return f.again(cur.rec, k, prev, given, metric, status, v, line)
	}
	cur.lines[metric] = csvPlace{f.file, int32(min(line, math.MaxInt32))}
	rec := cur.rec
	if !slices.Contains(rec.Source, f.name) {
		rec.Source = append(rec.Source, f.name)
	}
	if status != "" {
		rec.Counters = append(rec.Counters, record.Counter{Event: metric, Status: status})
		return nil
	}
	rec.Metrics[metric] = v
	switch metric {
	case analysis.TableSeconds:
		rec.Window.Seconds = v
	case analysis.TableOps:
		rec.Ops = record.Ops{Source: "ops", Count: v, Per: 1, Counted: true}
	}
	return nil
}

// key is the Record a line belongs to; the line's group, if any, is
// noted for its step.
func (f *csvFile) key(row []string, line int) (csvKey, error) {
	t := f.t
	k := csvKey{Key: record.Key{Host: f.get(row, "host"), Version: f.get(row, "version"), Step: f.get(row, "step")}, repeat: 1}
	if k.Version == "" || k.Step == "" {
		return k, f.bad(line, "version and step must not be empty")
	}
	k.Host, k.Version, k.Step = t.intern(k.Host), t.intern(k.Version), t.intern(k.Step)
	if s := f.get(row, "threads"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return k, f.bad(line, "threads %q is not a whole number", s)
		}
		k.Threads = n
	}
	if s := f.get(row, "repeat"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return k, f.bad(line, "repeat %q is not a whole number", s)
		}
		k.repeat = n
	}
	if g := f.get(row, "group"); g != "" {
		if prev, ok := t.groups[k.Step]; ok && prev != g {
			return k, f.bad(line, "step %s is in group %q here and in group %q on %s: give each step one group", k.Step, g, prev, t.groupAt[k.Step])
		} else if !ok {
			t.groups[k.Step], t.groupAt[k.Step] = t.intern(g), fmt.Sprintf("%s line %d", f.name, line)
		}
	}
	return k, nil
}

// value parses a line's value: a number, or for a perf event n/a or nc
// (status set).
func (f *csvFile) value(given, value string, event bool, line int) (record.Status, float64, error) {
	var status record.Status
	switch strings.ToLower(value) {
	case "n/a", "not supported", "<not supported>":
		status = record.StatusNotSupported
	case "nc", "not counted", "<not counted>":
		status = record.StatusNotCounted
	}
	if status != "" && !event {
		return "", 0, f.bad(line, "%s: only a perf event can be %q", given, value)
	}
	if status != "" {
		return status, 0, nil
	}
	v, err := parseCSVValue(value)
	if err != nil {
		return "", 0, f.bad(line, "value %q of %s %v", value, given, err)
	}
	return "", v, nil
}

// again handles a metric of a Record given before at prev: an error inside
// one file or with another value, a duplicate counted once when another
// file repeats the observation.
func (f *csvFile) again(rec *record.Record, k csvKey, prev csvPlace, given, metric string, status record.Status, v float64, line int) error {
	t := f.t
	old, oldStatus := rec.Metrics[metric], counterStatus(rec, metric)
	what := fmt.Sprintf("%s of %s %s (threads %d, repeat %d)", given, k.Version, k.Step, k.Threads, k.repeat)
	if k.Host != "" {
		what += " on host " + k.Host
	}
	switch {
	case prev.file == f.file:
		return f.bad(line, "%s was already given on line %d", what, prev.line)
	case oldStatus != status || (status == "" && old != v):
		return f.bad(line, "%s was given as %s on %s line %d: one Record cannot have two values (give each run its own repeat "+
			"number)", what, csvValueText(old, oldStatus), t.files[prev.file], prev.line)
	}
	t.Duplicates++
	if !slices.Contains(t.dupFiles, f.name) {
		t.dupFiles = append(t.dupFiles, f.name)
	}
	return nil
}

// csvReadError is a CSV syntax error as one line naming the file and line,
// with how to fix the commonest one: a quote inside an unquoted field.
func csvReadError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		hint := ""
		switch {
		case errors.Is(pe.Err, csv.ErrBareQuote):
			hint = `: a field with a " must be quoted, its quotes doubled ("a""b")`
		case errors.Is(pe.Err, csv.ErrQuote):
			hint = ": a quoted field must end with a quote before the next comma"
		}
		return fmt.Errorf("%w: %s line %d, column %d: %w%s", errCSV, name, pe.Line, pe.Column, pe.Err, hint)
	}
	return fmt.Errorf("%w: %s: %w", errCSV, name, err)
}

// counterStatus is the status a CSV row gave an event of rec, "" when the
// row gave a number.
func counterStatus(rec *record.Record, event string) record.Status {
	for _, c := range rec.Counters {
		if c.Event == event {
			return c.Status
		}
	}
	return ""
}

func csvValueText(v float64, status record.Status) string {
	if status != "" {
		return string(status)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// parseCSVValue is a value of the table: a finite number of at least 0.
func parseCSVValue(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, errors.New("is out of range: values must be finite numbers")
	case err != nil:
		return 0, errors.New("is not a number (or n/a, nc for an event)")
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, errors.New("is not a finite number: a value the table does not have is left out, not written as NaN or inf")
	case v < 0:
		return 0, errors.New("is negative: counts, rates and per-op values are at least 0")
	}
	return math.Abs(v), nil // no -0
}

// metricAliases maps other spellings, lower case, to the metric names of
// the report: the posts' own notation (cpu/q, QPS) and perf's names.
var metricAliases = map[string]string{
	"qps": analysis.TableQPS, "ops": analysis.TableOps, "seconds": analysis.TableSeconds, "o/s": analysis.OpsPerSecond,
	"cpu/o": analysis.CPUPerOp, "cpu/q": analysis.CPUPerOp, "cpu/op": analysis.CPUPerOp, "cpu/query": analysis.CPUPerOp,
	"cs/o": analysis.CSPerOp, "cs/q": analysis.CSPerOp, "cs/op": analysis.CSPerOp,
	"r/o": analysis.ReadsPerOp, "r/q": analysis.ReadsPerOp, "r/op": analysis.ReadsPerOp,
	"w/o": analysis.WritesPerOp, "w/q": analysis.WritesPerOp, "w/op": analysis.WritesPerOp,
	"rkb/o": analysis.ReadKBPerOp, "rkb/q": analysis.ReadKBPerOp, "rkb/op": analysis.ReadKBPerOp,
	"wkb/o": analysis.WriteKBPerOp, "wkb/q": analysis.WriteKBPerOp, "wkb/op": analysis.WriteKBPerOp,
	"ipc": analysis.IPC, "cpi": analysis.CPI,
	"target_ips": analysis.TargetIPS,
}

func init() {
	for _, c := range analysis.InsertColumns {
		metricAliases[c] = c
	}
}

// canonicalMetric maps a metric name of a CSV table to the name the report
// uses (see readCSV for the vocabulary) and says whether it is a perf event
// total. Names it does not know are an error naming the nearest ones.
func canonicalMetric(name string) (metric string, event bool, err error) {
	if m, ok := metricAliases[strings.ToLower(name)]; ok {
		return m, false, nil
	}
	prefix := func(p string) bool { return len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) }
	switch {
	case prefix("mpki(") && strings.HasSuffix(name, ")"):
		if e, ok := eventName(name[5 : len(name)-1]); ok {
			return analysis.MPKIName(e), false, nil
		}
		return "", false, fmt.Errorf("%s: %q is not a perf event name", name, name[5:len(name)-1])
	case prefix("hist:"):
		kind, bucket, _ := strings.Cut(name[5:], ":")
		var buckets []string
		for _, b := range record.InsertBuckets {
			if b.Name == bucket && slices.Contains(analysis.HistogramKinds, kind) {
				return analysis.KindHistogramMetric(kind, bucket), false, nil
			}
			buckets = append(buckets, b.Name)
		}
		return "", false, fmt.Errorf("unknown histogram metric %q: use hist:<kind>:<bucket> with kind %s and bucket %s", name,
			strings.Join(analysis.HistogramKinds, ", "), strings.Join(buckets, ", "))
	case prefix("max:"):
		if k := name[4:]; slices.Contains(analysis.HistogramKinds, k) {
			return analysis.MaxMetric(k), false, nil
		}
		return "", false, fmt.Errorf("unknown metric %q: use max:<kind> with kind %s", name, strings.Join(analysis.HistogramKinds, ", "))
	}
	if e, ok := strings.CutSuffix(name, "/o"); ok {
		if ev, ok := eventName(e); ok {
			return analysis.PerOpName(ev), false, nil
		}
	}
	if e, ok := eventName(name); ok {
		return e, true, nil
	}
	return "", false, unknownMetric(name)
}

// eventName reports whether s is a perf event name (perf's spellings of the
// generic events, raw events, PMU events and tracepoints, with modifiers)
// and returns it under the name Records key it by, internal/eventname's
// canonical one ("cs" is context-switches, "l1d-load-miss:u"
// L1-dcache-load-misses:u). PMU events and tracepoints this machine lacks
// count: the table may come from another machine.
func eventName(s string) (string, bool) {
	if s == "" || strings.ContainsAny(s, ",{}") {
		return "", false
	}
	l, err := perfevent.Parse(s, nil)
	if err != nil && !errors.Is(err, perfevent.ErrNotSupported) {
		return "", false
	}
	if err == nil && len(l.Events) == 1 {
		return eventname.Canonical(s), true
	}
	return s, true
}

// unknownMetric is the error for a metric name the CSV reader does not
// know, with the nearest known names.
func unknownMetric(name string) error {
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			cands = append(cands, cand{n, textdist.Distance(strings.ToLower(name), strings.ToLower(n))})
		}
	}
	for a, c := range metricAliases {
		add(a)
		add(c)
	}
	for _, e := range eventname.All() {
		add(e.Name)
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].d != cands[j].d {
			return cands[i].d < cands[j].d
		}
		return cands[i].name < cands[j].name
	})
	var near []string
	for _, c := range cands[:3] {
		if c.d <= max(2, len(name)/2) {
			near = append(near, c.name)
		}
	}
	hint := ""
	if len(near) > 0 {
		hint = "; nearest: " + strings.Join(near, ", ")
	}
	return fmt.Errorf("unknown metric %q%s (metrics are qps, ops, seconds, per-op metrics such as cpu/o, perf event names, "+
		"IPC, CPI, MPKI(<event>) and the insert benchmark's columns)", name, hint)
}
