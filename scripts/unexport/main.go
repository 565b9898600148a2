// Command unexport renames the names scripts/exports lists (exported
// top-level names no other package of the module uses) to their unexported
// form: TableQPS → tableQPS, HTML → html, TCPSocket → tcpSocket.
//
//	go run ./scripts/unexport [-w]
//
// Without -w it prints the plan; with -w it rewrites the files and gofmts
// them. It rewrites every use in the package's own files, its in-package
// tests included, the first word of the name's doc comment, and a string
// naming the name beside it in a table (OpAdd: "OpAdd"). Uses from the
// package's external tests (package x_test) keep working through an alias
// it adds to export_test.go (var X = x, type X = x, const X = x).
//
// It leaves a name, and says why, when the new form would be a keyword, a
// predeclared identifier or a name already visible where a use sits (an
// import, another top-level name, a local), when another package's tests use
// it, when it is an embedded field, or when an external test needs an alias
// that cannot be written (a generic func or type, a variable something
// assigns). The renames table below gives such a name a form by hand.
// Running it twice changes nothing the second time.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/perfbench/perfbench/scripts/internal/exports"
)

// renames are the forms chosen by hand, by "path/in/module.Name", where the
// plain lower-case form collides.
var renames = map[string]string{
	"cmd/perfbench.Version":      "versionString",
	"insertbench.Run":            "runBench",
	"internal/remote.Error":      "hostsError",
	"internal/remote.ParseHosts": "parseHostsFile",
	"osstat.IO":                  "procIO",
	"perfevent/metric.Op":        "opcode",
	"plan.Error":                 "planError",
	"pprofout.Profile":           "builtProfile",
	"profdiff.Profile":           "pooledProfile",
	"report.Benchfmt":            "writeBenchfmt",
	"report.CSV":                 "writeCSV",
	"report.Cell":                "tableCell",
	"report.HTML":                "writeHTML",
	"report.JSON":                "writeJSON",
	"report.Text":                "writeText",
	"symbols.Demangle":           "demangleName",
}

func main() {
	write := flag.Bool("w", false, "rewrite the files (without: print the plan)")
	flag.Parse()
	if err := run(os.Stdout, ".", *write, renames); err != nil {
		fmt.Fprintln(os.Stderr, "unexport:", err)
		os.Exit(2)
	}
}

// run plans, and with write makes, the renaming of the module in dir;
// renames gives forms by hand.
func run(w io.Writer, dir string, write bool, renames map[string]string) error {
	t, err := exports.Load(dir)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	p := newPlan(t, root, renames)
	p.print(w)
	if !write {
		return nil
	}
	return p.write()
}

// target is a name to rename.
type target struct {
	exports.Name
	to     string
	obj    types.Object     // in the package's non-test code
	own    []token.Pos      // its identifiers in the package's own files
	xtest  bool             // used by the package's external tests
	others []string         // places in other packages' tests that use it
	skip   string           // why it is left as it is
	edits  []edit           // beyond the identifiers: doc comment, name tables
	checks []*exports.Check // of the package's own files that name it
}

// edit replaces the text at pos (len(old) bytes) by new.
type edit struct {
	pos      token.Pos
	old, new string
}

type plan struct {
	t       *exports.Tree
	root    string // the module's folder, for the places it prints
	targets []*target
	byName  map[exports.Name]*target
}

func newPlan(t *exports.Tree, root string, renames map[string]string) *plan {
	p := &plan{t: t, root: root, byName: map[exports.Name]*target{}}
	for _, n := range t.Unused() {
		tg := &target{Name: n}
		p.targets = append(p.targets, tg)
		p.byName[n] = tg
	}
	p.collect()
	for _, tg := range p.targets {
		tg.to = lower(tg.Name.Name)
		if s, ok := renames[tg.Rel+"."+tg.Name.Name]; ok {
			tg.to = s
		}
		p.decide(tg)
	}
	p.newNamesDistinct()
	return p
}

// collect finds every identifier naming a target, in every check.
func (p *plan) collect() {
	seen := map[token.Position]bool{}
	for _, c := range p.t.Checks {
		for _, m := range []map[*ast.Ident]types.Object{c.Info.Defs, c.Info.Uses} {
			for id, obj := range m {
				p.note(c, id, obj, seen)
			}
		}
		for _, f := range c.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if kv, ok := n.(*ast.KeyValueExpr); ok {
					p.nameTable(c, kv)
				}
				return true
			})
		}
	}
	for _, tg := range p.targets {
		slices.Sort(tg.others)
		tg.others = slices.Compact(tg.others)
	}
}

