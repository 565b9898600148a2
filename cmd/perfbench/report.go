package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
	"github.com/perfbench/perfbench/report"
)

func init() {
	register(&command{
		name:    "report",
		summary: "compare versions: relative QPS, CPU/IO and counters per op, attribution, in the layouts of published posts",
		usage:   "report INPUT... [--base LABEL] [--format text|markdown|html|csv|json|benchfmt] [--out PATH] [--tables LIST] [--legacy-normalization] [--charts DIR]",
		long: `INPUT is a Record file, a folder of Records (from run, stat or import) or a
long-format CSV table (*.csv) with the header version,step,threads,metric,value
and optionally host and repeat. metric is qps, ops, seconds, a perf event name
(its total over the window), or a per-op metric such as cpu/o.

Versions are table columns in input order: files in the order given; inside a
folder, Records in the order they were measured. The base is the first version
unless --base names another.

Cells: 1.23(62%) the counters behind the value were multiplexed and counted 62%
of the window; ±4% the 95% confidence interval of the median over repeats; ~ not
significantly different from the base; ? a ratio from a single repeat, not
tested (marked when other ratios were tested); a trailing e an op count
estimated from the client's whole-run rate; a trailing p a partial window; 1 a
ratio of two zeros; n/a not supported, nc not counted, failed a failed step, -
not recorded or not computable. Every table lists the markers it uses and the
warnings of its Records that concern its columns as notes; tables with n/a in
every cell are left out and named at the top.

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
  perfbench report results/ --charts charts/ --chart-counter cycles`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			var o struct {
				base, format, out string
				charts, counter   string
				tables            []string
				legacy, keepScan  bool
			}
			fs.StringVar(&o.base, "base", "", "version the others are compared to (default: the first version in input order)")
			fs.StringVar(&o.format, "format", "text", "output format: "+strings.Join(report.Formats, ", "))
			fs.StringVar(&o.out, "out", "", "write the report to this file instead of stdout")
			fs.StringSliceVar(&o.tables, "tables", nil, "comma-separated tables to print (default: all that have data)")
			fs.BoolVar(&o.legacy, "legacy-normalization", false, "add counter tables in the older form: counter ratio ÷ whole-step rQPS")
			fs.BoolVar(&o.keepScan, "keep-scan-ops", false, "normalize scan steps per query, not per 1,000 rows read")
			fs.StringVar(&o.charts, "charts", "", "also write SVG and PNG charts into this folder")
			fs.StringVar(&o.counter, "chart-counter", "instructions", "event whose per-operation value the per-second series charts show")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) == 0 {
					return usagef("no input: give Record files, folders of Records or .csv tables")
				}
				known := false
				for _, f := range report.Formats {
					known = known || f == o.format
				}
				if !known {
					return usagef("unknown --format %q: choose from %s", o.format, strings.Join(report.Formats, ", "))
				}
				recs, warnings, err := report.Load(args)
				if err != nil {
					return err
				}
				for _, w := range warnings {
					fmt.Fprintf(e.stderr, "perfbench report: warning: %s\n", w)
				}
				if len(recs) == 0 {
					return fmt.Errorf("no records in %s", strings.Join(args, ", "))
				}
				opt := report.Options{Base: o.base, Tables: o.tables, Legacy: o.legacy,
					Analysis: analysis.Options{KeepScanOps: o.keepScan}}
				var buf bytes.Buffer
				if err := report.Write(&buf, o.format, recs, warnings, opt); err != nil {
					if errors.Is(err, report.ErrUnknownTable) || errors.Is(err, analysis.ErrUnknownBase) {
						return usagef("%v", err)
					}
					return fmt.Errorf("build report: %w", err)
				}
				if o.charts != "" {
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
				}
				if o.out == "" {
					_, err := e.stdout.Write(buf.Bytes())
					return err
				}
				if err := record.WriteFileAtomic(o.out, buf.Bytes()); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "perfbench report: wrote %s\n", o.out)
				return nil
			}
		},
	})
}
