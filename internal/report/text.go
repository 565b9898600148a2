package report

import (
	"bufio"
	"bytes"
	"io"
	"runtime"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/perfbench/perfbench/record"
)

// writeText writes the report as plain text, each table in the layout of the
// published posts: a title, the "Relative to: <base>" and "col-N : <version>"
// lines, a header, then rows of values followed by the row label; notes
// after the table. The report's own notes (tables left out) come first.
func writeText(w io.Writer, rep *report) error { return render(w, rep, textRenderer()) }

// renderer writes a report in one format: begin before the first table,
// table for each (i counts them from 0), end after the last. Write renders
// several tables at once (each into a buffer of its own, see tableQueue),
// so table must keep no state from one table to the next, and read of
// the report only whether it is bare.
type renderer struct {
	begin func(w *bufio.Writer, rep *report) error
	table func(w *bufio.Writer, rep *report, t *table, i int) error
	end   func(w *bufio.Writer, rep *report) error
}

// render writes a built report.
func render(w io.Writer, rep *report, r renderer) error {
	if rep.count < len(rep.Tables) {
		rep.count = len(rep.Tables)
	}
	q := newTableQueue(r, rep.bare)
	q.release = false // the report keeps its tables
	for _, t := range rep.Tables {
		q.add(t)
	}
	return q.write(w, rep)
}

// tableQueue renders the tables of a report as they are handed over, in
// report order: each is completed (when complete is not nil) and
// rendered on every CPU into a buffer of its own, and let go of; write
// writes the report with them in order.
type tableQueue struct {
	r    renderer
	bare bool
	// complete finishes a table before it is rendered: its colours and
	// notes (set by prepare; nil for tables already complete).
	complete func(*table)
	// colours is set when r prints the colours of the cells (HTML,
	// JSON): then no table is completed before every table is built
	// (see prepare).
	colours bool
	// release is set when the tables are the queue's alone, as Write's
	// are (not render's, which the report keeps): their cells are
	// recycled once rendered (releaseCells).
	release bool
	work    chan queued
	done    []chan rendered
}

type queued struct {
	t    *table
	i    int
	done chan<- rendered
}

type rendered struct {
	text   []byte
	titled titledNotes
	err    error
}

func newTableQueue(r renderer, bare bool) *tableQueue {
	q := &tableQueue{r: r, bare: bare, work: make(chan queued, 64), release: true}
	for range runtime.GOMAXPROCS(0) {
		go func() {
			// Renderers read only whether the report is bare.
			shell := &report{bare: bare}
			var buf bytes.Buffer
			tw := bufio.NewWriter(&buf)
			for j := range q.work {
				j.done <- q.render(shell, j.t, j.i, &buf, tw)
			}
		}()
	}
	return q
}

// add queues the next table of the report.
func (q *tableQueue) add(t *table) {
	done := make(chan rendered, 1)
	q.work <- queued{t, len(q.done), done}
	q.done = append(q.done, done)
}

// render completes and renders the table t, the i-th of the report,
// through tw into buf (both kept from one table to the next).
func (q *tableQueue) render(rep *report, t *table, i int, buf *bytes.Buffer, tw *bufio.Writer) rendered {
	if q.complete != nil {
		q.complete(t)
	}
	buf.Reset()
	tw.Reset(buf)
	err := q.r.table(tw, rep, t, i)
	if err == nil {
		err = tw.Flush()
	}
	if q.release {
		releaseCells(t)
	}
	return rendered{bytes.Clone(buf.Bytes()), titledNotes{t.Title, t.Notes}, err}
}

// cellPools recycle the cells of the rows of the tables Write has
// rendered into the rows of the tables built after (newCells), by
// capacity: a report makes hundreds of thousands of cells, a few
// thousand tables' worth at a time.
var cellPools [maxPooledCells + 1]sync.Pool

// maxPooledCells is the most cells of a row that is recycled: rows have
// a cell per version, per metric or per event.
const maxPooledCells = 16

// newCells returns an empty row of cells with room for n.
func newCells(n int) []tableCell {
	if n > 0 && n <= maxPooledCells {
		if p, ok := cellPools[n].Get().(*[]tableCell); ok {
			return (*p)[:0]
		}
	}
	return make([]tableCell, 0, n)
}

// keyPool recycles the keys of the tables Write has rendered, as
// cellPools their cells.
var keyPool sync.Pool

