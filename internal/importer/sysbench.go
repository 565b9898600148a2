package importer

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/perfbench/perfbench/internal/load/sysbench"
	"github.com/perfbench/perfbench/record"
)

// Sysbench imports sysbench output files. Without Options.Version and
// Options.Step, each file's labels come from its path as Dir names them
// (<version>/sb.o.<step>.range<R>.pk<N>[.<sample>]). Files with the same
// labels are repeats, numbered in the order given.
func Sysbench(files []string, opts Options) *Result {
	res := newResult(opts)
	sysbenchFiles(files, opts, res)
	warnNoThreads(res)
	return res
}

// sysbenchFiles imports sysbench output files into res.
func sysbenchFiles(files []string, opts Options, res *Result) {
	repeats := map[[2]string]int{}
	for _, f := range files {
		o := opts
		if o.Version == "" || o.Step == "" {
			version, step, ok := SysbenchLabels(f)
			if !ok {
				res.fail(fmt.Errorf("import sysbench output %s: %w (or name the file %s)", f, errNoLabel, SysbenchNaming))
				continue
			}
			if o.Version == "" {
				o.Version = version
			}
			if o.Step == "" {
				o.Step = step
			}
		}
		sb := readSysbench(f, res)
		if sb == nil {
			continue
		}
		key := [2]string{o.Version, o.Step}
		repeats[key]++
		res.emit(sysbenchRecord(sb, f, repeats[key], o))
	}
}

// SysbenchNaming is the file naming from which Sysbench takes the labels it
// is not given.
const SysbenchNaming = "<version>/sb.o.<step>.range<R>.pk<N>"

// SysbenchLabels returns the version and step label Sysbench gives a
// sysbench output file from its path when Options lack them: the folder's
// name and "<step>_range=<R>" for a file named SysbenchNaming. ok is false
// when the file is not named so. It looks at the path only.
func SysbenchLabels(file string) (version, step string, ok bool) {
	n, ok := defaultNaming().match(filepath.Base(file), filepath.Base(filepath.Dir(file)))
	if !ok {
		return "", "", false
	}
	return n.version, n.step, true
}

// sysbenchRecord builds the Record of one sysbench run: the window is the
// run, the ops its "queries:" count (its events for non-SQL tests).
func sysbenchRecord(sb *sysbench.Result, file string, repeat int, opts Options) *record.Record {
	rec := record.New(record.KindImported)
	rec.Version, rec.Step, rec.Host, rec.Repeat = opts.Version, opts.Step, opts.Host, repeat
	rec.Threads = opts.Threads
	if rec.Threads == 0 {
		rec.Threads = sb.Threads
	}
	rec.Source = []string{file}
	rec.Provenance = record.Provenance{Hostname: opts.Host, Perfbench: opts.Perfbench, Command: opts.Command, Written: opts.now(), Origin: map[string]string{}}
	setIf(rec.Provenance.Origin, "sysbench.version", sb.Version)
	if sb.Threads > 0 {
		rec.Provenance.Origin["sysbench.threads"] = fmt.Sprint(sb.Threads)
	}
	if len(rec.Provenance.Origin) == 0 {
		rec.Provenance.Origin = nil
	}
	rec.Client = sb.Client()
	rec.Window.Seconds = sb.TotalTime
	switch {
	case opts.Ops > 0:
		rec.Ops = record.Ops{Source: "given", Count: opts.Ops, Counted: true}
	case sb.HasSQL:
		rec.Ops = record.Ops{Source: "client.queries", Count: sb.Queries, Counted: true}
	case sb.Events > 0:
		rec.Ops = record.Ops{Source: "client.events", Count: sb.Events, Counted: true}
	}
	for _, w := range sb.Warnings {
		if w.Line > 0 {
			rec.Warnf(record.WarnGeneral, "%s:%d: %s", file, w.Line, w.Msg)
		} else {
			rec.Warnf(record.WarnGeneral, "%s: %s", file, w.Msg)
		}
	}
	if !sb.Complete {
		if len(sb.Intervals) > 0 {
			rec.Outcome = record.OutcomePartial
			last := sb.Intervals[len(sb.Intervals)-1]
			rec.Window.Seconds = last.At
			rec.Client.Seconds = last.At
			rec.Error = fmt.Sprintf("sysbench output %s has no final report (interrupted?): only its %d interval line(s) are kept", file, len(sb.Intervals))
		} else {
			rec.Outcome = record.OutcomeFailed
			rec.Error = fmt.Sprintf("sysbench output %s has no results", file)
		}
		if len(sb.Fatal) > 0 {
			rec.Error += ": " + strings.Join(sb.Fatal, "; ")
		}
	}
	return rec
}
