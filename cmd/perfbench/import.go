package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/perfbench/perfbench/internal/importer"
	"github.com/spf13/pflag"
)

// importForm is one form of perfbench import.
type importForm struct {
	name, usage, summary, long string
	setup                      func(fs *pflag.FlagSet, o *importFlags)
	run                        func(o *importFlags, args []string) (*importer.Result, error)
}

// importFlags are the flags the forms share.
type importFlags struct {
	out       string
	force     bool
	host      string
	version   string
	step      string
	threads   int
	ops       float64
	seconds   float64
	sysbench  string
	pattern   string
	perfPfx   string
	sbPfx     string
	separator string
	decimal   string
}

func (o *importFlags) options(e *env) (importer.Options, error) {
	opt := importer.Options{Version: o.version, Step: o.step, Host: o.host, Threads: o.threads, Ops: o.ops,
		Seconds: o.seconds, Sysbench: o.sysbench, Separator: o.separator, Command: e.args, Perfbench: versionString()}
	switch o.decimal {
	case "":
	case ".", ",":
		opt.Decimal = o.decimal[0]
	default:
		return opt, usagef("--decimal must be '.' or ','")
	}
	if o.ops < 0 || o.seconds < 0 || o.threads < 0 {
		return opt, usagef("--ops, --seconds and --threads cannot be negative")
	}
	return opt, nil
}

