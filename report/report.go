// Package report builds the tables of a perfbench report from Records and
// renders them as text in the layouts of published benchmark posts,
// Markdown, self-contained HTML, CSV, JSON and the Go benchmark format.
//
// Build computes every table once (package analysis does the numbers); each
// renderer prints the same cells, so a number reads the same in every
// format. Cell text conventions (see cellText): "1.23(62%)" multiplexed
// counters that ran 62% of the window, "±4%" the 95% confidence interval of
// the median over repeats, "~" a difference to the base that is not
// significant, a trailing "p" a partial window, and n/a, nc, failed, "-"
// for values not supported, not counted, from a failed step, not recorded.
// Every table lists the markers it uses and the warnings of the Records
// behind it as notes.
package report

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// Table IDs, in report order. --tables takes a comma-separated list of them.
const (
	TableRQPS        = "rqps"         // relative QPS, seed-post layout
	TableQPS         = "qps"          // absolute QPS, same layout
	TableThreads     = "threads"      // QPS per thread count and ratio at the lowest
	TableAverage     = "average"      // QPS ratios with an average row
	TableCPUIO       = "cpuio"        // CPU and IO per op, absolute
	TableCPUIORel    = "cpuio-rel"    // CPU and IO per op relative to the base
	TableCounters    = "counters"     // counters per op, absolute
	TableCountersRel = "counters-rel" // counters per op relative to the base
	TableLegacy      = "legacy"       // counter ratio ÷ whole-step rQPS (--legacy-normalization)
	TableAttribution = "attribution"  // code / memory / wait
	TableCorrelation = "correlation"  // counters ranked by rank correlation with 1/rQPS
	TableRoles       = "roles"        // shares per thread role
	TableInsert      = "insert"       // insert benchmark: throughput per step
	TableInsertRel   = "insert-rel"   // insert benchmark: throughput relative to the base
	TableInsertLine  = "insert-line"  // insert benchmark: the per-step metrics line
	TableInsertHist  = "insert-hist"  // insert benchmark: response-time histogram
)

// TableIDs lists every table ID in report order.
var TableIDs = []string{
	TableRQPS, TableQPS, TableThreads, TableAverage, TableCPUIO, TableCPUIORel,
	TableCounters, TableCountersRel, TableLegacy, TableAttribution, TableCorrelation,
	TableRoles, TableInsert, TableInsertRel, TableInsertLine, TableInsertHist,
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
	Legacy   bool
	Analysis analysis.Options
}

// Report is the tables built from a set of Records.
type Report struct {
	Base     string   `json:"base"`
	Versions []string `json:"versions"`
	Tables   []*Table `json:"tables"`
	// Warnings concern the whole input: files skipped, steps left out.
	Warnings []string `json:"warnings,omitempty"`
}

// RowKind is what a row is.
type RowKind int

// Row kinds.
const (
	RowValues  RowKind = iota // a label and cells
	RowHeading                // a label only ("- host" in the per-thread layout)
	RowRule                   // "-----" under each column
	RowAverage                // averages of the columns
)

func (k RowKind) String() string {
	return [...]string{"values", "heading", "rule", "average"}[k]
}

