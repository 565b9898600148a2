package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/internal/profile/pprofout"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

func init() {
	register(&command{
		name:    "stat",
		summary: "count perf events on a server (or any process) over a window, per query",
		usage:   "stat [--pid PID | --socket S | --host H --port P ...] [-e EVENTS] [--label L --step S --repeat N] [--duration D | -- COMMAND [ARGS]]",
		long:    statLong,
		setup:   setupStat,
	})
}

// statLong is perfbench stat's --help text.
const statLong = `Attaches counters to every thread of the server (with inheritance, so threads
it creates are counted too and threads that exit keep their counts), reads the
server's SHOW GLOBAL STATUS and /proc at the same instants as the counters, and
prints for each event the total, the rate per second, the value per operation
(the server's Questions by default, --op to choose) and the status: counted,
scaled (multiplexed, with the fraction of the time it ran), <not counted> or
<not supported> with the reason. IPC and MPKI are printed where both events
were measured.

The server is found with --pid, --pid-file, --socket or --host/--port, or is
the only mysqld/mariadbd running; credentials are read as MySQL clients read
them (--defaults-file, ~/.my.cnf [client] and [perfbench], MYSQL_PWD, --user,
--password, --ask-password). A process that is not mysqld or mariadbd is
refused unless --force; with --force and no way to log in to a server, the
process is still counted, without status or per-op values.

The window:
  --duration D            counts for D (after --warmup);
  -- COMMAND ARGS         attaches the counters, runs the command, and counts
                          while it runs (from its start, or after --warmup D;
                          --duration caps the window). Its output goes to
                          stderr (or --load-output FILE) so stdout stays clean.
                          When it is sysbench, its report fills the Record's
                          client section, and --op client.queries (or
                          client.transactions, client.events) counts ops
                          from it: its totals when the window holds its
                          whole run, else its per-interval lines
                          (--report-interval=1) when they cover at least 95%
                          of the window during its run; below that there is
                          no count (the Record says why: use --op Questions).
  neither                 counts until Ctrl-C.

A window, or an --interval, that lasts much longer than planned (over 25% and
0.5 s past a --duration; over 1.5x an --interval) is warned about: the
machine or the server stalled, rates per second are unreliable, values per op
are still counted. Interval lines of the client that jump are warned about
too. In the --interval table, "ends at" is the end of each interval, counted
from the window's opening, and "(stall)" flags an interval too long.

The Record is labelled for perfbench report: --label is its version (default:
the server's version string), --step its step (default: the sysbench test of
the command, such as oltp_point_select, else "stat"), --repeat its repeat
number (default 1). Records with the same label, step and thread count are
repeats of one measurement in a report: give each run its own step, or its
own --repeat.

Ctrl-C ends the window early: what was measured is printed (and written with
--out), marked partial, and the exit status is 1. Without --duration and
without a command, Ctrl-C is the planned end of the window, as with perf stat:
the output is complete and the exit status 0.

EVENTS is a perf-style list: generic, cache and software events by perf's
names, pmu/term=value/ and pmu/alias/, rNNNN, tracepoints, :ukh modifiers and
{...} groups. Without -e: cycles, instructions, cache-references, cache-misses,
branches, branch-misses where the PMU counts them (probed on the process), and
task-clock, context-switches, cpu-migrations, page-faults; stderr says which.

When the process is alone in its cgroup v2 (with the processes it forks),
as a server under systemd is, the counters count per CPU filtered by that
cgroup (cgroup mode, as --cgroup): they see the CPU of threads that start and
exit inside the window, which per-thread counters miss (perf stat -p's too).
Otherwise, and with --per-thread or --per-role (roles need counters per
thread), they count per thread. Every window's task-clock is checked against
the CPU time the kernel charged to what it counted (per thread: the process's
CPU clock plus its child processes' CPU; in cgroup mode: the cgroup's
cpu.stat usage_usec), read right before and right after the counters at both
edges: a window more than 5% outside that is partial, its error giving both
numbers and the cause; per thread, 3-5% below it is a warning (code cpu-gap).
A process that forks or starts threads all the time is counted per thread
9-11% low when it forks every 2 ms: count it in cgroup mode.

--per-role splits the counts by thread role (connection, innodb-io, purge,
page-cleaner, log, other-background, main...); the roles add up to the total.
The server's threads are named (performance_schema, else the processlist and
thread names) when the window opens, a quarter second later, every second
while it runs and when it closes; a thread that served a connection at any of
these instants is a connection thread. That names the connections of a load
that reuse threads of the server's thread cache, which are anonymous while
cached. A thread created inside the window (a connection the cache could not
serve) has no counters of its own and is counted through the thread that
created it; the main thread, which creates the connections, is counted with
and without them, so they are in the connection role without a --warmup.
A warning says how many threads started inside the window.

--profile[=FREQ] also samples call stacks over the window (CPU-wide, kept
for the process; cpu-clock unless --profile-event) and writes a pprof profile
(--profile-out, default profile.pb.gz next to --out, or here), labelled with
the thread roles named as for --per-role (label role; comm and tid too) and
the window's op count; the Record's profile field points to it.

--format json prints the window as one Record (the JSON perfbench report
reads); --out FILE writes it to FILE atomically, whatever --format is.

Examples:
  perfbench stat --socket /run/mysqld/mysqld.sock --duration 10s
  perfbench stat --pid $(pidof mariadbd) -e '{cycles,instructions},cache-misses' --duration 30s --interval 1s
  perfbench stat --socket /tmp/s.sock --format json -- sysbench oltp_point_select --threads=2 --time=10 run
  perfbench stat --socket /tmp/s.sock --per-role --warmup 2s -- sysbench oltp_read_only --time=12 run
  perfbench stat --socket /tmp/s.sock --label 10.11.6 --repeat 2 --out r2.json -- sysbench oltp_point_select --time=10 run
  perfbench stat --pid 4121 --force --duration 10s`

