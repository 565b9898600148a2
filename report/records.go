package report

import (
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

// allFields reads Records whole but for the status variables no report
// reads.
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
// leaving out the client's per-interval lines and histogram and the
// status variables other than the rows read (analysis reads no others);
// the roles and the series unless f asks for them.
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
			d := record.NewSelective(f.selection())
			var buf []byte
			for i := range work {
				recs[i], buf, errs[i] = readSelected(files[i], d, buf)
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

// readSelected reads the Record in file path as d selects, reusing buf
// for the file's bytes and returning it for the next file.
func readSelected(path string, d *record.Selective, buf []byte) (*record.Record, []byte, error) {
	buf, err := readInto(path, buf[:0])
	if err != nil {
		return nil, buf, err
	}
	r, err := d.Parse(buf)
	if err == nil && r.Window.Start.IsZero() {
		// Records without a window start are told apart by their whole
		// content (sameContent): read this one whole.
		r, err = record.Parse(buf)
	}
	if err != nil {
		return nil, buf, fmt.Errorf("%s: %w", path, err)
	}
	return r, buf, nil
}

// readInto reads the file at path into buf, growing it as needed: a
// buffer kept from file to file spares most files a stat and a
// growing read.
func readInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	if cap(buf) < 64<<10 {
		buf = make([]byte, 0, 64<<10)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
