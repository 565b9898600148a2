package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/report"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/internal/run/runner"
	"github.com/perfbench/perfbench/mysqld/sandbox"
	"github.com/perfbench/perfbench/record"
)

// Options tune Run.
type Options struct {
	// Out is the output folder (created if missing; it must not hold
	// Records of an earlier run).
	Out string
	// Quick runs quickSettings instead of fullSettings.
	Quick bool
	// KeepServers keeps the servers' data directories under
	// Out/servers/; by default they are removed when every measurement
	// succeeded (their error logs stay), and kept otherwise, for perfbench
	// run --resume.
	KeepServers bool
	// InstalledOnly skips the second release: the installed one and its
	// configuration variant only.
	InstalledOnly bool
	// CacheDir is where the second release is unpacked
	// (defaultCacheDir when empty).
	CacheDir string
	// Progress receives what the demo does, the runner's progress and
	// warnings (stderr). Terminal and Width are runner.Options'.
	Progress io.Writer
	Terminal bool
	Width    int
	// Command and Perfbench are perfbench's command line and version,
	// for the Records' provenance.
	Command   []string
	Perfbench string
}

// Result is what the demo did and where it put it.
type Result struct {
	// Out is the output folder (absolute); Plan the plan file in it.
	Out, Plan string
	// Base is the version the others are compared to; Versions all of
	// them, in table order.
	Base     string
	Versions []string
	// Other is the second release; nil when the demo ran without one
	// (OtherErr then says why, unless Options.InstalledOnly).
	Other    *release
	OtherErr error
	// Summary is the run's (nil when it stopped before measuring).
	Summary *runner.Summary
	// Reports are the report files written, Charts the chart files.
	Reports, Charts []string
	// RQPS is the relative-QPS table as text.
	RQPS []byte
	// DataKept is true when the servers' data directories are still
	// under Out/servers (Options.KeepServers, or a run to resume).
	DataKept bool
	Elapsed  time.Duration
}

// errOutputExists means the output folder holds Records of an earlier run.
var errOutputExists = errors.New("the output folder has Records of an earlier run")

