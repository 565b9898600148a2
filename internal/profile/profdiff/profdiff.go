// Package profdiff compares sampled profiles across server versions, step by
// step, per operation: where the extra CPU of a version went.
//
// Its input is profiles with their window's operation count: from Records
// (Record.Profile points to the pprof file, Record.Ops gives the count) or
// from the profiles alone (pprofout keeps the count, version and step in the
// profile's comments). For each step and version it gives the functions with
// the most samples per 1,000 operations, flat (the function itself) and
// cumulative (the function and what it calls); for each version against the
// base, the functions whose samples per 1,000 operations grew the most;
// folded stacks (one "root;...;leaf count" line per stack, as flamegraph.pl
// and speedscope read them); and SVG flame graphs, including a differential
// one per step and version, shaped like the version's profile and coloured by
// how much each frame grew (red) or shrank (blue) per operation against the
// base.
//
// Repeats of a (step, version) are pooled: samples and operations are
// summed. A step whose profiles lack an operation count is compared by share
// of samples instead, with a warning: a per-operation number that was not
// measured is never printed.
//
// Everything is deterministic: sorted by value, then name.
package profdiff

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/perfbench/perfbench/analysis"
)

// ErrNoProfiles: nothing to report on.
var ErrNoProfiles = errors.New("no profiles")

// input is one window's profile.
type input struct {
	Version, Step string
	// Ops is the window's operation count (0: not known) and OpsSource
	// what it counts.
	Ops       float64
	OpsSource string
	Profile   *profile.Profile
	// Path is where the profile was read from, for messages.
	Path string
	// Warnings are the window's (from its Record or profile).
	Warnings []string
}

// Options tune a comparison. The zero value takes the first version given as
// the base and keeps 15 functions per table.
type Options struct {
	// Base is the version the others are compared with; empty means the
	// first version in the inputs.
	Base string
	// Top is the number of functions per table; 0 means 15.
	Top int
}

// Comparison is the inputs pooled by step and version.
type Comparison struct {
	Base     string
	Versions []string // in input order, base first
	Steps    []*step
	Top      int
	// Warnings: those of the inputs (prefixed with their step and
	// version) and the comparison's own.
	Warnings []string
}

// step is one step's profiles, by version.
type step struct {
	Name string
	// PerOp is true when every profile of the step has an operation count:
	// values are then per 1,000 operations; otherwise per 1,000 samples.
	PerOp    bool
	Versions map[string]*pooledProfile
}

// pooledProfile is the pooled profile of one (step, version).
type pooledProfile struct {
	Version string
	Windows int
	Samples int64   // total samples
	Ops     float64 // total operations (0 when not all windows had one)
	// Flat and Cum are sample counts by function: samples whose leaf is
	// the function, and samples with the function anywhere on the stack.
	Flat, Cum map[string]int64
	// Root is the tree of stacks, root first, in samples.
	Root *node
	// Unit is the sampled event's second value type ("cpu/nanoseconds"),
	// Value its total.
	Unit  string
	Value int64
}

// node is a frame in a tree of stacks.
type node struct {
	Name     string
	Value    int64 // samples through this frame
	Self     int64 // samples with this frame as the leaf
	Children map[string]*node
}

func (n *node) child(name string) *node {
	if n.Children == nil {
		n.Children = map[string]*node{}
	}
	c, ok := n.Children[name]
	if !ok {
		c = &node{Name: name}
		n.Children[name] = c
	}
	return c
}

