package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Sentinels callers branch on with errors.Is.
var (
	// ErrGone: the process or thread does not exist (any more): its /proc
	// entry is missing (ENOENT) or went away while it was read (ESRCH),
	// or it is dead. The errors also wrap that errno. It is perfbench's
	// one "process gone" sentinel: callers that learn of an exit another
	// way (perf_event_open's ESRCH) wrap it too.
	ErrGone = errors.New("no such process")
	// ErrZombie: the process has exited but its parent has not reaped it
	// yet: it keeps its pid and /proc entry but runs nothing.
	ErrZombie = errors.New("the process has exited")
	// errFormat: a file is not in the format the kernel writes.
	errFormat = errors.New("unexpected format")
)

// FS reads /proc (and the cgroup directories under /sys) below a root
// directory. The zero value reads the running system. An FS and the Procs
// it returns hold no state: any number of goroutines may use them.
type FS struct{ root string }

// New returns an FS reading root/proc; root "" or "/" is the running
// system, a fixture tree in tests.
func New(root string) FS {
	if root == "/" {
		root = ""
	}
	return FS{root: root}
}

// rootDir is the directory the FS reads under ("/" for the running system).
func (f FS) rootDir() string {
	if f.root == "" {
		return "/"
	}
	return f.root
}

// path returns root/proc/elem...
func (f FS) path(elem ...string) string {
	return filepath.Join(append([]string{f.rootDir(), "proc"}, elem...)...)
}

// ReadFile reads root/proc/name: a file that belongs to no process, such as
// "stat", "diskstats" or "cpuinfo".
func (f FS) ReadFile(name string) ([]byte, error) {
	return readFile(f.path(name))
}

// Path returns root/proc/name, for messages about the file ReadFile reads.
func (f FS) Path(name string) string { return f.path(name) }

// PIDs lists the processes: the numeric entries of root/proc, sorted.
func (f FS) PIDs() ([]int, error) {
	names, err := readDirNames(f.path())
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	return ids(names), nil
}

// ids returns the positive decimal numbers among names, sorted.
func ids(names []string) []int {
	out := make([]int, 0, len(names))
	for _, n := range names {
		if id, err := strconv.Atoi(n); err == nil && id > 0 {
			out = append(out, id)
		}
	}
	sort.Ints(out)
	return out
}

// Proc is a process, /proc/PID, or one of its threads,
// /proc/PID/task/TID. It is a name: making one reads nothing.
type Proc struct {
	fs   FS
	pid  int // 0 for Self
	tid  int // 0 for the process
	self bool
}

// Proc returns process pid. A thread id works too (/proc/TID exists for
// every thread though only processes are listed), for reading its status.
func (f FS) Proc(pid int) Proc { return Proc{fs: f, pid: pid} }

// Self returns the process reading (/proc/self).
func (f FS) Self() Proc { return Proc{fs: f, self: true} }

// Task returns thread tid of the process.
func (p Proc) Task(tid int) Proc {
	p.tid = tid
	return p
}

// String names the process or thread as errors do: "pid 12", "tid 14 of
// pid 12", "this process".
func (p Proc) String() string {
	who := "pid " + strconv.Itoa(p.pid)
	if p.self {
		who = "this process"
	}
	if p.tid != 0 {
		return "tid " + strconv.Itoa(p.tid) + " of " + who
	}
	return who
}

// Path returns the path of elem under the process's or thread's folder:
// root/proc/PID/elem or root/proc/PID/task/TID/elem, for messages about
// the files ReadFile reads and for a file that is not read but opened (the
// exe link and map_files, to read an executable through them).
func (p Proc) Path(elem ...string) string {
	dir := "self"
	if !p.self {
		dir = strconv.Itoa(p.pid)
	}
	parts := []string{dir}
	if p.tid != 0 {
		parts = append(parts, "task", strconv.Itoa(p.tid))
	}
	return p.fs.path(append(parts, elem...)...)
}

// goneError is a read that found the process or thread gone.
type goneError struct {
	who string
	err error // the *fs.PathError with the errno, nil when none
}

func (e *goneError) Error() string { return e.who + ": " + ErrGone.Error() }
func (e *goneError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrGone}
	}
	return []error{ErrGone, e.err}
}

// isGone reports whether err, met on a process's /proc entry, means the
// process or thread is gone.
func isGone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, errESRCH)
}

// fail turns a read error on the process's entry into ErrGone when it
// means the process is gone.
func (p Proc) fail(err error) error {
	if isGone(err) {
		return &goneError{who: p.String(), err: err}
	}
	return err
}

