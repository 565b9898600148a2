package plan

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/load/insertbench"
	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/record"
)

// Plan is a parsed, validated benchmark plan with every default applied.
// Paths in it are absolute or, for paths the plan file gave relative,
// resolved against the plan file's folder.
type Plan struct {
	// File is the plan file's path as given to Load (or the name given to
	// Parse); Dir the folder relative paths were resolved against.
	File string
	Dir  string
	// Name names the plan (default: the file name without extension).
	Name string
	// Base is the label of the version the reports compare the others to
	// (default: the first version).
	Base string
	// OutDir is where Records go unless perfbench run --out says
	// otherwise: output.dir resolved against Dir, or "<name>-results" in
	// the current folder when the plan does not say.
	OutDir string
	// ServersDir is the folder of the managed servers' folders (data
	// directory, socket, error log; one per version, named by its label):
	// output.datadir resolved against Dir, or "" for servers/ in the
	// output folder.
	ServersDir string

	// Repeats is how many times every measurement runs (default 1).
	// Repeats are numbered from 1. With Auto it is the most a step runs.
	Repeats int
	// Auto, when not nil, runs repeats until the rQPS are precise enough
	// (run.repeats = "auto"; see AutoRepeats).
	Auto *AutoRepeats
	// RetryBusy is how many times a window flagged busy (other processes
	// used the host's CPU) is measured again (run.retry_busy, default 0).
	RetryBusy int
	// Servers is serversOneAtATime ("one-at-a-time") or serversAllRunning
	// ("all-running": the default when a step's versions are compared).
	Servers string
	// FlushTimeout bounds the post-write flush (default 10 minutes).
	FlushTimeout time.Duration
	// Interval is the period of the per-second series and of sysbench's
	// --report-interval (default 1 s; whole seconds).
	Interval time.Duration
	// Events are the perf events to count, as perf -e takes them; empty
	// means perfbench's default set.
	Events []string
	// PMUBudget, when set (run.pmu_budget), is the number of events a
	// repeat counts besides task-clock: more events than that are counted
	// in rotation over the repeats (see package runner); 0 means the core
	// PMU's counters decide.
	PMUBudget int
	// Placement is where the servers and the loads run.
	Placement Placement
	// Compare is how a step's versions are measured against each other:
	// CompareAuto (default), CompareDuet, CompareSlices or
	// compareWindows (run.compare); each step's own is Step.Compare.
	// CompareLine is the line of run.compare (0 when the plan has none).
	Compare     string
	CompareLine int
	// Slice is the length of a comparison's slices (run.slice, default
	// 1 s).
	Slice time.Duration

	Data     Data
	Steps    []Step
	Versions []Version

	// Warnings are conditions the user should know about that do not stop
	// the plan: an optional version left out, for example.
	Warnings []string
}

// Server lifecycle policies.
const (
	// serversOneAtATime starts a managed server before its version's
	// steps of a repeat and stops it after, so that only one server runs
	// at a time.
	serversOneAtATime = "one-at-a-time"
	// serversAllRunning starts each managed server once and stops them all
	// at the end of the plan.
	serversAllRunning = "all-running"
)

// Data is the data set and how the load generator reaches it.
type Data struct {
	// Tables and TableSize: sbtest1..N of TableSize rows (default 1 and
	// 100000).
	Tables    int
	TableSize int
	// DB, User and Password are the load's database and credentials
	// (default sbtest, sbtest, sbtest). For managed servers perfbench
	// creates them.
	DB       string
	User     string
	Password string
	// RandType is sysbench's --rand-type (default uniform).
	RandType string
	// Load says whether to load the tables once per version (default
	// true); false when a running server already has them.
	Load bool
	// Sysbench is the sysbench binary (default "sysbench").
	Sysbench string
	// ExtraArgs are appended to every sysbench command line (prepare,
	// cleanup and run).
	ExtraArgs []string
}

// Installed is the Basedir of a managed version that runs the server
// installed on the system (mariadbd or mysqld in the PATH or /usr/sbin).
const Installed = "installed"

// Init methods for the data directory of a managed server.
const (
	initAuto       = "auto"               // mariadb-install-db when the basedir has it, else mysqld --initialize-insecure
	initInstallDB  = "mariadb-install-db" // mariadb-install-db (or mysql_install_db of older MariaDB)
	initInitialize = "initialize"         // mysqld --initialize-insecure (MySQL 5.7 and later)
	InitNone       = "none"               // the custom start command prepares its own data directory
)

// Version is one server build or configuration: a column of the tables.
type Version struct {
	Label string
	// Exactly one of Managed and Target is set.
	Managed *Managed
	Target  *Target
	// AAOf is the label of the version this one measures again under
	// another label (an A/A pair: aa_of in the plan, or a managed version
	// that starts the same server as an earlier one): their rQPS is the
	// noise floor of the run.
	AAOf string
	// Engine is the storage engine the version's tables are created in
	// (engine in the plan): suite.EngineInnoDB, suite.EngineRocksDB
	// (MyRocks: a managed server loads the plugin and makes it the
	// default engine), or "" for the server's default. sysbench prepares
	// the tables with --mysql-storage-engine=<engine>, and the runner
	// checks that the server has the engine before loading data.
	Engine string
	// Line is where the version is defined in the plan file.
	Line int
}

