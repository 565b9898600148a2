package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// runtimeDirEnv names the folder where perfbench marks the servers it
// measures; unset, it is /run/perfbench for root and /tmp/perfbench for
// others (both are looked at).
const runtimeDirEnv = "PERFBENCH_RUNTIME_DIR"

// markDirs are the folders marks are written to (the first that takes
// one) and read from.
func markDirs() []string {
	if d := os.Getenv(runtimeDirEnv); d != "" {
		return []string{d}
	}
	return []string{"/run/perfbench", filepath.Join(os.TempDir(), "perfbench")}
}

// mark says, while a Session is open, that this perfbench measures a
// server: a file named after the server (pid and start time, since pids
// are reused) and this process, locked as long as it exists. Another
// perfbench measuring the same server finds the file (a file whose lock is
// free is left over by a perfbench that died, and is removed) and appends
// its pid to it, so that each learns of the other even when one session
// starts and ends inside the other's window.
type mark struct {
	f    *os.File // nil: no mark could be written
	name string   // f's path
	key  string
	seen map[int]bool // other perfbench processes met so far
}

// serverKey is "PID-STARTTIME" of pid, or "" when it cannot be read.
func serverKey(pid int) string {
	st, err := procfs.New("").Proc(pid).Stat()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d-%d", pid, st.StartTime)
}

// newMark marks pid as measured by this process and looks for others. It
// never fails: without a mark, no concurrent perfbench is detected.
func newMark(pid int) *mark {
	m := &mark{key: serverKey(pid), seen: map[int]bool{}}
	if m.key == "" {
		return m
	}
	for _, dir := range markDirs() {
		mode := os.FileMode(0o755)
		if strings.HasPrefix(dir, os.TempDir()) {
			mode = 0o1777 // shared by every user, as /tmp
		}
		if err := os.MkdirAll(dir, mode); err != nil {
			continue
		}
		os.Chmod(dir, mode)
		// Made under a name others do not look at, locked, then renamed:
		// never seen unlocked (and taken for a leftover).
		f, err := os.CreateTemp(dir, ".new-"+m.key+".*")
		if err != nil {
			continue
		}
		f.Chmod(0o666) // others append their pid to it
		fmt.Fprintf(f, "%d\n", os.Getpid())
		name := filepath.Join(dir, strings.TrimPrefix(filepath.Base(f.Name()), ".new-"))
		if lockFile(f, true) != nil || os.Rename(f.Name(), name) != nil {
			f.Close()
			os.Remove(f.Name())
			continue
		}
		m.f, m.name = f, name
		break
	}
	m.look()
	return m
}

// look finds other perfbench processes measuring the same server: those
// whose marks are there now, and those that left their pid in this one.
func (m *mark) look() {
	if m.key == "" {
		return
	}
	if m.f != nil {
		// Pids that others appended to this mark, after this one's own.
		if b, err := os.ReadFile(m.name); err == nil {
			if f := strings.Fields(string(b)); len(f) > 1 {
				for _, l := range f[1:] {
					if n, err := strconv.Atoi(l); err == nil {
						m.seen[n] = true
					}
				}
			}
		}
	}
	for _, dir := range markDirs() {
		names, _ := filepath.Glob(filepath.Join(dir, m.key+".*"))
		for _, name := range names {
			if name != m.name {
				m.visit(name)
			}
		}
	}
}

// visit reads another mark of the same server: a mark whose lock nobody
// holds is removed (its perfbench died); the holder of a live one is
// noted, and learns of this process from the pid appended to its mark.
func (m *mark) visit(name string) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		if f, err = os.Open(name); err != nil {
			return
		}
	}
	defer f.Close()
	if lockFile(f, false) == nil {
		os.Remove(name)
		return
	}
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	first, _, _ := strings.Cut(string(b[:n]), "\n")
	holder, err := strconv.Atoi(first)
	if err != nil || holder <= 0 {
		return
	}
	if !m.seen[holder] {
		fmt.Fprintf(f, "%d\n", os.Getpid())
	}
	m.seen[holder] = true
}

// others lists the other perfbench processes met so far, ascending.
func (m *mark) others() []int {
	var pids []int
	for p := range m.seen {
		pids = append(pids, p)
	}
	sort.Ints(pids)
	return pids
}

// warning is the Record's warning about the others met, or "".
func (m *mark) warning() string {
	pids := m.others()
	if len(pids) == 0 {
		return ""
	}
	var s []string
	for _, p := range pids {
		s = append(s, strconv.Itoa(p))
	}
	who := "another perfbench (pid " + s[0] + ") was"
	if len(s) > 1 {
		who = "other perfbench processes (pids " + strings.Join(s, ", ") + ") were"
	}
	return who + " measuring this server at the same time: each counts the other's status queries and the server CPU they " +
		"cost; measure a server with one perfbench at a time"
}

// close removes the mark.
func (m *mark) close() {
	if m.f == nil {
		return
	}
	os.Remove(m.name)
	m.f.Close()
	m.f = nil
}
