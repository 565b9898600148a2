// Package record defines the Record: the one JSON document perfbench writes
// per measured window (host, version, step, threads, repeat), and from which
// every number in a report is computed. Records are written once, atomically,
// and never rewritten.
//
// A Record keeps raw facts: counter values with their enabled and running
// times, the server's status deltas, /proc deltas, the load generator's
// results. Derived numbers (per-op values, ratios) are computed by package
// analysis; the few derived fields stored here (Counter.PerOp) are there for
// readers of the JSON and are recomputed, not trusted, by analysis.
package record

import "time"

// SchemaVersion is the version of the Record JSON layout that Write
// writes. Read and Parse take Records of every schema up to it (schema 1
// is converted, see docs/record.md) and refuse larger ones.
const SchemaVersion = 2

// Kind says which command made a Record.
type Kind string

// Kinds of Record.
const (
	KindStep     Kind = "step"     // written by perfbench run for one benchmark step
	KindStat     Kind = "stat"     // written by perfbench stat
	KindImported Kind = "imported" // converted from perf stat / sysbench files by perfbench import
	// KindTable Records are built in memory by perfbench report from a
	// CSV table; no file holds one.
	KindTable Kind = "table"
)

// Outcome says whether a window was measured as planned.
type Outcome string

// Outcomes of a measurement.
const (
	OutcomeOK      Outcome = "ok"      // the window was measured as planned
	OutcomeFailed  Outcome = "failed"  // the step failed; Error says why; numbers may be missing
	OutcomePartial Outcome = "partial" // interrupted (Ctrl-C, SIGTERM), the process exited inside, or its counters missed CPU: Error says why
)

// Status says whether a counter has a value, as perf stat puts it.
type Status string

// Counter statuses.
const (
	StatusCounted      Status = "counted"       // ran for the whole window: Value == Raw
	StatusScaled       Status = "scaled"        // multiplexed: Value = Raw × Enabled / Running
	StatusNotCounted   Status = "not counted"   // enabled but never scheduled (Running == 0): no value
	StatusNotSupported Status = "not supported" // could not be opened on this machine: no value
)

// Record is one measured window.
type Record struct {
	Schema  int     `json:"schema"`
	Kind    Kind    `json:"kind"`
	Outcome Outcome `json:"outcome"`
	// Error says why a failed or partial Record is so.
	Error string `json:"error,omitempty"`
	// Warnings are conditions that weaken the result without voiding it:
	// multiplexing, threads lost, a short window, a server restart...
	// Every renderer prints them; each says by its Code which numbers it
	// concerns (see Warning).
	Warnings []Warning `json:"warnings,omitempty"`

	// Identity of the measurement. Version is the user's label for the
	// server build/config (column of a table); Step is the step label as
	// printed in tables (for example "point-query_range=100").
	Host    string `json:"host"`
	Version string `json:"version"`
	Step    string `json:"step"`
	Threads int    `json:"threads,omitempty"`
	Repeat  int    `json:"repeat"`
	// Group is the block of the report's tables the step's rows belong
	// to: "point", "range", "writes" (perfbench run writes the plan's
	// group of the step), "insert" for insert-benchmark steps. Absent,
	// readers take the group the suite gives the step's name.
	Group string `json:"group,omitempty"`

	Window Window `json:"window"`
	Ops    Ops    `json:"ops"`
	// KernelCPU is the CPU time the kernel charged over the window to
	// what the counters counted: CPU per op is taken from it (package
	// analysis). nil in Records written before it was read, in imports,
	// and when it could not be read at both edges.
	KernelCPU *KernelCPU `json:"kernel_cpu,omitempty"`

	// Counters are perf event counts over the window, summed over every
	// thread of the server. Every event name in a Record (here, in Roles,
	// in Series and in Warnings) is the canonical spelling: perf's catalogue
	// name for a generic event ("context-switches", not "cs"; "cycles:u",
	// not "cpu-cycles:u"), any other event as perf names it.
	Counters []Counter `json:"counters,omitempty"`
	// Rotation is set when the events asked for did not fit the PMU
	// budget and were counted in rotation, one group a repeat: Counters
	// then hold this repeat's group only (and the anchors); the other
	// events are absent, not "not counted".
	Rotation *Rotation `json:"rotation,omitempty"`

	// Gauges holds gauge variables read at the end of the window
	// (Threads_running, Open_tables, ...).
	Gauges map[string]float64 `json:"gauges,omitempty"`

	OS     *OS     `json:"os,omitempty"`
	Client *Client `json:"client,omitempty"`
	// Interference is other processes' CPU on the host over the window.
	Interference *Interference `json:"interference,omitempty"`

	// Metrics are values supplied directly rather than computed from raw
	// counts (from a CSV table, or an import that only had the ratio). Keys
	// are metric names as reports print them: "qps", "cpu/o", "cs/o", ...
	Metrics map[string]float64 `json:"metrics,omitempty"`

	Server     *Server    `json:"server,omitempty"`
	Provenance Provenance `json:"provenance"`
	// Source lists the files an imported Record came from.
	Source []string `json:"source,omitempty"`
	// Profile is the path, relative to the Record's file, of a pprof
	// profile sampled over the window.
	Profile string `json:"profile,omitempty"`
	// Insert holds insert-benchmark step results, when the step is one.
	Insert *Insert `json:"insert,omitempty"`
	// AutoRepeats is set when the plan chose the number of repeats
	// (repeats = "auto").
	AutoRepeats *AutoRepeats `json:"auto_repeats,omitempty"`
	// AAOf is the version this one measured again under another label (an
	// A/A pair of the plan): their rQPS is the run's noise floor.
	AAOf string `json:"aa_of,omitempty"`
	// Comparison is set when the Record's version was measured together
	// with the other versions of its step, thread count and repeat (duet
	// or slices), with every slice's raw counts.
	Comparison *Comparison `json:"comparison,omitempty"`

	// The bulky members come last, in this order, so that a reader that
	// needs none of those after some point can stop reading a Record
	// there (record.Selective): Status, Roles, Series.

	// Status holds the server's SHOW GLOBAL STATUS changes over the
	// window (counters as deltas).
	Status map[string]float64 `json:"status,omitempty"`
	// Roles splits the counters by thread role (connection, innodb-io, ...).
	// The roles' values add up to Counters.
	Roles []Role `json:"roles,omitempty"`
	// Series is a 1-second view inside the window, so stalls show.
	Series []Point `json:"series,omitempty"`
}

