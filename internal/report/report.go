// Package report builds the tables of a perfbench report from Records and
// renders them as text in the layouts of published benchmark posts,
// Markdown, self-contained HTML, CSV, JSON and the Go benchmark format.
//
// Build computes the tables (package analysis does the numbers); Write
// renders them as they are built, after a first pass that gathers what one
// table needs from the others. Each renderer prints the same cells, so a
// number reads the same in every format. Cell text conventions (see
// markedText): "1.23(62%)" multiplexed counters that ran 62% of the window,
// "[1/3]" a value from 1 of 3 repeats, "±4%" the 95% confidence interval
// of the median over repeats (of a ratio: from both samples), "~" a
// difference to the base that is not significant, "?" a ratio from a single repeat that was not tested (marked
// when other ratios of the report were), a trailing "e" an op count
// estimated from the client's whole-run rate, a trailing "p" a partial
// window, a trailing "!" an insert-benchmark step that did not sustain its
// target insert rate, "1" (not "1.00") a ratio of two zeros, and n/a, nc, failed, "-"
// for values not supported, not counted, from a failed step, not recorded
// or not computable. Every table lists the markers it uses and the warnings
// of the Records behind it that concern its columns as notes. Tables in
// which no cell has a value because the events are not supported (hardware
// events on a machine without a PMU) are left out and named in one note at
// the top of the report (Report.Notes).
//
// A ratio of versions measured together (record.Comparison: duet or
// slices) is paired (analysis.Cell.Paired): the geometric mean of its
// rounds' ratios (a round: the geometric mean of its turns'), "±4%" and "~"
// from a Student t interval and test on their logarithms, "?" from a
// single round, "d" when its rounds' ratios
// disagree; no "[1/3]". Its table's notes say the modes and the turns
// left out, and the pairs table (tablePairs) lists, per step and version,
// the turns paired and left out and each round's ratio with their spread.
//
// HTML colours: a ratio to the base is yellow when the version is worse by
// more than 5% and blue when it is better by more than 5%, by the metric's
// direction: for throughput (o/s, QPS) and IPC below 0.95 is yellow and
// above 1.05 blue, as in the insert-benchmark reports; for costs per
// operation (cpu/o, r/o, counters per op, CPI) above 1.05 is yellow and
// below 0.95 blue. Absolute values follow the insert benchmark's quartile
// rule, which already has a direction (see colourRanges). In the insert
// benchmark's tables, inserts/s below 95% of a step's target are red and
// the queries/s of such a version and step, which can be ignored, grey,
// as are their ratios to the base.
package report

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// Table IDs, in report order. --tables takes a comma-separated list of them.
const (
	TableRQPS         = "rqps"          // relative QPS, seed-post layout
	tableQPS          = "qps"           // absolute QPS, same layout
	tableThreads      = "threads"       // QPS per thread count and ratio at the lowest
	tableAverage      = "average"       // QPS ratios with an average row
	tablePairs        = "pairs"         // the turns paired behind each rQPS of versions measured together
	tableCPUIO        = "cpuio"         // CPU and IO per op, absolute
	tableCPUIORel     = "cpuio-rel"     // CPU and IO per op relative to the base
	tableCounters     = "counters"      // counters per op, absolute
	tableCountersRel  = "counters-rel"  // counters per op relative to the base
	tableLegacy       = "legacy"        // counter ratio ÷ whole-step rQPS (--legacy-normalization)
	tableAttribution  = "attribution"   // code / memory / wait
	tableCorrelation  = "correlation"   // counters ranked by rank correlation with 1/rQPS
	tableRoles        = "roles"         // shares per thread role
	tableInsert       = "insert"        // insert benchmark: throughput per step
	tableInsertRel    = "insert-rel"    // insert benchmark: throughput relative to the base
	tableInsertTarget = "insert-target" // insert benchmark: inserts/s of rate-limited steps and their target
	tableInsertLine   = "insert-line"   // insert benchmark: the per-step metrics line
	tableInsertHist   = "insert-hist"   // insert benchmark: response-time histograms by kind of operation
)

// TableIDs lists every table ID in report order.
var TableIDs = []string{
	tableSummary, TableRQPS, tableQPS, tableThreads, tableAverage, tablePairs, tableCPUIO, tableCPUIORel,
	tableCounters, tableCountersRel, tableLegacy, tableAttribution, tableCorrelation,
	tableRoles, tableInsert, tableInsertRel, tableInsertTarget, tableInsertLine, tableInsertHist,
}

