package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/hugeheap"
	"github.com/perfbench/perfbench/internal/report"
	"github.com/perfbench/perfbench/record"
)

func init() {
	register(&command{
		name:    "report",
		summary: "compare versions: relative QPS, CPU/IO and counters per op, attribution, in the layouts of published posts",
		usage: "report INPUT... [--base LABEL] [--format text|markdown|html|csv|json|benchfmt] [--out PATH] [--tables LIST] " +
			"[--order run|input|name] [--label VERSION=LABEL]... [--compare LIST] [--bare [--notes FILE]] [--legacy-normalization] [--charts DIR]",
		long:  reportLong,
		setup: setupReport,
	})
}

// reportLong is perfbench report's --help text.
var reportLong = `INPUT is a Record file, a folder of Records (from run, stat or import) or a
long-format CSV table (*.csv) with the header version,step,threads,metric,value
and optionally host, repeat and group. metric is qps, ops, seconds, a perf event
name (its total over the window), a per-op metric such as cpu/o (cpu/q, QPS and
the insert benchmark's cpupq, cspq, rpq, wkbpi, ... are understood), IPC, CPI or
an insert-benchmark column; any other name is refused with the nearest ones.
Values are finite numbers of at least 0 (n/a or nc for an event). The same
Record or CSV row given twice counts once, and a warning says so.

Versions are table columns in input order: files in the order given; inside a
folder, Records in the order they were measured. The base is the first version
unless --base names another. Steps are rows in the order they were run (the
earliest window start of their Records; CSV rows in file order) unless --order
says input (first appearance) or name (point, range, writes, by label).
--label 8.0.28=my8028 heads that version's columns my8028 instead of col-N;
--compare names the versions compared with the base (the others print only
where tables show absolute values).
--bare prints the tables alone, without titles and notes, to paste into a post;
the notes go to --notes FILE, else to stderr.

Cells: 1.23(62%) the counters behind the value were multiplexed and counted 62%
of the window; ±4% the 95% confidence interval of the median over repeats; ~ not
significantly different from the base; ? a ratio from a single repeat, not
tested (marked when other ratios were tested); a trailing e an op count
estimated from the client's whole-run rate; a trailing p a partial window; 1 a
ratio of two zeros; n/a not supported, nc not counted, failed a failed step, -
not recorded or not computable. Every table lists the markers it uses and the
warnings of its Records that concern its columns as notes; tables with n/a in
every cell are left out and named at the top. A ratio of versions measured
together (duet, slices) is paired: each round the geometric mean of its turns'
ratios, the cell the geometric mean of the rounds with a Student t interval and
test over them; the pairs table lists its turns and rounds.

Tables (--tables): ` + strings.Join(report.TableIDs, ", ") + `.

--charts DIR writes SVG and PNG charts: rQPS by step and version
(rqps_*), a heat map of each version's ratios per operation, steps by counters
(heatmap_*), and for each version and step with a 1-second series its
operations per second and --chart-counter per operation, one line per repeat
(series_*).

Examples:
  perfbench report results/ --base mariadb-10.11.6
  perfbench report results/ --format html --out report.html
  perfbench report results/ --format benchfmt --out results.txt && benchstat -col /v results.txt
  perfbench report qps.csv --tables threads
  perfbench report results/ --charts charts/ --chart-counter cycles`

// reportArgs are perfbench report's flags.
type reportArgs struct {
	base, format, out string
	charts, counter   string
	order, notes      string
	tables, labels    []string
	compare           []string
	legacy, keepScan  bool
	bare              bool
}

// setupReport registers perfbench report's flags on fs and returns the
// command.
func setupReport(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
	var o reportArgs
	o.addOutputFlags(fs)
	o.addTableFlags(fs)
	o.addPostFlags(fs)
	o.addChartFlags(fs)
	return func(ctx context.Context, e *env, args []string) error {
		labels, err := o.check(args)
		if err != nil {
			return err
		}
		for flag, path := range map[string]string{"--out": o.out, "--notes": o.notes} {
			if err := notAnInput(flag, path, args); err != nil {
				return err
			}
		}
		return runReport(e, &o, args, labels)
	}
}