// Window is the measured interval. Start and End are the instants at which
// counters, server status and /proc were read.
type Window struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
	// Warmup is how long the load ran before the window opened.
	Warmup float64 `json:"warmup_seconds,omitempty"`
	// StatusLag is the longest time, in seconds, from a counter read at an
	// edge of the window to the end of the SHOW GLOBAL STATUS read next to
	// it: how far apart the counters' and the server status's edges may be.
	StatusLag float64 `json:"status_lag_seconds,omitempty"`
	// Counting is how the counters counted the server: CountingThread
	// (per thread, with inherit) or CountingCgroup (per CPU, filtered by
	// the server's cgroup v2); empty in Records written before it was
	// recorded, and when nothing was counted.
	Counting string `json:"counting,omitempty"`
}

// Window.Counting values.
const (
	CountingThread = "thread"
	CountingCgroup = "cgroup"
)

// KernelCPU is the CPU time the kernel charged over a window to what the
// counters counted, read right before and right after the counters at
// both edges. The scheduler charges a woken task from its wake-up, while
// task-clock counts from the switch to it, so the two part by a few µs
// per context switch, either way (see the README, "How the numbers are
// measured").
type KernelCPU struct {
	// Source says what was read: KernelCPUCgroup, KernelCPUAlone or
	// KernelCPUProcess.
	Source string `json:"source"`
	// Seconds is the CPU time over the window: the midpoint of the
	// interval the reads give (the end's reads minus the start's); per
	// thread less the task-clock of perfbench's own connection thread,
	// which the counters leave out.
	Seconds float64 `json:"seconds"`
	// Low and High bound it: the reads' interval widened by the CPU the
	// kernel may not have charged yet at a read (a running task's, up to
	// a scheduler tick per other CPU) and by the tick truncation of the
	// reaped children's CPU.
	Low  float64 `json:"low_seconds"`
	High float64 `json:"high_seconds"`
	// LeavesOut names CPU the counters count that Source does not hold
	// (KernelCPUNotWaited); "" when it holds all of it.
	LeavesOut string `json:"leaves_out,omitempty"`
	// ContextSwitches are the window's context switches (the counter's,
	// else /proc's); GapPerSwitch is task-clock minus Seconds per
	// context switch, in µs. Both 0 when either was not measured.
	ContextSwitches float64 `json:"context_switches,omitempty"`
	GapPerSwitch    float64 `json:"task_clock_gap_per_switch_us,omitempty"`
}

