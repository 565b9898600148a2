package metric

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a metric expression written in perf's syntax (the MetricExpr
// of perf's pmu-events JSON): numbers, events (with perf's backslash
// escapes, and pmu@terms@ spellings), #literals, + - * / %, unary minus,
// < >, | ^ &, "A if C else B", d_ratio, min, max, source_count, has_event
// and strcmp_cpuid_str, with perf's precedence. An identifier for which
// isMetric returns true is a reference to another metric; any other is an
// event, spelled without the escapes.
func Parse(s string, isMetric func(name string) bool) (*Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, src: s, isMetric: isMetric}
	e, err := p.ifExpr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, p.errorf("unexpected %q", p.peek().text)
	}
	return e, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokID
	tokLiteral
	tokKeyword
	tokPunct
)

type token struct {
	kind tokKind
	text string // identifiers without escapes, literals lower case without '#'
	num  float64
}

var keywords = map[string]bool{
	"d_ratio": true, "max": true, "min": true, "if": true, "else": true,
	"source_count": true, "has_event": true, "strcmp_cpuid_str": true,
}

func isSymChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
		c == '_' || c == '.' || c == ':' || c == '@' || c == '?'
}

// numberLen is the length of the longest match of perf's number rule at the
// start of s: ([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)?
func numberLen(s string) int {
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := digits(0)
	intPart := i > 0
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if !intPart && j == i+1 {
			return 0 // a lone '.'
		}
		i = j
	} else if !intPart {
		return 0
	}
	if i < len(s) && s[i] == 'e' {
		j := i + 1
		if j < len(s) && s[j] == '-' {
			j++
		}
		if k := digits(j); k > j {
			i = k
		}
	}
	return i
}