// Run runs the demo: it makes sure the programs it needs are installed
// (installing them as root), fetches a second MariaDB release next to the
// installed one, writes a plan comparing the two and a configuration variant
// into Out/plan.toml, runs it (runner.Run), and writes the report and charts
// into Out. Every server it starts is stopped before it returns, also when
// ctx ends (Ctrl-C): what was measured by then is kept and reported, and
// the error wraps runner.ErrInterrupted. When measurements failed, the
// report is written and the error wraps runner.ErrStepsFailed.
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(o.Progress, "perfbench demo: "+format+"\n", args...)
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, fmt.Errorf("output folder %s: %w", o.Out, err)
	}
	if recs, _ := filepath.Glob(filepath.Join(out, "records", "*.json")); len(recs) > 0 {
		return nil, fmt.Errorf("%w: %s (%d Records): remove it (rm -rf %s) or choose another with --out", errOutputExists, out, len(recs), out)
	}
	res := &Result{Out: out, Plan: filepath.Join(out, "plan.toml")}

	root := os.Geteuid() == 0
	if err := ensureTools(ctx, toolsEnv{root: root, find: findTool, run: execRun, log: o.Progress}); err != nil {
		return nil, err
	}
	bin, err := sandbox.FindServerBinary("")
	if err != nil {
		return nil, err
	}
	flavor, version, err := sandbox.Detect(ctx, bin)
	if err != nil {
		return nil, err
	}
	installed := upstream(version)
	if installed == "" {
		return nil, fmt.Errorf("read the installed server's release from %s --version: %q has no version number", bin, version)
	}
	logf("installed server: %s %s (%s)", bin, version, flavor)

	switch {
	case o.InstalledOnly:
		logf("--installed-only: comparing %s with its configuration variant only", installed)
	case flavor != sandbox.MariaDB:
		res.OtherErr = fmt.Errorf("the installed server is %s, not MariaDB: Debian offers no other release of it", flavor)
	default:
		res.Other, res.OtherErr = fetchOther(ctx, fetchOptions{Installed: installed, CacheDir: o.CacheDir, Update: root, Log: o.Progress})
		if res.OtherErr != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("fetch a second release: %w", runner.ErrInterrupted)
		}
	}
	if res.OtherErr != nil {
		logf("warning: no second release to compare with: %v", res.OtherErr)
		logf("going on with the installed release %s and its configuration variant", installed)
	}
	if res.Other != nil {
		logf("second release: MariaDB %s (%s %s) in %s", res.Other.Upstream, serverPackage, res.Other.Version, res.Other.Dir)
	}

	vs, base := versions(installed, res.Other)
	res.Base = base
	for _, v := range vs {
		res.Versions = append(res.Versions, v.Label)
	}
	settings := fullSettings
	if o.Quick {
		settings = quickSettings
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("create the output folder: %w", err)
	}
	if err := record.WriteFileAtomic(res.Plan, planTOML(vs, base, settings, o.Quick)); err != nil {
		return nil, fmt.Errorf("write the plan: %w", err)
	}
	p, err := plan.Load(res.Plan)
	if err != nil {
		return nil, fmt.Errorf("read the plan the demo wrote (a bug): %w", err)
	}
	logf("plan: %s (versions %s; base %s)", res.Plan, strings.Join(res.Versions, ", "), base)

	sum, runErr := runner.Run(ctx, p, runner.Options{
		Out: out, Progress: o.Progress, Terminal: o.Terminal, Width: o.Width,
		Command: o.Command, Perfbench: o.Perfbench,
		// On success the data directories are removed below.
		DataRemovedWhenOK: !o.KeepServers,
	})
	res.Summary = sum
	if sum == nil {
		return res, fmt.Errorf("run the plan %s: %w", res.Plan, runErr)
	}
	// Keep the data after an interruption or failures: perfbench run
	// --resume finishes the plan on it.
	res.DataKept = true
	if !o.KeepServers && runErr == nil {
		res.DataKept = !removeData(out, res.Versions, logf)
	}
	if len(sum.Files) > 0 {
		var err error
		res.Reports, res.Charts, res.RQPS, err = writeReport(out, base)
		if err != nil {
			return res, err
		}
	}
	res.Elapsed = time.Since(start)
	return res, runErr
}

// removeData removes the servers' data directories (hundreds of MB each),
// and the marker that says their data is loaded, keeping their error logs.
// It reports whether they are all gone.
func removeData(out string, versions []string, logf func(string, ...any)) bool {
	removed, all := 0, true
	for _, v := range versions {
		dir := filepath.Join(out, "servers", v)
		if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
			continue
		}
		err := os.RemoveAll(filepath.Join(dir, "data"))
		if err == nil {
			err = os.Remove(filepath.Join(dir, "perfbench-data"))
			if errors.Is(err, os.ErrNotExist) {
				err = nil
			}
		}
		if err != nil {
			logf("warning: remove the data directory of %s: %v", v, err)
			all = false
			continue
		}
		removed++
	}
	if removed > 0 {
		logf("removed the servers' data directories (--keep-servers keeps them); their error logs are in %s", filepath.Join(out, "servers"))
	}
	return all
}

// Report files, by format.
var reportFiles = []struct{ format, name string }{
	{"text", "report.txt"},
	{"markdown", "report.md"},
	{"html", "report.html"},
	{"csv", "report.csv"},
	{"json", "report.json"},
	{"benchfmt", "report.bench.txt"},
}