// KernelCPU.Source values.
const (
	// KernelCPUCgroup: the cpu.stat usage_usec of the cgroup v2 the
	// counters counted (cgroup mode).
	KernelCPUCgroup = "cgroup"
	// KernelCPUAlone: per thread, the cpu.stat usage_usec of the cgroup
	// v2 the process was alone in with its descendants.
	KernelCPUAlone = "alone-cgroup"
	// KernelCPUProcess: per thread, the process's CPU clock plus its
	// child processes' CPU (the reaped ones' from its cutime+cstime).
	KernelCPUProcess = "process"
)

// KernelCPUNotWaited is KernelCPU.LeavesOut of a process that ignores
// SIGCHLD: the kernel reaps its children itself, and their CPU reaches no
// reading of the process's, while its inherited counters count them.
const KernelCPUNotWaited = "children not waited for"

// Ops is the operation count the per-op metrics divide by.
type Ops struct {
	// Source names where Count came from: "Questions" (server status
	// delta, the default), "client.queries", "client.transactions",
	// "client.events", any status variable name ("Com_select"), or
	// "Rows_read"/"Innodb_rows_read" (whichever the server has; "rows" on
	// the command line) with Per == 1000 for scans.
	Source string `json:"source"`
	// Count is the number of operations in the window, already divided by
	// Per: with Source "Rows_read" and Per 1000, Count is thousands of rows.
	Count float64 `json:"count"`
	// Per is the size of one operation in units of Source (1 unless an op
	// is, for example, 1,000 rows).
	Per float64 `json:"per,omitempty"`
	// Counted is set when Count is the number of operations of Source in
	// the window (counted, or estimated when Estimated is set): per-op
	// values divide by it, a 0 included. Unset, Source had no count for the
	// window (a warning with code ops-not-counted says why) and Count means
	// nothing. Readers ask Record.OpsCounted, which also takes a failed
	// Record as not counted.
	Counted bool `json:"counted"`
	// Estimated is set when Count was not counted over the window but
	// estimated from a rate measured over another span (an import of perf
	// stat output with sysbench's whole-run queries per second × the perf
	// window; client per-interval lines that left over 1% of the window
	// uncovered, scaled to all of it): reports mark every value that
	// divides by it.
	Estimated bool `json:"estimated,omitempty"`
}

// Counter is one perf event over the window.
type Counter struct {
	// Event is the canonical name (perf list spelling, with modifiers:
	// "cycles", "L1-dcache-load-misses", "msr/tsc/", "cycles:u").
	Event string `json:"event"`
	// Group numbers events opened as one group (same schedule); -1 or absent
	// for a counter opened alone.
	Group int `json:"group,omitempty"`
	// Raw, Enabled and Running are deltas of the kernel's raw count and of
	// time_enabled / time_running (ns) over the window.
	Raw     uint64 `json:"raw"`
	Enabled uint64 `json:"time_enabled_ns"`
	Running uint64 `json:"time_running_ns"`
	// Value is the scaled count: Raw when Enabled == Running, else
	// Raw × Enabled / Running. Meaningless unless Status is counted or
	// scaled.
	Value  float64 `json:"value"`
	Status Status  `json:"status"`
	// Reason explains a not supported or not counted status in words the
	// user can act on.
	Reason string `json:"reason,omitempty"`
	// Unit is the event's unit when it has one ("msec" for task-clock as
	// perf prints it is not used: clocks are in ns).
	Unit string `json:"unit,omitempty"`
	// Scale multiplies Value into Unit for PMU events whose sysfs alias
	// has a scale (energy counters: Joules per count); absent means 1.
	Scale float64 `json:"scale,omitempty"`
	// PerOp is Value / Ops.Count, present only when both are measured.
	PerOp *float64 `json:"per_op,omitempty"`
}

// Measured reports whether the counter has a value (counted or scaled).
func (c Counter) Measured() bool {
	return c.Status == StatusCounted || c.Status == StatusScaled
}

// RunningFraction is Running / Enabled: 1 for a counter that was scheduled for
// the whole window, less when multiplexed, 0 when never scheduled.
func (c Counter) RunningFraction() float64 {
	if c.Enabled == 0 {
		return 0
	}
	return float64(c.Running) / float64(c.Enabled)
}