// ReadFile reads file name of the process or thread (such as "io",
// "maps", "syscall").
func (p Proc) ReadFile(name string) ([]byte, error) {
	b, err := readFile(p.Path(name))
	if err != nil {
		return nil, p.fail(err)
	}
	return b, nil
}

// Tasks returns the thread ids of the process (of the thread's process for
// a thread), sorted. Threads that exit while the folder is read are simply
// listed or not: only a process that is gone fails (ErrGone). A zombie
// lists its main thread alone.
func (p Proc) Tasks() ([]int, error) {
	p.tid = 0
	names, err := readDirNames(p.Path("task"))
	if err != nil {
		return nil, p.fail(err)
	}
	tids := ids(names)
	if len(tids) == 0 {
		// The folder outlived the process: it was released while
		// being listed.
		return nil, &goneError{who: p.String() + " has no threads left (it is exiting)"}
	}
	return tids, nil
}

// FDs returns the process's open file descriptors (the entries of its fd
// folder), sorted; another user's process needs root.
func (p Proc) FDs() ([]int, error) {
	names, err := readDirNames(p.Path("fd"))
	if err != nil {
		return nil, p.fail(err)
	}
	fds := make([]int, 0, len(names))
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd >= 0 {
			fds = append(fds, fd)
		}
	}
	sort.Ints(fds)
	return fds, nil
}

// FDTarget returns what file descriptor fd of the process refers to (the
// target of its fd link: a path, "socket:[INODE]", "pipe:[INODE]"...). A
// descriptor closed since it was listed is an error wrapping
// fs.ErrNotExist.
func (p Proc) FDTarget(fd int) (string, error) {
	return readlink(p.Path("fd", strconv.Itoa(fd)))
}

// Stat reads and parses the stat file.
func (p Proc) Stat() (Stat, error) { return readParsed(p, "stat", parseStat) }

// Status reads and parses the status file.
func (p Proc) Status() (Status, error) { return readParsed(p, "status", parseStatus) }

// readParsed reads file name of p and parses it, naming the file when it
// does not parse.
func readParsed[T any](p Proc, name string, parse func([]byte) (T, error)) (T, error) {
	var v T
	b, err := p.ReadFile(name)
	if err != nil {
		return v, err
	}
	if v, err = parse(b); err != nil {
		return v, fmt.Errorf("parse %s: %w", p.Path(name), err)
	}
	return v, nil
}

// Comm returns the command name (the comm file without its newline): at
// most 15 bytes, set by the program (threads name themselves with it).
func (p Proc) Comm() (string, error) {
	b, err := p.ReadFile("comm")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// Exe returns the executable's path (the target of the exe link) and
// whether the file was removed or replaced since the process started (the
// kernel's " (deleted)" suffix, which is cut off). A process that exists
// but has no executable, a kernel thread, a zombie or a process whose main
// thread has exited, is an error wrapping fs.ErrNotExist but not ErrGone;
// another user's process needs root (fs.ErrPermission).
func (p Proc) Exe() (path string, deleted bool, err error) {
	target, err := readlink(p.Path("exe"))
	if err != nil {
		if isGone(err) && !p.exists() {
			return "", false, p.fail(err)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, fmt.Errorf("%s has no executable (a kernel thread, or it has exited): %w", p, err)
		}
		return "", false, err
	}
	path, deleted = strings.CutSuffix(target, " (deleted)")
	return path, deleted, nil
}

// exists reports whether the process's or thread's folder is there.
func (p Proc) exists() bool {
	_, err := os.Stat(p.Path())
	return err == nil
}

// Alive returns nil when the process runs, an error matching ErrZombie
// when it has exited but its parent has not reaped it (naming the parent),
// and one matching ErrGone when it does not exist. For a thread, a zombie
// or dead thread is gone: it has exited and nobody waits for it.
//
// A process whose main thread exited (pthread_exit) while others run
// shows the zombie state in its stat file: it is alive as long as it has
// threads besides the main one.
func (p Proc) Alive() error {
	s, err := p.Stat()
	if err != nil {
		if errors.Is(err, ErrGone) {
			return err
		}
		return fmt.Errorf("read the state of %s: %w", p, err)
	}
	switch {
	case !s.Exited():
		return nil
	case p.tid != 0:
		return &goneError{who: fmt.Sprintf("%s (%s) has exited", p, s.Comm)}
	case s.State == 'Z' && s.NumThreads > 1:
		return nil // the main thread exited; the others run
	case s.State == 'Z':
		return fmt.Errorf("%s (%s) is a zombie: it has exited and its parent, pid %d, has not reaped it: %w", p, s.Comm, s.PPID, ErrZombie)
	}
	return &goneError{who: fmt.Sprintf("%s (%s) is dead", p, s.Comm)}
}