// ErrUnknownTable is returned for a table ID that does not exist.
var ErrUnknownTable = errors.New("unknown table")

// Options choose what Build computes. The zero value builds every table
// against the first version.
type Options struct {
	// Base is the version the others are compared to; "" means the first
	// version in input order.
	Base string
	// Tables lists table IDs to build; empty means all. The legacy table is
	// built only with Legacy set or when Tables names it.
	Tables []string
	// Legacy adds the older normalization: counter ratio ÷ whole-step rQPS.
	Legacy bool
	// Compare lists the versions compared with the base; empty means all.
	// Versions left out still print where tables show absolute values.
	Compare []string
	// Labels are short column labels by version ("8.0.28" → "my8028"):
	// they head the columns of that version instead of "col-N", and name
	// the base in the per-thread-count table's ratio column; legends
	// and rows keep the full version.
	Labels map[string]string
	// Groups put steps in named groups (Input.Groups, from a CSV table's
	// group column): tables list them under group headings, in the order
	// the groups first appear among the steps, instead of point / range /
	// writes.
	Groups map[string]string
	// Bare renders each table alone: no title and no notes (in Markdown
	// and HTML no preamble either: the table itself), as a block to paste
	// into a post that has its own text. Write sends what it leaves out to
	// Notes (writeNotes). CSV, JSON and benchfmt are not affected.
	Bare     bool
	Notes    io.Writer
	Analysis analysis.Options
}

// report is the tables built from a set of Records.
type report struct {
	Base     string   `json:"base"`
	Versions []string `json:"versions"`
	// Notes come before the tables: tables left out because none of
	// their cells could be measured.
	Notes  []string `json:"notes,omitempty"`
	Tables []*table `json:"tables"`
	// Warnings concern the whole input: files skipped, steps left out.
	Warnings []string `json:"warnings,omitempty"`

	// bare renders the tables alone (Options.Bare).
	bare bool
	// count is the number of tables, known before they are built.
	count int
	// tableNotes are the titles and notes of the tables rendered, for
	// writeNotes after a bare report streamed them.
	tableNotes []titledNotes
}

// titledNotes are the notes of one table.
type titledNotes struct {
	title string
	notes []string
}

// rowKind is what a row is.
type rowKind int

// Row kinds.
const (
	rowValues  rowKind = iota // a label and cells
	rowHeading                // a label only ("- host" in the per-thread layout)
	rowRule                   // "-----" under each column
	rowAverage                // averages of the columns
)

func (k rowKind) String() string {
	return [...]string{"values", "heading", "rule", "average"}[k]
}

// MarshalText makes row kinds readable in JSON.
func (k rowKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// pad modes of the text layout.
type padMode int

const (
	padNone  padMode = iota // values separated by one space, as published
	padAuto                 // columns padded to their widest cell
	padFixed                // columns 8 wide (the average layout)
)

// table is one table of the report.
type table struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Host    string `json:"host,omitempty"`
	Threads int    `json:"threads,omitempty"`
	Version string `json:"version,omitempty"`
	Step    string `json:"step,omitempty"`
	// Relative tables hold ratios to the base.
	Relative bool `json:"relative"`
	// Preamble lines come before the header: "Relative to: base",
	// "col-1 : version".
	Preamble []string `json:"preamble,omitempty"`
	// Header names the value columns; LabelHeader the label column
	// ("concurrency", "dbms", "tag"); the last Trailing columns print after
	// the label in text.
	Header      []string  `json:"header"`
	LabelHeader string    `json:"label_header,omitempty"`
	Trailing    int       `json:"trailing,omitempty"`
	Sections    []section `json:"sections"`
	Notes       []string  `json:"notes,omitempty"`
	// WindowNotes, set when Notes say the warnings of a code once for
	// many windows, are the Records' warnings of the table window by
	// window as they would print without that: nothing is lost to JSON.
	WindowNotes []string `json:"window_notes,omitempty"`

	pad              padMode
	padIfWide        bool // padNone unless a cell is wider than its header
	headerPerSection bool // repeat the header under each section name
	sectionNames     bool // print section names in text
	sectionGap       bool // blank line between sections in text
	keys             []record.Key
	lastBase         record.Key // the base key added last (addRatioKeys)
	metric           string     // the metric of a counters or legacy table
	// singleWindowNoted: the table's own notes already say that its
	// values rest on a single repeat (the attribution's verdict note).
	singleWindowNoted bool
	// pairs tallies the turns behind its ratios of versions measured
	// together (nil when it has none).
	pairs *pairTally
}