// Rotation says how the events of a measurement were split over its
// repeats so that none multiplexes: each repeat counts the anchors and one
// group, repeat r the group (r-1) mod len(Groups) (Group is that group's
// 1-based number).
type Rotation struct {
	// Budget is the number of events a repeat counts besides the free
	// anchors; Source says where it came from: "--pmu-budget",
	// "run.pmu_budget" (the plan) or "pmu" (the core PMU's general-purpose
	// counters).
	Budget int    `json:"budget"`
	Source string `json:"source"`
	// Anchors are the events counted in every repeat: task-clock, and
	// cycles and instructions when asked for (these count against Budget).
	Anchors []string `json:"anchors"`
	// Groups are the other events, group by group, in canonical spelling.
	Groups [][]string `json:"groups"`
	Group  int        `json:"group"`
}

// Role is the counters of the threads of one role.
type Role struct {
	// Name is one of mysqld.RoleNames ("connection", "innodb-io",
	// "innodb-purge", "page-cleaner", "innodb-pool", "rocksdb-flush",
	// "rocksdb-compaction", "myrocks-background", "log", "replication",
	// "other-background", "main"), or "unattributed" for counts whose
	// thread could not be named (threads that came and went between reads,
	// counted through inheritance).
	Name     string    `json:"name"`
	Threads  int       `json:"threads"`
	Counters []Counter `json:"counters"`
}

// OS holds /proc and disk deltas over the window.
type OS struct {
	// CPU time of the server process (all threads), seconds.
	UserSeconds   float64 `json:"user_seconds"`
	SystemSeconds float64 `json:"system_seconds"`
	// Context switches summed over the server's threads.
	VoluntaryCS   float64 `json:"voluntary_cs"`
	InvoluntaryCS float64 `json:"involuntary_cs"`
	// /proc/PID/io.
	ReadBytes  float64 `json:"read_bytes"`
	WriteBytes float64 `json:"write_bytes"`
	ReadChars  float64 `json:"rchar,omitempty"`
	WriteChars float64 `json:"wchar,omitempty"`
	ReadCalls  float64 `json:"syscr,omitempty"`
	WriteCalls float64 `json:"syscw,omitempty"`
	// Disk is the data directory's block device.
	Disk *Disk `json:"disk,omitempty"`
	// RSSBytes is the server's resident memory at the end of the window.
	RSSBytes float64 `json:"rss_bytes,omitempty"`
	// HostCPUSeconds is busy CPU time of the whole host over the window
	// (all CPUs), for the legacy host-wide cpu/o.
	HostCPUSeconds float64 `json:"host_cpu_seconds,omitempty"`
}

// Disk is /proc/diskstats deltas of one block device.
type Disk struct {
	Device       string  `json:"device"`
	Reads        float64 `json:"reads"`
	ReadSectors  float64 `json:"read_sectors"`
	Writes       float64 `json:"writes"`
	WriteSectors float64 `json:"write_sectors"`
	// IOTicks is ms spent doing IO (field 10 of diskstats).
	IOTicks float64 `json:"io_ms,omitempty"`
}

// Client holds the load generator's own results for the window (or, when it
// cannot report for the window alone, for its whole run: then Whole is true).
type Client struct {
	Tool string `json:"tool"` // "sysbench", "command"
	// Command is the load command line, with passwords removed.
	Command []string `json:"command,omitempty"`
	// Whole is true when the numbers cover the whole run, warm-up included.
	Whole bool `json:"whole_run,omitempty"`
	// Started is when the client started, when known: the instant its
	// Intervals' At values count from.
	Started      time.Time `json:"started,omitzero"`
	Seconds      float64   `json:"seconds,omitempty"`
	Queries      float64   `json:"queries,omitempty"`
	Reads        float64   `json:"reads,omitempty"`
	Writes       float64   `json:"writes,omitempty"`
	Other        float64   `json:"other,omitempty"`
	Transactions float64   `json:"transactions,omitempty"`
	Events       float64   `json:"events,omitempty"`
	Errors       float64   `json:"errors,omitempty"`
	Reconnects   float64   `json:"reconnects,omitempty"`
	Inserts      float64   `json:"inserts,omitempty"`
	// Latency in milliseconds.
	LatencyMin float64 `json:"latency_min_ms,omitempty"`
	LatencyAvg float64 `json:"latency_avg_ms,omitempty"`
	LatencyMax float64 `json:"latency_max_ms,omitempty"`
	LatencyP95 float64 `json:"latency_p95_ms,omitempty"`
	// Percentile is the percentile sysbench reported when not 95.
	Percentile float64 `json:"percentile,omitempty"`
	// Intervals are the client's per-interval lines (--report-interval).
	Intervals []Interval `json:"intervals,omitempty"`
	// Histogram is the latency histogram (--histogram), when present.
	Histogram []Bucket `json:"histogram,omitempty"`
	ExitCode  int      `json:"exit_code,omitempty"`
}

