package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/perfbench/perfbench/record"
)

// errUnknownFormat is returned by Write for a format it does not know.
var errUnknownFormat = errors.New("unknown format")

// Formats lists the output formats of Write.
var Formats = []string{"text", "markdown", "html", "csv", "json", "benchfmt"}

// Input is what loadInput read.
type Input struct {
	Records []*record.Record
	// Warnings are problems that do not stop the report (JSON files in a
	// folder that are not Records) and the note that inputs repeated one
	// another.
	Warnings []string
	// Groups maps steps to the group a CSV table gave them (Options.Groups).
	Groups map[string]string
}

// Load reads the inputs of a report (see loadInput) and returns the
// Records and warnings.
func Load(paths []string) (recs []*record.Record, warnings []string, err error) {
	in, err := loadInput(paths)
	if err != nil {
		return nil, nil, err
	}
	return in.Records, in.Warnings, nil
}

// loadInput reads the inputs of a report: Record files, folders of Records
// and long-format CSV files (named *.csv). The order of the inputs is the
// order of versions in the tables: files in the order given; inside a
// folder, Records by the start of their window (the order they were
// measured in), then by file name.
//
// The same observation given twice counts once: a Record with the
// identity (host, version, step, threads, repeat, window start) of one
// already read (and, when neither knows its window start, the same
// content) is left out, and so is a CSV row that repeats one of an earlier
// CSV file; one warning says how many were and where. Records without a
// window start that share an identity but not their numbers are kept, and
// a warning names them. Two Records that claim one repeat (host, version,
// step, threads, repeat) with other windows are refused, naming both
// files, as a CSV table's two values of one repeat are: a re-run kept
// beside the run it repeats would count as a further repeat.
func loadInput(paths []string) (*Input, error) { return LoadInputWith(paths, allFields) }

// LoadInputWith is loadInput reading of each Record only the parts f
// names besides those every table needs.
func LoadInputWith(paths []string, f fields) (*Input, error) {
	in := &Input{}
	tables := newCSVTables()
	seen := map[recordIdentity][]loadedFrom{} // by repeatOf
	dups, dupFirst, dupAgain := 0, []string{}, []string{}
	var clash []string
	addUnique := func(list *[]string, s string) {
		if !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, p := range paths {
		if strings.HasSuffix(strings.ToLower(p), ".csv") {
			f, _, err := record.OpenInput(p, maxCSVBytes, "CSV tables")
			if err != nil {
				return nil, fmt.Errorf("read table %s: %w", p, err)
			}
			before := len(tables.order)
			err = tables.read(&lineBound{r: record.LimitInput(f, p, maxCSVBytes, "CSV tables"), path: p}, p)
			f.Close()
			if err != nil {
				return nil, err
			}
			for _, r := range tables.order[before:] {
				if err := checkNames(p, r); err != nil {
					return nil, err
				}
			}
			in.Records = append(in.Records, tables.order[before:]...)
			continue
		}
		loaded, problems, err := loadRecords(p, f)
		if err != nil {
			return nil, fmt.Errorf("read records from %s: %w", p, err)
		}
		for _, pr := range problems {
			in.Warnings = append(in.Warnings, "skipped: "+pr.Error())
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			sort.SliceStable(loaded, func(i, j int) bool {
				return loaded[i].Record.Window.Start.Before(loaded[j].Record.Window.Start)
			})
			if len(loaded) == 0 {
				in.Warnings = append(in.Warnings, fmt.Sprintf("%s has no Records", p))
			}
		}
	next:
		for _, l := range loaded {
			if err := checkNames(l.Path, l.Record); err != nil {
				return nil, err
			}
			id := identityOf(l.Record)
			for _, prev := range seen[id.repeatOf()] {
				if prev.id != id {
					// Other windows: a re-run beside the first run.
					return nil, reusedRepeat(prev, l, id)
				}
				if id.start != 0 || sameContent(prev.rec, l.Record) {
					dups++
					addUnique(&dupFirst, prev.input)
					addUnique(&dupAgain, p)
					continue next
				}
			}
			if len(seen[id.repeatOf()]) > 0 {
				// Neither knows its window: two measurements that
				// claim one repeat number.
				clash = append(clash, l.Path)
			}
			seen[id.repeatOf()] = append(seen[id.repeatOf()], loadedFrom{p, l.Path, id, l.Record})
			in.Records = append(in.Records, l.Record)
		}
	}
	if dups > 0 {
		in.Warnings = append(in.Warnings, fmt.Sprintf("%s in %s repeat those read from %s (same host, version, step, threads, "+
			"repeat and window start): each observation counts once",
			plural(dups, "Record"), listFiles(dupAgain), listFiles(dupFirst)))
	}
	if len(clash) > 0 {
		in.Warnings = append(in.Warnings, fmt.Sprintf("counted as further repeats: %s, which lack a window start and share "+
			"the host, version, step, threads and repeat of another Record but not its numbers",
			listFiles(clash)))
	}
	if tables.Duplicates > 0 {
		in.Warnings = append(in.Warnings, fmt.Sprintf("%s of %s repeat rows of earlier CSV files (same Record, metric and value): counted once",
			plural(tables.Duplicates, "row"), strings.Join(tables.dupFiles, ", ")))
	}
	if len(tables.groups) > 0 {
		in.Groups = tables.groups
	}
	return in, nil
}

// The bounds of a CSV table: a file of at most maxCSVBytes (a 100 MB
// table reports in under 600 MB), lines of at most maxCSVLine bytes (a
// row names a version, a step, threads, a metric and a value).
const (
	maxCSVBytes = 512 << 20
	maxCSVLine  = 64 << 10
)

// lineBound reads r, failing at a line of more than maxCSVLine bytes: the
// CSV reader holds a whole line, and a file of zeros is one line.
type lineBound struct {
	r    io.Reader
	path string
	line int // bytes of the current line so far
}

func (l *lineBound) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	for rest := b[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.line += len(rest)
			break
		}
		if l.line+i > maxCSVLine {
			l.line += i
			break
		}
		l.line, rest = 0, rest[i+1:]
	}
	if l.line > maxCSVLine {
		return 0, fmt.Errorf("%s has a line of more than %d bytes, the bound for a line of a CSV table: is it one?", l.path, maxCSVLine)
	}
	return n, err
}

