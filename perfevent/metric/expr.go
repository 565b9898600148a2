package metric

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// opcode is the operation of an expression node.
type opcode uint8

// The operations of perf's metric expression language (tools/perf/util/expr.y).
const (
	opNum         opcode = iota // a number: Num
	OpEvent                     // an event's value: Name
	OpMetric                    // another metric of the same set: Name
	opLiteral                   // a literal such as #smt_on or #slots: Name, lower case, without '#'
	opAdd                       // Args[0] + Args[1]
	opSub                       // Args[0] - Args[1]
	opMul                       // Args[0] * Args[1]
	opDiv                       // Args[0] / Args[1]; NaN when Args[1] is 0
	opMod                       // int(Args[0]) % int(Args[1])
	opNeg                       // -Args[0]
	opLess                      // Args[0] < Args[1]
	opGreater                   // Args[0] > Args[1]
	opOr                        // Args[0] | Args[1]: 0 when both are 0, else 1
	opAnd                       // Args[0] & Args[1]: 1 when both are non-zero, else 0
	opXor                       // Args[0] ^ Args[1]: 1 when exactly one is 0
	opIf                        // Args[0] if Args[1] else Args[2]
	opDRatio                    // d_ratio(Args[0], Args[1]): 0 when Args[1] is 0
	opMin                       // min(Args[0], Args[1])
	opMax                       // max(Args[0], Args[1])
	opCPUID                     // strcmp_cpuid_str(Name): 1 when this CPU is Name (or a later revision)
	OpSourceCount               // source_count(Name): how many counters were summed into event Name
	OpHasEvent                  // has_event(Name): 1 when event Name can be counted
)

// Expr is a node of a metric's expression tree.
type Expr struct {
	Op   opcode
	Num  float64
	Name string
	Args []*Expr
}

// Env gives the values an expression reads.
type Env struct {
	// Event returns an event's count; ok is false when it was not counted.
	Event func(name string) (v float64, ok bool)
	// Metric returns the value of another metric of the same set.
	Metric func(name string) (float64, error)
	// Literals holds the values of #literals by lower-case name without
	// '#': smt_on, slots, system_tsc_freq, num_cpus_online, ...
	Literals map[string]float64
	// CPUID is the CPU's perf cpuid string, for strcmp_cpuid_str.
	CPUID string
	// SourceCount returns how many counters were summed into an event
	// (1 for a core event counted once).
	SourceCount func(name string) float64
}

// errMissing is wrapped by evaluation errors for an event, literal or
// metric the environment does not have.
var errMissing = errors.New("value missing")

// Eval computes the expression with perf's semantics: a division by zero
// gives NaN, d_ratio by zero gives 0, a condition is false only when it is
// exactly 0, and |, & and ^ read their operands as zero or not.
func (e *Expr) Eval(env *Env) (float64, error) {
	switch e.Op {
	case opNum:
		return e.Num, nil
	case OpEvent:
		if env.Event == nil {
			return 0, fmt.Errorf("event %s: %w", e.Name, errMissing)
		}
		v, ok := env.Event(e.Name)
		if !ok {
			return 0, fmt.Errorf("event %s: %w", e.Name, errMissing)
		}
		return v, nil
	case OpMetric:
		if env.Metric == nil {
			return 0, fmt.Errorf("metric %s: %w", e.Name, errMissing)
		}
		return env.Metric(e.Name)
	case opLiteral:
		v, ok := env.Literals[e.Name]
		if !ok {
			return 0, fmt.Errorf("literal #%s: %w", e.Name, errMissing)
		}
		return v, nil
	case opCPUID:
		if cpuidMatches(e.Name, env.CPUID) {
			return 1, nil
		}
		return 0, nil
	case OpSourceCount:
		if env.SourceCount == nil {
			return 1, nil
		}
		return env.SourceCount(e.Name), nil
	case OpHasEvent:
		if env.Event == nil {
			return 0, nil
		}
		if _, ok := env.Event(e.Name); ok {
			return 1, nil
		}
		return 0, nil
	case opIf:
		c, err := e.Args[1].Eval(env)
		if err != nil {
			return 0, err
		}
		if c == 0 {
			return e.Args[2].Eval(env)
		}
		return e.Args[0].Eval(env)
	case opNeg:
		v, err := e.Args[0].Eval(env)
		return -v, err
	}
	a, err := e.Args[0].Eval(env)
	if err != nil {
		return 0, err
	}
	b, err := e.Args[1].Eval(env)
	if err != nil {
		return 0, err
	}
	switch e.Op {
	case opAdd:
		return a + b, nil
	case opSub:
		return a - b, nil
	case opMul:
		return a * b, nil
	case opDiv:
		if b == 0 {
			return math.NaN(), nil
		}
		return a / b, nil
	case opMod:
		if int64(b) == 0 {
			return math.NaN(), nil
		}
		return float64(int64(a) % int64(b)), nil
	case opDRatio:
		if b == 0 {
			return 0, nil
		}
		return a / b, nil
	case opLess:
		return b2f(a < b), nil
	case opGreater:
		return b2f(a > b), nil
	case opOr:
		return b2f(a != 0 || b != 0), nil
	case opAnd:
		return b2f(a != 0 && b != 0), nil
	case opXor:
		return b2f((a == 0) != (b == 0)), nil
	case opMin:
		if a < b {
			return a, nil
		}
		return b, nil
	case opMax:
		if a > b {
			return a, nil
		}
		return b, nil
	}
	return 0, fmt.Errorf("evaluate expression: unknown operation %d", e.Op)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Walk calls f for e and every node below it, parents first.
func (e *Expr) Walk(f func(*Expr)) {
	f(e)
	for _, a := range e.Args {
		a.Walk(f)
	}
}

var binaryText = map[opcode]string{
	opAdd: "+", opSub: "-", opMul: "*", opDiv: "/", opMod: "%",
	opLess: "<", opGreater: ">", opOr: "|", opAnd: "&", opXor: "^",
}

var funcText = map[opcode]string{opDRatio: "d_ratio", opMin: "min", opMax: "max"}

// String prints the expression in perf's syntax, every operation in
// parentheses, events with perf's escapes.
func (e *Expr) String() string {
	switch e.Op {
	case opNum:
		return strconv.FormatFloat(e.Num, 'g', -1, 64)
	case OpEvent, OpMetric:
		return escapeName(e.Name)
	case opLiteral:
		return "#" + e.Name
	case opCPUID:
		return "strcmp_cpuid_str(" + e.Name + ")"
	case OpSourceCount:
		return "source_count(" + escapeName(e.Name) + ")"
	case OpHasEvent:
		return "has_event(" + escapeName(e.Name) + ")"
	case opNeg:
		return "-" + e.Args[0].String()
	case opIf:
		return "(" + e.Args[0].String() + " if " + e.Args[1].String() + " else " + e.Args[2].String() + ")"
	}
	if f, ok := funcText[e.Op]; ok {
		return f + "(" + e.Args[0].String() + ", " + e.Args[1].String() + ")"
	}
	return "(" + e.Args[0].String() + " " + binaryText[e.Op] + " " + e.Args[1].String() + ")"
}

// escapeName puts back the backslashes perf's lexer needs before '-', ','
// and '='.
func escapeName(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c == '-' || c == ',' || c == '=' {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