// Interval is one --report-interval line of the client.
type Interval struct {
	// At is seconds since the client started.
	At         float64 `json:"at"`
	Threads    int     `json:"threads,omitempty"`
	TPS        float64 `json:"tps"`
	QPS        float64 `json:"qps"`
	Reads      float64 `json:"reads_per_s,omitempty"`
	Writes     float64 `json:"writes_per_s,omitempty"`
	Other      float64 `json:"other_per_s,omitempty"`
	LatencyMs  float64 `json:"latency_ms,omitempty"`
	Errors     float64 `json:"errors_per_s,omitempty"`
	Reconnects float64 `json:"reconnects_per_s,omitempty"`
}

// Bucket is one latency histogram bucket: Count operations took at most
// UpToMs milliseconds (and more than the previous bucket's bound).
type Bucket struct {
	UpToMs float64 `json:"le_ms"`
	Count  float64 `json:"count"`
}

// Point is one second of the window: deltas over [T-Seconds, T].
type Point struct {
	// T is seconds since the window opened, at the end of this interval.
	T       float64 `json:"t"`
	Seconds float64 `json:"seconds"`
	Ops     float64 `json:"ops"`
	// Counters maps a canonical event name to its scaled delta over the
	// interval; events not measured in the interval are absent.
	Counters map[string]float64 `json:"counters,omitempty"`
	// CPUSeconds is the server's user+system CPU in the interval.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
}

// Server identifies the measured server.
type Server struct {
	Pid            int               `json:"pid"`
	Version        string            `json:"version,omitempty"`
	VersionComment string            `json:"version_comment,omitempty"`
	Exe            string            `json:"exe,omitempty"`
	BuildID        string            `json:"build_id,omitempty"`
	Basedir        string            `json:"basedir,omitempty"`
	Datadir        string            `json:"datadir,omitempty"`
	Port           int               `json:"port,omitempty"`
	Socket         string            `json:"socket,omitempty"`
	Config         string            `json:"config,omitempty"` // my.cnf used, if known
	Variables      map[string]string `json:"variables,omitempty"`
	// UptimeStart and UptimeEnd are the server's Uptime at the window's
	// two reads; a restart inside the window makes End < Start.
	UptimeStart float64 `json:"uptime_start,omitempty"`
	UptimeEnd   float64 `json:"uptime_end,omitempty"`
	// Engine is the storage engine the step's tables were in, as
	// information_schema.TABLES says after the window ("InnoDB",
	// "ROCKSDB"; engines that differ between tables are joined with
	// ","); empty when not read.
	Engine string `json:"engine,omitempty"`
}

// Provenance records where and how a Record was produced.
type Provenance struct {
	Hostname          string   `json:"hostname,omitempty"`
	CPUModel          string   `json:"cpu_model,omitempty"`
	CPUs              int      `json:"cpus,omitempty"`
	Kernel            string   `json:"kernel,omitempty"`
	PerfEventParanoid *int     `json:"perf_event_paranoid,omitempty"`
	NMIWatchdog       *int     `json:"nmi_watchdog,omitempty"`
	Virtualization    string   `json:"virtualization,omitempty"`
	PMUs              []string `json:"pmus,omitempty"`
	Perfbench         string   `json:"perfbench,omitempty"`
	// Command is perfbench's own command line.
	Command []string `json:"command,omitempty"`
	// Plan is the plan file and its SHA-256, for Records written by run.
	Plan       string    `json:"plan,omitempty"`
	PlanSHA256 string    `json:"plan_sha256,omitempty"`
	Written    time.Time `json:"written"`
	// Origin holds, for imported Records, what the source files said about
	// how they were made, as the files printed it, keyed "tool.what":
	// "perf.target" ("process id '4121'"), "perf.command", "perf.started",
	// "perf.format", "perf.repeats", "sysbench.version", "sysbench.threads".
	Origin map[string]string `json:"origin,omitempty"`
	// Placement is where the server and the load ran.
	Placement *Placement `json:"placement,omitempty"`
}

