package report

import (
	"bytes"
	"encoding/json"
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

// member says what reading a Record does with one member of a JSON object.
type member struct {
	drop bool
	// keep, for an object, lists the only members kept; nil keeps all.
	keep []string
	// sub prunes the members of an object.
	sub map[string]member
}

// pruning returns what loading leaves out for f: always the client's
// per-interval lines and histogram and the status variables other than
// the rows read (analysis reads no others); the roles and the series
// unless f asks for them.
func (f fields) pruning() map[string]member {
	p := map[string]member{
		"status": {keep: []string{"Rows_read", "Innodb_rows_read"}},
		"client": {sub: map[string]member{"intervals": {drop: true}, "histogram": {drop: true}}},
	}
	if !f.Roles {
		p["roles"] = member{drop: true}
	}
	if !f.Series {
		p["series"] = member{drop: true}
	}
	return p
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
	prune := f.pruning()
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf, lean []byte
			for i := range work {
				recs[i], buf, lean, errs[i] = readLean(files[i], prune, buf, lean)
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

// readLean reads the Record in file path without the members prune
// leaves out, reusing buf for the file's bytes and lean for what is kept,
// and returns them for the next file. The kept JSON is decoded by
// record.Parse, so a Record reads as perfbench always read it; JSON the
// pruning cannot follow is given to record.Parse whole, for its error.
func readLean(path string, prune map[string]member, buf, lean []byte) (*record.Record, []byte, []byte, error) {
	buf, err := readInto(path, buf[:0])
	if err != nil {
		return nil, buf, lean, err
	}
	data := buf
	if l, ok := pruneObject(lean[:0], buf, prune); ok {
		data, lean = l, l
	}
	r, err := record.Parse(data)
	if err == nil && r.Window.Start.IsZero() {
		// Records without a window start are told apart by their whole
		// content (sameContent): read this one whole.
		r, err = record.Parse(buf)
	}
	if err != nil {
		return nil, buf, lean, fmt.Errorf("%s: %w", path, err)
	}
	return r, buf, lean, nil
}

// readInto reads the file at path into buf.
func readInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && int64(cap(buf)) < fi.Size()+1 {
		buf = make([]byte, 0, fi.Size()+512)
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

// pruneObject appends to dst the JSON object that src holds (after
// leading white space) without the members spec drops, matching names as
// encoding/json does (ignoring case) unless a keep list names them
// (map keys: exact). It reports false when src is not an object it can
// follow.
func pruneObject(dst, src []byte, spec map[string]member) ([]byte, bool) {
	out, end, ok := pruneAt(dst, src, skipSpace(src, 0), spec, nil)
	return out, ok && skipSpace(src, end) == len(src)
}

func pruneAt(dst, src []byte, i int, spec map[string]member, keep []string) ([]byte, int, bool) {
	if i >= len(src) || src[i] != '{' {
		return dst, i, false
	}
	dst = append(dst, '{')
	i = skipSpace(src, i+1)
	first := true
	if i < len(src) && src[i] == '}' {
		return append(dst, '}'), i + 1, true
	}
	for {
		if i >= len(src) || src[i] != '"' {
			return dst, i, false
		}
		keyEnd, ok := skipString(src, i)
		if !ok {
			return dst, i, false
		}
		key := src[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal(src[i:keyEnd], &k) != nil {
				return dst, i, false
			}
			key = []byte(k)
		}
		v := skipSpace(src, keyEnd)
		if v >= len(src) || src[v] != ':' {
			return dst, i, false
		}
		v = skipSpace(src, v+1)
		end, ok := skipValue(src, v)
		if !ok {
			return dst, i, false
		}
		m, known := lookup(spec, key)
		if keep != nil {
			known, m = true, member{drop: !keeps(keep, key)}
		}
		if !m.drop {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, src[i:keyEnd]...)
			dst = append(dst, ':')
			if known && (m.keep != nil || m.sub != nil) && src[v] == '{' {
				var e int
				dst, e, ok = pruneAt(dst, src, v, m.sub, m.keep)
				if !ok || e != end {
					return dst, i, false
				}
			} else {
				dst = append(dst, src[v:end]...)
			}
		}
		i = skipSpace(src, end)
		if i >= len(src) {
			return dst, i, false
		}
		switch src[i] {
		case ',':
			i = skipSpace(src, i+1)
		case '}':
			return append(dst, '}'), i + 1, true
		default:
			return dst, i, false
		}
	}
}

// lookup finds the rule for an object member by its name, ignoring case
// as encoding/json does for struct fields.
func lookup(spec map[string]member, key []byte) (member, bool) {
	for name, m := range spec {
		if len(name) == len(key) && strings.EqualFold(name, string(key)) {
			return m, true
		}
	}
	return member{}, false
}

func keeps(list []string, key []byte) bool {
	for _, s := range list {
		if s == string(key) {
			return true
		}
	}
	return false
}

func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\n' || src[i] == '\t' || src[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at src[i].
// A backslash escapes the byte after it (\uXXXX goes on with plain hex
// digits); strings in Records are short, so a loop beats a search.
func skipString(src []byte, i int) (int, bool) {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '"':
			return j + 1, true
		case '\\':
			j++
		}
	}
	return len(src), false
}

// container marks the bytes skipValue looks at inside an object or array.
var container = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// skipValue returns the index after the JSON value that starts at src[i].
// Brackets are counted, not matched: what is kept is checked again by the
// decoder.
func skipValue(src []byte, i int) (int, bool) {
	if i >= len(src) {
		return i, false
	}
	switch src[i] {
	case '"':
		return skipString(src, i)
	case '{', '[':
		depth := 0
		for i < len(src) {
			for i < len(src) && !container[src[i]] {
				i++
			}
			if i == len(src) {
				break
			}
			switch src[i] {
			case '"':
				e, ok := skipString(src, i)
				if !ok {
					return e, false
				}
				i = e
				continue
			case '{', '[':
				depth++
			default:
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	for i < len(src) {
		switch src[i] {
		case ',', '}', ']', ' ', '\n', '\t', '\r':
			return i, true
		}
		i++
	}
	return i, true
}
