package metric

import "strconv"

// Constructors the generated tables.go builds expression trees with.

func num(v float64) *Expr           { return &Expr{Op: OpNum, Num: v} }
func ev(name string) *Expr          { return &Expr{Op: OpEvent, Name: name} }
func ref(name string) *Expr         { return &Expr{Op: OpMetric, Name: name} }
func lit(name string) *Expr         { return &Expr{Op: OpLiteral, Name: name} }
func named(o Op, name string) *Expr { return &Expr{Op: o, Name: name} }
func op(o Op, args ...*Expr) *Expr  { return &Expr{Op: o, Args: args} }

// GoString prints the expression as the Go code of tables.go.
func (e *Expr) GoString() string {
	switch e.Op {
	case OpNum:
		return "num(" + formatFloat(e.Num) + ")"
	case OpEvent:
		return "ev(" + quote(e.Name) + ")"
	case OpMetric:
		return "ref(" + quote(e.Name) + ")"
	case OpLiteral:
		return "lit(" + quote(e.Name) + ")"
	case OpCPUID, OpSourceCount, OpHasEvent:
		return "named(" + opNames[e.Op] + ", " + quote(e.Name) + ")"
	}
	s := "op(" + opNames[e.Op]
	for _, a := range e.Args {
		s += ", " + a.GoString()
	}
	return s + ")"
}

var opNames = map[Op]string{
	OpAdd: "OpAdd", OpSub: "OpSub", OpMul: "OpMul", OpDiv: "OpDiv", OpMod: "OpMod",
	OpNeg: "OpNeg", OpLess: "OpLess", OpGreater: "OpGreater", OpOr: "OpOr",
	OpAnd: "OpAnd", OpXor: "OpXor", OpIf: "OpIf", OpDRatio: "OpDRatio",
	OpMin: "OpMin", OpMax: "OpMax", OpCPUID: "OpCPUID",
	OpSourceCount: "OpSourceCount", OpHasEvent: "OpHasEvent",
}

func quote(s string) string { return strconv.Quote(s) }

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