// section is a group of rows: point / range / writes, a step, a thread count.
type section struct {
	Name string `json:"name,omitempty"`
	Rows []row  `json:"rows"`
}

// row is one line of a table.
type row struct {
	Label string      `json:"label"`
	Kind  rowKind     `json:"kind"`
	Cells []tableCell `json:"cells,omitempty"`
}

// tableCell is one printed number with what it is and how it was measured.
type tableCell struct {
	analysis.Cell
	// Text is the cell as printed (value and markers).
	Text string
	// Class is the background of the cell in HTML: yellow, blue (relative
	// below 0.95 / above 1.05), red, green (absolute bottom / top quartile).
	Class string
	// Empty cells print nothing (the ratio column of the base row).
	Empty bool
	// BelowTarget marks, in the insert-target table, inserts/s below 95%
	// of the step's target insert rate (text "!", HTML red) and, in the
	// insert table, the queries/s of a version that fell below it on that
	// step: a value that can be ignored (text "!", HTML grey).
	BelowTarget bool
	// (Beside the two flags above, in the space they leave.)
	better int8 // +1 higher is better, -1 lower is better
	rel    bool // a ratio to the base: the relative colour rule applies
	word   bool // Text is a word (verdict), not a number
	// What the number is.
	Version, Step, Metric string

	set    string    // cells compared for the absolute colour rule
	format numFormat // how Text was made from the value
}

// build computes the tables of the report.
func build(recs []*record.Record, opt Options) (*report, error) {
	b, rep, err := prepare(recs, opt, nil)
	if err != nil {
		return nil, err
	}
	err = b.tables(func(t *table) error {
		rep.Tables = append(rep.Tables, t)
		return nil
	})
	return rep, err
}

// prepare compares the Records and builds every table, for what any one
// of them needs from the others: which tables are left out (the report's
// notes), whether any ratio was tested, the ranges of the colour rule.
// Without q, the tables kept wait in b.built for b.tables, which lets go
// of each as it is emitted. With q, they go to q as soon as nothing they
// print can change: when q prints no colours, once some table was tested
// (no later table can change that), else when every table is built.
func prepare(recs []*record.Record, opt Options, q *tableQueue) (*builder, *report, error) {
	want := map[string]bool{}
	for _, id := range opt.Tables {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if !knownTable(id) {
			return nil, nil, fmt.Errorf("%w %q: choose from %s", ErrUnknownTable, id, strings.Join(TableIDs, ", "))
		}
		want[id] = true
	}
	c, err := analysis.New(recs, opt.Base, opt.Analysis)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLabels(opt.Labels, c.Versions); err != nil {
		return nil, nil, err
	}
	for _, v := range opt.Compare {
		if !slices.Contains(c.Versions, v) {
			return nil, nil, fmt.Errorf("%w %q to compare with the base: the versions are %s", ErrUnknownVersion, v, strings.Join(c.Versions, ", "))
		}
	}
	b := &builder{c: c, opt: opt, want: want, ranges: colourRanges{}, aa: aaPairs(recs, c.Versions),
		compared: slices.ContainsFunc(recs, func(r *record.Record) bool { return r.Comparison != nil })}
	rep := &report{Base: c.Base, Versions: c.Versions}
	leftOut := newLeftOut()
	send := func() {
		for i, t := range b.built {
			b.built[i] = nil
			q.add(t)
		}
		b.built = b.built[:0]
	}
	if q != nil {
		rep.bare = q.bare
		// The colours of a table need the ranges of every table; its
		// notes and "?" marks only whether some table was tested.
		q.complete = b.finish
		if q.colours {
			q.complete = b.complete
		}
	}
	b.each(func(t *table, why string, failed, kept bool) {
		if !kept {
			leftOut.add(why, b.tableName(t), failed)
			return
		}
		rep.count++
		b.ranges.add(t)
		if !b.tested && t.tested() {
			b.tested = true // and no more written: tables in q read it
		}
		b.built = append(b.built, t)
		if q != nil && !q.colours && b.tested {
			send()
		}
	})
	if q != nil {
		send()
		b.built = nil
	}
	rep.Notes = append(append(append(leftOut.notes(), busyNotes(recs)...), autoNotes(recs)...), rotationNotes(recs)...)
	rep.Notes = append(append(rep.Notes, windowNotes(c)...), b.unpairedNotes()...)
	if len(c.LeftOut) > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("warm-up steps left out of the tables: %s", strings.Join(c.LeftOut, ", ")))
	}
	rep.Warnings = append(rep.Warnings, opsSourceWarnings(c, recs)...)
	return b, rep, nil
}

