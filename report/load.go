package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/perfbench/perfbench/record"
)

// ErrUnknownFormat is returned by Write for a format it does not know.
var ErrUnknownFormat = errors.New("unknown format")

// Formats lists the output formats of Write.
var Formats = []string{"text", "markdown", "html", "csv", "json", "benchfmt"}

// Load reads the inputs of a report: Record files, folders of Records and
// long-format CSV files (named *.csv). The order of the inputs is the order
// of versions in the tables: files in the order given; inside a folder,
// Records by the start of their window (the order they were measured in),
// then by file name. Problems that do not stop the report (JSON files in a
// folder that are not Records) come back as warnings.
func Load(paths []string) (recs []*record.Record, warnings []string, err error) {
	for _, p := range paths {
		if strings.HasSuffix(strings.ToLower(p), ".csv") {
			f, err := os.Open(p)
			if err != nil {
				return nil, warnings, fmt.Errorf("read table %s: %w", p, err)
			}
			rs, err := ReadCSV(f, p)
			f.Close()
			if err != nil {
				return nil, warnings, err
			}
			recs = append(recs, rs...)
			continue
		}
		loaded, problems, err := record.Load([]string{p}, false)
		if err != nil {
			return nil, warnings, fmt.Errorf("read records from %s: %w", p, err)
		}
		for _, pr := range problems {
			warnings = append(warnings, "skipped: "+pr.Error())
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			sort.SliceStable(loaded, func(i, j int) bool {
				return loaded[i].Record.Window.Start.Before(loaded[j].Record.Window.Start)
			})
			if len(loaded) == 0 {
				warnings = append(warnings, fmt.Sprintf("%s has no Records", p))
			}
		}
		for _, l := range loaded {
			recs = append(recs, l.Record)
		}
	}
	return recs, warnings, nil
}

// Write builds the report of recs and writes it in format (one of Formats).
// warnings are added to the report's own.
func Write(w io.Writer, format string, recs []*record.Record, warnings []string, opt Options) error {
	if format == "benchfmt" {
		return Benchfmt(w, recs, opt)
	}
	render := map[string]func(io.Writer, *Report) error{
		"text": Text, "markdown": Markdown, "md": Markdown, "html": HTML, "csv": CSV, "json": JSON,
	}[format]
	if render == nil {
		return fmt.Errorf("%w %q: choose from %s", ErrUnknownFormat, format, strings.Join(Formats, ", "))
	}
	rep, err := Build(recs, opt)
	if err != nil {
		return err
	}
	rep.Warnings = append(warnings, rep.Warnings...)
	return render(w, rep)
}