// note notes id, naming obj in c. A file of the package's code is in two
// checks (its code, and with its tests): seen holds the places noted.
func (p *plan) note(c *exports.Check, id *ast.Ident, obj types.Object, seen map[token.Position]bool) {
	if v, ok := obj.(*types.Var); ok && v.Embedded() {
		if n := named(v.Type()); n != nil {
			if tg := p.target(n.Obj()); tg != nil {
				tg.skip = "an embedded field (renaming the type renames the field)"
			}
		}
		return
	}
	tg := p.target(obj)
	if tg == nil {
		return
	}
	switch {
	case c.Pkg.ImportPath != tg.Path:
		tg.others = append(tg.others, p.pos(id.Pos()))
	case c.Variant == exports.XTest:
		tg.xtest = true
	default:
		if c.Variant == exports.Code && c.Info.Defs[id] != nil {
			tg.obj = obj
		}
		if !slices.Contains(tg.checks, c) {
			tg.checks = append(tg.checks, c)
		}
		if at := p.t.Fset.Position(id.Pos()); !seen[at] {
			seen[at] = true
			tg.own = append(tg.own, id.Pos())
		}
	}
}

func named(t types.Type) *types.Named {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

// target is the target obj names, if any.
func (p *plan) target(obj types.Object) *target {
	obj = p.t.TopLevel(obj)
	if obj == nil {
		return nil
	}
	return p.byName[exports.Name{Path: obj.Pkg().Path(), Rel: p.t.Rel(obj.Pkg().Path()), Name: obj.Name()}]
}

// nameTable notes a string spelling a target's name beside it in a
// composite literal of its package: OpAdd: "OpAdd".
func (p *plan) nameTable(c *exports.Check, kv *ast.KeyValueExpr) {
	for _, pair := range [][2]ast.Expr{{kv.Key, kv.Value}, {kv.Value, kv.Key}} {
		id, ok := pair[0].(*ast.Ident)
		lit, ok2 := pair[1].(*ast.BasicLit)
		if !ok || !ok2 || lit.Kind != token.STRING || c.Variant == exports.XTest {
			continue
		}
		tg := p.target(c.Info.Uses[id])
		if s, err := strconv.Unquote(lit.Value); tg != nil && err == nil && s == tg.Name.Name && c.Pkg.ImportPath == tg.Path {
			tg.edits = append(tg.edits, edit{pos: lit.Pos(), old: lit.Value})
		}
	}
}

// lower is name's unexported form: its leading capital, or its leading
// initialism (HTML, TCPSocket → tcpSocket), in lower case.
func lower(name string) string {
	r := []rune(name)
	i := 0
	for i < len(r) && unicode.IsUpper(r[i]) {
		i++
	}
	switch {
	case i == 0:
		return name
	case i < len(r) && i > 1 && unicode.IsLower(r[i]):
		i-- // the last capital starts the next word
	}
	for j := range i {
		r[j] = unicode.ToLower(r[j])
	}
	return string(r)
}

// decide checks tg's new form can be used where tg is.
func (p *plan) decide(tg *target) {
	switch {
	case tg.skip != "":
	case tg.obj == nil:
		tg.skip = "its declaration was not found"
	case len(tg.others) > 0:
		tg.skip = "other packages' tests use it: " + strings.Join(tg.others, " ")
	default:
		tg.skip = p.collides(tg)
	}
	if tg.skip == "" && tg.xtest {
		tg.skip = p.aliasable(tg)
	}
	if tg.skip == "" {
		tg.edits = append(tg.edits, p.docEdits(tg)...)
	}
}

// collides says why tg.to cannot name tg where its identifiers are, or "".
func (p *plan) collides(tg *target) string {
	switch {
	case tg.to == tg.Name.Name:
		return "it has no lower-case form"
	case token.IsKeyword(tg.to):
		return fmt.Sprintf("%s is a keyword", tg.to)
	case types.Universe.Lookup(tg.to) != nil:
		return fmt.Sprintf("%s is predeclared", tg.to)
	}
	for _, c := range tg.checks {
		if obj := c.Types.Scope().Lookup(tg.to); obj != nil {
			return fmt.Sprintf("%s is already declared at %s", tg.to, p.pos(obj.Pos()))
		}
		for _, f := range c.Files {
			if obj := c.Info.Scopes[f].Lookup(tg.to); obj != nil {
				return fmt.Sprintf("%s is imported at %s", tg.to, p.pos(obj.Pos()))
			}
		}
		for _, pos := range tg.own {
			s := c.Types.Scope().Innermost(pos)
			if s == nil {
				continue // in a file of another check
			}
			if _, obj := s.LookupParent(tg.to, pos); obj != nil && obj.Parent() != c.Types.Scope() {
				return fmt.Sprintf("%s is declared at %s, in scope where it is used at %s", tg.to, p.pos(obj.Pos()), p.pos(pos))
			}
		}
	}
	return ""
}

// newNamesDistinct leaves two names of a package that would get one form.
func (p *plan) newNamesDistinct() {
	seen := map[[2]string]*target{}
	for _, tg := range p.targets {
		if tg.skip != "" {
			continue
		}
		k := [2]string{tg.Path, tg.to}
		if o := seen[k]; o != nil {
			o.skip = fmt.Sprintf("%s would also become %s", tg.Name.Name, tg.to)
			tg.skip = fmt.Sprintf("%s would also become %s", o.Name.Name, tg.to)
			continue
		}
		seen[k] = tg
	}
}

func (p *plan) pos(pos token.Pos) string {
	ps := p.t.Fset.Position(pos)
	if rel, err := filepath.Rel(p.root, ps.Filename); err == nil {
		ps.Filename = rel
	}
	return fmt.Sprintf("%s:%d", ps.Filename, ps.Line)
}

// aliasable says why an external test's alias of tg cannot be written, or "".
func (p *plan) aliasable(tg *target) string {
	switch o := tg.obj.(type) {
	case *types.Func:
		if o.Signature().TypeParams() != nil {
			return "the external tests use it and a generic func has no alias"
		}
	case *types.TypeName:
		if n, ok := o.Type().(*types.Named); ok && n.TypeParams() != nil {
			return "the external tests use it and this tool writes no generic type alias"
		}
	case *types.Var:
		if p.assigned(tg) {
			return "the external tests use it and something assigns it (an alias would be a copy)"
		}
	}
	return ""
}

// assigned says whether any file assigns tg's variable or takes its address.
func (p *plan) assigned(tg *target) bool {
	found := false
	for _, c := range p.t.Checks {
		refers := func(e ast.Expr) bool {
			var id *ast.Ident
			switch x := ast.Unparen(e).(type) {
			case *ast.Ident:
				id = x
			case *ast.SelectorExpr:
				id = x.Sel
			default:
				return false
			}
			return p.target(c.Info.Uses[id]) == tg
		}
		for _, f := range c.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.AssignStmt:
					found = found || slices.ContainsFunc(x.Lhs, refers)
				case *ast.IncDecStmt:
					found = found || refers(x.X)
				case *ast.UnaryExpr:
					found = found || (x.Op == token.AND && refers(x.X))
				}
				return !found
			})
		}
	}
	return found
}

