// Command unexport renames the names scripts/exports lists (exported
// top-level names no other package of the module uses) to their unexported
// form: TableQPS → tableQPS, HTML → html, TCPSocket → tcpSocket.
//
//	go run ./scripts/unexport [-w]
//
// Without -w it prints the plan; with -w it rewrites the files and gofmts
// them. It rewrites every use in the package's own files, its in-package
// tests included, the first word of the name's doc comment, and a string
// naming the name beside it in a table (opAdd: "opAdd"). Uses from the
// package's external tests (package x_test) keep working through an alias
// it adds to export_test.go (var X = x, type X = x, const X = x).
//
// A type embedded as a field is renamed with the field's uses. Files for
// other platforms count: the module's code (not its tests, which need
// Linux) is also type-checked for each of platforms, and their files are
// renamed too.
//
// It leaves a name, and says why, when the new form would be a keyword, a
// predeclared identifier or a name already visible where a use sits (an
// import, another top-level name, a local), when another package's tests use
// it, when it is a type embedded by pointer, or when an external test needs
// an alias that cannot be written (a generic func or type, a variable
// something assigns). The renames table below gives such a name a form by
// hand. Running it twice changes nothing the second time.
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
	"report.JSON":                "writeJSON",
	"report.Text":                "writeText",
	"symbols.Demangle":           "demangleName",
}

// platforms are the platforms besides this machine's whose files are
// type-checked and renamed too: the build constraints of the tree's
// *_other.go and *_windows.go files.
var platforms = []string{"darwin/amd64", "windows/amd64", "linux/arm64"}

func main() {
	write := flag.Bool("w", false, "rewrite the files (without: print the plan)")
	flag.Parse()
	if err := run(os.Stdout, ".", *write, renames, platforms); err != nil {
		fmt.Fprintln(os.Stderr, "unexport:", err)
		os.Exit(2)
	}
}

