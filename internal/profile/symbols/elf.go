package symbols

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/ianlancetaylor/demangle"
)

// Where a File's symbols came from.
const (
	sourceSymtab    = "symtab"     // the file's .symtab: every function
	sourceDynsym    = "dynsym"     // .dynsym only: exported functions
	sourceDebugFile = "debug file" // a separate debug file (by build-id)
	sourceNone      = ""           // no function symbols at all
)

// errNotELF: the file is not an ELF object.
var errNotELF = errors.New("not an ELF file")

// symbol is a function symbol: its range in the file's virtual addresses and
// its name as the table spells it (mangled for C++).
type symbol struct {
	Value, Size uint64
	Name        string
	global      bool
}

// segment is a PT_LOAD program header: file bytes [Off, Off+Filesz) are
// loaded at virtual address Vaddr.
type segment struct {
	off, vaddr, filesz uint64
}

// File is what symbolization needs of one ELF file: its loadable segments,
// build-id and function symbols. It is safe for concurrent use.
type File struct {
	// BuildID is the GNU build-id in hex, "" when the file has none.
	BuildID string
	// Source says which table the symbols came from (sourceSymtab, ...).
	Source string
	// Exec is true for a fixed-address executable (ET_EXEC); false for
	// position-independent executables and shared libraries (ET_DYN).
	Exec bool

	segs   []segment
	syms   []symbol // sorted by Value
	starts []uint64 // function starts from .eh_frame_hdr, sorted
}

// readELF reads the program headers, build-id and function symbols of an
// ELF file: .symtab when it has one, else .dynsym.
func readELF(r io.ReaderAt) (*File, error) {
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotELF, err)
	}
	defer ef.Close()
	f := &File{Exec: ef.Type == elf.ET_EXEC}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			f.segs = append(f.segs, segment{off: p.Off, vaddr: p.Vaddr, filesz: p.Filesz})
		}
	}
	f.BuildID = buildID(ef)
	f.starts = frameStarts(ef)
	if syms, err := ef.Symbols(); err == nil {
		if f.syms = functions(syms); len(f.syms) > 0 {
			f.Source = sourceSymtab
		}
	}
	if len(f.syms) == 0 {
		if syms, err := ef.DynamicSymbols(); err == nil {
			if f.syms = functions(syms); len(f.syms) > 0 {
				f.Source = sourceDynsym
			}
		}
	}
	return f, nil
}

// functions keeps the defined function symbols, sorted by address; of
// symbols at the same address it keeps one with a size, global first.
func functions(in []elf.Symbol) []symbol {
	var out []symbol
	for _, s := range in {
		t := elf.ST_TYPE(s.Info)
		if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
			continue
		}
		if s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
			continue
		}
		b := elf.ST_BIND(s.Info)
		out = append(out, symbol{Value: s.Value, Size: s.Size, Name: s.Name, global: b == elf.STB_GLOBAL || b == elf.STB_WEAK})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Value != b.Value {
			return a.Value < b.Value
		}
		if (a.Size > 0) != (b.Size > 0) {
			return a.Size > 0
		}
		if a.global != b.global {
			return a.global
		}
		return a.Name < b.Name
	})
	dedup := out[:0]
	for i, s := range out {
		if i > 0 && s.Value == out[i-1].Value {
			continue
		}
		dedup = append(dedup, s)
	}
	return dedup
}

// Symbols is the number of function symbols.
func (f *File) Symbols() int { return len(f.syms) }

// withSymbols returns a copy of f whose symbols are those of d (a separate
// debug file of f).
func (f *File) withSymbols(d *File) *File {
	return &File{BuildID: f.BuildID, Source: sourceDebugFile, Exec: f.Exec, segs: f.segs, syms: d.syms, starts: f.starts}
}

// VAddr converts address addr of a process, inside mapping m of this file,
// into the file's virtual address: the offset in the file is
// addr - m.Start + m.Offset, and the PT_LOAD segment holding that offset
// says where it was meant to be loaded. ok is false when no segment holds it.
func (f *File) VAddr(m Mapping, addr uint64) (uint64, bool) {
	if addr < m.Start || addr >= m.Limit {
		return 0, false
	}
	off := addr - m.Start + m.Offset
	for _, s := range f.segs {
		if off >= s.off && off < s.off+s.filesz {
			return off - s.off + s.vaddr, true
		}
	}
	return 0, false
}

// Lookup returns the function symbol covering virtual address vaddr. A
// symbol with a size covers [Value, Value+Size); one without a size covers
// up to the next symbol.
func (f *File) Lookup(vaddr uint64) (symbol, bool) {
	i := sort.Search(len(f.syms), func(i int) bool { return f.syms[i].Value > vaddr }) - 1
	// Look back a little: a large function may contain a smaller symbol
	// (an alias of a part of it) that starts closer to vaddr.
	for j := i; j >= 0 && j > i-4; j-- {
		s := f.syms[j]
		if s.Size > 0 && vaddr < s.Value+s.Size {
			return s, true
		}
		if s.Size == 0 && j == i {
			return s, true
		}
	}
	return symbol{}, false
}