var importForms = []*importForm{
	{
		name:    "perf-stat",
		usage:   "import perf-stat FILE... --version LABEL --step NAME --out DIR [--threads N] [--ops N | --sysbench FILE]",
		summary: "import perf stat output (text, -x CSV, -j JSON; -I, --per-thread, -A, -r; runs appended with --append)",
		long: `Each perf stat run in the files becomes one Record, repeats numbered 1, 2, 3... in
file order (a file with three runs appended by perf stat -o FILE --append gives
repeats 1..3). A run printed with -I is one Record whose series holds the
intervals. <not supported> imports as not supported and <not counted> as not
counted (reports print n/a); a multiplexed "(62.50%)" event keeps perf's scaled
value and its running fraction.

Ops per window: --ops N, or --sysbench FILE (the sysbench output of the same
step: its whole-run QPS times the perf window's length). The window is perf's
"seconds time elapsed"; -x and -j output does not print it: give --seconds.

Example:
  perfbench import perf-stat perf.hw.txt --version 10.11.6 --step point-query_range=100 \
      --sysbench sb.out.txt --out results/`,
		setup: func(fs *pflag.FlagSet, o *importFlags) {
			fs.StringVar(&o.version, "version", "", "version label of the measured server (table column)")
			fs.StringVar(&o.step, "step", "", "step label as tables print it, for example point-query_range=100")
			fs.IntVar(&o.threads, "threads", 0, "client threads (default: sysbench's \"Number of threads\")")
			fs.Float64Var(&o.ops, "ops", 0, "operations in each perf stat window (instead of --sysbench)")
			fs.Float64Var(&o.seconds, "seconds", 0, "window length in seconds, for -x and -j output that does not print it")
			fs.StringVar(&o.sysbench, "sysbench", "", "sysbench output of the same step: op counts and client results")
			fs.StringVar(&o.separator, "separator", "", "the -x separator perf was given (default: detect)")
			fs.StringVar(&o.decimal, "decimal", "", "decimal separator of the text output, '.' or ',' (default: detect from the locale's output)")
		},
		run: func(o *importFlags, args []string) (*importer.Result, error) {
			if len(args) == 0 {
				return nil, usagef("import perf-stat needs at least one FILE")
			}
			err := missingLabels(o, func(it string) string {
				return it + " the Records (version: the table column, step: the row), for example --version 10.11.6 --step point-query_range=100"
			})
			if err != nil {
				return nil, err
			}
			if o.ops > 0 && o.sysbench != "" {
				return nil, usagef("give --ops or --sysbench, not both")
			}
			return nil, nil
		},
	},
	{
		name:    "sysbench",
		usage:   "import sysbench FILE... --out DIR [--version LABEL --step NAME]",
		summary: "import sysbench 1.0.x output (final report, --report-interval lines, --histogram)",
		long: `Each file becomes one Record: the client's results, ops = sysbench's "queries:"
count, the window = its total time. Without --version and --step, labels come
from the path as the dir form names files: <version>/sb.o.<step>.range<R>.pk<N>
gives version <version> and step <step>_range=<R>. A run cut short (no final
report) is kept as partial with its interval lines; a run that failed (FATAL)
as failed.

Example:
  perfbench import sysbench base/sb.o.point-query.range100.pk1 --out results/`,
		setup: func(fs *pflag.FlagSet, o *importFlags) {
			fs.StringVar(&o.version, "version", "", "version label (default: the file's folder name)")
			fs.StringVar(&o.step, "step", "", "step label (default: from the file name, <step>_range=<R>)")
			fs.IntVar(&o.threads, "threads", 0, "client threads (default: sysbench's \"Number of threads\")")
		},
		run: func(o *importFlags, args []string) (*importer.Result, error) {
			if len(args) == 0 {
				return nil, usagef("import sysbench needs at least one FILE")
			}
			if o.version != "" && o.step != "" {
				return nil, nil
			}
			// Files named by the dir form's scheme carry their labels.
			var unnamed []string
			for _, f := range args {
				if _, _, ok := importer.SysbenchLabels(f); !ok {
					unnamed = append(unnamed, f)
				}
			}
			if len(unnamed) == 0 {
				return nil, nil
			}
			which := unnamed[0] + " is"
			if len(unnamed) > 1 {
				which = fmt.Sprintf("%s and %d other file(s) are", unnamed[0], len(unnamed)-1)
			}
			return nil, missingLabels(o, func(string) string {
				return which + " not named " + importer.SysbenchNaming + ", from which the labels would come"
			})
		},
	},
	{
		name:    "dir",
		usage:   "import dir DIR --out OUT [--pattern REGEXP]",
		summary: "import a results folder: one folder per version, files named <prefix>.<step>.range<R>.pk<N>.<sample>",
		long: `DIR holds one folder per version. In each, files are named

  <prefix>.<step>.range<R>.pk<N>[.<sample>]

with prefix sb.perf.hw for perf stat output and sb.o for sysbench output, for
example base/sb.perf.hw.point-query.range100.pk1.1 and
base/sb.o.point-query.range100.pk1. A Record's version is the folder's name
and its step <step>_range=<R> (point-query_range=100). Samples are read in
numeric order; every perf stat run becomes a repeat, with op counts and client
results from the step's sysbench output. Steps with only sysbench output give
sysbench Records.

--pattern maps another naming scheme: a Go regular expression matched against
the path below DIR (or else the base name), with a named group step and
optionally version, range, pk, sample and prefix. Without version, the first
folder is the version; without prefix, the file's content tells sysbench from
perf stat output. Example for files like v8.0.39/point-query.r100.s2.perf:
  --pattern '^(?P<version>[^/]+)/(?P<step>[a-z-.]+)\.r(?P<range>\d+)\.s(?P<sample>\d+)\.(?P<prefix>perf|sb)$' \
  --perf-prefix perf --sysbench-prefix sb`,
		setup: func(fs *pflag.FlagSet, o *importFlags) {
			fs.StringVar(&o.pattern, "pattern", importer.DefaultPattern, "regular expression with named groups step, version, "+
				"range, pk, sample, prefix mapping file paths")
			fs.StringVar(&o.perfPfx, "perf-prefix", importer.PerfPrefix, "value of the prefix group that marks perf stat output")
			fs.StringVar(&o.sbPfx, "sysbench-prefix", importer.SysbenchPrefix, "value of the prefix group that marks sysbench output")
			fs.Float64Var(&o.seconds, "seconds", 0, "window length in seconds, for -x and -j perf output that does not print it")
			fs.StringVar(&o.separator, "separator", "", "the -x separator perf was given (default: detect)")
			fs.StringVar(&o.decimal, "decimal", "", "decimal separator of perf's text output, '.' or ',' (default: detect)")
		},
	},
}

// missingLabels is the usage error naming exactly which of --version and
// --step is missing; nil when both are given. why(flags, it) says why they
// are needed, given "it labels" or "they label".
func missingLabels(o *importFlags, why func(it string) string) error {
	switch {
	case o.version == "" && o.step == "":
		return usagef("--version and --step are required: %s", why("they label"))
	case o.version == "":
		return usagef("--version is required: %s", why("it labels"))
	case o.step == "":
		return usagef("--step is required: %s", why("it labels"))
	}
	return nil
}

// formUsageError is a usage error of one import form. It carries the
// command whose --help documents the form's flags.
type formUsageError struct {
	form string
	err  error
}

