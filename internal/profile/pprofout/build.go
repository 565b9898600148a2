// Package pprofout turns the samples of a measured window into a pprof
// profile (github.com/google/pprof/profile) whose frames are named, and
// writes it as the profile.pb.gz a Record points to.
//
// A window owner (perfbench stat, the step runner) uses it in three calls:
//
//	w, err := pprofout.Start(pid, sampleOpts)         // next to the counters' first read
//	...
//	roles, _ := db.Roles(ctx, pid)                      // tid → role, mysqld package
//	res, err := w.Finish(path, pprofout.RecordOptions(rec, roles, resolver))
//	rec.Profile, _ = pprofout.RelPath(recordPath, path) // Record.Profile
//	rec.Warnings = append(rec.Warnings, res.Warnings...)
//
// Flags registers perfbench stat's --profile[=FREQ], --profile-event and
// --profile-out and turns them into the sampling options and the file path.
//
// # The profile
//
// Two sample values: "samples/count" and the event's own unit, the sum of the
// samples' periods ("cpu/nanoseconds" for cpu-clock and task-clock,
// "cycles/count" for cycles); the second is the default. Each sample has
// the labels "role" (from Options.Roles, "unattributed" for threads the
// caller could not name) and "comm" (the thread's name) and the numeric
// label "tid". Frames are named by package symbols; a user frame with no
// symbol is named "FILE+0xVADDR" with its address in the file (stable across
// runs of one binary, unlike the process address), a kernel frame without
// kallsyms "[kernel]". Mappings carry file names and GNU build-ids. The
// window's operation count is kept as the comment "perfbench.ops=N" (and
// its source, version and step likewise: see Meta), so readers can
// normalize per operation: pprof itself ignores comments.
package pprofout

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/perfbench/perfbench/internal/profile/symbols"
	"github.com/perfbench/perfbench/perfevent"
)

// unattributedRole labels samples of threads the caller's roles do not name.
const unattributedRole = "unattributed"

// Options complete a profile. The zero value names frames with a new
// symbols.Resolver on this machine and labels every thread unattributed.
type Options struct {
	// Roles maps thread ids to roles ((*mysqld.DB).Roles gives it).
	// Threads not in it get UnknownRole, or unattributedRole.
	Roles       map[int]string
	UnknownRole string
	// Exclude are threads whose samples are left out (perfbench's own
	// connection, left out of the counters too).
	Exclude []int
	// Ops is the operation count of the window (already divided by its
	// Per, as Record.Ops.Count) and OpsSource what it counts
	// ("Questions"); 0 when not known.
	Ops       float64
	OpsSource string
	// Version and Step identify the window in reports over many profiles.
	Version, Step string
	// Resolver names frames; nil means symbols.NewResolver("/"). Share one
	// across windows to read each binary once.
	Resolver *symbols.Resolver
}

// builtProfile is a built profile with what limited it.
type builtProfile struct {
	P *profile.Profile
	// Stats counts how the samples' leaf frames were named.
	Stats Stats
	// Warnings: those of the samples (lost records, the process exiting)
	// and of the naming (no symbols, deleted binary, hidden kernel
	// symbols).
	Warnings []string
}

// Stats counts samples by where their leaf frame is and whether it has a
// name.
type Stats struct {
	Samples int
	// Kernel, Exe and Lib are samples whose leaf is in the kernel, in the
	// process's executable, in another mapped file; Unknown the rest
	// (anonymous memory, no mapping). The Named counts are those of them
	// whose leaf has a function name.
	Kernel, KernelNamed int
	Exe, ExeNamed       int
	Lib, LibNamed       int
	Unknown             int
	// ExeStack is the number of samples with a frame in the executable
	// anywhere on the stack; ExeStackNamed of them those with a named one
	// (dispatch_command, do_command...): how many samples of server code
	// a reader can place even when the leaf function has no symbol.
	ExeStack, ExeStackNamed int
}