// run plans, and with write makes, the renaming of the module in dir;
// renames gives forms by hand, and the files of others (platforms) are
// renamed too.
func run(w io.Writer, dir string, write bool, renames map[string]string, others []string) error {
	t, err := exports.Load(dir)
	if err != nil {
		return err
	}
	trees := []*exports.Tree{t}
	for _, pl := range others {
		o, err := exports.LoadFor(dir, pl, false) // the tests are Linux's
		if err != nil {
			return fmt.Errorf("%s: %w", pl, err)
		}
		trees = append(trees, o)
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	p := newPlan(trees, root, renames)
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
	obj    types.Object // in the package's non-test code, this machine's
	own    []ref        // its identifiers in the package's own files
	xtest  bool         // used by the package's external tests
	others []string     // places in other packages' tests that use it
	skip   string       // why it is left as it is
	edits  []edit       // beyond the identifiers: doc comment, name tables
	checks []check      // of the package's own files that name it
}

// check is a type-check of one of the trees.
type check struct {
	*exports.Check
	fset *token.FileSet
}

// ref is an identifier of a check.
type ref struct {
	check
	id *ast.Ident
}

// edit replaces the text at a place (len(old) bytes) by new.
type edit struct {
	at       token.Position
	old, new string
}

type plan struct {
	t       *exports.Tree   // this machine's
	trees   []*exports.Tree // t and the other platforms'
	root    string          // the module's folder, for the places it prints
	targets []*target
	byName  map[exports.Name]*target
	fields  map[token.Position]*target // fields embedding a target, by place
}

func newPlan(trees []*exports.Tree, root string, renames map[string]string) *plan {
	t := trees[0]
	p := &plan{t: t, trees: trees, root: root, byName: map[exports.Name]*target{}}
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
	p.embedded()
	seen := map[token.Position]bool{}
	for _, c := range p.checks() {
		for _, m := range []map[*ast.Ident]types.Object{c.Info.Defs, c.Info.Uses} {
			for id, obj := range m {
				p.note(c, id, obj)
			}
		}
		for _, f := range c.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if kv, ok := n.(*ast.KeyValueExpr); ok {
					p.nameTable(c, kv, seen)
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

// embedded notes the fields that embed a target's type: renaming the type
// renames them, so their uses are the target's too. A field embedding a
// pointer is left: encoding/json leaves out the fields of an unexported
// type embedded by pointer, and would change what the Records hold.
func (p *plan) embedded() {
	p.fields = map[token.Position]*target{}
	for _, c := range p.checks() {
		for id, obj := range c.Info.Defs {
			v, ok := obj.(*types.Var)
			if !ok || !v.Embedded() {
				continue
			}
			if tg := p.target(typeName(v.Type())); tg != nil {
				p.fields[c.fset.Position(id.Pos())] = tg
				if _, ptr := v.Type().(*types.Pointer); ptr {
					tg.skip = "embedded by pointer (encoding/json would leave out its fields)"
				}
			}
		}
	}
}

// typeName is t's type name, through a pointer, or nil.
func typeName(t types.Type) types.Object {
	if n := named(t); n != nil {
		return n.Obj()
	}
	return nil
}

// checks are the type-checks of every tree.
func (p *plan) checks() []check {
	var out []check
	for _, t := range p.trees {
		for _, c := range t.Checks {
			out = append(out, check{c, t.Fset})
		}
	}
	return out
}

// note notes id, naming obj in c. A file is in several checks (its code,
// with its tests, for each platform): write applies an edit once.
func (p *plan) note(c check, id *ast.Ident, obj types.Object) {
	tg := p.target(obj)
	if v, ok := obj.(*types.Var); ok && v.IsField() {
		if c.Info.Defs[id] == obj {
			return // an embedded field's name: its type's identifier is noted
		}
		tg = p.fields[c.fset.Position(v.Pos())]
	}
	if tg == nil {
		return
	}
	switch {
	case c.Pkg.ImportPath != tg.Path:
		if at := p.pos(c.fset, id.Pos()); !slices.Contains(tg.others, at) {
			tg.others = append(tg.others, at)
		}
	case c.Variant == exports.XTest:
		tg.xtest = true
	default:
		if c.Variant == exports.Code && c.Info.Defs[id] != nil && c.fset == p.t.Fset {
			tg.obj = obj
		}
		if !slices.ContainsFunc(tg.checks, func(x check) bool { return x.Check == c.Check }) {
			tg.checks = append(tg.checks, c)
		}
		tg.own = append(tg.own, ref{c, id})
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
	obj = p.t.TopLevel(obj) // the trees hold the same packages
	if obj == nil {
		return nil
	}
	return p.byName[exports.Name{Path: obj.Pkg().Path(), Rel: p.t.Rel(obj.Pkg().Path()), Name: obj.Name()}]
}

// nameTable notes a string spelling a target's name beside it in a
// composite literal of its package: opAdd: "opAdd".
func (p *plan) nameTable(c check, kv *ast.KeyValueExpr, seen map[token.Position]bool) {
	for _, pair := range [][2]ast.Expr{{kv.Key, kv.Value}, {kv.Value, kv.Key}} {
		id, ok := pair[0].(*ast.Ident)
		lit, ok2 := pair[1].(*ast.BasicLit)
		if !ok || !ok2 || lit.Kind != token.STRING || c.Variant == exports.XTest {
			continue
		}
		tg := p.target(c.Info.Uses[id])
		at := c.fset.Position(lit.Pos())
		if s, err := strconv.Unquote(lit.Value); tg != nil && err == nil && s == tg.Name.Name && c.Pkg.ImportPath == tg.Path && !seen[at] {
			seen[at] = true
			tg.edits = append(tg.edits, edit{at: at, old: lit.Value})
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
			return fmt.Sprintf("%s is already declared at %s", tg.to, p.pos(c.fset, obj.Pos()))
		}
		for _, f := range c.Files {
			if obj := c.Info.Scopes[f].Lookup(tg.to); obj != nil {
				return fmt.Sprintf("%s is imported at %s", tg.to, p.pos(c.fset, obj.Pos()))
			}
		}
	}
	for _, r := range tg.own {
		pkg := r.Types.Scope()
		if _, obj := pkg.Innermost(r.id.Pos()).LookupParent(tg.to, r.id.Pos()); obj != nil && obj.Parent() != pkg {
			return fmt.Sprintf("%s is declared at %s, in scope where it is used at %s", tg.to, p.pos(r.fset, obj.Pos()), p.pos(r.fset, r.id.Pos()))
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

func (p *plan) pos(fset *token.FileSet, pos token.Pos) string {
	ps := fset.Position(pos)
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
	for _, c := range p.checks() {
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
		if c.fset != p.t.Fset {
			continue // tg.obj is this machine's
		}
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
			return []edit{{at: c.fset.Position(first.Pos() + 3), old: tg.Name.Name}}
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

// places is the number of places tg's identifiers are at.
func (p *plan) places(tg *target) int {
	seen := map[token.Position]bool{}
	for _, r := range tg.own {
		seen[r.fset.Position(r.id.Pos())] = true
	}
	return len(seen)
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
			if p.places(tg) == 1 && !tg.xtest {
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
	add := func(e edit) { byFile[e.at.Filename] = append(byFile[e.at.Filename], e) }
	for _, tg := range p.targets {
		if tg.skip != "" {
			continue
		}
		for _, r := range tg.own {
			add(edit{at: r.fset.Position(r.id.Pos()), old: tg.Name.Name, new: tg.to})
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
	// The same place may come from several parses of the file: by offset,
	// last first.
	slices.SortFunc(edits, func(a, b edit) int { return b.at.Offset - a.at.Offset })
	edits = slices.CompactFunc(edits, func(a, b edit) bool { return a.at.Offset == b.at.Offset })
	for _, e := range edits {
		off := e.at.Offset
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