// setupStat registers perfbench stat's flags on fs and returns the command.
func setupStat(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error {
	var a statArgs
	a.target.AddFlags(fs)
	a.addWindowFlags(fs)
	a.addOutputFlags(fs)
	a.profile.AddFlags(fs)
	fs.BoolVar(&a.cgroup, "cgroup", false, "count per CPU, filtered by the process's cgroup v2 (every process in that "+
		"cgroup; needs root or CAP_PERFMON); the default when the process is alone in its cgroup")
	fs.BoolVar(&a.perThread, "per-thread", false, "count per thread even when the process is alone in its cgroup (misses "+
		"the CPU of threads' exits; --per-role does)")
	return func(ctx context.Context, e *env, args []string) error {
		if err := a.check(fs, args); err != nil {
			return err
		}
		if fs.Changed("password") {
			fmt.Fprintln(e.stderr, "perfbench stat: warning: --password on the command line can be read by other users until "+
				"perfbench hides it as it starts; prefer MYSQL_PWD, a defaults file (--defaults-file, ~/.my.cnf) or --ask-password")
		}
		return runStat(ctx, e, &a)
	}
}

// addWindowFlags registers the flags of what is counted and when.
func (a *statArgs) addWindowFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&a.events, "events", "e", "", "events to count, perf-style list (default: the hardware set where the PMU has it, plus software events)")
	fs.DurationVar(&a.duration, "duration", 0, "length of the window; 0 counts until the command exits or Ctrl-C")
	fs.DurationVar(&a.warmup, "warmup", 0, "wait this long before the window opens (the command's first seconds are left out)")
	fs.DurationVar(&a.interval, "interval", 0, "also record (and print, in text) every interval inside the window, e.g. 1s "+
		"("+measure.MinInterval.String()+" or more)")
	fs.StringVar(&a.op, "op", "", "what an operation is: a status counter (Questions, Com_select, rows/1000...) or "+
		"client.queries, client.transactions, client.events (default Questions)")
	fs.BoolVar(&a.perRole, "per-role", false, "split the counts by thread role (connection, InnoDB IO, purge, ...)")
}

// addOutputFlags registers the flags of the output and the Record's labels.
func (a *statArgs) addOutputFlags(fs *pflag.FlagSet) {
	fs.StringVar(&a.format, "format", "text", "output format: text or json")
	fs.StringVar(&a.out, "out", "", "also write the Record (JSON) to this file, atomically")
	fs.StringVar(&a.loadOutput, "load-output", "", "write the command's output to this file instead of stderr")
	fs.StringVar(&a.cpusFlag, "cpus", "", "run the command (and what it starts) on these CPUs only, like taskset -c: \"0\", \"0-3,8\"")
	fs.StringVar(&a.label, "label", "", "version label of the Record, for perfbench report (default: the server's version string)")
	fs.StringVar(&a.step, "step", "", "step label of the Record (default: the sysbench test of the command, else \"stat\")")
	fs.IntVar(&a.repeat, "repeat", 1, "repeat number of the Record: runs of one label, step and thread count are a measurement's repeats")
}

