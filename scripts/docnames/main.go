// Command docnames lists the doc comments of the perfbench module's
// non-test code that name a Go identifier which does not exist: a comment
// left behind when its name, or one it mentions, was renamed or removed.
// It reads the doc comments of packages, types, funcs, methods, consts,
// vars and struct fields, and the line comments of fields, consts and
// vars, leaving out code blocks. It type-checks the module for linux,
// darwin and windows: a name is missing when every system that compiles
// the comment's file misses it (a comment may name a _linux.go type).
//
// A comment names a missing identifier when
//
//   - it begins with its declaration's name spelt with other cases
//     ("Catalog returns" on func catalog), or its package doc says
//     "Package x" in package y;
//   - it has a reference X.Y or X.Y.Z where X is a package (imported by
//     the file, the file's own, or one of the module's by its name) or a
//     type or typed value of the package, Y has an upper-case letter (so
//     that "plan.toml" and "e.g." are prose), and Y is no member of X: no
//     top-level name of the package, no field or method of the type
//     (embedding included); Z is checked so against Y;
//   - it has a word written as a Go name (a lower-case letter followed by
//     an upper-case one) that is no identifier of the package's files, of
//     the packages it imports or of Go's universe, while the form
//     scripts/unexport gives an exported name (its leading capital or
//     initialism in lower case) is one: a name left behind by a rename.
//
// Other unknown CamelCase words are prose (GitHub, InnoDB), and so are the
// few names of other programs that have a lower-case twin in the module
// (external: MySQL, MemAvailable). Words next to "/", "-", "$", "@" or a
// digit are parts of paths, flags and numbers, not references. The rule
// misses a stale name that reads as English ("see Observe") anywhere but
// at the start of its own declaration's doc, and one removed without a
// twin left (-v lists the unknown CamelCase words, to read them over).
//
//	go run ./scripts/docnames [-fail] [-v]
//
// It prints one line per comment with the names it cannot find, and a
// total. With -fail it exits 1 when it listed any comment.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/perfbench/perfbench/scripts/internal/exports"
)

// platforms are the systems whose files are checked: a file for one system
// may name what only that system's files declare.
var platforms = []string{"linux/amd64", "darwin/arm64", "windows/amd64"}

func main() {
	fail := flag.Bool("fail", false, "exit 1 when a comment is listed")
	verbose := flag.Bool("v", false, "also list the unknown CamelCase words taken for prose")
	flag.Parse()
	n, err := run(os.Stdout, ".", platforms, *verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docnames:", err)
		os.Exit(2)
	}
	if *fail && n > 0 {
		os.Exit(1)
	}
}

// finding is a doc comment and the names in it that do not exist.
type finding struct {
	pos   token.Position
	decl  string
	names []string
}

func run(w io.Writer, dir string, platforms []string, verbose bool) (int, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	// A name counts as missing when every platform that compiles the
	// file misses it: a comment may name what only some systems' files
	// declare (a _linux.go type).
	found := map[string]*finding{}        // by position
	missed := map[string]map[string]int{} // position -> name -> platforms missing it
	checked := map[string]int{}           // file -> platforms compiling it
	prose := map[string]bool{}
	for _, pl := range platforms {
		t, err := exports.LoadFor(dir, pl, false)
		if err != nil {
			return 0, err
		}
		c := newChecker(t)
		for _, ck := range t.Checks {
			for _, f := range ck.Files {
				pos := t.Fset.Position(f.Pos())
				checked[pos.Filename]++
				for _, d := range docsOf(f) {
					names := c.check(ck, f, d, prose)
					if len(names) == 0 {
						continue
					}
					pos := t.Fset.Position(d.cg.Pos())
					key := fmt.Sprintf("%s:%d", pos.Filename, pos.Line)
					if found[key] == nil {
						if rel, err := filepath.Rel(abs, pos.Filename); err == nil {
							pos.Filename = filepath.ToSlash(rel)
						}
						found[key] = &finding{pos: pos, decl: d.decl}
						missed[key] = map[string]int{}
					}
					for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
						missed[key][n]++
					}
				}
			}
		}
	}
	var list []*finding
	for key, f := range found {
		file := key[:strings.LastIndexByte(key, ':')]
		for n, k := range missed[key] {
			if k == checked[file] {
				f.names = append(f.names, n)
			}
		}
		if len(f.names) > 0 {
			slices.Sort(f.names)
			list = append(list, f)
		}
	}
	slices.SortFunc(list, func(a, b *finding) int {
		return cmp.Or(cmp.Compare(a.pos.Filename, b.pos.Filename), a.pos.Line-b.pos.Line)
	})
	for _, f := range list {
		fmt.Fprintf(w, "%s:%d: %s: %s\n", f.pos.Filename, f.pos.Line, f.decl, strings.Join(f.names, ", "))
	}
	if verbose {
		fmt.Fprintf(w, "prose: %s\n", strings.Join(slices.Sorted(maps.Keys(prose)), " "))
	}
	fmt.Fprintf(w, "docnames: %d doc comments name identifiers that do not exist\n", len(list))
	return len(list), nil
}