// docEdits renames the first word of tg's doc comment when it is tg's name.
func (p *plan) docEdits(tg *target) []edit {
	decl := tg.obj.Pos()
	for _, c := range tg.checks {
		for _, f := range c.Files {
			if decl < f.Pos() || decl > f.End() {
				continue
			}
			doc := docOf(f, decl)
			if doc == nil {
				return nil
			}
			first := doc.List[0]
			text, ok := strings.CutPrefix(first.Text, "// ")
			if !ok || !strings.HasPrefix(text, tg.Name.Name) {
				return nil
			}
			r, _ := utf8.DecodeRuneInString(text[len(tg.Name.Name):])
			if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
				return nil
			}
			return []edit{{pos: first.Pos() + 3, old: tg.Name.Name}}
		}
	}
	return nil
}

// docOf is the doc comment of the top-level declaration of the name at pos
// alone (nil when its comment speaks of several names).
func docOf(f *ast.File, pos token.Pos) *ast.CommentGroup {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Pos() == pos {
				return d.Doc
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				var doc *ast.CommentGroup
				var names []*ast.Ident
				switch s := s.(type) {
				case *ast.TypeSpec:
					doc, names = s.Doc, []*ast.Ident{s.Name}
				case *ast.ValueSpec:
					doc, names = s.Doc, s.Names
				}
				if !slices.ContainsFunc(names, func(id *ast.Ident) bool { return id.Pos() == pos }) {
					continue
				}
				if doc == nil && len(d.Specs) == 1 {
					doc = d.Doc
				}
				if len(names) > 1 {
					return nil
				}
				return doc
			}
		}
	}
	return nil
}