// check checks the parsed flags and arguments (the command after --).
func (a *statArgs) check(fs *pflag.FlagSet, args []string) error {
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		if dash > 0 {
			return usagef("unexpected argument %q", args[0])
		}
		a.command = args
		if len(a.command) == 0 {
			return usagef("no command after --")
		}
	} else if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if a.format != "text" && a.format != "json" {
		return usagef("--format must be text or json, not %q", a.format)
	}
	if err := a.checkCPUs(); err != nil {
		return err
	}
	if a.duration < 0 || a.interval < 0 || a.warmup < 0 {
		return usagef("--duration, --warmup and --interval cannot be negative")
	}
	if a.interval > 0 && a.interval < measure.MinInterval {
		return usagef("--interval %s is below %s: each interval reads the server's status, which costs it 1-2 ms of CPU, so "+
			"perfbench's own reads would weigh on what is measured; give --interval %s or more", a.interval, measure.MinInterval, measure.MinInterval)
	}
	if a.repeat < 1 {
		return usagef("--repeat must be 1 or more, not %d", a.repeat)
	}
	if fs.Changed("label") && strings.TrimSpace(a.label) == "" || fs.Changed("step") && strings.TrimSpace(a.step) == "" {
		return usagef("--label and --step cannot be empty")
	}
	if err := a.target.ValidateFlags(); err != nil {
		return usagef("%v", err)
	}
	if err := a.profile.Validate(); err != nil {
		return usagef("%v", err)
	}
	if a.cgroup && (a.perThread || a.perRole) {
		return usagef("--cgroup counts per CPU and cannot be combined with --per-thread or --per-role, which count per thread")
	}
	return nil
}

type statArgs struct {
	target                     mysqld.Target
	events, op, format, out    string
	loadOutput, label, step    string
	repeat                     int
	duration, interval, warmup time.Duration
	perRole, cgroup, perThread bool
	command                    []string
	profile                    pprofout.Flags
	// cpus is --cpus, parsed in check.
	cpusFlag string
	cpus     cpuset.Set
}

func runStat(ctx context.Context, e *env, a *statArgs) error {
	// Files are checked before anything is measured: a window is not
	// measured to be lost at the end.
	if err := checkOutput("--out", a.out); err != nil {
		return err
	}
	if a.profile.Enabled() {
		if err := checkOutput("--profile-out", a.profile.Path(a.out)); err != nil {
			return err
		}
	}
	st := &statRun{e: e, a: a}
	defer st.close()
	if err := st.find(ctx); err != nil {
		return err
	}
	if err := st.open(ctx); err != nil {
		return err
	}
	if err := st.startLoad(); err != nil {
		return err
	}
	return st.measure(ctx)
}

// statRun is one perfbench stat: the process counted, the server's
// connection, the counters and the load command.
type statRun struct {
	e *env
	a *statArgs

	sys     *perfevent.System
	list    perfevent.List
	found   *mysqld.Found
	db      *mysqld.DB // nil without a connection to the server
	step    string
	cfg     measure.Config
	s       *measure.Session
	load    *measure.Load // nil without a command
	loadOut *os.File      // --load-output
	// placed is where the server and the command were seen to run.
	placed *record.Placement
}

// close closes what run opened, the last first.
func (st *statRun) close() {
	if st.loadOut != nil {
		st.loadOut.Close()
	}
	if st.s != nil {
		st.s.Close()
	}
	if st.db != nil {
		st.db.Close()
	}
}

// find parses the events, finds the process and connects to the server.
func (st *statRun) find(ctx context.Context) error {
	a, e := st.a, st.e
	var err error
	if st.sys, err = perfevent.LoadSystem("/"); err != nil {
		return err
	}
	if a.events != "" {
		if st.list, err = perfevent.Parse(a.events, st.sys); err != nil {
			return err
		}
	}
	if measure.IsClientOp(a.op) && len(a.command) == 0 {
		return usagef("--op %s counts ops from the load command: give one after --", a.op)
	}
	if st.found, err = mysqld.Find(ctx, a.target); err != nil {
		return err
	}
	if err := procfs.New(sysRoot).Proc(st.found.Pid).Alive(); err != nil {
		return fmt.Errorf("%w: nothing to count; give the pid of a running process", err)
	}
	notes, err := st.connect(ctx)
	if err != nil {
		return err
	}
	// Notes are printed once nothing can fail any more on the flags.
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "perfbench stat: %s\n", n)
	}
	if a.events == "" {
		spec, why := measure.DefaultEvents(st.sys, st.found.Pid, nil)
		fmt.Fprintf(e.stderr, "perfbench stat: no -e: counting %s: %s\n", spec, why)
		if st.list, err = perfevent.Parse(spec, st.sys); err != nil {
			return err
		}
	}
	return nil
}

