// Package procfs reads what perfbench needs from /proc: the threads of a
// process (/proc/PID/task), a process's or thread's stat, status, comm,
// executable and cgroup, the mount table, and sysctls such as
// kernel.perf_event_paranoid.
//
// An FS reads under a root directory: "/" on a live system, a fixture tree
// in tests (testdata/proc/...). The root is the file system's root, not
// the proc mount, because the cgroup directories a process's cgroup names
// live under /sys: New("/") reads /proc/12/stat and finds cgroups under
// /sys/fs/cgroup; New("testdata") reads testdata/proc/12/stat.
//
// Reading is kept apart from parsing: the parsers take the files' bytes and
// are fuzzed; the readers open, read and close each file with plain system
// calls (os.ReadFile would also register the descriptor with the runtime's
// poller, four more system calls per file, which a poller reading thousands
// of threads a second pays for).
//
// # A process that is gone
//
// Every reader of a process or thread turns ENOENT and ESRCH on its /proc
// entry into an error that errors.Is matches with ErrGone, names the pid
// (and tid) and wraps the errno: the process or thread has exited and been
// reaped, or never existed. A zombie (exited, not yet reaped by its
// parent) still has its entry: Proc.Alive tells it apart with ErrZombie
// and names the parent. A process whose main thread has exited while
// others run shows the zombie state in /proc/PID/stat too, yet runs: Alive
// counts it alive. ErrGone is perfbench's one sentinel for a process or
// thread that is gone: perfevent wraps it too when perf_event_open says
// ESRCH.
//
// # Ownership
//
// This package is the one place in perfbench that builds /proc paths:
// perfevent, perfevent/metric, osstat, mysqld, hostinfo, symbols, measure,
// runner, insertbench, cpuset, hugeheap and the test helpers read /proc
// through it, so that one root (a fixture tree in their tests) and one
// rule for a process that is gone hold everywhere. Parsers of files that
// only one of them reads (/proc/stat's cpu line, diskstats, io, net/tcp)
// stay with it; stat, status, cgroup and mountinfo are parsed here.
package procfs
