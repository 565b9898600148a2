// Package symbols names the addresses of sampled call chains: user frames
// from the ELF symbol tables of the files a process has mapped, kernel frames
// from /proc/kallsyms.
//
// A user address is turned into a file offset with the process's memory map
// (/proc/PID/maps), then into the file's virtual address with its ELF
// program headers (the load bias of position-independent executables and
// shared libraries), then into the function symbol that covers it. Symbols
// come from a separate debug file found by build-id under
// /usr/lib/debug/.build-id when one is installed, else from .symtab, else
// from .dynsym (a stripped binary keeps its exported functions there: the
// Debian mariadbd exports about 29,000). C++ names are demangled, without
// parameter lists, the way perf report prints them.
//
// Reading is separate from parsing: parseMaps, readELF and parseKallsyms take
// bytes or readers; a Resolver opens files under a root directory, so tests
// point it at fixtures, and caches each file's symbols for every process and
// profile that maps it.
package symbols

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, Limit uint64 // [Start, Limit) in the process
	Offset       uint64 // file offset mapped at Start
	Perms        string // "r-xp"
	Dev          string // "08:01"
	Inode        uint64
	// Path is the file, or a pseudo name ("[vdso]", "[heap]"), or "" for
	// anonymous memory. The " (deleted)" suffix the kernel adds to files
	// removed since they were mapped is cut and Deleted set.
	Path    string
	Deleted bool
}

// Exec reports whether the mapping is executable.
func (m Mapping) Exec() bool { return len(m.Perms) >= 3 && m.Perms[2] == 'x' }

// File reports whether the mapping is of a file (not anonymous memory or a
// pseudo mapping such as [vdso]).
func (m Mapping) File() bool { return strings.HasPrefix(m.Path, "/") }

// parseMaps parses the text of /proc/PID/maps.
func parseMaps(b []byte) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMapsLine(line)
		if err != nil {
			return nil, fmt.Errorf("maps line %d: %w", n, err)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// parseMapsLine parses "start-end perms offset dev inode   path".
func parseMapsLine(line string) (Mapping, error) {
	var m Mapping
	rest := line
	field := func() string {
		rest = strings.TrimLeft(rest, " ")
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			f := rest
			rest = ""
			return f
		}
		f := rest[:i]
		rest = rest[i+1:]
		return f
	}
	rng, perms, off, dev, inode := field(), field(), field(), field(), field()
	lo, hi, ok := strings.Cut(rng, "-")
	if !ok {
		return m, fmt.Errorf("bad address range in %q", line)
	}
	var err error
	if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
		return m, fmt.Errorf("bad start address in %q", line)
	}
	if m.Limit, err = strconv.ParseUint(hi, 16, 64); err != nil || m.Limit < m.Start {
		return m, fmt.Errorf("bad end address in %q", line)
	}
	if m.Offset, err = strconv.ParseUint(off, 16, 64); err != nil {
		return m, fmt.Errorf("bad offset in %q", line)
	}
	if m.Inode, err = strconv.ParseUint(inode, 10, 64); err != nil {
		return m, fmt.Errorf("bad inode in %q", line)
	}
	if len(perms) < 4 || dev == "" {
		return m, fmt.Errorf("bad permissions or device in %q", line)
	}
	m.Perms, m.Dev = perms, dev
	m.Path = strings.TrimLeft(rest, " ")
	if p, ok := strings.CutSuffix(m.Path, " (deleted)"); ok {
		m.Path, m.Deleted = p, true
	}
	return m, nil
}