// sortedChildren returns the children by name.
func (n *node) sortedChildren() []*node {
	out := make([]*node, 0, len(n.Children))
	for _, c := range n.Children {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Compare pools the inputs by step and version.
func Compare(in []input, opts Options) (*Comparison, error) {
	if len(in) == 0 {
		return nil, ErrNoProfiles
	}
	c := &Comparison{Top: opts.Top}
	if c.Top <= 0 {
		c.Top = 15
	}
	seenV := map[string]bool{}
	steps := map[string]*step{}
	missingOps := map[string]bool{}
	for _, x := range in {
		if x.Profile == nil {
			return nil, fmt.Errorf("%s: no profile", x.Path)
		}
		if !seenV[x.Version] {
			seenV[x.Version] = true
			c.Versions = append(c.Versions, x.Version)
		}
		st, ok := steps[x.Step]
		if !ok {
			st = &step{Name: x.Step, PerOp: true, Versions: map[string]*pooledProfile{}}
			steps[x.Step] = st
		}
		p, ok := st.Versions[x.Version]
		if !ok {
			p = &pooledProfile{Version: x.Version, Flat: map[string]int64{}, Cum: map[string]int64{}, Root: &node{Name: "all"}}
			st.Versions[x.Version] = p
		}
		if x.Ops <= 0 {
			st.PerOp = false
			missingOps[x.Step+"\x00"+x.Version] = true
		}
		p.Windows++
		p.Ops += x.Ops
		p.add(x.Profile)
		for _, w := range x.Warnings {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s, %s: %s", x.Step, x.Version, w))
		}
	}
	c.Base = opts.Base
	if c.Base == "" {
		c.Base = c.Versions[0]
	}
	if !seenV[c.Base] {
		return nil, fmt.Errorf("base version %q: not among the profiles' versions (%s)", c.Base, strings.Join(c.Versions, ", "))
	}
	// Base first, then the others in input order.
	vs := []string{c.Base}
	for _, v := range c.Versions {
		if v != c.Base {
			vs = append(vs, v)
		}
	}
	c.Versions = vs
	var names []string
	for n := range steps {
		names = append(names, n)
	}
	for _, n := range orderSteps(names) {
		st := steps[n]
		c.Steps = append(c.Steps, st)
		if !st.PerOp {
			var which []string
			for _, v := range c.Versions {
				if missingOps[n+"\x00"+v] {
					which = append(which, v)
				}
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: no operation count for %s: functions are compared by share of "+
				"samples (per 1,000 samples), not per operation", n, strings.Join(which, ", ")))
		}
		if st.Versions[c.Base] == nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: no profile of the base version %s: no differences", n, c.Base))
		}
	}
	return c, nil
}

