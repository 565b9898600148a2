package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	gojson "github.com/goccy/go-json"
)

// ErrNotRecord is returned for JSON that is not a perfbench Record.
var ErrNotRecord = errors.New("not a perfbench record (no schema field)")

// Marshal encodes r as indented JSON with a trailing newline. Map keys are
// sorted by encoding/json, so the output is deterministic.
func Marshal(r *Record) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode record %s/%s: %w", r.Version, r.Step, err)
	}
	return append(b, '\n'), nil
}

// Parse decodes one Record and checks it. A schema-1 Record is converted
// to schema 2 (docs/record.md says how); a Record of a later schema than
// SchemaVersion is refused.
//
// Labels (host, version, step, group, the A/A base and a comparison's
// versions) are read without white space at either end, as a CSV table's
// cells are. A member that is no member of a Record, or one given twice,
// is named in a warning (see memberWarnings).
func Parse(data []byte) (*Record, error) { return parse(data, data) }

// parse is Parse of data, its member names those of whole: the Record's
// JSON before a Selective left members out of it.
func parse(data, whole []byte) (*Record, error) {
	// One pass over the bytes: the warnings, the one member whose form
	// depends on the schema (sentences in schema 1), are kept raw and
	// decoded once the schema is known.
	var w wireRecord
	if err := decode(data, &w); err != nil {
		// A later schema may change what a member holds: say so rather
		// than what fails to decode.
		var head struct {
			Schema int `json:"schema"`
		}
		if decode(data, &head) == nil && head.Schema > SchemaVersion {
			return nil, newerSchema(head.Schema)
		}
		return nil, err
	}
	w.members = memberNames(whole)
	return w.finish(true)
}

// finish converts a decoded Record of any schema to the current one and
// checks it, packing its counters when pack is set.
func (w *wireRecord) finish(pack bool) (*Record, error) {
	r := &w.Record
	switch {
	case r.Schema == 1:
		var texts []string
		if err := decodeWarnings(w.Warnings, &texts); err != nil {
			return nil, err
		}
		convertSchema1(r, texts)
	case r.Schema > SchemaVersion:
		return nil, newerSchema(r.Schema)
	default:
		if err := decodeWarnings(w.Warnings, &r.Warnings); err != nil {
			return nil, err
		}
	}
	r.trimLabels()
	r.AddWarning(memberWarnings(w.members)...)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if pack {
		r.packCounters()
	}
	if r.Kind == KindTable {
		return nil, fmt.Errorf("record has kind %q: perfbench report builds those from CSV tables in memory, no file holds one", r.Kind)
	}
	return r, nil
}

// packCounters moves the counters of the Record and of its roles into
// one array of their exact number: decoding grows each list by doubling,
// which leaves up to half of each unused, and reports hold thousands of
// Records at once.
func (r *Record) packCounters() {
	n := len(r.Counters)
	for _, role := range r.Roles {
		n += len(role.Counters)
	}
	if n == 0 {
		return
	}
	all := make([]Counter, 0, n)
	pack := func(cs []Counter) []Counter {
		if cs == nil {
			return nil
		}
		all = append(all, cs...)
		return all[len(all)-len(cs) : len(all) : len(all)]
	}
	r.Counters = pack(r.Counters)
	for i := range r.Roles {
		r.Roles[i].Counters = pack(r.Roles[i].Counters)
	}
}

// wireRecord is a Record of any schema as decoded: the outer Warnings
// hides the embedded Record's.
type wireRecord struct {
	Record
	Warnings json.RawMessage `json:"warnings,omitempty"`
	// members are the names of the Record's members, in order.
	members []string
}

func newerSchema(schema int) error {
	return fmt.Errorf("record schema %d is newer than this perfbench understands (%d): upgrade perfbench", schema, SchemaVersion)
}

// decodeWarnings decodes a Record's raw warnings member, if any, into v.
func decodeWarnings(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode record: %w", err)
	}
	return nil
}

// decode decodes the first JSON value of data into v, with
// github.com/goccy/go-json: the same rules as encoding/json, a few times
// faster on Records. Data that is one value, as Records are, is decoded
// whole (faster than through a stream); anything else goes through the
// stream decoder, which takes the first value or says what is wrong.
func decode(data []byte, v any) error {
	if gojson.Unmarshal(data, v) == nil {
		return nil
	}
	// Start again from nothing: a map the failed call filled would
	// otherwise keep its members.
	reflect.ValueOf(v).Elem().SetZero()
	if err := gojson.NewDecoder(bytes.NewReader(data)).Decode(v); err != nil {
		return fmt.Errorf("decode record: %w", err)
	}
	return nil
}