// notAnInput refuses an output file of the report (--out, --notes) that is
// one of its inputs: a Record or a CSV file given, or a Record of a folder
// given (the same file, through any name). The report would replace it.
func notAnInput(flag, path string, inputs []string) error {
	if path == "" {
		return nil
	}
	out, err := os.Stat(path)
	if err != nil || !out.Mode().IsRegular() {
		return nil // nothing there to lose; writing says what is wrong
	}
	same := func(in string) bool {
		fi, err := os.Stat(in)
		return err == nil && os.SameFile(out, fi)
	}
	for _, in := range inputs {
		if same(in) {
			return usagef("%s %s is an input of the report, which the report would replace: give %s another file", flag, path, flag)
		}
		if fi, err := os.Stat(in); err != nil || !fi.IsDir() {
			continue
		}
		files, err := record.Files(in)
		if err != nil {
			continue // reading the inputs says what is wrong
		}
		for _, f := range files {
			if same(f) {
				return usagef("%s %s is a Record of the report's input %s, which the report would replace: give %s a file outside %s", flag, path, in, flag, in)
			}
		}
	}
	return nil
}

// addOutputFlags registers the flags of the base, the format and the file.
func (o *reportArgs) addOutputFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.base, "base", "", "version the others are compared to (default: the first version in input order)")
	fs.StringVar(&o.format, "format", "text", "output format: "+strings.Join(report.Formats, ", "))
	fs.StringVar(&o.out, "out", "", "write the report to this file instead of stdout")
}

// addTableFlags registers the flags of which tables, steps and versions
// print.
func (o *reportArgs) addTableFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.tables, "tables", nil, "comma-separated tables to print (default: all that have data)")
	fs.BoolVar(&o.legacy, "legacy-normalization", false, "add counter tables in the older form: counter ratio ÷ whole-step rQPS")
	fs.BoolVar(&o.keepScan, "keep-scan-ops", false, "normalize scan steps per query, not per 1,000 rows read")
	fs.StringVar(&o.order, "order", analysis.OrderRun, "order of steps: run (as measured; CSV rows in file order), input "+
		"(first appearance) or name (point, range, writes, by label)")
	fs.StringSliceVar(&o.compare, "compare", nil, "comma-separated versions to compare with the base (default: all); the others print in absolute tables only")
	fs.StringArrayVar(&o.labels, "label", nil, "VERSION=LABEL: head that version's columns LABEL instead of col-N (repeatable)")
}

// addPostFlags registers the flags of tables pasted into a post.
func (o *reportArgs) addPostFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.bare, "bare", false, "print the tables alone, without titles and notes, to paste into a post")
	fs.StringVar(&o.notes, "notes", "", "with --bare, write the notes to this file (default: stderr)")
}

// addChartFlags registers the flags of the charts.
func (o *reportArgs) addChartFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.charts, "charts", "", "also write SVG and PNG charts into this folder")
	fs.StringVar(&o.counter, "chart-counter", "instructions", "event whose per-operation value the per-second series charts show")
}

// check checks the flags and the inputs, and returns the --label map.
func (o *reportArgs) check(args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, usagef("no input: give Record files, folders of Records or .csv tables")
	}
	known := false
	for _, f := range report.Formats {
		known = known || f == o.format
	}
	if !known {
		return nil, usagef("unknown --format %q: choose from %s", o.format, strings.Join(report.Formats, ", "))
	}
	if !slices.Contains(analysis.StepOrders, o.order) {
		return nil, usagef("unknown --order %q: choose from %s", o.order, strings.Join(analysis.StepOrders, ", "))
	}
	if o.notes != "" && !o.bare {
		return nil, usagef("--notes goes with --bare (without it the notes are in the report)")
	}
	labels := map[string]string{}
	for _, l := range o.labels {
		v, label, ok := strings.Cut(l, "=")
		if !ok || v == "" || label == "" {
			return nil, usagef("--label %q: want VERSION=LABEL, as in --label 8.0.28=my8028", l)
		}
		labels[v] = label
	}
	return labels, nil
}

