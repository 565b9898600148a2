// Package metric holds the metric definitions perfbench knows per CPU
// model: TopDown level 1 and level 2 (Intel's TMA categories, AMD's
// pipeline utilization, Arm's topdown or cycle accounting) and an
// architectural set (IPC, cache MPKI, branch and TLB miss rates), each with
// the events it needs, an expression tree, and where it came from.
//
// The definitions are taken from perf's pmu-events tables by
// scripts/gen-metrics, which writes tables.go; nothing in tables.go is
// typed by hand. The CPU is recognised from its perf cpuid string
// (GenuineIntel-6-8F-0, AuthenticAMD-25-11-0, 0x00000000410fd0c0) with the
// regular expressions of perf's mapfile.csv.
package metric

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Level says what part of a set a metric is.
type Level int

const (
	// Helper metrics are not shown on their own: other metrics of the set
	// refer to them (Intel's SLOTS, CLKS; AMD's total_dispatch_slots).
	Helper Level = iota
	// TopdownL1 is the first split of the pipeline's slots or cycles:
	// retiring, bad speculation, frontend bound, backend bound.
	TopdownL1
	// TopdownL2 splits each level-1 category once more.
	TopdownL2
	// Architectural metrics: IPC, misses per kilo-instruction of each cache
	// level, branch and TLB miss rates.
	Architectural
)

func (l Level) String() string {
	switch l {
	case TopdownL1:
		return "topdown-l1"
	case TopdownL2:
		return "topdown-l2"
	case Architectural:
		return "architectural"
	}
	return "helper"
}

// source says where a set's definitions were taken from.
type source struct {
	// Release is the Linux release whose perf tables they are, "6.1.187".
	Release string
	// Dir is the model's folder under tools/perf/pmu-events/arch,
	// "x86/sapphirerapids".
	Dir string
	// Version is the version perf's mapfile.csv gives the tables ("v1.06").
	Version string
}

func (s source) String() string {
	v := ""
	if s.Version != "" {
		v = " " + s.Version
	}
	return fmt.Sprintf("Linux %s tools/perf/pmu-events/arch/%s%s", s.Release, s.Dir, v)
}

// metric is one metric definition.
type metric struct {
	Name string
	// Level is the metric's place in the set.
	Level Level
	// Group is the metric group of the source tables that puts the metric
	// at its level ("TopdownL1", "PipelineL2", "Cycle_Accounting"), or the
	// metric's own groups for architectural and helper metrics.
	Group string
	// Expr computes the metric from event counts, literals and other
	// metrics of the set.
	Expr *Expr
	// Scale and Unit are how perf prints the value: value × Scale, in Unit
	// ("100%" is Scale 100, Unit "%"). Scale is 1 when the table gives none.
	Scale float64
	Unit  string
	// File is the JSON file of the source folder the definition is in.
	File string
}

// Event is an event a set's metrics read.
type Event struct {
	// Name is the event as the expressions spell it, without perf's
	// escapes: "INT_MISC.UOP_DROPPING", "topdown-fe-bound",
	// "cpu@UOPS_RETIRED.SLOTS,cmask=1@", "ex_ret_brn_misp", "CPU_CYCLES".
	Name string
	// Spelling is how perfbench opens it (perfevent.Parse syntax):
	// "cpu/event=0xad,umask=0x10/", "cpu/topdown-fe-bound/", "r11",
	// "instructions". Empty when the event cannot be encoded (Why says why).
	Spelling string
	Why      string
}

// Set is the metrics of one CPU model.
type Set struct {
	// Name is the folder name of perf's tables: "sapphirerapids",
	// "amdzen4", "neoverse-n1".
	Name   string
	Source source
	// Metrics are sorted by level (TopdownL1, TopdownL2, Architectural,
	// Helper), then by name.
	Metrics []metric
	// Events are every event the metrics read, sorted by name.
	Events []Event
	// Note is a constraint the counting must respect, such as Intel's
	// topdown-* events counting only in a group led by slots.
	Note string
}

// Metric returns the metric called name (perf compares metric names
// without regard to case), or nil.
func (s *Set) Metric(name string) *metric {
	for i := range s.Metrics {
		if strings.EqualFold(s.Metrics[i].Name, name) {
			return &s.Metrics[i]
		}
	}
	return nil
}

// Event returns the event called name, or nil.
func (s *Set) Event(name string) *Event {
	for i := range s.Events {
		if s.Events[i].Name == name {
			return &s.Events[i]
		}
	}
	return nil
}

// Needs returns the events metric name reads, directly or through other
// metrics, sorted and without repeats.
func (s *Set) Needs(name string) []string {
	return s.reads(name, func(o opcode) bool { return o == OpEvent || o == OpSourceCount || o == OpHasEvent })
}

// Literals returns the #literals metric name reads, directly or through
// other metrics.
func (s *Set) Literals(name string) []string {
	return s.reads(name, func(o opcode) bool { return o == opLiteral })
}

// reads collects the names of the nodes of metric name, and of the metrics
// it refers to, whose operation is wanted.
func (s *Set) reads(name string, wanted func(opcode) bool) []string {
	seen := map[string]bool{}
	var names []string
	var visit func(string)
	visit = func(n string) {
		m := s.Metric(n)
		if m == nil || seen["metric:"+m.Name] {
			return
		}
		seen["metric:"+m.Name] = true
		m.Expr.Walk(func(e *Expr) {
			switch {
			case e.Op == OpMetric:
				visit(e.Name)
			case wanted(e.Op) && !seen[e.Name]:
				seen[e.Name] = true
				names = append(names, e.Name)
			}
		})
	}
	visit(name)
	sort.Strings(names)
	return names
}

// errCycle is returned for a metric that refers to itself.
var errCycle = errors.New("metric refers to itself")

// Eval computes metric name from the events and literals in env (its
// Metric field is set by Eval). The result is the expression's value,
// before Scale; NaN when it divides by zero.
func (s *Set) Eval(name string, env Env) (float64, error) {
	m := s.Metric(name)
	if m == nil {
		return math.NaN(), fmt.Errorf("evaluate %s: no such metric in set %s", name, s.Name)
	}
	active := map[string]bool{}
	var eval func(m *metric) (float64, error)
	env.Metric = func(n string) (float64, error) {
		r := s.Metric(n)
		if r == nil {
			return 0, fmt.Errorf("metric %s: %w", n, errMissing)
		}
		return eval(r)
	}
	eval = func(m *metric) (float64, error) {
		if active[m.Name] {
			return 0, fmt.Errorf("metric %s: %w", m.Name, errCycle)
		}
		active[m.Name] = true
		defer delete(active, m.Name)
		return m.Expr.Eval(&env)
	}
	v, err := eval(m)
	if err != nil {
		return math.NaN(), fmt.Errorf("evaluate %s of set %s: %w", name, s.Name, err)
	}
	return v, nil
}