// orderSteps puts steps in table order (analysis.OrderSteps), keeping any it
// leaves out at the end, sorted.
func orderSteps(names []string) []string {
	out := analysis.OrderSteps(names)
	in := map[string]bool{}
	for _, s := range out {
		in[s] = true
	}
	var rest []string
	for _, s := range names {
		if !in[s] {
			rest = append(rest, s)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// add pools the samples of one profile (first value: the sample count).
func (p *pooledProfile) add(pr *profile.Profile) {
	if len(pr.SampleType) > 1 && p.Unit == "" {
		p.Unit = pr.SampleType[1].Type + "/" + pr.SampleType[1].Unit
	}
	for _, s := range pr.Sample {
		if len(s.Value) == 0 || s.Value[0] == 0 {
			continue
		}
		n := s.Value[0]
		p.Samples += n
		if len(s.Value) > 1 {
			p.Value += s.Value[1]
		}
		frames := stackNames(s)
		if len(frames) == 0 {
			continue
		}
		p.Flat[frames[0]] += n
		seen := map[string]bool{}
		for _, f := range frames {
			if !seen[f] {
				seen[f] = true
				p.Cum[f] += n
			}
		}
		node := p.Root
		node.Value += n
		for i := len(frames) - 1; i >= 0; i-- {
			node = node.child(frames[i])
			node.Value += n
		}
		node.Self += n
	}
}

// stackNames returns a sample's function names, leaf first (inlined frames
// expanded, innermost first).
func stackNames(s *profile.Sample) []string {
	var out []string
	for _, l := range s.Location {
		if len(l.Line) == 0 {
			out = append(out, fmt.Sprintf("%#x", l.Address))
			continue
		}
		for _, ln := range l.Line {
			if ln.Function != nil && ln.Function.Name != "" {
				out = append(out, ln.Function.Name)
			} else {
				out = append(out, fmt.Sprintf("%#x", l.Address))
			}
		}
	}
	return out
}

// scale is the factor that turns sample counts of p into per-1,000 values:
// per 1,000 operations when perOp, else per 1,000 samples.
func (p *pooledProfile) scale(perOp bool) float64 {
	if perOp {
		if p.Ops <= 0 {
			return 0
		}
		return 1000 / p.Ops
	}
	if p.Samples == 0 {
		return 0
	}
	return 1000 / float64(p.Samples)
}

// row is one function of a table, values per 1,000 ops (or samples).
type row struct {
	Function  string
	Flat, Cum float64
	// FlatShare and CumShare are fractions of all samples.
	FlatShare, CumShare float64
}

// Top returns the n functions with the most flat samples of p, per 1,000
// ops (or samples), ties by name.
func (p *pooledProfile) Top(perOp bool, n int) []row {
	k := p.scale(perOp)
	rows := make([]row, 0, len(p.Flat))
	for f := range p.Flat {
		rows = append(rows, p.row(f, k))
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Flat != rows[j].Flat {
			return rows[i].Flat > rows[j].Flat
		}
		return rows[i].Function < rows[j].Function
	})
	if len(rows) > n {
		rows = rows[:n]
	}
	return rows
}

// TopCum returns the n functions with the most cumulative samples.
func (p *pooledProfile) TopCum(perOp bool, n int) []row {
	k := p.scale(perOp)
	rows := make([]row, 0, len(p.Cum))
	for f := range p.Cum {
		rows = append(rows, p.row(f, k))
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Cum != rows[j].Cum {
			return rows[i].Cum > rows[j].Cum
		}
		return rows[i].Function < rows[j].Function
	})
	if len(rows) > n {
		rows = rows[:n]
	}
	return rows
}

func (p *pooledProfile) row(f string, k float64) row {
	r := row{Function: f, Flat: float64(p.Flat[f]) * k, Cum: float64(p.Cum[f]) * k}
	if p.Samples > 0 {
		r.FlatShare = float64(p.Flat[f]) / float64(p.Samples)
		r.CumShare = float64(p.Cum[f]) / float64(p.Samples)
	}
	return r
}

// change is a function's difference between a version and the base, per
// 1,000 ops (or samples).
type change struct {
	Function string
	// Base and Version are flat values, Delta their difference; the Cum
	// ones likewise for cumulative values.
	Base, Version, Delta          float64
	CumBase, CumVersion, CumDelta float64
}

// Diff returns the functions of step st whose flat samples per 1,000 ops
// grew the most in version v against the base, largest growth first, at
// most n, and the total per 1,000 ops of the base and the version. It
// returns nothing when either profile is missing.
func (c *Comparison) Diff(st *step, v string, n int) (grew []change, base, ver float64) {
	b, p := st.Versions[c.Base], st.Versions[v]
	if b == nil || p == nil {
		return nil, 0, 0
	}
	kb, kv := b.scale(st.PerOp), p.scale(st.PerOp)
	all := map[string]bool{}
	for f := range b.Cum {
		all[f] = true
	}
	for f := range p.Cum {
		all[f] = true
	}
	var out []change
	for f := range all {
		ch := change{
			Function: f,
			Base:     float64(b.Flat[f]) * kb, Version: float64(p.Flat[f]) * kv,
			CumBase: float64(b.Cum[f]) * kb, CumVersion: float64(p.Cum[f]) * kv,
		}
		ch.Delta = ch.Version - ch.Base
		ch.CumDelta = ch.CumVersion - ch.CumBase
		if ch.Delta > 0 {
			out = append(out, ch)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Delta != out[j].Delta {
			return out[i].Delta > out[j].Delta
		}
		return out[i].Function < out[j].Function
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, float64(b.Samples) * kb, float64(p.Samples) * kv
}