// writeReport writes the report of out/records in every format, and the
// charts into out/charts, and returns the files written and the rQPS table.
func writeReport(out, base string) (files, charts []string, rqps []byte, err error) {
	recs, warnings, err := report.Load([]string{filepath.Join(out, "records")})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read the Records: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil, nil, nil
	}
	opt := report.Options{Base: base}
	for _, f := range reportFiles {
		var buf bytes.Buffer
		if err := report.Write(&buf, f.format, recs, warnings, opt); err != nil {
			return files, nil, nil, fmt.Errorf("write the %s report: %w", f.format, err)
		}
		path := filepath.Join(out, f.name)
		if err := record.WriteFileAtomic(path, buf.Bytes()); err != nil {
			return files, nil, nil, err
		}
		files = append(files, path)
	}
	var buf bytes.Buffer
	if err := report.Write(&buf, "text", recs, nil, report.Options{Base: base, Tables: []string{report.TableRQPS}}); err == nil {
		rqps = buf.Bytes()
	}
	all, err := report.Charts(recs, opt, seriesCounter(recs))
	if err != nil {
		return files, nil, rqps, fmt.Errorf("draw the charts: %w", err)
	}
	charts, err = report.WriteCharts(filepath.Join(out, "charts"), all)
	return files, charts, rqps, err
}

// seriesCounter is the event the per-second charts show per operation:
// instructions when they were counted, else task-clock (CPU time).
func seriesCounter(recs []*record.Record) string {
	for _, r := range recs {
		for _, p := range r.Series {
			if _, ok := p.Counters["instructions"]; ok {
				return "instructions"
			}
		}
	}
	return "task-clock"
}

// Guide writes where everything is and the commands to look at it.
func (r *Result) Guide(w io.Writer) {
	fmt.Fprintf(w, "\nperfbench demo: everything is in %s\n", r.Out)
	fmt.Fprintf(w, "  plan.toml          the plan that ran (perfbench run %s --out DIR runs it again)\n", r.Plan)
	if r.Summary != nil {
		fmt.Fprintf(w, "  records/           %d Records, one JSON document per measured window\n", len(r.Summary.Files))
	}
	for _, f := range r.Reports {
		fmt.Fprintf(w, "  %-18s %s\n", filepath.Base(f), reportAbout(filepath.Base(f)))
	}
	if len(r.Charts) > 0 {
		fmt.Fprintf(w, "  charts/            %d files: rQPS by step and version (rqps_*), counter ratios (heatmap_*), "+
			"per-second series (series_*), SVG and PNG\n", len(r.Charts))
	}
	fmt.Fprintf(w, "  logs/              sysbench's output of every measurement, data loads\n")
	if r.DataKept {
		fmt.Fprintf(w, "  servers/           each server's data directory and error log (remove the data when done: rm -rf %s)\n", filepath.Join(r.Out, "servers"))
	} else {
		fmt.Fprintf(w, "  servers/           each server's error log\n")
	}
	fmt.Fprintf(w, "\nLook at it:\n")
	fmt.Fprintf(w, "  less %s\n", filepath.Join(r.Out, "report.txt"))
	fmt.Fprintf(w, "  perfbench report %s --format text --tables rqps,counters-rel\n", filepath.Join(r.Out, "records"))
	fmt.Fprintf(w, "  perfbench report %s --format html --out /tmp/report.html\n", filepath.Join(r.Out, "records"))
	fmt.Fprintf(w, "  benchstat -col /v %s\n", filepath.Join(r.Out, "report.bench.txt"))
	fmt.Fprintf(w, "  open %s in a browser (scripts/check-html.sh %s takes a headless screenshot)\n", filepath.Join(r.Out, "report.html"), r.Out)
}

func reportAbout(name string) string {
	switch name {
	case "report.txt":
		return "every table in the layout of published posts"
	case "report.md":
		return "the same tables in Markdown"
	case "report.html":
		return "the same tables as one self-contained HTML page, coloured"
	case "report.csv":
		return "every cell, one line each, for scripts"
	case "report.json":
		return "the tables as JSON"
	case "report.bench.txt":
		return "Go benchmark format, for benchstat"
	}
	return ""
}
