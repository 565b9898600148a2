package perfevent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// errNoCgroup: cgroup mode cannot count this process: cgroup v2 is not
// mounted, or the process sits in the root cgroup (counting it would count
// the whole machine).
var errNoCgroup = errors.New("no cgroup to count")

// errRootCgroup is errNoCgroup for a process in the machine's root cgroup,
// the usual place of a process nobody placed.
var errRootCgroup = fmt.Errorf("%w", errNoCgroup)

// attachCgroup opens the counters once per online CPU, filtered by the cgroup
// directory dir (the process's own cgroup v2 when dir is empty).
func (a *Attachment) attachCgroup(dir string) error {
	if dir == "" {
		d, err := cgroupDirOf(a.root, a.pid)
		if err != nil {
			return err
		}
		dir = d
	}
	cpus, err := onlineCPUs(a.root)
	if err != nil {
		return err
	}
	a.planned = len(cpus)
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open cgroup %s of pid %d: %w", dir, a.pid, err)
	}
	defer f.Close()
	a.cgFD = int(f.Fd())
	defer func() { a.cgFD = -1 }()

	t := newTarget(cpus[0], len(a.lay.parts))
	if err := a.openTarget(t, true); err != nil {
		a.closeTarget(t)
		return err
	}
	a.targets = append(a.targets, t)
	if err := a.ensureFiles((len(cpus) - 1) * a.lay.openParts()); err != nil {
		return err
	}
	opened, _, err := a.openTargets(cpus[1:])
	a.targets = append(a.targets, opened...)
	if err != nil {
		return err
	}
	a.notes = append(a.notes, CgroupNote(dir, a.pid))
	a.cgDir = dir
	return nil
}

// CgroupNote is the note of an attachment in cgroup mode on cgroup dir,
// for pid: that it counts every process in the cgroup.
func CgroupNote(dir string, pid int) string {
	return fmt.Sprintf("cgroup mode: counting every process in cgroup %s, not only pid %d", dir, pid)
}

// CgroupDir is the cgroup v2 folder counted in cgroup mode, "" in thread
// mode.
func (a *Attachment) CgroupDir() string { return a.cgDir }

// newCPUs says which CPUs are online now that were not when cgroup mode
// opened its counters on every online CPU: what the cgroup runs there is
// not counted. "" when there are none (a CPU taken offline keeps its
// counts) or the list cannot be read.
func (a *Attachment) newCPUs() string {
	now, err := onlineCPUs(a.root)
	if err != nil {
		return ""
	}
	had := map[int]bool{}
	for _, t := range a.targets {
		had[t.id] = true
	}
	var added []int
	for _, c := range now {
		if !had[c] {
			added = append(added, c)
		}
	}
	if len(added) == 0 {
		return ""
	}
	return fmt.Sprintf("CPU %s came online after the counters were opened on every online CPU: what the cgroup ran there is not counted", tidList(added))
}

// cgroupDirOf returns the cgroup v2 directory of process pid: its path
// from <root>/proc/PID/cgroup under a cgroup2 mount of
// <root>/proc/self/mountinfo that shows it (procfs.FS.CgroupDir).
//
// A path of "/" is the root of the hierarchy, every process on the
// machine, unless the directory is the root of a cgroup namespace, which
// has the cgroup.type file only non-root cgroups have: then it is a
// container's own cgroup.
func cgroupDirOf(root string, pid int) (string, error) {
	fsys := procfs.New(root)
	rel, err := fsys.Proc(pid).Cgroup()
	if errors.Is(err, procfs.ErrGone) {
		return "", err
	}
	if err != nil {
		return "", &noCgroupError{err}
	}
	dir, err := fsys.CgroupDir(rel)
	if err != nil {
		return "", &noCgroupError{fmt.Errorf("pid %d: %w", pid, err)}
	}
	if rel == "/" {
		if _, err := os.Stat(filepath.Join(dir, "cgroup.type")); err != nil {
			return "", fmt.Errorf("pid %d is in the root cgroup, where cgroup mode would count every process; start it in a cgroup of its own (as systemd does for a service) or count per thread: %w", pid, errRootCgroup)
		}
	}
	return dir, nil
}

// noCgroupError is procfs's reason why a process's cgroup has no folder to
// count: it says that reason and matches errNoCgroup too.
type noCgroupError struct{ err error }

func (e *noCgroupError) Error() string   { return e.err.Error() }
func (e *noCgroupError) Unwrap() []error { return []error{e.err, errNoCgroup} }

// onlineCPUs reads <root>/sys/devices/system/cpu/online.
func onlineCPUs(root string) ([]int, error) {
	if root == "" {
		root = "/"
	}
	p := filepath.Join(root, "sys/devices/system/cpu/online")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("list online CPUs: %w", err)
	}
	cpus, err := parseCPURanges(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("list online CPUs: %s: %w", p, err)
	}
	return cpus, nil
}

// parseCPURanges parses a kernel CPU list: "0-3,8,10-11".
func parseCPURanges(s string) ([]int, error) {
	var out []int
	for _, r := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// AloneInCgroup reports whether process pid is alone in its cgroup v2 and
// the cgroups below it, but for processes it forked (and theirs, which
// counters opened with inherit count too): then cgroup mode counts exactly
// the process. It returns the cgroup's directory, or "" and why not (no
// cgroup v2, the root cgroup, another process found there, a cgroup not
// read).
func AloneInCgroup(pid int) (dir, why string) {
	return aloneInCgroup("", pid)
}

func aloneInCgroup(root string, pid int) (string, string) {
	dir, err := cgroupDirOf(root, pid)
	if errors.Is(err, errRootCgroup) {
		// The usual case, a process nobody placed: short, no advice.
		return "", fmt.Sprintf("pid %d is in the root cgroup", pid)
	}
	if err != nil {
		return "", err.Error()
	}
	var other []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil // a cgroup removed while walked
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, f := range strings.Fields(string(b)) {
			p, err := strconv.Atoi(f)
			if err != nil || p == pid || descends(root, p, pid) {
				continue
			}
			if len(other) < 3 {
				other = append(other, f)
			}
			if len(other) == 3 {
				return filepath.SkipAll
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return "", fmt.Sprintf("read cgroup %s: %v", dir, err)
	case len(other) > 0:
		return "", fmt.Sprintf("cgroup %s holds other processes too (pid %s)", dir, strings.Join(other, ", "))
	}
	return dir, ""
}

// descends reports whether process p is a descendant of process pid, by
// the parents in <root>/proc/P/stat. A process gone while looked up (an
// exiting child's, often) is counted as one: it is no longer there to
// count.
func descends(root string, p, pid int) bool {
	fsys := procfs.New(root)
	for range 64 {
		st, err := fsys.Proc(p).Stat()
		if err != nil {
			return errors.Is(err, procfs.ErrGone)
		}
		if st.PPID <= 1 {
			return false
		}
		if st.PPID == pid {
			return true
		}
		p = st.PPID
	}
	return false
}