// doc is a doc comment and what it documents.
type doc struct {
	cg    *ast.CommentGroup
	decl  string   // "package plan", "Step", "Step.Insert", "(*T).M"
	names []string // the names it declares, for its first word
	pkg   bool     // a package doc
}

// docsOf returns the doc comments of f's package clause and top-level
// declarations, their specs and their struct fields.
func docsOf(f *ast.File) []doc {
	var out []doc
	if f.Doc != nil {
		out = append(out, doc{cg: f.Doc, decl: "package " + f.Name.Name, names: []string{f.Name.Name}, pkg: true})
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				out = append(out, doc{cg: d.Doc, decl: funcName(d), names: []string{d.Name.Name}})
			}
		case *ast.GenDecl:
			var all []string
			for _, s := range d.Specs {
				all = append(all, specNames(s)...)
			}
			if d.Doc != nil && len(all) > 0 {
				out = append(out, doc{cg: d.Doc, decl: strings.Join(all, ", "), names: all})
			}
			for _, s := range d.Specs {
				out = append(out, specDocs(s)...)
			}
		}
	}
	return out
}

func specNames(s ast.Spec) []string {
	switch s := s.(type) {
	case *ast.TypeSpec:
		return []string{s.Name.Name}
	case *ast.ValueSpec:
		var out []string
		for _, n := range s.Names {
			out = append(out, n.Name)
		}
		return out
	}
	return nil
}

// specDocs returns the comments of one spec and of the fields of the
// struct and interface types in it.
func specDocs(s ast.Spec) []doc {
	names := specNames(s)
	var out []doc
	var typ ast.Expr
	switch s := s.(type) {
	case *ast.TypeSpec:
		out = appendDoc(out, s.Doc, names[0], names)
		out = appendDoc(out, s.Comment, names[0], names)
		typ = s.Type
	case *ast.ValueSpec:
		out = appendDoc(out, s.Doc, strings.Join(names, ", "), names)
		out = appendDoc(out, s.Comment, strings.Join(names, ", "), names)
		typ = s.Type
	}
	if typ == nil {
		return out
	}
	ast.Inspect(typ, func(n ast.Node) bool {
		var fields *ast.FieldList
		switch t := n.(type) {
		case *ast.StructType:
			fields = t.Fields
		case *ast.InterfaceType:
			fields = t.Methods
		default:
			return true
		}
		for _, fd := range fields.List {
			var fn []string
			for _, id := range fd.Names {
				fn = append(fn, id.Name)
			}
			if len(fn) == 0 { // embedded: named by its type
				fn = []string{embeddedName(fd.Type)}
			}
			decl := names[0] + "." + strings.Join(fn, ", ")
			out = appendDoc(out, fd.Doc, decl, fn)
			out = appendDoc(out, fd.Comment, decl, fn)
		}
		return true
	})
	return out
}

func appendDoc(out []doc, cg *ast.CommentGroup, decl string, names []string) []doc {
	if cg == nil {
		return out
	}
	return append(out, doc{cg: cg, decl: decl, names: names})
}