// each builds the tables asked for, in report order, and calls f with
// each that has values: kept, or left out because none of its cells could
// be measured (why, and whether failed steps' cells are among them). The
// tables are built on every CPU, those of an ID scope by scope when they
// allow it (byScope), f is called on the caller's goroutine in report
// order, with the tables of each part as they are built, and at most one
// part per CPU is built ahead of f. (prepare keeps the tables, or hands
// them on: they are built once).
func (b *builder) each(f func(t *table, why string, failed, kept bool)) {
	// A part is the tables of an ID, or of an ID and a scope.
	type part struct {
		id     string
		scopes []analysis.Scope
	}
	var parts []part
	for _, id := range TableIDs {
		if len(b.want) > 0 && !b.want[id] {
			continue
		}
		if id == tableLegacy && !b.opt.Legacy && !b.want[id] {
			continue
		}
		if !byScope(id) {
			parts = append(parts, part{id, b.c.Scopes})
			continue
		}
		for i := range b.c.Scopes {
			parts = append(parts, part{id, b.c.Scopes[i : i+1]})
		}
	}
	type built struct {
		t            *table
		why          string
		failed, kept bool
	}
	// The tables of a part go to f in batches as they are built (f, on
	// the caller's goroutine, may hand them on to be rendered while the
	// part's others are built); a part built ahead of f keeps its
	// batches waiting, blocking only when it is far ahead.
	const batch = 16
	done := make([]chan []built, len(parts))
	for i := range done {
		done[i] = make(chan []built, 4)
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(parts)))
	ahead := make(chan struct{}, workers)
	next := make(chan int)
	go func() {
		for i := range parts {
			ahead <- struct{}{}
			next <- i
		}
		close(next)
	}()
	for range workers {
		go func() {
			for i := range next {
				var out []built
				id := parts[i].id
				b.build(id, parts[i].scopes, func(t *table) {
					if why, failed, kept, ok := check(id, t); ok {
						out = append(out, built{t, why, failed, kept})
					}
					if len(out) == batch {
						done[i] <- out
						out = nil
					}
				})
				done[i] <- out
				close(done[i])
			}
		}()
	}
	for i := range parts {
		for ts := range done[i] {
			for _, t := range ts {
				f(t.t, t.why, t.failed, t.kept)
			}
		}
		<-ahead
	}
}

// check drops the empty rows of a table built for id, and reports whether
// it has values (ok) and whether it is kept or left out, and why.
func check(id string, t *table) (why string, failed, kept, ok bool) {
	t.dropEmptyRows()
	if id == tableCPUIO || id == tableCPUIORel {
		// Tables from CSV tables often have only some of these
		// columns; one with throughput alone repeats the QPS table.
		if t.dropEmptyColumns(); len(t.Header) < 2 {
			return "", false, false, false
		}
		if id == tableCPUIO {
			t.Notes = append([]string{cpuioUnits(t.Header)}, t.Notes...)
		}
	}
	if !t.hasValues() {
		return "", false, false, false
	}
	why, failed, left := t.unmeasured()
	return why, failed, !left, true
}

// tables completes the tables kept by prepare and hands them to emit in
// report order.
func (b *builder) tables(emit func(*table) error) error {
	for i, t := range b.built {
		b.built[i] = nil // the caller may hold it; the report does not
		b.complete(t)
		if err := emit(t); err != nil {
			return err
		}
	}
	b.built = nil
	return nil
}

// complete colours a table kept by prepare and adds its notes. Tables
// are completed concurrently: it only reads what prepare gathered.
func (b *builder) complete(t *table) {
	b.ranges.colour(t)
	b.finish(t)
}

// ErrUnknownVersion is returned by Build for a version in Options.Compare
// that the input does not have.
var ErrUnknownVersion = errors.New("unknown version")

