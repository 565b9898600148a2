// Package runner runs a benchmark plan (package plan) from start to end,
// unattended: perfbench run.
//
//	p, err := plan.Load("examples/plans/smoke.toml")
//	sum, err := runner.Run(ctx, p, runner.Options{Out: "/tmp/smoke", Progress: os.Stderr})
//
// Run walks the plan's expanded items (plan.Expand, less what --resume and
// --only leave out: plan.Pending) in order: it starts and stops managed
// servers, loads the data once per version, runs the post-write flush before
// a read step that follows writes, and measures each step at each thread
// count and repeat. Versions interleave per repeat (A B A B ...).
//
// # One measurement
//
//  1. The server is checked: a managed server that died since the last step
//     is started again (its data is loaded again only if a load never
//     completed on that data directory); a running server is looked up again.
//  2. Counters are opened on every thread of the server (measure.Start)
//     before the load connects, so that the connection threads it creates
//     inherit them. The events are the plan's, else measure.DefaultEvents:
//     the hardware events that open on the server, and the software ones.
//  3. The load starts: sysbench with the step's command line (suite.Command;
//     --time is warm-up + window + tail, since sysbench 1.0.20 has no warm-up
//     option; --report-interval=1), or a custom step's command with its
//     placeholders filled in (plan.Expand), started as perfbench stat starts
//     a command (measure.StartLoad). Its output goes, as it comes, to the
//     sysbench parser and to <out>/logs/<record>.sysbench.txt (or
//     .command.txt).
//  4. Once sysbench says its threads started, the window is measured
//     (measure.Session.Measure): the warm-up is waited out, the threads
//     get counters of their own (so that the split by thread role names the
//     connections), then counters, SHOW GLOBAL STATUS, /proc and the data
//     directory's disk are read at the window's two edges, and every second
//     in between. The window ends early if the load or the server exits.
//     When the step samples (plan.Step.Profile), the server's call stacks
//     are sampled over the same window (measure.Profile) and written as a
//     pprof profile to <out>/profiles/<record>.pb.gz, labelled with thread
//     roles, version, step and the op count; the Record points to it
//     (Record.Profile, relative to the Record's file) and carries the
//     sampler's warnings (lost samples, missing symbols, the server exiting).
//     perfbench profile <out>/records compares them per step and op.
//  5. sysbench runs its tail (defaultTail) and exits; a custom command still
//     running a little after its tail is stopped. The client's results go on
//     the Record (measure.ApplyClient), with its start instant so that its
//     per-second lines can be placed against the window.
//  6. The Record, which says what it measured (kind step, version, step,
//     threads, repeat, the plan file and its SHA-256: measure.Identity),
//     gets the rotation's group, the placement and the flush's warnings, and
//     is written atomically to <out>/records/.
//
// # Failures
//
// A measurement whose server exits (the Record's error has the end of the
// server's error log), whose load fails or exits before the window closed,
// or whose counters cannot be opened, is written with outcome failed and the
// reason, and the plan goes on; Run returns ErrStepsFailed at the end. When
// ctx ends (Ctrl-C, SIGTERM), the load is stopped, the window measured so far
// is written with outcome partial (a warm-up cut short is failed: nothing was
// measured), every server the run started is stopped, and Run returns
// ErrInterrupted. Servers never outlive perfbench: the sandbox stops them
// when perfbench dies, even by SIGKILL (parent-death signal), and the load
// and custom commands get SIGKILL then.
//
// # The output folder
//
//	records/              one Record per measurement: <version>__<step>__t<threads>__r<repeat>.json
//	records/.replaced/    Records of failed or partial measurements run again with --resume
//	logs/                 the load's output next to its Record's name; load-<version>.txt,
//	                      server-<version>.txt (custom start and stop commands)
//	profiles/             the sampled steps' pprof profiles, next to their Record's name:
//	                      <version>__<step>__t<threads>__r<repeat>.pb.gz (.replaced/ as records/)
//	scripts/              the project's sysbench scripts (suite.WriteScripts)
//	servers/<version>/    a managed server's data/, socket, pid file, error.log, and the
//	                      perfbench-data marker of a completed load
//
// The servers' folders are kept, so that --resume does not load the data
// again; remove servers/ (or one version's folder) to start from an empty
// data directory.
//
// # Resume and subsets
//
// With Options.Resume, measurements that have an ok Record (matched by
// plan.RecordID) are skipped, and Run says which; failed and partial ones run
// again. When nothing is left, Run starts nothing and says so. Without it, Run
// refuses to overwrite existing Records (errRecordsExist). Options.Only runs
// some steps alone, by name (every range), label or custom step name.
//
// # Managed servers
//
// A managed version runs on its own folder, socket and port: a sandbox
// (package mysqld/sandbox) from its basedir with its my.cnf and options, or,
// when the plan gives a start command, that command (the data directory is
// created first by the sandbox unless init is "none"); perfbench then waits
// until the server answers as root on {socket}, finds its pid ({pid_file}, or
// the socket's peer), creates the load account, and stops it with the plan's
// stop command or SHUTDOWN. A server that a custom command started in the
// background cannot get the parent-death signal: stopping it is up to the
// run (or the stop command).
package runner