// ExeNamedFraction is the fraction of the samples in the executable whose
// leaf has a name (0 when none are in it).
func (s Stats) ExeNamedFraction() float64 {
	if s.Exe == 0 {
		return 0
	}
	return float64(s.ExeNamed) / float64(s.Exe)
}

// Comment keys of the profile's metadata (see Meta).
const (
	commentOps       = "perfbench.ops="
	commentOpsSource = "perfbench.ops_source="
	commentVersion   = "perfbench.version="
	commentStep      = "perfbench.step="
	commentEvent     = "perfbench.event="
	commentWarning   = "perfbench.warning="
)

// errNoSamples: the set is nil.
var errNoSamples = errors.New("no sample set")

// build makes the profile of set. Frames are named with opts.Resolver from
// the maps snapshots the set carries, so it works after the process
// exited.
func build(set *perfevent.SampleSet, opts Options) (*builtProfile, error) {
	if set == nil {
		return nil, errNoSamples
	}
	res := opts.Resolver
	if res == nil {
		res = symbols.NewResolver("/")
	}
	proc, err := res.Process(set.Pid, set.MapsStart, set.MapsEnd)
	if err != nil {
		return nil, fmt.Errorf("profile of pid %d: %w", set.Pid, err)
	}
	unknownRole := opts.UnknownRole
	if unknownRole == "" {
		unknownRole = unattributedRole
	}
	b := &builder{
		set: set, proc: proc,
		p:         &profile.Profile{},
		locs:      map[locKey]*profile.Location{},
		funcs:     map[funcKey]*profile.Function{},
		maps:      map[*symbols.Mapping]*profile.Mapping{},
		samples:   map[string]*profile.Sample{},
		exeSuffix: strings.TrimSuffix(set.Exe, " (deleted)"),
	}
	b.setTypes()
	for _, s := range set.Samples {
		if slices.Contains(opts.Exclude, s.Tid) {
			continue
		}
		role := opts.Roles[s.Tid]
		if role == "" {
			role = unknownRole
		}
		b.add(s, role)
	}
	b.finishMappings()
	p := b.p
	p.TimeNanos = set.Start.UnixNano()
	if !set.End.IsZero() {
		p.DurationNanos = set.End.Sub(set.Start).Nanoseconds()
	}
	p.Comments = append(p.Comments, commentEvent+set.Event)
	if opts.Ops > 0 {
		p.Comments = append(p.Comments, commentOps+strconv.FormatFloat(opts.Ops, 'f', -1, 64))
	}
	if opts.OpsSource != "" {
		p.Comments = append(p.Comments, commentOpsSource+opts.OpsSource)
	}
	if opts.Version != "" {
		p.Comments = append(p.Comments, commentVersion+opts.Version)
	}
	if opts.Step != "" {
		p.Comments = append(p.Comments, commentStep+opts.Step)
	}
	out := &builtProfile{P: p, Stats: b.stats}
	out.Warnings = append(out.Warnings, set.Warnings...)
	out.Warnings = append(out.Warnings, proc.Warnings()...)
	if st := b.stats; st.Exe >= 20 && st.ExeNamedFraction() < 0.5 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("only %d of the %d samples in %s have function names: install its "+
			"debug symbols", st.ExeNamed, st.Exe, set.Exe))
	}
	for _, w := range out.Warnings {
		p.Comments = append(p.Comments, commentWarning+w)
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("profile of pid %d: %w", set.Pid, err)
	}
	return out, nil
}

type locKey struct {
	addr   uint64
	kernel bool
	caller bool
}

type funcKey struct {
	name, file string
}

type builder struct {
	set       *perfevent.SampleSet
	proc      *symbols.Process
	p         *profile.Profile
	locs      map[locKey]*profile.Location
	funcs     map[funcKey]*profile.Function
	maps      map[*symbols.Mapping]*profile.Mapping
	kernelMap *profile.Mapping
	kLo, kHi  uint64
	samples   map[string]*profile.Sample
	stats     Stats
	exeSuffix string
}

