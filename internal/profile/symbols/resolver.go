package symbols

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Resolver names addresses of processes on one machine. It reads each ELF
// file once, however many processes and profiles map it, and /proc/kallsyms
// once. It is safe for concurrent use.
type Resolver struct {
	root string

	mu    sync.Mutex
	files map[string]*fileEntry

	kernelOnce sync.Once
	kernel     *kernel
	kernelErr  error
}

type fileEntry struct {
	once sync.Once
	f    *File
	err  error
}

// NewResolver returns a Resolver reading files, /proc and /usr/lib/debug
// under root ("" or "/" for this machine).
func NewResolver(root string) *Resolver {
	if root == "" {
		root = "/"
	}
	return &Resolver{root: root, files: map[string]*fileEntry{}}
}

// Kernel returns the kernel's symbols from <root>/proc/kallsyms, read once.
func (r *Resolver) Kernel() (*kernel, error) {
	r.kernelOnce.Do(func() {
		b, err := procfs.New(r.root).ReadFile("kallsyms")
		if err != nil {
			r.kernelErr = fmt.Errorf("read kernel symbols: %w", err)
			return
		}
		r.kernel, r.kernelErr = parseKallsyms(bytes.NewReader(b))
	})
	return r.kernel, r.kernelErr
}

// file returns the symbols of the file at path (under root), cached under
// key, trying its debug file by build-id.
func (r *Resolver) file(key, path string) (*File, error) {
	r.mu.Lock()
	e, ok := r.files[key]
	if !ok {
		e = &fileEntry{}
		r.files[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() { e.f, e.err = r.load(path) })
	return e.f, e.err
}

func (r *Resolver) load(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := readELF(fh)
	if err != nil {
		return nil, err
	}
	if f.BuildID != "" && len(f.BuildID) > 2 {
		dp := filepath.Join(r.root, "usr/lib/debug/.build-id", f.BuildID[:2], f.BuildID[2:]+".debug")
		if dh, err := os.Open(dp); err == nil {
			d, err := readELF(dh)
			dh.Close()
			if err == nil && d.Source == sourceSymtab {
				f = f.withSymbols(d)
			}
		}
	}
	return f, nil
}

// Process is the address space of one process, from one or more snapshots
// of its /proc/PID/maps, for naming its addresses.
type Process struct {
	r    *Resolver
	pid  int
	maps []Mapping // executable mappings, in snapshot order

	mu       sync.Mutex
	files    map[int]*File // by index in maps; nil entry: unreadable
	loaded   map[int]bool
	warnings map[string]bool
}

// Process prepares the naming of addresses of process pid from its maps
// snapshots (for example at the start and at the end of a window: a library
// loaded in between is in the second). An address is looked up in the first
// snapshot that maps it.
func (r *Resolver) Process(pid int, maps ...[]byte) (*Process, error) {
	p := &Process{r: r, pid: pid, files: map[int]*File{}, loaded: map[int]bool{}, warnings: map[string]bool{}}
	seen := map[Mapping]bool{}
	for _, b := range maps {
		if len(b) == 0 {
			continue
		}
		ms, err := parseMaps(b)
		if err != nil {
			return nil, fmt.Errorf("read the memory map of pid %d: %w", pid, err)
		}
		for _, m := range ms {
			if m.Exec() && !seen[m] {
				seen[m] = true
				p.maps = append(p.maps, m)
			}
		}
	}
	if len(p.maps) == 0 {
		p.warnf("no memory map of pid %d: its user frames show as addresses", pid)
	}
	return p, nil
}

// Frame is a named (or not) address of a call chain.
type Frame struct {
	Addr uint64
	// Function is the demangled function name; "" when unknown.
	Function string
	// Symbol is the name as the symbol table spells it.
	Symbol string
	// Kernel is true for a kernel frame; Module is then its module ("" for
	// the kernel image).
	Kernel bool
	Module string
	// Mapping is the mapping holding a user address (nil when none does);
	// File its symbols when they could be read.
	Mapping *Mapping
	File    *File
	// VAddr is a user address in the file's virtual addresses, and Start
	// the start of its function there (from the symbol, else the unwind
	// table); both 0 when not known.
	VAddr, Start uint64
}

// User names a user-space address. caller is true for a return address (any
// frame but the leaf): the call instruction is just before it, so the byte
// before is looked up, as a return address at the end of a function
// belongs to it, not to the next one.
func (p *Process) User(addr uint64, caller bool) Frame {
	fr := Frame{Addr: addr}
	look := addr
	if caller && look > 0 {
		look--
	}
	i := p.find(look)
	if i < 0 {
		return fr
	}
	m := &p.maps[i]
	fr.Mapping = m
	f := p.fileOf(i)
	if f == nil {
		return fr
	}
	fr.File = f
	v, ok := f.VAddr(*m, look)
	if !ok {
		return fr
	}
	fr.VAddr = v
	if s, ok := f.Lookup(v); ok {
		fr.Symbol = s.Name
		fr.Function = f.Name(s)
		fr.Start = s.Value
	} else if st, ok := f.FuncStart(v); ok {
		fr.Start = st
	}
	return fr
}

// Kernel names a kernel address from /proc/kallsyms.
func (p *Process) Kernel(addr uint64, caller bool) Frame {
	fr := Frame{Addr: addr, Kernel: true}
	k, err := p.r.Kernel()
	if err != nil {
		p.warnf("kernel frames show as addresses: %v", err)
		return fr
	}
	look := addr
	if caller && look > 0 {
		look--
	}
	if name, mod, ok := k.Lookup(look); ok {
		fr.Function, fr.Symbol, fr.Module = name, name, mod
	}
	return fr
}

// find returns the index of the first mapping holding addr, or -1.
func (p *Process) find(addr uint64) int {
	for i, m := range p.maps {
		if addr >= m.Start && addr < m.Limit {
			return i
		}
	}
	return -1
}

// fileOf returns the symbols of the file of mapping i, reading it on first
// use: from its path, or through /proc/PID/map_files when the file was
// deleted or replaced since it was mapped. Problems become warnings.
func (p *Process) fileOf(i int) *File {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loaded[i] {
		return p.files[i]
	}
	p.loaded[i] = true
	m := p.maps[i]
	if !m.File() {
		return nil
	}
	path := filepath.Join(p.r.root, m.Path)
	key := ""
	replaced := m.Deleted
	if !replaced {
		if st, err := os.Stat(path); err == nil {
			// Inode numbers in the map are those of this machine's
			// files: compare them only when reading this machine.
			if ino, ok := inodeOf(st); ok && m.Inode != 0 && ino != m.Inode && p.r.root == "/" {
				replaced = true
			} else {
				key = fmt.Sprintf("%s|%d|%d|%d", m.Path, m.Inode, st.Size(), st.ModTime().UnixNano())
			}
		} else {
			replaced = errors.Is(err, fs.ErrNotExist)
		}
	}
	if replaced {
		path = procfs.New(p.r.root).Proc(p.pid).Path("map_files", fmt.Sprintf("%x-%x", m.Start, m.Limit))
		key = fmt.Sprintf("%s|%d|map_files|%d|%x", m.Path, m.Inode, p.pid, m.Start)
	}
	if key == "" {
		key = m.Path
	}
	f, err := p.r.file(key, path)
	switch {
	case err != nil && replaced:
		p.warnLocked("%s was deleted or replaced after pid %d mapped it and cannot be read through /proc/%d/map_files any "+
			"more (%v): its frames show as addresses", m.Path, p.pid, p.pid, err)
		return nil
	case err != nil:
		p.warnLocked("cannot read symbols of %s: %v: its frames show as addresses", m.Path, err)
		return nil
	case replaced:
		p.warnLocked("%s was deleted or replaced after pid %d mapped it: symbols were read from the mapped copy (/proc/%d/map_files)", m.Path, p.pid, p.pid)
	}
	if f.Symbols() == 0 {
		p.warnLocked("%s has no function symbols (stripped of .symtab and .dynsym): its frames show as addresses; install its "+
			"debug symbols (the -dbgsym package, under /usr/lib/debug/.build-id)", m.Path)
	}
	p.files[i] = f
	return f
}

func (p *Process) warnf(format string, args ...any) {
	p.mu.Lock()
	p.warnLocked(format, args...)
	p.mu.Unlock()
}

func (p *Process) warnLocked(format string, args ...any) {
	p.warnings[fmt.Sprintf(format, args...)] = true
}

// Warnings are what limited the naming so far (files without symbols,
// deleted binaries, hidden kernel symbols), sorted.
func (p *Process) Warnings() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.warnings))
	for w := range p.warnings {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// Mappings returns the executable mappings of the process.
func (p *Process) Mappings() []Mapping { return p.maps }