func embeddedName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return embeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.IndexExpr:
		return embeddedName(t.X)
	case *ast.IndexListExpr:
		return embeddedName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// funcName is "F", "T.M" or "(*T).M".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		t, star = s.X, "*"
	}
	recv := embeddedName(t)
	if star != "" {
		return "(*" + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}

// checker resolves the names a package's comments use.
type checker struct {
	byName map[string][]*types.Package // the module's packages by name
	known  map[*exports.Check]map[string]bool
}

func newChecker(t *exports.Tree) *checker {
	c := &checker{byName: map[string][]*types.Package{}, known: map[*exports.Check]map[string]bool{}}
	for _, ck := range t.Checks {
		c.byName[ck.Types.Name()] = append(c.byName[ck.Types.Name()], ck.Types)
	}
	return c
}

// knownIn returns the identifiers a comment of ck's package may name
// unqualified: every identifier of its files, the names of the packages
// it imports (their top-level names, and the fields and methods of their
// types) and Go's predeclared ones.
func (c *checker) knownIn(ck *exports.Check) map[string]bool {
	if k := c.known[ck]; k != nil {
		return k
	}
	k := map[string]bool{}
	for _, name := range types.Universe.Names() {
		k[name] = true
	}
	for _, f := range ck.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				k[id.Name] = true
			}
			return true
		})
	}
	for _, p := range ck.Types.Imports() {
		for _, name := range p.Scope().Names() {
			k[name] = true
			if tn, ok := p.Scope().Lookup(name).(*types.TypeName); ok {
				for _, m := range members(tn.Type()) {
					k[m] = true
				}
			}
		}
	}
	c.known[ck] = k
	return k
}

// members are the fields and methods of t.
func members(t types.Type) []string {
	var out []string
	ms := types.NewMethodSet(types.NewPointer(t))
	for m := range ms.Methods() {
		out = append(out, m.Obj().Name())
	}
	if s, ok := t.Underlying().(*types.Struct); ok {
		for f := range s.Fields() {
			out = append(out, f.Name())
		}
	}
	return out
}

// external are names of other programs that the module has an identifier
// for in lower case (mySQL, memAvailable): in a comment they are prose.
var external = map[string]bool{
	"MySQL":          true, // the server
	"MemAvailable":   true, // a line of /proc/meminfo
	"ControlPersist": true, // an ssh option
	"ScaleUnit":      true, // a field of perf's pmu-events JSON
	"PerfMonV2":      true, // an AMD CPUID feature
}

