// Package measure measures one window on one server: perf event counters on
// every thread of the process, the server's SHOW GLOBAL STATUS, /proc and the
// data directory's disk, all read at the same two instants, and returns the
// window as one record.Record. perfbench stat and the step runner both use it:
//
//	s, err := measure.Start(ctx, measure.Config{Pid: pid, Events: list, System: sys, DB: db})
//	// counters are open: start the load now
//	defer s.Close()
//	load, err := measure.StartLoad(argv, measure.LoadOptions{Out: log})
//	r, err := s.Measure(ctx, measure.WindowSpec{Warmup: 5 * time.Second, Duration: 30 * time.Second, Done: load.Done()})
//	measure.ApplyClient(r, load.Client(), "")   // the load generator's results
//
// Both start their loads with StartLoad; a Record says what it measured
// from Config.Identity (perfbench run's version, step, thread count and
// repeat; perfbench stat's defaults), and its counts are divided by its op
// count in one place: by Measure for an op the server counts, by
// ApplyClient for one the client counts.
//
// # The window's edges
//
// Start opens the counters at once, so that threads the load's connections
// create are counted through inheritance from the moment they exist (see
// perfevent.Attach), and reads what does not change during a window: the
// server's identity (version, binary and build-id, configuration), the
// provenance of the machine, the data directory's block device. It also
// resolves the op source against a first status snapshot, so that a source
// the server lacks fails before any load runs.
//
// Measure waits out the warm-up, then opens the window: the counters are read,
// then SHOW GLOBAL STATUS is sent, then /proc and /proc/diskstats are read, one
// right after the other. It closes the window the same way. The time from a
// counter read to the end of the status query next to it is kept in
// record.Window.StatusLag; over 50 ms it is also a warning. Counters and
// status cover the same window up to that lag; the window's length is the
// counters' (between their two reads), and its Duration is timed from the
// first: the status and /proc reads after it (for a server with thousands
// of threads, /proc is most of the edge) run inside the window. At the end,
// /proc is read again only for the threads whose task-clock (or cpu-clock)
// moved since the start: the others did nothing /proc would show.
//
// perfbench's own connection to the server runs its status and thread
// queries inside the window: its statements are taken out of Questions
// (package mysqld), and the counts of the server thread that serves it
// (when the server gives each connection a thread of its own) are left out
// of the counters, the roles, the series and the profile, so that the
// counts per op are the load's.
//
// With Config.Interval, a series point is read
// every Interval inside the window: the counters' deltas, the op count's delta
// (one more SHOW GLOBAL STATUS; perfbench's own statements are taken out of
// Questions by package mysqld) and the server's CPU time from /proc/PID/stat.
// The points add up to the window. Series ops are the server's op source; with
// a client op source (client.queries...) they are left 0.
//
// A window that lasts more than overrunFraction and overrunMin past its
// Duration, and a series interval longer than stallFactor times
// Config.Interval, are warned about: the timer fired late or a read at an
// edge took that long, so the machine or the server stalled. When
// perfbench's own reading at the edges (the start's status and /proc, the
// reads right before the end counters) kept the window open more than
// overrunFraction past its Duration, the warning says so instead, with how
// long each took and how many threads were read. The Record stays ok: its
// counts per op still hold, its rates per second do not describe the
// planned load.
//
// # CPU time
//
// Each Record carries the CPU time the kernel charged over the window to
// what the counters counted (record.KernelCPU: the counted cgroup's
// cpu.stat usage_usec; per thread the process's CPU clock plus its
// children's, or the usage_usec of a cgroup v2 it is alone in with its
// descendants), read right before and right after the counters at both
// edges, after a pass over every process's stat that gives the process's
// children (and the busy check's edge). CPU per op is taken from it;
// task-clock is checked against it per context switch (see checkCPU).
// A process gone before the window opened fails the Record; one that
// exits inside makes it partial, saying when (a pidfd tells); a process
// that left the counted cgroup makes a cgroup-mode Record partial.
//
// # Ending early, and what cannot be trusted
//
// The window ends after WindowSpec.Duration, when WindowSpec.Done is closed (a
// load command exited), or when ctx ends. With a Duration or a Done channel,
// ctx ending first is an interruption: Measure returns the Record with Outcome
// partial and Error saying so, together with ctx.Err(). With neither, the
// window lasts until ctx ends, which is the plan: the Record is ok and the
// error nil (perf stat without a command behaves so on Ctrl-C).
//
// A counter that could not be read at an edge of the window, or went
// backwards, has no count: it is not counted with the reason (in every
// role), and the Record is failed saying so (perfevent.Reading.Missing);
// the other counters stand.
//
// A server restart inside the window (mysqld.ErrRestarted), or FLUSH STATUS
// (mysqld.ErrStatusReset), voids the status deltas: the Record is failed,
// with Error saying why, and carries no Status and no Ops. A status snapshot
// that cannot be read at an edge does the same. An op variable missing at
// the end leaves Ops without a count, with a warning. Counters keep what they
// counted, with their statuses (after a restart: the old process, until it
// exited); per-op values are set only when both the counter and the op count
// were measured.
//
// # Roles
//
// With Config.PerRole (thread mode only, and a DB), the counters are split by
// thread role (mysqld.RoleNames). Each attached thread's counters are mapped
// to the role of that thread, as DB.ThreadRoles names it when the window
// opens, a quarter second later, every second while it runs and when it
// closes: a thread that served a connection in any of these listings is a
// connection thread, else a named background role beats other-background
// (see roleLog). Listing while the load runs matters: a server keeps the
// threads of closed connections in its thread cache, where nothing names
// them, and a load's connections reuse them. A load that started with the
// window (no warm-up) runs on such threads, anonymous when the window opens
// and again when it closes after the load exited.
// A thread's counters hold the counts of the threads it created after its
// counters were opened (inheritance), and a server creates its connection
// threads from its main thread. So, with PerRole, the main thread is
// counted twice, with and without inherit (perfevent.Options.Own): the
// difference is the threads it created since the attach, the connections
// of a load that connected inside the window, which go to the connection
// role (hardware events then take twice the counters on the main thread,
// which may multiplex them there); threads that other threads created go to their creator's role (a
// pool's new worker to the pool). A warning names how many threads started
// inside the window, and of which roles the listings saw them. When the
// process has threads that appeared since Start, Measure also attaches the
// counters again when the window opens (the Start attachment is closed
// first, so that no event is counted twice and hardware counters are not
// multiplexed by a second copy): every thread alive at the window's opening,
// the connections of a load that connected during a warm-up included, then
// carries its own counters and is named by the listings. A thread is known
// by its tid and start time, so a tid the kernel reused for a new thread
// does not take the dead thread's role. A thread whose role cannot be told
// (it exited before any listing) goes to "unattributed".
//
// The roles add up to the total: the raw counts, enabled and running times
// of the roles sum exactly to the window's, and so do the values of counted
// events. A multiplexed event's value is scaled thread by thread (the sum of
// each thread's raw × enabled / running), in the total as in the roles, so
// its roles add up to its total too, but for the main thread's own and
// descendants' counts being scaled apart.
//
// # Profiles
//
// With Config.Profile, call stacks are sampled over each window (package
// pprofout: CPU-wide sampling kept for the process; only the samples timed
// from right before the counters' first read to right before their last
// are kept, so the profile covers the window its op count is for, and not
// perfbench's own queries after it) and written as a pprof
// profile labelled with thread roles (named as for PerRole, with or without
// it; from the listings of a window with a DB) and the window's op count;
// Record.Profile points to it. A profile that cannot be taken (no right to
// sample CPU-wide) is a warning, not a failed window.
//
// # Client op sources
//
// With Config.Op "client.queries", "client.transactions" or "client.events",
// Measure leaves the op count empty; ApplyClient fills it from the load
// generator's results (see ApplyClient for the alignment of the client's
// counts with the window).
package measure