// newKeys returns an empty list of keys with room for n, recycled when
// one is at hand.
func newKeys(n int) []record.Key {
	if p, ok := keyPool.Get().(*[]record.Key); ok {
		return slices.Grow((*p)[:0], n)
	}
	return make([]record.Key, 0, n)
}

// releaseCells hands the cells of t's rows to newCells, and its keys to
// newKeys: t must not be read after.
func releaseCells(t *table) {
	if cap(t.keys) > 0 {
		keys := t.keys[:cap(t.keys)]
		clear(keys)
		keys = keys[:0]
		keyPool.Put(&keys)
		t.keys = nil
	}
	for si := range t.Sections {
		rows := t.Sections[si].Rows
		for ri := range rows {
			cells := rows[ri].Cells
			rows[ri].Cells = nil
			if n := cap(cells); n > 0 && n <= maxPooledCells {
				cells = cells[:n]
				clear(cells) // (no strings held by the pool)
				cellPools[n].Put(&cells)
			}
		}
	}
}

// close stops the queue's goroutines once they rendered what was added.
func (q *tableQueue) close() { close(q.work) }

// write closes the queue and writes the report with r, the tables in
// the order they were added as each is rendered; a bare report keeps
// their notes for writeNotes.
func (q *tableQueue) write(w io.Writer, rep *report) error {
	q.close()
	bw := bufio.NewWriter(w)
	err := q.r.begin(bw, rep)
	for _, done := range q.done {
		// Every table is waited for, so that no table is rendered
		// after write returns; the first error is returned.
		t := <-done
		if err != nil {
			continue
		}
		if err = t.err; err != nil {
			continue
		}
		if rep.bare {
			rep.tableNotes = append(rep.tableNotes, t.titled)
		}
		bw.Write(t.text)
	}
	if err != nil {
		return err
	}
	if err := q.r.end(bw, rep); err != nil {
		return err
	}
	return bw.Flush()
}

func textRenderer() renderer {
	return renderer{
		begin: func(bw *bufio.Writer, rep *report) error {
			if len(rep.Notes) > 0 && !rep.bare {
				bw.WriteString("Notes:\n")
				for _, n := range rep.Notes {
					bw.WriteString("- " + n + "\n")
				}
				if rep.count > 0 {
					bw.WriteString("\n")
				}
			}
			return nil
		},
		table: func(bw *bufio.Writer, rep *report, t *table, i int) error {
			if i > 0 {
				bw.WriteString("\n")
			}
			writeTextTable(bw, t, rep.bare)
			return nil
		},
		end: func(bw *bufio.Writer, rep *report) error {
			if len(rep.Warnings) > 0 && !rep.bare {
				if rep.count > 0 {
					bw.WriteString("\n")
				}
				bw.WriteString("Warnings:\n")
				for _, w := range rep.Warnings {
					bw.WriteString("- " + w + "\n")
				}
			}
			return nil
		},
	}
}

func width(s string) int { return utf8.RuneCountInString(s) }

// textColumns returns the width of each value column and of the label
// column for the padded layouts.
func textColumns(t *table) (cols []int, label int) {
	cols = make([]int, len(t.Header))
	for i, h := range t.Header {
		cols[i] = width(h)
	}
	label = width(t.LabelHeader)
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			if r.Kind == rowHeading {
				continue
			}
			label = max(label, width(r.Label))
			for i, c := range r.Cells {
				if i < len(cols) {
					cols[i] = max(cols[i], width(c.Text))
				}
			}
		}
	}
	return cols, label
}

// textLine lays out value fields and the label: the first len(fields) −
// trailing values, the label, then the trailing values.
func textLine(t *table, fields []string, skip []bool, label string, cols []int, labelW int) string {
	return string(appendTextLine(nil, t, fields, skip, label, cols, labelW))
}

