// Package plan reads benchmark plans: which server versions to compare,
// which steps to run at which thread counts, how many times, and what to
// measure. A plan is a TOML file (comments are welcome: say why each choice
// was made); examples/plans/ has commented examples to start from.
//
// Parse checks the whole file and reports every problem with its line.
// Expand turns a plan into the ordered list of things the runner does:
// start servers, load data, flush after writes, measure, stop. Every
// measurement has an ID made of its version, step, thread count and repeat
// (measurementID), the same for a Record (RecordID), so a resumed run skips
// what is done and --only runs a part (Pending).
//
// # The format
//
// Top level:
//
//	name = "smoke"        # names the plan; default: the file name without extension
//	base = "default"      # version the reports compare to; default: the first version
//
//	[output]
//	dir = "results/smoke" # where Records go (relative to this file); perfbench run --out wins;
//	                      # default: "<name>-results" in the current folder
//	datadir = "/data/pb"  # where the managed servers' folders go (data directory, socket, error log;
//	                      # one per version, named by its label; relative to this file);
//	                      # default: servers/ in the output folder. One run at a time per datadir.
//
// [run] — how each step is measured (all optional):
//
//	repeats = 3           # every measurement runs this many times (numbered from 1); default 1;
//	                      # or "auto": rounds (every version of every step once, interleaved) until
//	                      # every rQPS of a step and thread count has a 95% interval within
//	                      # ±precision (the interval the report prints), at least 6 and at most
//	                      # max_repeats rounds; the report marks m the cells that stopped at the maximum
//	precision = 0.02      # with repeats = "auto": the wanted half-width of the rQPS interval; default 0.02
//	max_repeats = 10      # with repeats = "auto": 6 to 1000; default 10
//	retry_busy = 2        # measure a window flagged busy (other processes used the host's CPU) again,
//	                      # up to this many times; the Record kept says so; default 0
//	threads = [1, 2, 4]   # client thread counts; default [1]
//	warmup = "5s"         # load before the window opens (excluded from it); default 5s
//	duration = "600s"     # the measured window of read steps; default 60s
//	write_duration = "900s" # the window of write steps; default: duration
//	interval = "1s"       # per-second series and sysbench --report-interval; whole seconds; default 1s
//	ops = "Questions"     # op count of per-op metrics: a status variable (Questions, Com_select, ...)
//	                      # or client.queries, client.transactions, client.events; default Questions
//	                      # (scan keeps its own: Rows_read per 1,000 rows)
//	events = ["task-clock", "context-switches", "{cycles,instructions}"]
//	                      # perf events as perf -e takes them ({...} is a group); default: perfbench's set
//	pmu_budget = 4        # events a repeat counts besides task-clock (perfbench run --pmu-budget):
//	                      # more are counted in rotation, one group a repeat (see package runner);
//	                      # default: the core PMU's general-purpose counters
//	servers = "one-at-a-time" # managed servers: "one-at-a-time" (start before a version's steps of a
//	                      # repeat, stop after) or "all-running" (start once, stop at the end)
//	flush_timeout = "10m" # bound on the post-write flush
//	profile = 99          # also sample the server's call stacks over every window, at 99 samples per
//	                      # second per CPU, into a pprof profile per Record (see Profiles below);
//	                      # true means 99; default 0 (false): no sampling
//	profile_event = "cpu-clock" # the event sampled: cpu-clock (default; works everywhere, VMs
//	                      # included) or, where the CPU has a PMU, cycles or another counter
//	placement = "threads" # where the server and the load (sysbench, a custom step's command) run:
//	                      # "threads" (default: both on the same CPUs, as many as the measurement's
//	                      # client threads: at 1 thread one CPU), "split" (the load on the first
//	                      # half of the CPUs, the server on the rest; on 2 CPUs one each),
//	                      # "shared" (both on the same CPUs) or "none" (no affinity: the scheduler
//	                      # decides, run by run)
//	cpus = "0-3"          # the CPUs split, shared and threads use; default: all perfbench may run on
//	server_cpus = "2-3"   # instead of placement: the server's CPUs and the load's, as lists
//	client_cpus = "0-1"   # like taskset -c takes ("0", "0-3,8"); either alone pins that one only
//	compare = "auto"      # how a step's versions are measured against each other: "auto" (default:
//	                      # "duet" where every version can have CPUs of its own, "slices" otherwise),
//	                      # "duet", "slices", or "windows" (each version in a window of its own)
//	slice = "1s"          # the length of a comparison's slices: 250ms to 1m; default 1s
//
// Comparisons. With two versions or more, each step's versions are measured
// together, so that what the host does to the machine's speed (on a VM,
// phases of tens of seconds with 1.5–2× the CPU per query) falls on every
// version alike:
//
//   - duet: every version's server and load run at once, each on CPUs of its
//     own (as many as the measurement's client threads), passed on to the
//     next version every slice, so that over a turn every version ran once on
//     every set of CPUs;
//   - slices: every version's load is connected and warmed, then one runs at
//     a time (the others stopped with SIGSTOP) for a slice, in a random order
//     each turn; the servers share the placement's CPUs.
//
// Every server is read at the same instants, at every slice's edges; the
// Records keep every slice (record.Comparison) and reports compare a
// version with the base turn by turn. The window of a step is its duration
// of slices for every version (a duet takes duration, slices take duration
// for each version); warm-up and tail are shared. All servers run from the
// start (servers = "all-running", the plan then goes step by step rather
// than version by version). "auto" measures in windows the steps that
// cannot be paused or paired: custom commands, insert-benchmark steps, op
// counts the client keeps (client.*), and every step of a plan with one
// version or with servers = "one-at-a-time"; "duet" and "slices" refuse
// them, with the line. "duet" also needs every server to be one perfbench
// starts, the default placement (threads), and CPUs for every version at
// each thread count (perfbench run checks this before anything starts).
// "windows" keeps the order above, version block by version block.
//
// Placement pins a managed server as it starts (every thread it creates
// inherits the CPUs; with "threads" it is moved, every thread, before a
// measurement of another thread count) and the load as it starts; a
// running server that perfbench did not start is pinned (every thread it
// has, by sched_setaffinity) only when server_cpus names its CPUs. Every
// Record says what was set and what the kernel reported
// (provenance.placement).
//
// Durations are strings ("90s", "10m") or numbers of seconds.
//
// Every number has a bound, and a plan beyond one is refused with the line
// and the bound: repeats 1 to 1000 (MaxRepeats), thread counts 1 to 100000,
// durations up to 24h, tables up to 10000, table_size up to 2147483647,
// ops_per up to 1e9, at most 100000 measurements (repeats × versions × steps
// × thread counts) whose warm-ups and windows take at most 366 days.
//
// [data] — the data set and the load's credentials (all optional):
//
//	tables = 8            # sbtest1..sbtest8; default 1
//	table_size = 10000000 # rows per table; default 100000
//	db = "sbtest"         # default sbtest
//	user = "sbtest"       # default sbtest (created on managed servers)
//	password = "sbtest"   # default sbtest
//	rand_type = "uniform" # sysbench --rand-type: uniform, gaussian, special, pareto; default uniform
//	load = true           # load the tables once per version (sysbench cleanup + prepare); false when a
//	                      # running server already has them
//	sysbench = "sysbench" # the sysbench binary
//	extra_args = ["--mysql_storage_engine=rocksdb"] # appended to every sysbench command line
//
// [steps] — which steps run, in order. The selected steps are the subset's,
// then those of list not already selected (in list order), then the custom
// steps not named in list, less those excluded:
//
//	subset = "published"  # full (47 steps), published (32), or fast (6); see package suite
//	list = ["point-query", "read-only_range=100", "my-step"]
//	                      # a step name (all its ranges), a label (one range) or a custom step's name
//	exclude = ["scan"]    # names or labels to leave out
//
//	[steps.override."read-write"]   # a step name or a label ("read-write_range=100"); a label's
//	duration = "900s"               # settings win over its name's
//	warmup = "10s"
//	threads = [1, 16]
//	ops = "client.transactions"
//	ops_per = 1                     # how many of ops make one op
//	extra_args = ["--mysql-ignore-errors=all"]
//	profile = 999                   # this step's sampling (0: none), and profile_event
//
//	[[steps.custom]]                # a step that runs any command while it is measured
//	name = "checkpoint"             # its label in Records and tables
//	command = ["sh", "-c", "mariadb -S {socket} -e 'SET GLOBAL innodb_max_dirty_pages_pct=0'; sleep {time}"]
//	write = true                    # changes data (default: named like a write step, see below)
//	group = "writes"                # table group: point, range or writes (default from the name)
//	ops = "Com_insert"              # and ops_per, warmup, duration, threads, profile,
//	                                # profile_event as in an override
//
// A custom step's command starts when the step starts; the window opens
// after its warm-up and closes after its duration; a command still running
// then is stopped. Placeholders in it are replaced at run time: {host}
// {port} {socket} {user} {password} {db} {tables} {table_size} {threads}
// {warmup} {duration} {time} (warm-up + duration + a tail, whole seconds)
// {out} {sysbench} {rand_type} {sysbench_options} (a sysbench option file
// holding the password, readable by its owner alone and removed when the
// step ends: give sysbench --config-file={sysbench_options} rather than
// --mysql-password={password}). In an argument a placeholder becomes its
// value; in the script of sh -c (bash, dash, ... -c) it becomes an
// environment variable ({password} is $PERFBENCH_PASSWORD) quoted where it
// stands, so that the shell never reads a value as code (see Expand); in
// the script of a shell the script starts (sh -c "timeout 5 sh -c '...'",
// eval) the reference reaches the inner shell as text, which expands it
// from its environment. Logs and Records show {password} as ***. Given as
// an argument, of the command or of a command in its script (mariadb
// -p'{password}'), a password is on a command line for every local user to
// read, and the plan warns; in a script, sh -c 'MYSQL_PWD={password}
// mariadb ...' keeps it in the environment.
//
// Step groups follow the published rule: names with delete, insert, update
// or write are writes, other names with point are point queries, the rest
// range queries. Before a read step that follows write steps on the same
// server, the runner runs the post-write flush (ANALYZE TABLE, dirty pages
// written back; see suite.Flush), as published runs do after read-write.
//
// [[version]] — one per server build or configuration, a column of every
// table. A version is either a server perfbench manages:
//
//	[[version]]
//	label = "10.11-pfs"             # letters, digits and . _ + = -
//	basedir = "installed"           # the installed server, or an installation folder
//	                                # (relative to this file; ${VARS} are expanded)
//	mycnf = "configs/base.cnf"      # settings to start with (optional)
//	options = ["performance_schema=ON", "skip-log-bin"]   # or a table: options = { performance_schema = "ON" };
//	                                # applied after mycnf; ${VARS} are expanded
//	init = "auto"                   # data directory creation: auto (mariadb-install-db when the basedir
//	                                # has it, else mysqld --initialize-insecure), mariadb-install-db,
//	                                # initialize, or none
//	port = 0                        # 0: perfbench picks a free port
//	start = ["{basedir}/bin/mysqld_safe", "--datadir={datadir}", "--socket={socket}", "--port={port}"]
//	stop = ["{basedir}/bin/mysqladmin", "-S", "{socket}", "-uroot", "shutdown"]
//	                                # optional: replace perfbench's own start and stop; placeholders
//	                                # {basedir} {datadir} {socket} {port} {pid_file} {mycnf} {error_log} {out}
//	engine = "rocksdb"              # the storage engine of the data set's tables: "innodb", or
//	                                # "rocksdb" (MyRocks: perfbench's server loads the plugin,
//	                                # plugin-load-add=ha_rocksdb.so, with RocksDB the default engine;
//	                                # Debian: apt-get install mariadb-plugin-rocksdb); sysbench
//	                                # prepares with --mysql-storage-engine=<engine>; default: the
//	                                # server's default engine. Also for a running server, which must
//	                                # have the engine. The post-write flush follows the tables'
//	                                # engine (see suite.Flush); Records say it (server.engine)
//	optional = true                 # leave the version out, with a warning, when a ${VAR} in its
//	                                # paths is not set
//	aa_of = "10.11"                 # this version measures version "10.11" again under a second
//	                                # label (an A/A pair): the report prints their rQPS as the noise
//	                                # floor. A managed version that starts the same server as an
//	                                # earlier one (basedir, mycnf, options, init, start, stop) is its
//	                                # A/A pair without it
//
// Each managed server runs on its own data directory, socket and port under
// the output folder. Or a version is a running server, found as
// perfbench stat finds one:
//
//	[[version]]
//	label = "prod-8.0.39"
//	socket = "/var/run/mysqld/mysqld.sock"  # or host and port, pid, pid_file
//	defaults_file = "~/.my.perfbench.cnf"   # credentials for perfbench's own connection
//	user = "root"                           # (password: prefer defaults_file)
//
// [[host]] — test servers to run the plan on, with the keys of a hosts file
// (see perfbench hosts --help): perfbench run PLAN then runs a campaign on
// them, as perfbench run PLAN --hosts HOSTS.toml does (giving --hosts too is
// a usage error). Package plan leaves these tables to perfbench run, which
// checks them with their lines; each host runs a copy of the plan without
// them, with the host's basedirs as its versions' basedir, its datadir as
// output.datadir and its cpus as run.cpus:
//
//	[[host]]
//	name = "icelake"
//	destination = "bench@10.0.0.5"
//	datadir = "/data/perfbench"     # optional; absolute or ~/... on the host
//	[host.basedirs]
//	"10.11-pfs" = "/opt/mariadb-10.11.9"
//
// # Profiles
//
// A step whose profile is above 0 samples the server's call stacks over each
// of its windows, as perfbench stat --profile does: CPU-wide per-CPU ring
// buffers kept for the server's threads, so that the connection threads the
// load creates during the step are sampled too. Each window's profile is
// written to <out>/profiles/<record>.pb.gz, labelled with thread roles,
// version, step and the window's op count; the Record's profile field points
// to it, and the sampler's warnings (lost samples, a server without symbols,
// a server that exited) are on the Record. perfbench profile <out>/records
// --base LABEL then gives, per step and version, the functions with the most
// samples per 1,000 ops and those that grew against the base; go tool pprof
// opens the files as written. Sampling costs the server some throughput
// (measure it with scripts/bench-profile.sh): 99 Hz is the usual rate, 999
// Hz gives ten times the samples of a short window for more cost.
//
// # Order
//
// Versions are interleaved per repeat: with versions A and B and three
// repeats the blocks run A B A B A B, each block running every step in order
// at each of its thread counts. Data is loaded once per version, in its
// first block.
package plan
