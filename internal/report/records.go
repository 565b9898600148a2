package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/perfbench/perfbench/record"
)

// fields says which of the bulky parts of a Record a report reads. The
// thread roles and the per-second series are most of a Record's bytes
// (with the server's status deltas, of which reports read only the rows
// read) and most tables need none of them: Records are read without them
// unless asked for.
type fields struct {
	Roles  bool // the roles table
	Series bool // the per-second charts
}

// allFields reads Records whole but for what no report reads (see
// selection).
var allFields = fields{Roles: true, Series: true}

// FieldsFor returns the Fields the tables of opt need, and the series when
// charts are drawn.
func FieldsFor(opt Options, charts bool) fields {
	f := fields{Series: charts}
	if len(opt.Tables) == 0 {
		f.Roles = true
	}
	for _, id := range opt.Tables {
		f.Roles = f.Roles || strings.TrimSpace(id) == tableRoles
	}
	return f
}

// selection returns what loading reads of each Record for f: always
// leaving out the client's per-interval lines and histogram, the status
// variables other than the rows read (analysis reads no others) and the
// members no table reads (record.Select.Extras: the gauges, the server,
// the client's command, the provenance but for its CPU count: a table
// that comes to read one must set Extras here); the roles and the series
// unless f asks for them.
func (f fields) selection() record.Select {
	return record.Select{Roles: f.Roles, Series: f.Series, Status: []string{"Rows_read", "Innodb_rows_read"}}
}

// loadRecords reads the Records of one input, a file or a folder, as
// record.Load does (a folder is walked for *.json files, hidden ones left
// out, in lexical order; a file in a folder that is not a Record is a
// problem, any other error fails the load), several files at a time, each
// without the parts f leaves out. Each reader holds one file's bytes at a
// time.
func loadRecords(p string, f fields) ([]record.Loaded, []error, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, nil, err
	}
	files := []string{p}
	if fi.IsDir() {
		if files, err = record.Files(p); err != nil {
			return nil, nil, err
		}
	}
	recs := make([]*record.Record, len(files))
	errs := make([]error, len(files))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := reader{sel: record.NewSelective(f.selection()), first: 16 << 10}
			for i := range work {
				recs[i], errs[i] = rd.read(files[i])
			}
		}()
	}
	for i := range files {
		work <- i
	}
	close(work)
	wg.Wait()
	var out []record.Loaded
	var problems []error
	for i, err := range errs {
		switch {
		case err == nil:
			out = append(out, record.Loaded{Path: files[i], Record: recs[i]})
		case fi.IsDir() && errors.Is(err, record.ErrNotRecord):
			problems = append(problems, err)
		default:
			return nil, problems, err
		}
	}
	return out, problems, nil
}

// reader reads Records one file after another, as its Selective
// selects, reusing its buffer for the files' bytes: one per goroutine.
type reader struct {
	sel *record.Selective
	buf []byte
	// first is how many bytes of a file are read before trying whether
	// they hold all that is read of the Record (record.Selective.ParseStart): a
	// little more than the last one needed.
	first int
}

// read reads the Record in the file at path. Records as perfbench writes
// them end with the parts most reports leave out: the rest of the file is
// read only when the first bytes do not hold all that is read.
func (rd *reader) read(path string) (*record.Record, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if cap(rd.buf) < 64<<10 {
		rd.buf = make([]byte, 0, 64<<10)
	}
	buf, eof, err := readFull(f, rd.buf[:0], rd.first)
	rd.buf = buf
	if err != nil {
		return nil, err
	}
	if !eof {
		if r, used, ok := rd.sel.ParseStart(buf); ok && !r.Window.Start.IsZero() {
			rd.first = max(4<<10, (used+used/4+4<<10-1)&^(4<<10-1))
			if err := endsWhole(f); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return r, nil
		}
		// The size was checked when the file was opened: one that
		// grows past the bound while read is refused too.
		buf, eof, err = readFull(f, buf, record.MaxFileBytes+1-len(buf))
		rd.buf = buf
		if err != nil {
			return nil, err
		}
		if !eof {
			return nil, record.CheckInput(path, 0, int64(len(buf))+1, record.MaxFileBytes, "Records")
		}
		rd.first = min(2*rd.first, 1<<20)
	}
	r, err := rd.sel.Parse(buf)
	if err == nil && r.Window.Start.IsZero() {
		// Records without a window start are told apart by their whole
		// content (sameContent): read this one whole.
		r, err = record.Parse(buf)
	}
	if err == nil {
		// Parse stops where what is read ends: the end is checked here
		// (a file that is no Record at all keeps Parse's error).
		err = endsAsObject(buf)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// endsWhole checks that the file f, of which only the first bytes were
// decoded, ends as a JSON object does: a Record cut short (a disk that
// filled, a copy that stopped) is an error as it is when read whole, not
// a Record without its tail.
func endsWhole(f interface {
	Read([]byte) (int, error)
	Seek(int64, int) (int64, error)
}) error {
	var tail [64]byte
	if _, err := f.Seek(-int64(len(tail)), io.SeekEnd); err != nil {
		return fmt.Errorf("read the end of the Record: %w", err)
	}
	b, _, err := readFull(f, tail[:0], len(tail))
	if err != nil {
		return fmt.Errorf("read the end of the Record: %w", err)
	}
	return endsAsObject(b)
}

// endsAsObject checks that b, the end of a Record's file, ends as a JSON
// object does. Decoding stops where what a report reads ends, so a file
// cut short after that is caught here or not at all; one cut right after
// a closing brace is not caught, but then what was read of it is whole.
func endsAsObject(b []byte) error {
	b = bytes.TrimRight(b, " \t\r\n")
	if len(b) == 0 || b[len(b)-1] != '}' {
		return errors.New("the Record is cut short: its JSON does not end where the file does (the file was truncated?); write it again or remove it")
	}
	return nil
}

// readFull appends to buf what is left of the file f, or up to n bytes
// of it when n >= 0, growing buf as needed, and reports whether it read
// to the end.
func readFull(f interface{ Read([]byte) (int, error) }, buf []byte, n int) ([]byte, bool, error) {
	limit := len(buf) + n
	for n < 0 || len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		to := cap(buf)
		if n >= 0 {
			to = min(to, limit)
		}
		m, err := f.Read(buf[len(buf):to])
		buf = buf[:len(buf)+m]
		if err == io.EOF || (err == nil && m == 0) {
			return buf, true, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
	return buf, false, nil
}