// Managed is a server perfbench starts and stops, on its own data
// directory, socket and port under the output folder.
type Managed struct {
	// Basedir is the server's installation folder (holding bin/ or sbin/
	// with mysqld or mariadbd), or Installed.
	Basedir string
	// Mycnf is a my.cnf whose settings the server starts with; empty for
	// none.
	Mycnf string
	// Options are server options ("performance_schema=ON",
	// "skip-log-bin"), applied after Mycnf, without leading dashes.
	Options []string
	// Init is how the data directory is created: initAuto (default),
	// initInstallDB, initInitialize or InitNone.
	Init string
	// Start and Stop, when set, replace perfbench's own start and stop:
	// command lines with placeholders (see Expand).
	Start []string
	Stop  []string
	// Port is the TCP port to listen on; 0 lets perfbench choose.
	Port int
}

// Target is a running server perfbench attaches to: the same target
// options as perfbench stat.
type Target struct {
	Pid          int
	PidFile      string
	Socket       string
	Host         string
	Port         int
	DefaultsFile string
	User         string
	Password     string
}

// Step is one benchmark step of the plan: a suite step or a custom one.
type Step struct {
	// Label is the step as Records and tables name it: the suite step's
	// label ("point-query_range=100") or the custom step's name.
	Label string
	// Suite is the suite step; nil for a custom step.
	Suite *suite.Step
	// Command is a custom step's command line, with placeholders (see
	// Expand); nil for a suite step.
	Command []string
	Group   suite.Group
	// Write is true for steps that change data: a read step after a write
	// step gets the post-write flush first.
	Write bool
	// Ops and OpsPer are the op count per-op metrics divide by: a status
	// variable ("Questions", "Rows_read", "Com_insert") or "client.queries",
	// "client.transactions", "client.events"; OpsPer rows or queries make
	// one op.
	Ops    string
	OpsPer float64
	// Warmup runs the load before the window opens; Duration is the
	// window.
	Warmup   time.Duration
	Duration time.Duration
	// Threads are the client thread counts the step runs at, in order.
	Threads []int
	// ExtraArgs are appended to this step's sysbench command line.
	ExtraArgs []string
	// Profile, when positive, samples the server's call stacks over each
	// window of the step at Profile samples per second per CPU, and writes
	// a pprof profile next to its Record; ProfileEvent is the event sampled
	// ("" for cpu-clock, which works everywhere; cycles is finer where the
	// CPU has a PMU).
	Profile      int
	ProfileEvent string
	// Insert, for an insert-benchmark step (l.i0, l.x, l.i1, l.i2, qrN,
	// qpN), is how the driver runs it (package insertbench); Suite and
	// Command are nil then (Custom reports true: it needs no sysbench).
	Insert *insertbench.Options
	// Line is where the step is selected or defined in the plan file.
	Line int
	// Compare is how the step's versions are measured against each
	// other: "" in windows of their own, else the plan's Compare (auto,
	// duet or slices; the runner resolves auto per measurement).
	Compare string
}

// Profiled reports whether a step of the plan samples call stacks.
func (p *Plan) Profiled() bool {
	for i := range p.Steps {
		if p.Steps[i].Profile > 0 {
			return true
		}
	}
	return false
}

// Custom reports whether the step runs a command of the user's.
func (s *Step) Custom() bool { return s.Suite == nil }

// Bounds of a plan's numbers: a plan beyond them is refused when it is
// parsed, naming the bound, before anything is expanded or started.
const (
	maxRepeats      = 1000
	maxThreads      = 100000               // one thread count
	maxTables       = 10000                // data.tables
	maxTableSize    = 1<<31 - 1            // data.table_size
	maxDuration     = 24 * time.Hour       // warm-up, duration, write_duration, interval, flush_timeout
	maxOpsPer       = 1e9                  // ops_per
	maxMeasurements = 100000               // repeats × versions × steps × thread counts
	maxPlanTime     = 366 * 24 * time.Hour // warm-ups and windows of every measurement
	MaxPMUBudget    = 64                   // run.pmu_budget
)

// errInvalid is wrapped by every problem found in a plan file.
var errInvalid = errors.New("invalid plan")

// planError is one problem in a plan file, at a line when one is known.
type planError struct {
	File string
	Line int
	Msg  string
	// Err is the underlying error, if any (suite.errUnknownStep, ...).
	Err error
}

func (e *planError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Unwrap returns ErrInvalid and the underlying error.
func (e *planError) Unwrap() []error {
	if e.Err != nil {
		return []error{errInvalid, e.Err}
	}
	return []error{errInvalid}
}

// Errors is every problem found in a plan file, in line order.
type Errors []*planError

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Load reads and parses a plan file: a regular file of at most
// maxPlanBytes (record.ReadInput).
func Load(path string) (*Plan, error) {
	b, err := record.ReadInput(path, maxPlanBytes, "plans")
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	return parse(path, b)
}

// maxPlanBytes is the largest plan file Load reads.
const maxPlanBytes = 4 << 20

// parse parses and validates a plan. name is the file's path: errors name
// it and relative paths in the plan are resolved against its folder.
// Environment variables (${NAME}) are expanded in paths. The error, when
// not nil, is an Errors listing every problem with its line.
func parse(name string, data []byte) (*Plan, error) {
	p := &parser{file: name}
	plan := p.parse(data)
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
		return nil, p.errs
	}
	return plan, nil
}

func defaultName(file string) string {
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}