// setTypes sets the sample types: a count, and the event in its unit.
func (b *builder) setTypes() {
	typ, unit := b.set.Event, "count"
	if b.set.Unit == "ns" {
		typ, unit = "cpu", "nanoseconds"
		if b.set.Event == "task-clock" {
			typ = "task-clock"
		}
	}
	if typ == "" {
		typ = "events"
	}
	b.p.SampleType = []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: typ, Unit: unit}}
	b.p.DefaultSampleType = typ
	b.p.PeriodType = &profile.ValueType{Type: typ, Unit: unit}
	switch {
	case b.set.Period > 0:
		b.p.Period = int64(b.set.Period)
	case b.set.Freq > 0 && unit == "nanoseconds":
		b.p.Period = 1_000_000_000 / int64(b.set.Freq)
	}
}

// add adds one sample: its frames leaf first, kernel then user.
func (b *builder) add(s perfevent.Sample, role string) {
	var locs []*profile.Location
	leafDone := false
	leaf := func(fr symbols.Frame) {
		if leafDone {
			return
		}
		leafDone = true
		b.count(fr, s.N())
	}
	for i, a := range s.Kernel {
		fr := b.proc.Kernel(a, i > 0)
		leaf(fr)
		locs = append(locs, b.location(fr, i > 0))
	}
	user := s.User
	if len(s.Kernel) == 0 && len(user) == 0 && s.IP != 0 {
		user = []uint64{s.IP}
	}
	inExe, namedExe := false, false
	for i, a := range user {
		// Above the leaf the address is a return address: it follows
		// the call that led there, and is named from the byte before.
		// The first user frame of a sample taken in the kernel is
		// where user code entered it: the instruction after a system
		// call, or the faulting or interrupted instruction itself
		// (possibly a function's first): named from its own address.
		caller := i > 0
		fr := b.proc.User(a, caller)
		leaf(fr)
		if b.isExe(fr) {
			inExe = true
			namedExe = namedExe || fr.Function != ""
		}
		locs = append(locs, b.location(fr, caller))
	}
	if len(locs) == 0 {
		return
	}
	n := s.N()
	b.stats.Samples += n
	if inExe {
		b.stats.ExeStack += n
		if namedExe {
			b.stats.ExeStackNamed += n
		}
	}
	comm := b.set.Comms[s.Tid]
	var key strings.Builder
	fmt.Fprintf(&key, "%d|%s|%s", s.Tid, role, comm)
	for _, l := range locs {
		fmt.Fprintf(&key, "|%d", l.ID)
	}
	if ps, ok := b.samples[key.String()]; ok {
		ps.Value[0] += int64(n)
		ps.Value[1] += int64(s.Period)
		return
	}
	ps := &profile.Sample{
		Location: locs,
		Value:    []int64{int64(n), int64(s.Period)},
		Label:    map[string][]string{"role": {role}},
		NumLabel: map[string][]int64{"tid": {int64(s.Tid)}},
	}
	if comm != "" {
		ps.Label["comm"] = []string{comm}
	}
	b.samples[key.String()] = ps
	b.p.Sample = append(b.p.Sample, ps)
}

// count classifies n samples by their leaf frame.
func (b *builder) count(fr symbols.Frame, n int) {
	named := 0
	if fr.Function != "" {
		named = n
	}
	switch {
	case fr.Kernel:
		b.stats.Kernel += n
		b.stats.KernelNamed += named
	case b.isExe(fr):
		b.stats.Exe += n
		b.stats.ExeNamed += named
	case fr.Mapping != nil && fr.Mapping.File():
		b.stats.Lib += n
		b.stats.LibNamed += named
	default:
		b.stats.Unknown += n
	}
}

// isExe reports whether a frame is in the process's executable.
func (b *builder) isExe(fr symbols.Frame) bool {
	return !fr.Kernel && fr.Mapping != nil && fr.Mapping.File() && fr.Mapping.Path == b.exeSuffix
}