// connect connects to the server, when the process is one and it can; the
// notes say what is not counted without it.
func (st *statRun) connect(ctx context.Context) (notes []string, err error) {
	a, found := st.a, st.found
	if found.IsServer() {
		db, err := connectServer(ctx, st.e, a, found)
		if err != nil {
			if !a.target.Force {
				return nil, fmt.Errorf("%w (with --force the process is counted without the server's status)", err)
			}
			notes = append(notes, fmt.Sprintf("no connection to the server (%s): counting the process only", oneLine(err.Error())))
		} else {
			st.db = db
		}
	} else {
		notes = append(notes, fmt.Sprintf("pid %d is not a server (--force): counting the process only", found.Pid))
	}
	if st.db != nil {
		notes = append(notes, st.db.Warnings...)
	}
	if st.db == nil && !measure.IsClientOp(a.op) {
		if a.op != "" {
			return nil, fmt.Errorf("--op %s needs a connection to the server (or use --op client.queries with a sysbench command)", a.op)
		}
		notes = append(notes, "per-op values are unavailable without a connection to the server")
	}
	return notes, nil
}

// open opens the counters and says what they count.
func (st *statRun) open(ctx context.Context) error {
	a, e := st.a, st.e
	st.cfg = measure.Config{
		Pid: st.found.Pid, Events: st.list, System: st.sys, DB: st.db, Op: a.op,
		Interval: a.interval, PerRole: a.perRole, Cgroup: a.cgroup,
		Perfbench: versionString(), Command: e.args,
	}
	st.step = a.step
	if st.step == "" {
		st.step = measure.SysbenchTest(a.command)
	}
	if st.step == "" {
		st.step = "stat"
	}
	if a.profile.Enabled() {
		so, err := a.profile.SampleOptions(st.sys)
		if err != nil {
			return usagef("%v", err)
		}
		st.cfg.Profile = &measure.Profile{Sample: so, Path: a.profile.Path(a.out), RecordFile: a.out, Version: a.label, Step: st.step}
	}
	mode, auto := st.countMode()
	st.cfg.Cgroup = mode == ""
	s, err := measure.Start(ctx, st.cfg)
	if err != nil && auto && st.cfg.Cgroup {
		// Cgroup mode was chosen, not asked for: count per thread.
		mode = fmt.Sprintf("cgroup mode could not open its counters (%s)", oneLine(err.Error()))
		st.cfg.Cgroup = false
		s, err = measure.Start(ctx, st.cfg)
	}
	if err != nil {
		return err
	}
	st.s = s
	if mode != "" && !a.perThread {
		fmt.Fprintf(e.stderr, "perfbench stat: counting per thread: %s; per-thread counters miss some CPU at thread exits and "+
			"context switches (CPU per op is the kernel's)\n", mode)
	}
	if un := s.Attachment().Unsupported(); len(un) == len(st.list.Events) {
		// Nothing would be counted: say so before the window, not
		// after a run whose every number is "not supported".
		var names []string
		for _, ev := range st.list.Events {
			names = append(names, ev.Name)
		}
		return fmt.Errorf("none of the events can be counted here (%s); perfbench events lists what this machine counts", groupReasons(names, un))
	}
	where := fmt.Sprintf("%d threads", len(s.Attachment().Threads()))
	if st.cfg.Cgroup {
		where = "the cgroup"
		if !a.cgroup {
			where = "the cgroup it is alone in (cgroup mode: --per-thread counts per thread)"
		}
	}
	fmt.Fprintf(e.stderr, "perfbench stat: counting %d events on %s of %s %s\n", len(st.list.Events), where, st.found.Describe(), statUntil(a))
	if w := s.Concurrent(); w != "" {
		fmt.Fprintf(e.stderr, "perfbench stat: warning: %s\n", w)
	}
	return nil
}

