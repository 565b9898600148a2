package metric

import "strconv"

// Constructors the generated tables.go builds expression trees with.

func num(v float64) *Expr               { return &Expr{Op: opNum, Num: v} }
func ev(name string) *Expr              { return &Expr{Op: OpEvent, Name: name} }
func ref(name string) *Expr             { return &Expr{Op: OpMetric, Name: name} }
func lit(name string) *Expr             { return &Expr{Op: opLiteral, Name: name} }
func named(o opcode, name string) *Expr { return &Expr{Op: o, Name: name} }
func op(o opcode, args ...*Expr) *Expr  { return &Expr{Op: o, Args: args} }

// GoString prints the expression as the Go code of tables.go.
func (e *Expr) GoString() string {
	switch e.Op {
	case opNum:
		return "num(" + formatFloat(e.Num) + ")"
	case OpEvent:
		return "ev(" + quote(e.Name) + ")"
	case OpMetric:
		return "ref(" + quote(e.Name) + ")"
	case opLiteral:
		return "lit(" + quote(e.Name) + ")"
	case opCPUID, OpSourceCount, OpHasEvent:
		return "named(" + opNames[e.Op] + ", " + quote(e.Name) + ")"
	}
	s := "op(" + opNames[e.Op]
	for _, a := range e.Args {
		s += ", " + a.GoString()
	}
	return s + ")"
}

var opNames = map[opcode]string{
	opAdd: "opAdd", opSub: "opSub", opMul: "opMul", opDiv: "opDiv", opMod: "opMod",
	opNeg: "opNeg", opLess: "opLess", opGreater: "opGreater", opOr: "opOr",
	opAnd: "opAnd", opXor: "opXor", opIf: "opIf", opDRatio: "opDRatio",
	opMin: "opMin", opMax: "opMax", opCPUID: "opCPUID",
	OpSourceCount: "OpSourceCount", OpHasEvent: "OpHasEvent",
}

func quote(s string) string { return strconv.Quote(s) }

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