func (p *plan) print(w io.Writer) {
	var done, left, aliases int
	for i := 0; i < len(p.targets); {
		j := i
		var line []string
		for ; j < len(p.targets) && p.targets[j].Path == p.targets[i].Path; j++ {
			tg := p.targets[j]
			if tg.skip != "" {
				continue
			}
			s := tg.Name.Name + "→" + tg.to
			if tg.xtest {
				s += "(alias)"
				aliases++
			}
			if len(tg.own) == 1 && !tg.xtest {
				s += "(unused)"
			}
			line = append(line, s)
			done++
		}
		if len(line) > 0 {
			fmt.Fprintf(w, "%-28s %3d  %s\n", p.targets[i].Rel, len(line), strings.Join(line, " "))
		}
		i = j
	}
	for _, tg := range p.targets {
		if tg.skip != "" {
			fmt.Fprintf(w, "left: %s.%s: %s\n", tg.Rel, tg.Name.Name, tg.skip)
			left++
		}
	}
	fmt.Fprintf(w, "unexport: %d names renamed (%d with an alias for the external tests), %d left\n", done, aliases, left)
}

// write applies the plan.
func (p *plan) write() error {
	byFile := map[string][]edit{}
	xtest := map[string][]*target{} // package dir → aliases
	add := func(e edit) {
		name := p.t.Fset.File(e.pos).Name()
		byFile[name] = append(byFile[name], e)
	}
	for _, tg := range p.targets {
		if tg.skip != "" {
			continue
		}
		for _, pos := range tg.own {
			add(edit{pos: pos, old: tg.Name.Name, new: tg.to})
		}
		for _, e := range tg.edits {
			e.new = tg.to
			if strings.HasPrefix(e.old, `"`) {
				e.new = strconv.Quote(tg.to)
			}
			add(e)
		}
		if tg.xtest {
			dir := p.t.Pkgs[tg.Path].Dir
			xtest[dir] = append(xtest[dir], tg)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byFile)) {
		if err := p.rewrite(name, byFile[name]); err != nil {
			return err
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(xtest)) {
		if err := p.aliases(dir, xtest[dir]); err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) rewrite(name string, edits []edit) error {
	src, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	// The same place may come from two parses of the file: by offset, last
	// first.
	off := func(e edit) int { return p.t.Fset.Position(e.pos).Offset }
	slices.SortFunc(edits, func(a, b edit) int { return off(b) - off(a) })
	edits = slices.CompactFunc(edits, func(a, b edit) bool { return off(a) == off(b) })
	for _, e := range edits {
		off := off(e)
		if !bytes.HasPrefix(src[off:], []byte(e.old)) {
			return fmt.Errorf("%s: %q is not at offset %d", name, e.old, off)
		}
		src = slices.Concat(src[:off], []byte(e.new), src[off+len(e.old):])
	}
	return writeFormatted(name, src)
}

// aliases adds the external tests' aliases of tgs to export_test.go in dir.
func (p *plan) aliases(dir string, tgs []*target) error {
	name := filepath.Join(dir, "export_test.go")
	src, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		src = []byte("package " + p.t.Pkgs[tgs[0].Path].Name + "\n")
	} else if err != nil {
		return err
	}
	var b bytes.Buffer
	b.Write(src)
	b.WriteString("\n// Names the external tests use, unexported in the package.\n")
	for _, tg := range tgs {
		kw := "var"
		switch tg.obj.(type) {
		case *types.TypeName:
			kw = "type"
		case *types.Const:
			kw = "const"
		}
		fmt.Fprintf(&b, "%s %s = %s\n", kw, tg.Name.Name, tg.to)
	}
	return writeFormatted(name, b.Bytes())
}

func writeFormatted(name string, src []byte) error {
	out, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("gofmt %s: %w", name, err)
	}
	return os.WriteFile(name, out, 0o644)
}