// symbolLen is the length of the longest match of perf's symbol rule:
// ([0-9a-zA-Z_.:@?]|\\[-,=])+
func symbolLen(s string) int {
	i := 0
	for i < len(s) {
		switch {
		case isSymChar(s[i]):
			i++
		case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("-,=", s[i+1]) >= 0:
			i += 2
		default:
			return i
		}
	}
	return i
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		if c == '#' {
			j := i + 1
			for j < len(s) && (isSymChar(s[j]) && s[j] != ':' && s[j] != '@' && s[j] != '?' || s[j] == '-') {
				j++
			}
			if j == i+1 {
				return nil, fmt.Errorf("parse metric expression %q: '#' without a literal name at offset %d", s, i)
			}
			out = append(out, token{kind: tokLiteral, text: strings.ToLower(s[i+1 : j])})
			i = j
			continue
		}
		n, m := numberLen(s[i:]), symbolLen(s[i:])
		switch {
		case m > n:
			raw := s[i : i+m]
			if keywords[raw] {
				out = append(out, token{kind: tokKeyword, text: raw})
			} else if raw == "NaN" {
				return nil, fmt.Errorf("parse metric expression %q: NaN is not a usable constant", s)
			} else {
				out = append(out, token{kind: tokID, text: strings.ReplaceAll(raw, `\`, "")})
			}
			i += m
		case n > 0:
			v, err := strconv.ParseFloat(s[i:i+n], 64)
			if err != nil {
				return nil, fmt.Errorf("parse metric expression %q: number %q: %w", s, s[i:i+n], err)
			}
			out = append(out, token{kind: tokNum, num: v, text: s[i : i+n]})
			i += n
		case strings.IndexByte("|^&<>-+*/%(),", c) >= 0:
			out = append(out, token{kind: tokPunct, text: string(c)})
			i++
		default:
			i++ // perf's lexer skips anything else (blanks)
		}
	}
	return out, nil
}

type parser struct {
	toks     []token
	pos      int
	src      string
	isMetric func(string) bool
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{kind: tokEOF}
}

func (p *parser) next() token {
	t := p.peek()
	if p.pos < len(p.toks) {
		p.pos++
	}
	return t
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("parse metric expression %q: %s", p.src, fmt.Sprintf(format, args...))
}

func (p *parser) is(kind tokKind, text string) bool {
	t := p.peek()
	return t.kind == kind && t.text == text
}

func (p *parser) expect(kind tokKind, text string) error {
	if !p.is(kind, text) {
		t := p.peek()
		if t.kind == tokEOF {
			return p.errorf("expected %q, found the end", text)
		}
		return p.errorf("expected %q, found %q", text, t.text)
	}
	p.next()
	return nil
}

// ifExpr: expr [if expr else ifExpr]
func (p *parser) ifExpr() (*Expr, error) {
	l, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if !p.is(tokKeyword, "if") {
		return l, nil
	}
	p.next()
	c, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if err := p.expect(tokKeyword, "else"); err != nil {
		return nil, err
	}
	r, err := p.ifExpr()
	if err != nil {
		return nil, err
	}
	return &Expr{Op: opIf, Args: []*Expr{l, c, r}}, nil
}

// levels are perf's binary operators from the loosest to the tightest; all
// associate to the left.
var levels = []map[string]opcode{
	{"|": opOr},
	{"^": opXor},
	{"&": opAnd},
	{"<": opLess, ">": opGreater},
	{"+": opAdd, "-": opSub},
	{"*": opMul, "/": opDiv, "%": opMod},
}

func (p *parser) binary(level int) (*Expr, error) {
	if level == len(levels) {
		return p.unary()
	}
	l, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		op, ok := levels[level][t.text]
		if t.kind != tokPunct || !ok {
			return l, nil
		}
		p.next()
		r, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		l = &Expr{Op: op, Args: []*Expr{l, r}}
	}
}

func (p *parser) unary() (*Expr, error) {
	if p.is(tokPunct, "-") {
		p.next()
		a, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Expr{Op: opNeg, Args: []*Expr{a}}, nil
	}
	return p.primary()
}

func (p *parser) primary() (*Expr, error) {
	t := p.next()
	switch t.kind {
	case tokNum:
		return &Expr{Op: opNum, Num: t.num}, nil
	case tokLiteral:
		return &Expr{Op: opLiteral, Name: t.text}, nil
	case tokID:
		if p.isMetric != nil && p.isMetric(t.text) {
			return &Expr{Op: OpMetric, Name: t.text}, nil
		}
		return &Expr{Op: OpEvent, Name: t.text}, nil
	case tokPunct:
		if t.text == "(" {
			e, err := p.ifExpr()
			if err != nil {
				return nil, err
			}
			return e, p.expect(tokPunct, ")")
		}
	case tokKeyword:
		switch t.text {
		case "d_ratio", "min", "max":
			if err := p.expect(tokPunct, "("); err != nil {
				return nil, err
			}
			a, err := p.ifExpr()
			if err != nil {
				return nil, err
			}
			if err := p.expect(tokPunct, ","); err != nil {
				return nil, err
			}
			b, err := p.ifExpr()
			if err != nil {
				return nil, err
			}
			if err := p.expect(tokPunct, ")"); err != nil {
				return nil, err
			}
			op := map[string]opcode{"d_ratio": opDRatio, "min": opMin, "max": opMax}[t.text]
			return &Expr{Op: op, Args: []*Expr{a, b}}, nil
		case "source_count", "has_event", "strcmp_cpuid_str":
			if err := p.expect(tokPunct, "("); err != nil {
				return nil, err
			}
			id := p.next()
			if id.kind != tokID {
				return nil, p.errorf("%s takes a name, found %q", t.text, id.text)
			}
			if err := p.expect(tokPunct, ")"); err != nil {
				return nil, err
			}
			op := map[string]opcode{"source_count": OpSourceCount, "has_event": OpHasEvent, "strcmp_cpuid_str": opCPUID}[t.text]
			return &Expr{Op: op, Name: id.text}, nil
		}
	case tokEOF:
		return nil, p.errorf("unexpected end")
	}
	return nil, p.errorf("unexpected %q", t.text)
}