// Insert holds the columns of an insert-benchmark step that are not derived
// from the other fields.
type Insert struct {
	Inserts float64 `json:"inserts"`
	Queries float64 `json:"queries"`
	// DBGBLogical and DBGBDir are the logical database size and the data
	// directory's size, GB, at the end of the step.
	DBGBLogical float64 `json:"dbgb_logical,omitempty"`
	DBGBDir     float64 `json:"dbgb_dir,omitempty"`
	// MaxOpSeconds is the slowest single operation.
	MaxOpSeconds float64 `json:"max_op_seconds,omitempty"`
	// P50 and P99 are per-interval rates (see metrics reference).
	P50 float64 `json:"p50,omitempty"`
	P99 float64 `json:"p99,omitempty"`
	// Histogram is the response-time histogram with the benchmark's fixed
	// buckets, as counts of operations: those of the step's main operation,
	// queries when Queries > 0, else inserts. Records with Histograms may
	// leave it out; readers take it as the main operation's histogram when
	// Histograms has none for that kind.
	Histogram []Bucket `json:"histogram,omitempty"`
	// TargetInsertsPerSecond is the insert rate the step's writers were
	// limited to, summed over all clients (8 clients at 100 inserts/s each:
	// 800); 0 when inserts were not rate limited (load steps). A step
	// sustained its target when Inserts / window seconds is at least 95% of
	// it.
	TargetInsertsPerSecond float64 `json:"target_inserts_per_second,omitempty"`
	// Histograms are response-time histograms by kind of operation, keyed
	// "insert", "delete" and "query", as counts of operations in the
	// benchmark's fixed buckets (like Histogram). A kind the step did not
	// run is absent.
	Histograms map[string][]Bucket `json:"histograms,omitempty"`
	// MaxSeconds is the slowest single operation of each kind, seconds,
	// keyed like Histograms. Without an entry for the main operation,
	// readers take MaxOpSeconds as its maximum.
	MaxSeconds map[string]float64 `json:"max_seconds,omitempty"`
	// RowsBefore and RowsAfter are the rows of the benchmark's tables,
	// summed, before and after the step (perfbench run): before from the
	// tables' id ranges, after counted (before + inserted - deleted) and
	// checked against the id ranges, a warning saying when they differ.
	// l.i1, l.i2 and the q steps keep them equal.
	RowsBefore float64 `json:"rows_before,omitempty"`
	RowsAfter  float64 `json:"rows_after,omitempty"`
	// DriverCPUSeconds is the CPU time, user and system, of perfbench's
	// insert driver (a process of its own) over its load, to set against
	// the server's per operation; DriverPeakRSSBytes is its largest
	// resident memory, sampled every second (perfbench run).
	DriverCPUSeconds   float64 `json:"driver_cpu_seconds,omitempty"`
	DriverPeakRSSBytes float64 `json:"driver_peak_rss_bytes,omitempty"`
}

// New returns a Record of the given kind with the schema set and the
// outcome ok.
func New(kind Kind) *Record {
	return &Record{Schema: SchemaVersion, Kind: kind, Outcome: OutcomeOK}
}

// Counter returns the counter named event (canonical spelling), if the
// Record has it.
func (r *Record) Counter(event string) (Counter, bool) {
	for _, c := range r.Counters {
		if c.Event == event {
			return c, true
		}
	}
	return Counter{}, false
}

// OpsCounted reports whether per-op values may divide by Ops.Count: the
// Record has an op source, it was counted over the window (Ops.Counted; a
// count of 0 included) and the Record did not fail.
func (r *Record) OpsCounted() bool {
	return r.Ops.Source != "" && r.Ops.Counted && r.Outcome != OutcomeFailed
}

// Key identifies the cell a Record contributes to, repeats aside.
type Key struct {
	Host    string
	Version string
	Step    string
	Threads int
}

// Key returns the Record's key.
func (r *Record) Key() Key {
	return Key{Host: r.Host, Version: r.Version, Step: r.Step, Threads: r.Threads}
}