// MarshalText makes row kinds readable in JSON.
func (k RowKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// pad modes of the text layout.
type padMode int

const (
	padNone  padMode = iota // values separated by one space, as published
	padAuto                 // columns padded to their widest cell
	padFixed                // columns 8 wide (the average layout)
)

// Table is one table of the report.
type Table struct {
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
	Sections    []Section `json:"sections"`
	Notes       []string  `json:"notes,omitempty"`

	pad              padMode
	padIfWide        bool // padNone unless a cell is wider than its header
	headerPerSection bool // repeat the header under each section name
	sectionNames     bool // print section names in text
	sectionGap       bool // blank line between sections in text
	keys             []record.Key
}

// Section is a group of rows: point / range / writes, a step, a thread count.
type Section struct {
	Name string `json:"name,omitempty"`
	Rows []Row  `json:"rows"`
}

// Row is one line of a table.
type Row struct {
	Label string  `json:"label"`
	Kind  RowKind `json:"kind"`
	Cells []Cell  `json:"cells,omitempty"`
}

// Cell is one printed number with what it is and how it was measured.
type Cell struct {
	analysis.Cell
	// Text is the cell as printed (value and markers).
	Text string
	// Class is the background of the cell in HTML: yellow, blue (relative
	// below 0.95 / above 1.05), red, green (absolute bottom / top quartile).
	Class string
	// Empty cells print nothing (the ratio column of the base row).
	Empty bool
	// What the number is.
	Version, Step, Metric string

	set    string // cells compared for the absolute colour rule
	better int    // +1 higher is better, -1 lower is better
	rel    bool   // a ratio to the base: the relative colour rule applies
	word   bool   // Text is a word (verdict), not a number
}

// Build computes the tables of the report.
func Build(recs []*record.Record, opt Options) (*Report, error) {
	want := map[string]bool{}
	for _, id := range opt.Tables {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if !knownTable(id) {
			return nil, fmt.Errorf("%w %q: choose from %s", ErrUnknownTable, id, strings.Join(TableIDs, ", "))
		}
		want[id] = true
	}
	c, err := analysis.New(recs, opt.Base, opt.Analysis)
	if err != nil {
		return nil, err
	}
	b := &builder{c: c, opt: opt}
	rep := &Report{Base: c.Base, Versions: c.Versions}
	for _, id := range TableIDs {
		if len(want) > 0 && !want[id] {
			continue
		}
		if id == TableLegacy && !opt.Legacy && !want[id] {
			continue
		}
		for _, t := range b.build(id) {
			t.dropEmptyRows()
			if id == TableCPUIO || id == TableCPUIORel {
				// Tables from CSV tables often have only some of these
				// columns; one with throughput alone repeats the QPS table.
				if t.dropEmptyColumns(); len(t.Header) < 2 {
					continue
				}
			}
			if t.hasValues() {
				rep.Tables = append(rep.Tables, t)
			}
		}
	}
	colour(rep.Tables)
	for _, t := range rep.Tables {
		b.finish(t)
	}
	if len(c.LeftOut) > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("warm-up steps left out of the tables: %s", strings.Join(c.LeftOut, ", ")))
	}
	rep.Warnings = append(rep.Warnings, opsSourceWarnings(c, recs)...)
	return rep, nil
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
// recorded": a table of nothing but dashes is not printed.
func (t *Table) hasValues() bool {
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
func (t *Table) dropEmptyRows() {
	var secs []Section
	for _, s := range t.Sections {
		var rows []Row
		for _, r := range s.Rows {
			if r.Kind == RowValues && len(r.Cells) > 0 {
				empty := true
				for _, c := range r.Cells {
					if c.word || (!c.Empty && c.State != analysis.Missing) {
						empty = false
						break
					}
				}
				if empty {
					continue
				}
			}
			rows = append(rows, r)
		}
		if len(rows) > 0 {
			s.Rows = rows
			secs = append(secs, s)
		}
	}
	t.Sections = secs
}

// dropEmptyColumns removes value columns whose every cell is "not
// recorded".
func (t *Table) dropEmptyColumns() {
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
			var cells []Cell
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
// step: their ratios would compare different things.
func opsSourceWarnings(c *analysis.Comparison, recs []*record.Record) []string {
	type key struct {
		sc   analysis.Scope
		step string
	}
	sources := map[key]map[string]bool{}
	var order []key
	for _, r := range recs {
		if r.Kind == record.KindTable || r.Outcome == record.OutcomeFailed {
			continue
		}
		k := key{analysis.Scope{Host: r.Host, Threads: r.Threads}, r.Step}
		if sources[k] == nil {
			sources[k] = map[string]bool{}
			order = append(order, k)
		}
		p := analysis.Compute(r, c.Opt)
		sources[k][fmt.Sprintf("%s per %g", p.OpsSource, p.OpsPer)] = true
	}
	var out []string
	for _, k := range order {
		if len(sources[k]) > 1 {
			var s []string
			for src := range sources[k] {
				s = append(s, src)
			}
			sort.Strings(s)
			out = append(out, fmt.Sprintf("%s: versions count operations differently (%s): ratios compare different units", k.step, strings.Join(s, "; ")))
		}
	}
	return out
}