// maxLabel is the longest host, version or step name a report takes: the
// tables print it in every row.
const maxLabel = 1024

// checkNames refuses a Record from path whose host, version or step
// name is longer than maxLabel bytes.
func checkNames(path string, r *record.Record) error {
	for _, l := range []struct{ what, s string }{{"version", r.Version}, {"step", r.Step}, {"host", r.Host}} {
		if len(l.s) > maxLabel {
			return fmt.Errorf("%s: its %s name is %d bytes, over the bound of %d bytes for a name the tables print: shorten it", path, l.what, len(l.s), maxLabel)
		}
	}
	return nil
}

// listFiles names up to three inputs, then how many more.
func listFiles(files []string) string {
	if len(files) <= 3 {
		return strings.Join(files, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(files[:3], ", "), len(files)-3)
}

// recordIdentity is what makes two Records the same observation.
type recordIdentity struct {
	record.Key
	repeat int
	start  int64 // window start, Unix ns; 0 when unknown
}

// repeatOf is the identity without the window start: the repeat an
// observation claims.
func (id recordIdentity) repeatOf() recordIdentity {
	id.start = 0
	return id
}

// loadedFrom is a Record, the input (file or folder) and the file it was
// read from, and its identity.
type loadedFrom struct {
	input, path string
	id          recordIdentity
	rec         *record.Record
}

// reusedRepeat is the error for two Records that claim one repeat with
// other windows: a re-run kept beside the run it repeats, or Records of
// two machines that go by one host name, which would count as further
// repeats, as a CSV table's two values of one repeat are refused.
func reusedRepeat(prev loadedFrom, l record.Loaded, id recordIdentity) error {
	window := func(r *record.Record) string {
		if r.Window.Start.IsZero() {
			return "no window start"
		}
		return "window from " + r.Window.Start.UTC().Format("2006-01-02 15:04:05.000")
	}
	return fmt.Errorf("%s (%s) and %s (%s) are both repeat %d of %s, measured in other windows: a re-run kept beside the run it repeats, or Records of two machines with one host name? Keep one of them in the inputs, report each machine's Records on their own, or give the re-run its own repeat number",
		prev.path, window(prev.rec), l.Path, window(l.Record), id.repeat, describeRepeat(id.Key))
}

// describeRepeat names a version, step, threads and host in an error.
func describeRepeat(k record.Key) string {
	s := fmt.Sprintf("%s %s (threads %d", k.Version, k.Step, k.Threads)
	if k.Host != "" {
		s += ", host " + k.Host
	}
	return s + ")"
}

func identityOf(r *record.Record) recordIdentity {
	id := recordIdentity{Key: r.Key(), repeat: r.Repeat}
	if !r.Window.Start.IsZero() {
		id.start = r.Window.Start.UnixNano()
	}
	return id
}

// sameContent reports whether two Records hold the same measurement: the
// same JSON apart from the files they say they came from.
func sameContent(a, b *record.Record) bool {
	ca, cb := *a, *b
	ca.Source, cb.Source = nil, nil
	ja, err1 := record.Marshal(&ca)
	jb, err2 := record.Marshal(&cb)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// Write builds the report of recs and writes it in format (one of Formats).
// warnings are added to the report's own. The tables are built once, on
// every CPU, and each is let go of once rendered (see prepare).
func Write(w io.Writer, format string, recs []*record.Record, warnings []string, opt Options) error {
	if format == "benchfmt" {
		return writeBenchfmt(w, recs, opt)
	}
	mk := map[string]func() renderer{
		"text": textRenderer, "markdown": markdownRenderer, "md": markdownRenderer, "html": htmlRenderer, "csv": csvRenderer, "json": jsonRenderer,
	}[format]
	if mk == nil {
		return fmt.Errorf("%w %q: choose from %s", errUnknownFormat, format, strings.Join(Formats, ", "))
	}
	q := newTableQueue(mk(), opt.Bare && format != "csv" && format != "json")
	q.colours = format == "html" || format == "json"
	_, rep, err := prepare(recs, opt, q)
	if err != nil {
		q.close()
		return err
	}
	rep.Warnings = append(warnings, rep.Warnings...)
	if err := q.write(w, rep); err != nil {
		return err
	}
	if rep.bare && opt.Notes != nil {
		return writeNotes(opt.Notes, rep)
	}
	return nil
}