var (
	refRE  = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*`)
	wordRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)
)

// check returns the names d's text has that do not exist; prose collects
// the unknown CamelCase words it takes for prose.
func (c *checker) check(ck *exports.Check, f *ast.File, d doc, prose map[string]bool) []string {
	text := plainText(d.cg.Text())
	var missing []string
	if w := leading(text, d); w != "" {
		missing = append(missing, w)
	}
	scope := ck.Info.Scopes[f]
	known := c.knownIn(ck)
	for _, loc := range refRE.FindAllStringIndex(text, -1) {
		if inPath(text, loc[0], loc[1]) {
			continue
		}
		ref := text[loc[0]:loc[1]]
		parts := strings.Split(ref, ".")
		if len(parts) > 1 {
			if bad := c.chain(ck.Types, scope, parts); bad != "" {
				missing = append(missing, bad)
			}
			continue
		}
		w := parts[0]
		if !goName(w) || known[w] || external[w] {
			continue
		}
		if known[lower(w)] {
			missing = append(missing, w)
		} else {
			prose[w] = true
		}
	}
	return missing
}

// leading returns the first word of d's text when it is d's name spelt
// with other cases, or the wrong package's name after "Package".
func leading(text string, d doc) string {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return ""
	}
	w := wordRE.FindString(fields[0])
	if d.pkg {
		if w == "Package" && len(fields) > 1 {
			if p := wordRE.FindString(fields[1]); p != d.names[0] {
				return "Package " + p
			}
		}
		return ""
	}
	if w == "" || slices.Contains(d.names, w) || external[w] {
		return ""
	}
	for _, n := range d.names {
		if strings.EqualFold(n, w) {
			return w + " (is " + n + ")"
		}
	}
	return ""
}

// inPath reports whether text[i:j] is part of a path, a file name, a flag
// or an environment variable rather than a reference.
func inPath(text string, i, j int) bool {
	if i > 0 && (strings.ContainsRune("/-$\\@", rune(text[i-1])) || text[i-1] >= '0' && text[i-1] <= '9') {
		return true
	}
	return j < len(text) && strings.ContainsRune("/-", rune(text[j]))
}

// goName reports whether w is written as a Go name: a lower-case letter
// followed by an upper-case one.
func goName(w string) bool {
	for i := 1; i < len(w); i++ {
		if unicode.IsLower(rune(w[i-1])) && unicode.IsUpper(rune(w[i])) {
			return true
		}
	}
	return false
}

// hasUpper reports whether w has an upper-case letter.
func hasUpper(w string) bool { return strings.IndexFunc(w, unicode.IsUpper) >= 0 }

// chain checks a reference X.Y(.Z...) and returns it when a part after a
// package or a type is missing, else "".
func (c *checker) chain(self *types.Package, scope *types.Scope, parts []string) string {
	var pkg *types.Package
	var typ types.Type
	first := parts[0]
	if pn, ok := scope.Lookup(first).(*types.PkgName); ok {
		pkg = pn.Imported()
	} else if first == self.Name() && self.Scope().Lookup(first) == nil {
		pkg = self
	} else if obj := self.Scope().Lookup(first); obj != nil {
		if _, isPkg := obj.(*types.PkgName); !isPkg {
			typ = objType(obj)
		}
	} else if ps := c.byName[first]; len(ps) == 1 {
		pkg = ps[0]
	}
	for i := 1; i < len(parts); i++ {
		p := parts[i]
		switch {
		case pkg != nil:
			obj := pkg.Scope().Lookup(p)
			if obj == nil {
				if !hasUpper(p) {
					return ""
				}
				return strings.Join(parts[:i+1], ".")
			}
			pkg, typ = nil, objType(obj)
		case typ != nil:
			obj, _, _ := types.LookupFieldOrMethod(typ, true, self, p)
			if obj == nil {
				if !hasUpper(p) {
					return ""
				}
				return strings.Join(parts[:i+1], ".")
			}
			typ = objType(obj)
		default:
			return ""
		}
	}
	return ""
}

// objType is the type whose members a reference after obj names: a type
// itself, a value's type (a func's result when it has one).
func objType(obj types.Object) types.Type {
	switch o := obj.(type) {
	case *types.TypeName:
		return o.Type()
	case *types.Var, *types.Const:
		return o.Type()
	}
	return nil
}

// plainText is the text of a doc comment's paragraphs, lists and headings,
// without its code blocks and with links reduced to their text.
func plainText(src string) string {
	var b strings.Builder
	var texts func([]comment.Text)
	texts = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case comment.Plain:
				b.WriteString(string(t))
			case comment.Italic:
				b.WriteString(string(t))
			case *comment.Link:
				texts(t.Text)
			case *comment.DocLink:
				texts(t.Text)
			}
		}
	}
	var p comment.Parser
	for _, blk := range p.Parse(src).Content {
		switch blk := blk.(type) {
		case *comment.Paragraph:
			texts(blk.Text)
		case *comment.Heading:
			texts(blk.Text)
		case *comment.List:
			for _, it := range blk.Items {
				for _, c := range it.Content {
					if para, ok := c.(*comment.Paragraph); ok {
						texts(para.Text)
						b.WriteString("\n")
					}
				}
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// lower is name with its leading capital, or its leading initialism
// (HTML, TCPSocket → tcpSocket), in lower case: the form scripts/unexport
// gives an exported name.
func lower(name string) string {
	r := []rune(name)
	i := 0
	for i < len(r) && unicode.IsUpper(r[i]) {
		i++
	}
	if i < len(r) && i > 1 && unicode.IsLower(r[i]) {
		i-- // the last capital starts the next word
	}
	for j := range i {
		r[j] = unicode.ToLower(r[j])
	}
	return string(r)
}