// countMode decides how the counters count: "" for cgroup mode, else why
// per thread. auto is false when a flag decided: --cgroup, --per-thread,
// or --per-role (which needs counters per thread). Otherwise cgroup mode
// is chosen when the process is alone in its cgroup v2 (a server under
// systemd is): its per-CPU counters see all of the process's CPU, where
// per-thread ones miss what threads run while they start and exit.
func (st *statRun) countMode() (why string, auto bool) {
	a := st.a
	switch {
	case a.cgroup:
		return "", false
	case a.perThread:
		return "--per-thread", false
	case a.perRole:
		return "--per-role needs counters per thread", false
	}
	if _, why := perfevent.AloneInCgroup(st.found.Pid); why != "" {
		return "not alone in a cgroup: " + why, true
	}
	return "", true
}

// statUntil says when the window ends: "for 10s (Ctrl-C ends early)".
func statUntil(a *statArgs) string {
	until := "until Ctrl-C"
	switch {
	case len(a.command) > 0 && a.duration > 0:
		until = fmt.Sprintf("for %s of %s's run", a.duration, a.command[0])
	case len(a.command) > 0:
		until = fmt.Sprintf("while %s runs", a.command[0])
	case a.duration > 0:
		until = fmt.Sprintf("for %s (Ctrl-C ends early)", a.duration)
	}
	if a.warmup > 0 {
		until += fmt.Sprintf(", after a %s warm-up", a.warmup)
	}
	return until
}

// startLoad starts the load command, if any.
func (st *statRun) startLoad() error {
	a := st.a
	if len(a.command) == 0 {
		return nil
	}
	var out io.Writer = st.e.stderr
	if a.loadOutput != "" {
		f, err := os.Create(a.loadOutput)
		if err != nil {
			return fmt.Errorf("write the command's output: %w", err)
		}
		st.loadOut = f
		out = f
	}
	load, err := measure.StartLoad(a.command, measure.LoadOptions{Out: out, CPUs: a.cpus})
	if err != nil {
		return err
	}
	st.load = load
	st.placed = observePlacement(a.cpus, st.found.Pid, load.Pid())
	return nil
}

// label sets the Record's label, step and repeat.
func (st *statRun) label(r *record.Record) {
	if st.a.label != "" {
		r.Version = st.a.label
	}
	r.Step, r.Repeat = st.step, st.a.repeat
	if st.placed != nil {
		r.Provenance.Placement = st.placed
	}
}

// measure measures the window, writes its Record and returns the run's
// error.
func (st *statRun) measure(ctx context.Context) error {
	a, e := st.a, st.e
	spec := measure.WindowSpec{Warmup: a.warmup, Duration: a.duration}
	if st.load != nil {
		spec.Done = st.load.Done()
	}
	r, merr := st.s.Measure(ctx, spec)
	if r == nil {
		return st.failed(merr)
	}
	st.label(r)
	if st.load != nil {
		st.applyLoad(ctx, r, merr)
	}
	if err := writeStat(e, a, r); err != nil {
		return err
	}
	if st.cfg.Profile != nil && r.Profile != "" {
		fmt.Fprintf(e.stderr, "perfbench stat: profile written to %s (go tool pprof %s)\n", st.cfg.Profile.Path, st.cfg.Profile.Path)
	}
	switch {
	case merr != nil:
		return fmt.Errorf("interrupted: the window is partial (%s)", firstReason(r.Error))
	case r.Outcome == record.OutcomeFailed:
		return errors.New(firstReason(r.Error))
	}
	return nil
}

// firstReason is the error line of a window from its Record's error: its
// first reason, the cause (a failure's reasons come first, cause first),
// on one line, with how many more the window printed above says.
func firstReason(e string) string {
	reasons := strings.Split(oneLine(e), "; ")
	if n := len(reasons) - 1; n > 0 {
		return fmt.Sprintf("%s (and %d more in the Record's error)", reasons[0], n)
	}
	return reasons[0]
}

// failed keeps a failure of the counters, where nothing was counted, as a
// failed Record, as perfbench run keeps it; the load is not left to run on
// for nothing.
func (st *statRun) failed(merr error) error {
	r := st.s.Failed(merr)
	st.label(r)
	if st.load != nil {
		st.load.Stop(2 * time.Second)
		r.Client = st.load.Client()
	}
	if err := writeStat(st.e, st.a, r); err != nil {
		return fmt.Errorf("%w; and %w", merr, err)
	}
	return merr
}