// ExeStackNamedFraction is ExeStackNamed / ExeStack (0 when no stack is in
// the executable).
func (s Stats) ExeStackNamedFraction() float64 {
	if s.ExeStack == 0 {
		return 0
	}
	return float64(s.ExeStackNamed) / float64(s.ExeStack)
}

// location returns the profile location of a frame, creating it and its
// function and mapping on first use.
func (b *builder) location(fr symbols.Frame, caller bool) *profile.Location {
	k := locKey{addr: fr.Addr, kernel: fr.Kernel, caller: caller}
	if l, ok := b.locs[k]; ok {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: fr.Addr}
	name, file, sys := fr.Function, "", fr.Symbol
	switch {
	case fr.Kernel:
		l.Mapping = b.kernelMapping(fr.Addr)
		file = "[kernel.kallsyms]"
		if fr.Module != "" {
			file = "[" + fr.Module + "]"
		}
		if name == "" {
			name = "[kernel]"
		}
	case fr.Mapping != nil:
		l.Mapping = b.mapping(fr.Mapping, fr.File)
		file = fr.Mapping.Path
		if name == "" {
			name = unnamed(fr)
		}
	default:
		name = "[unknown]"
	}
	if sys == "" {
		sys = name
	}
	fk := funcKey{name: name, file: file}
	f, ok := b.funcs[fk]
	if !ok {
		f = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: sys, Filename: file}
		b.funcs[fk] = f
		b.p.Function = append(b.p.Function, f)
	}
	l.Line = []profile.Line{{Function: f}}
	b.locs[k] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

// unnamed names a user frame without a symbol after its file and the start
// of its function in the file ("mariadbd+0xd93e00"), so that the samples of
// one unnamed function add up, or its address in the file when the unwind
// table does not say; or after its mapping ("[vdso]").
func unnamed(fr symbols.Frame) string {
	m := fr.Mapping
	if !m.File() {
		if m.Path == "" {
			return "[anon]"
		}
		return m.Path
	}
	base := filepath.Base(m.Path)
	switch {
	case fr.Start != 0:
		return fmt.Sprintf("%s+%#x", base, fr.Start)
	case fr.VAddr != 0:
		return fmt.Sprintf("%s+%#x", base, fr.VAddr)
	}
	return fmt.Sprintf("%s+%#x", base, fr.Addr-m.Start+m.Offset)
}

func (b *builder) mapping(m *symbols.Mapping, f *symbols.File) *profile.Mapping {
	if pm, ok := b.maps[m]; ok {
		return pm
	}
	pm := &profile.Mapping{Start: m.Start, Limit: m.Limit, Offset: m.Offset, File: m.Path, HasFunctions: true}
	if f != nil {
		pm.BuildID = f.BuildID
	}
	b.maps[m] = pm
	return pm
}

func (b *builder) kernelMapping(addr uint64) *profile.Mapping {
	if b.kernelMap == nil {
		b.kernelMap = &profile.Mapping{File: "[kernel.kallsyms]", HasFunctions: true}
		b.kLo, b.kHi = addr, addr
	}
	b.kLo, b.kHi = min(b.kLo, addr), max(b.kHi, addr)
	return b.kernelMap
}

// finishMappings orders the mappings (the executable first, as pprof takes
// the first for the main binary, then by address, the kernel last) and
// numbers them.
func (b *builder) finishMappings() {
	var ms []*profile.Mapping
	for _, m := range b.maps {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool {
		ei, ej := ms[i].File == b.exeSuffix, ms[j].File == b.exeSuffix
		if ei != ej {
			return ei
		}
		return ms[i].Start < ms[j].Start
	})
	if b.kernelMap != nil {
		b.kernelMap.Start, b.kernelMap.Limit = b.kLo, b.kHi+1
		ms = append(ms, b.kernelMap)
	}
	for i, m := range ms {
		m.ID = uint64(i + 1)
	}
	b.p.Mapping = ms
}

// Write writes the profile gzip-compressed, as pprof reads it.
func (p *builtProfile) Write(w io.Writer) error { return p.P.Write(w) }