// appendTextLine appends textLine's line to dst (without a newline).
func appendTextLine(dst []byte, t *table, fields []string, skip []bool, label string, cols []int, labelW int) []byte {
	start := len(dst)
	n := len(fields) - t.Trailing
	first := true
	// Each part is padded to its width, the last as well: the spaces
	// that end the line are cut.
	put := func(p string, w int) {
		if !first && t.pad != padFixed {
			dst = append(dst, ' ')
		}
		first = false
		dst = append(dst, p...)
		pad := 0
		switch t.pad {
		case padNone:
		case padFixed:
			pad = max(1, 8-width(p))
		default:
			pad = w - width(p)
		}
		for ; pad > 0; pad-- {
			dst = append(dst, ' ')
		}
	}
	for i := 0; i < n; i++ {
		if t.pad == padNone && skip[i] {
			continue
		}
		put(fields[i], colWidth(t, cols, i))
	}
	if label != "" || (t.Trailing > 0 && t.pad != padNone) {
		put(label, labelW)
	}
	for i := n; i < len(fields); i++ {
		if t.pad == padNone && skip[i] {
			continue
		}
		put(fields[i], colWidth(t, cols, i))
	}
	for len(dst) > start && dst[len(dst)-1] == ' ' {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// unaligned reports whether the published layout, values separated by one
// space, would put values away from their headings: when a cell is wider
// than its column's header, or the headers differ in width (col-9 and
// col-10, labels of different lengths), each column drifts further left of
// its heading.
func unaligned(t *table) bool {
	for _, h := range t.Header {
		if width(h) != width(t.Header[0]) {
			return true
		}
	}
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			for i, c := range r.Cells {
				if i < len(t.Header) && width(c.Text) > width(t.Header[i]) {
					return true
				}
			}
		}
	}
	return false
}

func colWidth(t *table, cols []int, i int) int {
	if i < len(cols) {
		return cols[i]
	}
	return 0
}

// writeTextTable writes one table; bare leaves out its title and notes.
func writeTextTable(w *bufio.Writer, t *table, bare bool) {
	if t.pad == padNone && t.padIfWide && unaligned(t) {
		tt := *t
		tt.pad = padAuto
		t = &tt
	}
	if !bare {
		w.WriteString(t.Title + "\n\n")
	}
	for _, p := range t.Preamble {
		w.WriteString(p + "\n")
	}
	if len(t.Preamble) > 0 {
		w.WriteString("\n")
	}
	cols, labelW := textColumns(t)
	noSkip := make([]bool, len(t.Header))
	header := textLine(t, t.Header, noSkip, t.LabelHeader, cols, labelW)
	if !t.headerPerSection {
		w.WriteString(header + "\n")
	}
	// A row's fields and line, kept from one row to the next.
	var fields []string
	var skip []bool
	var line []byte
	for si, s := range t.Sections {
		if t.sectionGap && si > 0 {
			w.WriteString("\n")
		}
		if t.sectionNames && s.Name != "" {
			w.WriteString(s.Name + "\n")
		}
		if t.headerPerSection {
			w.WriteString(header + "\n")
		}
		for _, r := range s.Rows {
			switch r.Kind {
			case rowHeading:
				w.WriteString(r.Label + "\n")
			case rowRule:
				fields = fields[:0]
				for range t.Header {
					fields = append(fields, "-----")
				}
				line = append(appendTextLine(line[:0], t, fields, noSkip, "", cols, labelW), '\n')
				w.Write(line)
			default:
				fields, skip = fields[:0], skip[:0]
				for _, c := range r.Cells {
					fields, skip = append(fields, c.Text), append(skip, c.Empty)
				}
				line = append(appendTextLine(line[:0], t, fields, skip, r.Label, cols, labelW), '\n')
				w.Write(line)
			}
		}
	}
	if len(t.Notes) > 0 && !bare {
		w.WriteString("\nNotes:\n")
		for _, n := range t.Notes {
			w.WriteString("- " + n + "\n")
		}
	}
}

// writeNotes writes, as text, what a bare report leaves out: the report's
// notes, each table's notes under its title, and the warnings.
func writeNotes(w io.Writer, rep *report) error {
	bw := bufio.NewWriter(w)
	sep := func() {
		if bw.Buffered() > 0 {
			bw.WriteString("\n")
		}
	}
	if len(rep.Notes) > 0 {
		bw.WriteString("Notes:\n")
		for _, n := range rep.Notes {
			bw.WriteString("- " + n + "\n")
		}
	}
	tables := rep.tableNotes
	if tables == nil {
		for _, t := range rep.Tables {
			tables = append(tables, titledNotes{t.Title, t.Notes})
		}
	}
	for _, t := range tables {
		if len(t.notes) == 0 {
			continue
		}
		sep()
		bw.WriteString(t.title + ":\n")
		for _, n := range t.notes {
			bw.WriteString("- " + n + "\n")
		}
	}
	if len(rep.Warnings) > 0 {
		sep()
		bw.WriteString("Warnings:\n")
		for _, n := range rep.Warnings {
			bw.WriteString("- " + n + "\n")
		}
	}
	return bw.Flush()
}