// runReport loads the inputs and writes the report, its notes and its
// charts.
func runReport(e *env, o *reportArgs, args []string, labels map[string]string) error {
	// The report holds every Record and one table at a time; a
	// soft limit makes the garbage collector run sooner as the
	// heap nears it, so a 100 MB CSV reports in under 1 GB
	// (GOMEMLIMIT overrides it). Below it, the heap may grow by half
	// of what is live before a collection, not double (GOGC overrides
	// it): what is live is mostly Records held to the end, and a few
	// more collections cost less than the memory.
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(reportMemoryLimit)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(reportGCPercent)
	}
	if freshProcess {
		freshProcess = false
		// The heap a campaign's report touches (about 190 MB for
		// 8,400 Records) in huge pages: far fewer page faults. It
		// costs address space only; where it cannot be done, the
		// report runs as before.
		hugeheap.Advise(reportHugeHeap)
	}
	in, err := report.LoadInputWith(args, report.FieldsFor(report.Options{Tables: o.tables}, o.charts != ""))
	if err != nil {
		return err
	}
	for _, w := range in.Warnings {
		fmt.Fprintf(e.stderr, "perfbench report: warning: %s\n", w)
	}
	if len(in.Records) == 0 {
		return fmt.Errorf("no records in %s", strings.Join(args, ", "))
	}
	opt := report.Options{Base: o.base, Tables: o.tables, Legacy: o.legacy, Labels: labels, Groups: in.Groups, Compare: o.compare,
		Bare: o.bare, Analysis: analysis.Options{KeepScanOps: o.keepScan, Order: o.order}}
	var notes bytes.Buffer
	if o.bare {
		opt.Notes = &notes
	}
	// To stdout the report streams as its tables are built;
	// to a file it is written whole, atomically.
	var buf bytes.Buffer
	var out io.Writer = &buf
	if o.out == "" {
		out = e.stdout
	}
	if err := report.Write(out, o.format, in.Records, in.Warnings, opt); err != nil {
		if errors.Is(err, report.ErrUnknownTable) || errors.Is(err, analysis.ErrUnknownBase) || errors.Is(err,
			report.ErrBadLabel) || errors.Is(err, report.ErrUnknownVersion) {
			return usagef("%v", err)
		}
		return fmt.Errorf("build report: %w", err)
	}
	if o.bare && notes.Len() > 0 {
		if o.notes == "" {
			e.stderr.Write(notes.Bytes())
		} else if err := record.WriteFileAtomic(o.notes, notes.Bytes()); err != nil {
			return err
		}
	}
	if o.charts != "" {
		if err := writeReportCharts(e, o, in.Records, opt); err != nil {
			return err
		}
	}
	if o.out == "" {
		return nil
	}
	if err := record.WriteFileAtomic(o.out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "perfbench report: wrote %s\n", o.out)
	return nil
}

// writeReportCharts writes the charts into --charts.
func writeReportCharts(e *env, o *reportArgs, recs []*record.Record, opt report.Options) error {
	charts, err := report.Charts(recs, opt, o.counter)
	if err != nil {
		return fmt.Errorf("draw charts: %w", err)
	}
	paths, err := report.WriteCharts(o.charts, charts)
	if err != nil {
		return err
	}
	for _, ch := range charts {
		for _, w := range ch.Warnings {
			fmt.Fprintf(e.stderr, "perfbench report: warning: chart %s\n", w)
		}
	}
	fmt.Fprintf(e.stderr, "perfbench report: wrote %d charts in %s\n", len(paths), o.charts)
	return nil
}

// reportMemoryLimit is the soft memory limit of perfbench report.
const reportMemoryLimit = 880 << 20

// reportHugeHeap is how much of perfbench report's heap is asked for in
// transparent huge pages, first thing (hugeheap.Advise).
const reportHugeHeap = 384 << 20

// reportGCPercent is the GOGC of perfbench report.
const reportGCPercent = 50