// ErrBadLabel is returned by Build for a column label that names no
// version of the input or that two versions share.
var ErrBadLabel = errors.New("bad column label")

// checkLabels checks that each label is for a version of the input and
// that no two versions share one.
func checkLabels(labels map[string]string, versions []string) error {
	keys := make([]string, 0, len(labels))
	for v := range labels {
		keys = append(keys, v)
	}
	sort.Strings(keys)
	by := map[string]string{}
	for _, v := range keys {
		l := labels[v]
		if !slices.Contains(versions, v) {
			return fmt.Errorf("%w %s=%s: %q is not one of the versions: %s", ErrBadLabel, v, l, v, strings.Join(versions, ", "))
		}
		if strings.TrimSpace(l) == "" {
			return fmt.Errorf("%w %s=: the label is empty", ErrBadLabel, v)
		}
		if other, dup := by[l]; dup {
			return fmt.Errorf("%w: %s and %s are both labelled %q: columns need different labels", ErrBadLabel, other, v, l)
		}
		by[l] = v
	}
	return nil
}

// unmeasured reports whether no cell of t has a value for a reason that
// holds for the whole table: every cell not supported (n/a), or not
// computable for one reason. failed says whether failed steps' cells are
// among them. Tables with a measured or a never-scheduled cell are kept.
func (t *table) unmeasured() (why string, failed, ok bool) {
	na := false
	whys := map[string]bool{}
	var order []string
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			for _, c := range r.Cells {
				if c.Empty || c.word {
					continue
				}
				switch c.State {
				case analysis.Measured, analysis.NotCounted:
					return "", false, false
				case analysis.NotSupported:
					na = true
				case analysis.NotComputable:
					if !whys[c.Why] {
						whys[c.Why] = true
						order = append(order, c.Why)
					}
				case analysis.Failed:
					failed = true
				}
			}
		}
	}
	switch {
	case na:
		return "", failed, true
	case len(order) > 0:
		return strings.Join(order, "; "), failed, true
	}
	return "", false, false
}

// tableName names a table in the note that says it was left out: the
// metric of a counter table ("cycles", "IPC"), else its title; with the
// scope when the report has several.
func (b *builder) tableName(t *table) string {
	name := t.Title
	switch {
	case t.ID == tableLegacy && t.metric != "":
		name = t.metric + " (legacy normalization)"
	case t.metric != "":
		name = t.metric
		if e := analysis.EventOf(t.metric); e != "" {
			name = e
		}
		if t.ID == tableCountersRel {
			name += relativeName
		}
		if len(b.c.Scopes) > 1 {
			if s := scopeText(t.Host, t.Threads); s != "" {
				name += " (" + s + ")"
			}
		}
	}
	return name
}

// relativeName follows the name of a relative counter table left out.
const relativeName = " relative to the base"

// leftOutTables collects the tables left out, by reason.
type leftOutTables struct {
	order  []string // "" is n/a; else the reason they are not computable
	names  map[string][]string
	seen   map[string]bool
	failed map[string]bool
}

func newLeftOut() *leftOutTables {
	return &leftOutTables{names: map[string][]string{}, seen: map[string]bool{}, failed: map[string]bool{}}
}

func (l *leftOutTables) add(why, name string, failed bool) {
	if _, ok := l.names[why]; !ok {
		l.order = append(l.order, why)
	}
	if !l.seen[why+"\x00"+name] {
		l.seen[why+"\x00"+name] = true
		l.names[why] = append(l.names[why], name)
	}
	l.failed[why] = l.failed[why] || failed
}

func (l *leftOutTables) notes() []string {
	var out []string
	for _, why := range l.order {
		// A relative table left out with its absolute one goes without
		// saying.
		var list []string
		for _, n := range l.names[why] {
			if abs := strings.Replace(n, relativeName, "", 1); abs != n && l.seen[why+"\x00"+abs] {
				continue
			}
			list = append(list, n)
		}
		names := strings.Join(list, ", ")
		but := ""
		if l.failed[why] {
			but = " but those of failed steps"
		}
		if why == "" {
			out = append(out, fmt.Sprintf("not supported where measured, tables left out: %s (n/a in every cell%s)", names, but))
		} else {
			out = append(out, fmt.Sprintf("not computable, tables left out: %s (\"-\" in every cell%s: %s)", names, but, why))
		}
	}
	return out
}

func knownTable(id string) bool {
	for _, t := range TableIDs {
		if t == id {
			return true
		}
	}
	return false
}