func (e *formUsageError) Error() string { return e.err.Error() }
func (e *formUsageError) Unwrap() error { return e.err }

// HelpCommand is the command whose --help documents the flags in error:
// "import sysbench".
func (e *formUsageError) HelpCommand() string { return "import " + e.form }

// inForm marks usage errors as the form's.
func inForm(form *importForm, err error) error {
	var ue *usageError
	if err == nil || !errors.As(err, &ue) {
		return err
	}
	return &formUsageError{form: form.name, err: err}
}

func init() {
	register(&command{
		name:    "import",
		summary: "turn archived perf stat and sysbench outputs into Records",
		usage:   "import perf-stat|sysbench|dir [flags] ARGS... --out DIR",
		long:    importLong(),
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			fs.SetInterspersed(false)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) == 0 {
					return usagef("import needs a form: perf-stat, sysbench or dir")
				}
				var form *importForm
				for _, f := range importForms {
					if f.name == args[0] {
						form = f
					}
				}
				if form == nil {
					return usagef("unknown import form %q (perf-stat, sysbench or dir)", args[0])
				}
				return inForm(form, runImport(ctx, e, form, args[1:]))
			}
		},
	})
}

func importLong() string {
	var b strings.Builder
	b.WriteString("Forms:\n")
	for _, f := range importForms {
		fmt.Fprintf(&b, "  %-10s %s\n", f.name, f.summary)
	}
	b.WriteString("\nRun 'perfbench import FORM --help' for a form's flags. Records are written to --out\nas " +
		"<version>__<step>__t<threads>__r<repeat>.json; existing files are kept unless\n--force. A file that fails to import " +
		"is named with its line and the import goes\non; the exit status is 1 when anything failed.")
	return b.String()
}

// newImportFlagSet registers the flags of one form.
func newImportFlagSet(form *importForm, o *importFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("perfbench import "+form.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = true
	fs.StringVar(&o.out, "out", "", "folder the Records are written to (required)")
	fs.BoolVar(&o.force, "force", false, "overwrite Record files that exist")
	fs.StringVar(&o.host, "host", "", "host label of the machine the files were measured on")
	form.setup(fs, o)
	return fs
}

func runImport(_ context.Context, e *env, form *importForm, args []string) error {
	o := &importFlags{}
	fs := newImportFlagSet(form, o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(e.stdout, "Usage: perfbench %s\n\n%s\n\n%s\n\nFlags:\n%s", form.usage, form.summary, form.long, fs.FlagUsages())
			return nil
		}
		return usagef("import %s: %v", form.name, err)
	}
	args = fs.Args()
	if o.out == "" {
		return usagef("import %s needs --out DIR", form.name)
	}
	opt, err := o.options(e)
	if err != nil {
		return err
	}
	if form.run != nil {
		if _, err := form.run(o, args); err != nil {
			return err
		}
	}
	// Records are written as they are built: an import holds one run at
	// a time, whatever the size of its files.
	w := &importer.Writer{Dir: o.out, Force: o.force}
	opt.Sink = w.Write
	var res *importer.Result
	switch form.name {
	case "perf-stat":
		res = importer.PerfStat(args, opt)
	case "sysbench":
		res = importer.Sysbench(args, opt)
	case "dir":
		if len(args) != 1 {
			return usagef("import dir needs exactly one DIR")
		}
		naming, err := importer.NewNaming(o.pattern)
		if err != nil {
			return usagef("%v", err)
		}
		naming.PerfPrefix, naming.SysbenchPrefix = o.perfPfx, o.sbPfx
		res = importer.Dir(args[0], importer.DirOptions{Options: opt, Naming: naming})
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.stderr, "perfbench import: warning: %s\n", w)
	}
	for _, f := range res.Failures {
		fmt.Fprintf(e.stderr, "perfbench import: %s\n", oneLine(f.Error()))
	}
	switch {
	case w.Written == 0 && len(res.Failures) > 0:
		return fmt.Errorf("nothing imported: %d failure(s) above", len(res.Failures))
	case w.Written == 0:
		return fmt.Errorf("nothing imported: no perf stat or sysbench output in %s", strings.Join(args, " "))
	}
	fmt.Fprintf(e.stdout, "%d record(s) written to %s\n", w.Written, o.out)
	if len(res.Failures) > 0 {
		fmt.Fprintf(e.stderr, "perfbench import: %d failure(s); the other records were written\n", len(res.Failures))
		return errSilent
	}
	return nil
}