// FuncStart returns the start of the function holding virtual address
// vaddr according to the unwind table (.eh_frame_hdr), which lists every
// function compiled with unwind information, named or not: frames of
// functions without a symbol are grouped by it. ok is false when the file
// has no such table or vaddr is before its first function.
func (f *File) FuncStart(vaddr uint64) (uint64, bool) {
	i := sort.Search(len(f.starts), func(i int) bool { return f.starts[i] > vaddr }) - 1
	if i < 0 {
		return 0, false
	}
	return f.starts[i], true
}

// ptGNUEHFrame is PT_GNU_EH_FRAME, the segment of .eh_frame_hdr.
const ptGNUEHFrame = elf.ProgType(0x6474e550)

// frameStarts reads the function starts of the binary search table of
// .eh_frame_hdr (found through its program header, so stripped section
// headers do not matter). Only the encodings linkers write are read: a
// 4-byte count and a table of 4-byte offsets from the start of the header
// (DW_EH_PE_datarel|DW_EH_PE_sdata4); anything else gives no starts.
func frameStarts(ef *elf.File) []uint64 {
	for _, p := range ef.Progs {
		if p.Type != ptGNUEHFrame || p.Filesz < 12 || p.Filesz > 1<<28 {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return nil
		}
		return parseEHFrameHdr(b, p.Vaddr, ef.ByteOrder)
	}
	return nil
}

// parseEHFrameHdr parses the .eh_frame_hdr at virtual address vaddr.
func parseEHFrameHdr(b []byte, vaddr uint64, bo binary.ByteOrder) []uint64 {
	const (
		udata4        = 0x03
		sdata4        = 0x0b
		datarelSdata4 = 0x3b
	)
	if len(b) < 12 || b[0] != 1 || b[2] != udata4 || b[3] != datarelSdata4 {
		return nil
	}
	if enc := b[1] & 0x0f; enc != udata4 && enc != sdata4 {
		return nil
	}
	n := uint64(bo.Uint32(b[8:]))
	tab := b[12:]
	if n > uint64(len(tab))/8 {
		return nil
	}
	starts := make([]uint64, 0, n)
	for i := uint64(0); i < n; i++ {
		rel := int64(int32(bo.Uint32(tab[8*i:])))
		starts = append(starts, uint64(int64(vaddr)+rel))
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	return starts
}

// Name returns the symbol's name demangled, without parameter lists, as
// perf report prints C++ functions ("JOIN::optimize").
func (f *File) Name(s symbol) string {
	return demangleName(s.Name)
}

var demangleCache sync.Map // mangled → demangled

// demangleName returns a C++ (or Rust) symbol name demangled without parameter
// lists, or the name as it is when it is not mangled.
func demangleName(name string) string {
	if len(name) < 2 || name[0] != '_' {
		return name
	}
	if v, ok := demangleCache.Load(name); ok {
		return v.(string)
	}
	d := demangle.Filter(name, demangle.NoParams, demangle.NoEnclosingParams)
	demangleCache.Store(name, d)
	return d
}

// buildID returns the GNU build-id of ef in hex, from its note sections or,
// when section headers are gone, its PT_NOTE segments.
func buildID(ef *elf.File) string {
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		if b, err := s.Data(); err == nil {
			if id, ok := noteBuildID(b, ef.ByteOrder); ok {
				return id
			}
		}
	}
	for _, p := range ef.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<20 {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err == nil {
			if id, ok := noteBuildID(b, ef.ByteOrder); ok {
				return id
			}
		}
	}
	return ""
}

// noteBuildID finds the NT_GNU_BUILD_ID note named "GNU" in a note area
// (namesz, descsz, type, then name and desc each padded to 4 bytes).
func noteBuildID(b []byte, bo binary.ByteOrder) (string, bool) {
	const ntGNUBuildID = 3
	pad := func(n uint64) uint64 { return (n + 3) &^ 3 }
	for len(b) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:])), bo.Uint32(b[8:])
		b = b[12:]
		if pad(namesz) > uint64(len(b)) {
			return "", false
		}
		name := b[:namesz]
		b = b[pad(namesz):]
		if pad(descsz) > uint64(len(b)) && descsz > uint64(len(b)) {
			return "", false
		}
		desc := b[:descsz]
		if pad(descsz) <= uint64(len(b)) {
			b = b[pad(descsz):]
		} else {
			b = nil
		}
		if typ == ntGNUBuildID && string(name) == "GNU\x00" && len(desc) > 0 {
			return hex.EncodeToString(desc), true
		}
	}
	return "", false
}