// hasValues reports whether any cell of t is something other than "not
// recorded": a table of nothing but dashes for missing Records is not
// printed.
func (t *table) hasValues() bool {
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			for _, c := range r.Cells {
				if !c.Empty && (c.State != analysis.Missing || c.word) {
					return true
				}
			}
		}
	}
	return false
}

// dropEmptyRows removes value rows whose every cell is "not recorded" (a
// step a counter was not asked for, a version that did not run a step) and
// sections left without rows. Failed, not supported and not counted cells
// are kept: they say something.
func (t *table) dropEmptyRows() {
	// Rows and sections are kept in place: most tables drop none.
	secs := t.Sections[:0]
	for _, s := range t.Sections {
		rows := s.Rows[:0]
		for _, r := range s.Rows {
			if r.Kind == rowValues && len(r.Cells) > 0 && emptyRow(r) {
				continue
			}
			rows = append(rows, r)
		}
		clear(s.Rows[len(rows):])
		if len(rows) > 0 {
			s.Rows = rows
			secs = append(secs, s)
		}
	}
	clear(t.Sections[len(secs):])
	if len(secs) == 0 {
		secs = nil
	}
	t.Sections = secs
}

// emptyRow reports whether every cell of a value row is "not recorded".
func emptyRow(r row) bool {
	for i := range r.Cells {
		if c := &r.Cells[i]; c.word || (!c.Empty && c.State != analysis.Missing) {
			return false
		}
	}
	return true
}

// dropEmptyColumns removes value columns whose every cell is "not
// recorded".
func (t *table) dropEmptyColumns() {
	keep := make([]bool, len(t.Header))
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			for i, c := range r.Cells {
				if i < len(keep) && (c.word || (!c.Empty && c.State != analysis.Missing)) {
					keep[i] = true
				}
			}
		}
	}
	var header []string
	for i, h := range t.Header {
		if keep[i] {
			header = append(header, h)
		}
	}
	if len(header) == len(t.Header) {
		return
	}
	for si := range t.Sections {
		for ri := range t.Sections[si].Rows {
			r := &t.Sections[si].Rows[ri]
			if len(r.Cells) == 0 {
				continue
			}
			var cells []tableCell
			for i, c := range r.Cells {
				if i >= len(keep) || keep[i] {
					cells = append(cells, c)
				}
			}
			r.Cells = cells
		}
	}
	t.Header = header
}

// opsSourceWarnings warns when versions count ops differently on the same
// step: their ratios would compare different things. Records without an op
// count are left out (their per-op cells say so).
func opsSourceWarnings(c *analysis.Comparison, recs []*record.Record) []string {
	type key struct {
		sc   analysis.Scope
		step string
	}
	sources := map[key]map[string][]string{}
	var order []key
	// The i-th Record of a key is the i-th repeat of its Sample, whose
	// per-op values the comparison already computed.
	nth := map[record.Key]int{}
	for _, r := range recs {
		i := nth[r.Key()]
		nth[r.Key()]++
		if r.Kind == record.KindTable || r.Outcome == record.OutcomeFailed {
			continue
		}
		p := c.Sample(r.Key()).PerOp[i]
		if p.OpsSource == "" {
			continue
		}
		k := key{analysis.Scope{Host: r.Host, Threads: r.Threads}, r.Step}
		if sources[k] == nil {
			sources[k] = map[string][]string{}
			order = append(order, k)
		}
		unit := p.OpsSource
		if p.OpsPer != 1 {
			unit = fmt.Sprintf("%s per %g", p.OpsSource, p.OpsPer)
		}
		if !slices.Contains(sources[k][unit], r.Version) {
			sources[k][unit] = append(sources[k][unit], r.Version)
		}
	}
	var out []string
	for _, k := range order {
		if len(sources[k]) < 2 {
			continue
		}
		var s []string
		for unit, versions := range sources[k] {
			s = append(s, fmt.Sprintf("%s (%s)", unit, strings.Join(versions, ", ")))
		}
		sort.Strings(s)
		where := k.step
		if sc := scopeText(k.sc.Host, k.sc.Threads); sc != "" {
			where += " (" + sc + ")"
		}
		out = append(out, fmt.Sprintf("%s: versions count operations differently: %s: ratios compare different units", where, strings.Join(s, "; ")))
	}
	return out
}
