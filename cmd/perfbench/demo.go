package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/perfbench/perfbench/internal/demo"
	"github.com/perfbench/perfbench/internal/run/runner"
)

func init() {
	register(&command{
		name:    "demo",
		summary: "see perfbench at work: two MariaDB releases and a configuration variant compared on this machine, report included",
		usage:   "demo [--quick] [--out DIR] [--keep-servers] [--installed-only]",
		long: `Run it as root on a Debian machine. The demo:

  1. installs what is missing with apt-get (mariadb-server, mariadb-client,
     sysbench, linux-perf), or says the command to run when it cannot;
  2. fetches another MariaDB point release of the installed series without
     installing it (apt-cache madison mariadb-server-core, apt-get download,
     dpkg-deb -x into /var/cache/perfbench/), so that two real releases run
     side by side; with no network it goes on with the installed one alone;
  3. writes a plan into DIR/plan.toml: the older release as the base, the
     newer one, and the installed one with the binary log synced at every
     commit (a known cost on writes, none on reads), and the base again under
     a second label (an A/A pair: the report prints its rQPS as the noise
     floor next to the others); point, range and write
     steps at 1 and 2 client threads, 3 interleaved repeats, 3 s windows;
  4. runs it like 'perfbench run': a sandbox server per version on its own
     data directory, counters on every server thread, one Record per window;
  5. writes the report (report.txt, .md, .html, .csv, .json, .bench.txt) and
     SVG/PNG charts into DIR, and says where everything is.

The full demo takes about 11 minutes on a 2-core machine, --quick (3 steps,
1 thread, 2 repeats, 2 s windows) about 3. The servers' data directories are
removed at the end unless --keep-servers; after an interruption or a failed
measurement they are kept, so that 'perfbench run DIR/plan.toml --out DIR
--resume' finishes the plan. Ctrl-C stops every server the demo started,
keeps and reports what was measured, and exits with status 1.

Examples:
  perfbench demo
  perfbench demo --quick --out /tmp/demo
  perfbench report perfbench-demo/records --tables rqps,counters-rel`,
		setup: func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
			var o demo.Options
			fs.StringVar(&o.Out, "out", "perfbench-demo", "output folder for the plan, Records, report and charts")
			fs.BoolVar(&o.Quick, "quick", false, "run the short plan CI can afford (about 3 minutes)")
			fs.BoolVar(&o.KeepServers, "keep-servers", false, "keep the servers' data directories under DIR/servers (removed "+
				"after a run where every measurement succeeded)")
			fs.BoolVar(&o.InstalledOnly, "installed-only", false, "do not fetch a second release: compare the installed one with its configuration variant")
			fs.StringVar(&o.CacheDir, "cache", "", "folder where the second release is unpacked (default /var/cache/perfbench as root, else ~/.cache/perfbench)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				o.Progress = e.stderr
				o.Command = e.args
				o.Perfbench = versionString()
				if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
					o.Terminal = true
					if w, _, err := term.GetSize(int(f.Fd())); err == nil {
						o.Width = w
					}
				}
				res, err := demo.Run(ctx, o)
				if res != nil && len(res.RQPS) > 0 {
					fmt.Fprintf(e.stdout, "\n%s", res.RQPS)
				}
				if res != nil && (len(res.Reports) > 0 || res.Summary != nil) {
					res.Guide(e.stdout)
				}
				out := o.Out
				if res != nil {
					out = res.Out
				}
				switch {
				case errors.Is(err, runner.ErrInterrupted):
					fmt.Fprintf(e.stderr, "perfbench demo: interrupted: every server the demo started is stopped; what was measured is in %s\n", out)
					return errSilent
				case errors.Is(err, runner.ErrStepsFailed):
					fmt.Fprintf(e.stderr, "perfbench demo: some measurements failed: the report marks them failed and its notes say "+
						"why; to run them again: perfbench run %s --out %s --resume\n",
						filepath.Join(out, "plan.toml"), out)
					return errSilent
				}
				return err
			}
		},
	})
}