// Validate checks the fields every reader relies on: the schema, the
// identity, the enumerations (kind, outcome, counter status, warning code)
// and that multiplexed and not-counted warnings name their events.
func (r *Record) Validate() error {
	switch {
	case r.Schema == 0:
		return ErrNotRecord
	case r.Schema < 0:
		return fmt.Errorf("record schema %d is not a schema version (perfbench writes %d)", r.Schema, SchemaVersion)
	case r.Schema > SchemaVersion:
		return fmt.Errorf("record schema %d is newer than this perfbench understands (%d): upgrade perfbench", r.Schema, SchemaVersion)
	case r.Threads < 0:
		return fmt.Errorf("record has a negative thread count (%d)", r.Threads)
	case r.Repeat < 0:
		return fmt.Errorf("record has a negative repeat number (%d)", r.Repeat)
	case r.Version == "":
		return errors.New("record has no version label")
	case r.Step == "":
		return errors.New("record has no step")
	}
	switch r.Outcome {
	case OutcomeOK, OutcomeFailed, OutcomePartial:
	default:
		return fmt.Errorf("record has unknown outcome %q", r.Outcome)
	}
	for _, c := range r.Counters {
		switch c.Status {
		case StatusCounted, StatusScaled, StatusNotCounted, StatusNotSupported:
		default:
			return fmt.Errorf("counter %s has unknown status %q", c.Event, c.Status)
		}
	}
	switch r.Kind {
	case KindStep, KindStat, KindImported, KindTable:
	default:
		return fmt.Errorf("record has unknown kind %q (step, stat or imported)", r.Kind)
	}
	for _, w := range r.Warnings {
		if err := w.validate(); err != nil {
			return fmt.Errorf("record %w", err)
		}
	}
	if r.Comparison != nil {
		if err := r.Comparison.validate(r.Version); err != nil {
			return fmt.Errorf("record %w", err)
		}
	}
	return nil
}

// FileName is the base name perfbench gives a Record's file: version, step,
// threads and repeat, with characters unsafe in file names replaced.
func FileName(r *Record) string {
	name := fmt.Sprintf("%s__%s__t%d__r%d.json", r.Version, r.Step, r.Threads, r.Repeat)
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			return c
		case c == '.', c == '-', c == '_', c == '=', c == '+':
			return c
		}
		return '_'
	}, name)
}

// Write writes r to path atomically and verifies it (WriteFileAtomic): a
// reader never sees half a Record, and a nil error means the Record is on
// disk as encoded.
func Write(path string, r *Record) error {
	b, err := Marshal(r)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, b)
}

// ErrVerify is wrapped by the errors of WriteFileAtomic when the file read
// back differs from what was written.
var ErrVerify = errors.New("the file read back differs from what was written")

// readBack reads a file just written; tests replace it to simulate a
// filesystem that loses data silently.
var readBack = os.ReadFile

// WriteFileAtomic writes data to path through a synced temporary file and a
// rename, syncs the folder (so that the rename survives a crash), and reads
// the file back: a nil error means path holds data. A full disk fails the
// write (the error wraps syscall.ENOSPC) and leaves an earlier file at path
// as it was.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		// The temporary file's name says nothing to the user.
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == tmp {
			err = pe.Err
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Best effort: some systems cannot sync a folder, and the read-back
	// below is what the caller relies on.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	got, err := readBack(path)
	if err != nil {
		return fmt.Errorf("write %s: read it back: %w", path, err)
	}
	if !bytes.Equal(got, data) {
		return fmt.Errorf("write %s: %w (%d bytes read, %d written)", path, ErrVerify, len(got), len(data))
	}
	return nil
}

// Read reads one Record file: a regular file of at most MaxFileBytes
// (OpenInput).
func Read(path string) (*Record, error) {
	b, err := ReadInput(path, MaxFileBytes, "Records")
	if err != nil {
		return nil, err
	}
	r, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Loaded is a Record with the file it came from.
type Loaded struct {
	Path   string
	Record *Record
}

// Load reads Records from files and folders. A folder is walked for *.json
// files (hidden files and temporary files are skipped). Files are read in
// the order given, folders in lexical order. A file named on its own that is
// not a Record is an error naming it; inside a folder, JSON files that are not
// Records (plans, reports) are skipped and listed in problems. With lenient
// set, broken Records are skipped and listed in problems too.
func Load(paths []string, lenient bool) (recs []Loaded, problems []error, err error) {
	add := func(p string, inDir bool) error {
		r, err := Read(p)
		if err != nil {
			if lenient || (inDir && errors.Is(err, ErrNotRecord)) {
				problems = append(problems, err)
				return nil
			}
			return err
		}
		recs = append(recs, Loaded{Path: p, Record: r})
		return nil
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, problems, err
		}
		if !fi.IsDir() {
			if err := add(p, false); err != nil {
				return nil, problems, err
			}
			continue
		}
		files, err := Files(p)
		if err != nil {
			return nil, problems, err
		}
		for _, f := range files {
			if err := add(f, true); err != nil {
				return nil, problems, err
			}
		}
	}
	return recs, problems, nil
}

// Files returns the Record files under dir, sorted: every .json file of dir
// and its subfolders, leaving out hidden files and folders (records/.replaced
// keeps the Records --resume set aside).
func Files(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != dir && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(name, ".json") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}