// applyLoad waits for the load command and sets its results on r.
func (st *statRun) applyLoad(ctx context.Context, r *record.Record, merr error) {
	a := st.a
	st.load.WaitOrStop(ctx, 10*time.Second)
	c := st.load.Client()
	if res := st.load.Sysbench(); res != nil {
		r.Threads = res.Threads
		if !res.Complete && merr == nil {
			r.Warnf(record.WarnGeneral, "sysbench's output has no final report: its counts are incomplete")
		}
	}
	measure.ApplyClient(r, c, a.op)
	if w := measure.OpsWarning(r); w != "" && a.format == "json" {
		fmt.Fprintf(st.e.stderr, "perfbench stat: warning: %s\n", w)
	}
	if c.ExitCode != 0 && r.Outcome == record.OutcomeOK {
		r.Outcome = record.OutcomeFailed
		r.Error = fmt.Sprintf("the load command %s exited with status %d", a.command[0], c.ExitCode)
	}
}

// groupReasons lists why events cannot be counted, one entry per reason in
// the order of first appearance, each with the events it stops: at most
// three names and the count when there are more ("r1, r2, r3, … (500
// events): no hardware PMU").
func groupReasons(names []string, reason map[string]string) string {
	var order []string
	byReason := map[string][]string{}
	for _, n := range names {
		r := reason[n]
		if _, ok := byReason[r]; !ok {
			order = append(order, r)
		}
		byReason[r] = append(byReason[r], n)
	}
	var out []string
	for _, r := range order {
		evs := byReason[r]
		list := strings.Join(evs, ", ")
		if len(evs) > 3 {
			list = fmt.Sprintf("%s, … (%d events)", strings.Join(evs[:3], ", "), len(evs))
		}
		out = append(out, list+": "+r)
	}
	return strings.Join(out, "; ")
}

// writeStat prints the window and writes it to --out. When --out cannot be
// written (it was checked before the window: a disk that filled up, a
// folder removed since), the Record is kept in a temporary file, or else
// on stdout, and the error says where.
func writeStat(e *env, a *statArgs, r *record.Record) error {
	b, err := record.Marshal(r)
	if err != nil {
		return err
	}
	if a.format == "json" {
		_, err = e.stdout.Write(b)
	} else {
		err = measure.WriteText(e.stdout, r, measure.TextOptions{Interval: a.interval})
	}
	if err != nil {
		return fmt.Errorf("print the window: %w", err)
	}
	if a.out == "" {
		return nil
	}
	werr := record.WriteFileAtomic(a.out, b)
	if werr == nil {
		return nil
	}
	if a.format == "json" {
		return fmt.Errorf("%w; the Record is on stdout only", werr)
	}
	if saved, err := saveTemp(b); err == nil {
		return fmt.Errorf("%w; the Record was saved to %s instead", werr, saved)
	}
	if _, err := e.stdout.Write(b); err == nil {
		return fmt.Errorf("%w, nor could a temporary file be; the Record (JSON) follows the text on stdout", werr)
	}
	return fmt.Errorf("%w, nor could a temporary file be: the Record is lost", werr)
}

// saveTemp writes a Record that could not be written where asked into a
// temporary file and returns its path.
func saveTemp(b []byte) (string, error) {
	f, err := os.CreateTemp("", "perfbench-stat-*.json")
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// checkOutput makes sure a file flag names a file that can be written: not
// a folder, in a folder that exists (or can be made) and takes a new file.
func checkOutput(flag, path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("%s %s is a folder: give a file name, such as %s", flag, path, filepath.Join(path, "stat.json"))
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s %s cannot be written: %s: %w; give a path in a folder that exists or can be made", flag, path, pe.Path, pe.Err)
		}
		return fmt.Errorf("%s %s cannot be written: %w; give a path in a folder that exists or can be made", flag, path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".check*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s %s cannot be written: no file can be created in %s: %w; give a path in a writable folder", flag, path, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// connectServer logs in to the server found, prompting for a password on the
// terminal when asked to.
func connectServer(ctx context.Context, e *env, a *statArgs, found *mysqld.Found) (*mysqld.DB, error) {
	c, err := a.target.Client(mysqld.ClientEnv{})
	if err != nil {
		return nil, err
	}
	opts := mysqld.ConnectOptions{Force: a.target.Force}
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts.Prompt = func() (string, error) { return mysqld.ReadPassword(f, e.stderr, "Enter password: ") }
	}
	return mysqld.Connect(ctx, c, found, opts)
}
