// Package exports type-checks every package of a module, with its tests,
// and lists the exported top-level names (funcs, types, vars, consts) that
// no other package of the module uses in its non-test code: names that could
// be unexported. Only the packages outside internal/, cmd/ and scripts/
// are checked (perfevent, mysqld, analysis: the public surface), and the
// public record package, the on-disk contract, is left out. A type counts as
// used when another package names it or uses one of its methods or fields
// (a value of it returned by a function). A package of test helpers (one
// whose non-test code imports "testing": testenv, testdb, ...) counts the
// uses in other packages' tests. scripts/exports prints the list and
// scripts/unexport renames what it lists.
package exports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// public are the packages meant to be imported by programs outside the
// module: their exported names are their documented surface.
var public = []string{"record"}

// surface reports whether the package at rel (module-relative) is one
// programs outside the module can import: not under an internal folder,
// not a command or a script. Only those are checked: internal packages
// are the module's own business, and their exported names cost nothing.
func surface(rel string) bool {
	if rel == "internal" || strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/") || strings.HasSuffix(rel, "/internal") {
		return false
	}
	return !(rel == "cmd" || strings.HasPrefix(rel, "cmd/") || rel == "scripts" || strings.HasPrefix(rel, "scripts/"))
}

// Package is what go list says of a package.
type Package struct {
	Dir, ImportPath, Name, Export      string
	GoFiles, TestGoFiles, XTestGoFiles []string
	Imports, TestImports, XTestImports []string
	Module                             *struct{ Path string }
}

func goList(dir string, env []string, args ...string) ([]*Package, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-json"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []*Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(Package)
		if err := dec.Decode(p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("read go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// variant says which files of a package a Check covers.
type variant int

const (
	Code  variant = iota // the non-test files
	tests                // the non-test and in-package test files
	XTest                // the external test package (package x_test)
)

// Check is one type-check of files of a package's folder.
type Check struct {
	Pkg     *Package
	Variant variant
	Files   []*ast.File
	Types   *types.Package
	Info    *types.Info
}

// Name is an exported top-level name of a package of the module.
type Name struct {
	Path string // import path
	Rel  string // path inside the module, "." for its root
	Name string
}

type use struct{ path, name string }

// Tree is the type-checked module.
type Tree struct {
	Fset   *token.FileSet
	Module string
	Pkgs   map[string]*Package
	Checks []*Check // in a fixed order: by path, Code, Tests, XTest

	sizes   types.Sizes
	gc      types.Importer
	export  map[string]string         // import path → export data file
	checked map[string]*types.Package // our packages' non-test code
	uses    map[use]bool              // by other packages' non-test code
	tested  map[use]bool              // by other packages' tests
}

// Load type-checks the module in dir and its tests for this machine's
// platform.
func Load(dir string) (*Tree, error) { return LoadFor(dir, "", true) }

// LoadFor type-checks the module in dir for platform ("darwin/amd64"; ""
// for this machine's), with the files its build constraints select, and
// with withTests its tests.
func LoadFor(dir, platform string, withTests bool) (*Tree, error) {
	var env []string
	if goos, goarch, ok := strings.Cut(platform, "/"); ok {
		env = []string{"GOOS=" + goos, "GOARCH=" + goarch}
	}
	all, err := goList(dir, env, "./...")
	if err != nil {
		return nil, err
	}
	t := &Tree{Fset: token.NewFileSet(), Pkgs: map[string]*Package{}, export: map[string]string{},
		checked: map[string]*types.Package{}, uses: map[use]bool{}, tested: map[use]bool{}}
	external := map[string]bool{}
	for _, p := range all {
		if p.Module != nil {
			t.Module = p.Module.Path
		}
		t.Pkgs[p.ImportPath] = p
	}
	for _, p := range all {
		for _, list := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, path := range list {
				if t.Pkgs[path] == nil && path != "C" && path != "unsafe" {
					external[path] = true
				}
			}
		}
	}
	deps, err := goList(dir, env, append([]string{"-export", "-deps"}, slices.Sorted(maps.Keys(external))...)...)
	if err != nil {
		return nil, err
	}
	for _, p := range deps {
		t.export[p.ImportPath] = p.Export
	}
	goarch := runtime.GOARCH
	if _, arch, ok := strings.Cut(platform, "/"); ok {
		goarch = arch
	}
	t.sizes = types.SizesFor("gc", goarch)
	t.gc = importer.ForCompiler(t.Fset, "gc", func(path string) (io.ReadCloser, error) {
		f := t.export[path]
		if f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	paths := t.Paths()
	for _, path := range paths {
		if _, err := t.check(path); err != nil {
			return nil, err
		}
	}
	for _, path := range paths {
		if !withTests {
			break
		}
		if err := t.checkTests(path); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(t.Checks, func(a, b *Check) int {
		return strings.Compare(a.Pkg.ImportPath, b.Pkg.ImportPath)
	})
	return t, nil
}

// Paths are the import paths of the module's packages, sorted.
func (t *Tree) Paths() []string { return slices.Sorted(maps.Keys(t.Pkgs)) }

// Rel is path inside the module, "." for its root.
func (t *Tree) Rel(path string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, t.Module), "/")
	if rel == "" {
		rel = "."
	}
	return rel
}

// importer gives our packages from source, checked once, and the others
// from their export data.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func (t *Tree) importer(self string, own *types.Package) types.Importer {
	return importerFunc(func(path string) (*types.Package, error) {
		switch {
		case path == "unsafe":
			return types.Unsafe, nil
		case path == self && own != nil:
			return own, nil // an external test's package under test
		case t.Pkgs[path] != nil:
			return t.check(path)
		}
		return t.gc.Import(path)
	})
}

// check type-checks the non-test code of our package path.
func (t *Tree) check(path string) (*types.Package, error) {
	if tp, ok := t.checked[path]; ok {
		if tp == nil {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		return tp, nil
	}
	t.checked[path] = nil
	p := t.Pkgs[path]
	tp, err := t.checkFiles(p, Code, p.GoFiles, t.importer(path, nil), t.uses)
	if err != nil {
		return nil, err
	}
	t.checked[path] = tp
	return tp, nil
}

// checkTests type-checks path's tests: its in-package tests with its code,
// and its external tests against that.
func (t *Tree) checkTests(path string) error {
	p := t.Pkgs[path]
	own := t.checked[path]
	if len(p.TestGoFiles) > 0 {
		var err error
		files := append(slices.Clone(p.GoFiles), p.TestGoFiles...)
		if own, err = t.checkFiles(p, tests, files, t.importer(path, nil), t.tested); err != nil {
			return err
		}
	}
	if len(p.XTestGoFiles) > 0 {
		if _, err := t.checkFiles(p, XTest, p.XTestGoFiles, t.importer(path, own), t.tested); err != nil {
			return err
		}
	}
	return nil
}

// checkFiles type-checks files of p's folder and records in into the
// module's exported names they use from other packages.
func (t *Tree) checkFiles(p *Package, v variant, names []string, imp types.Importer, into map[use]bool) (*types.Package, error) {
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(t.Fset, filepath.Join(p.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{}, Scopes: map[ast.Node]*types.Scope{}}
	path := p.ImportPath
	if v == XTest {
		path += "_test"
	}
	conf := types.Config{Importer: imp, Sizes: t.sizes}
	tp, err := conf.Check(path, t.Fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", path, err)
	}
	self := p.ImportPath
	for _, obj := range info.Uses {
		t.record(into, self, obj)
	}
	for _, sel := range info.Selections {
		// A method or field of a type: the type is used.
		if n := named(sel.Recv()); n != nil {
			t.record(into, self, n.Obj())
		}
	}
	t.Checks = append(t.Checks, &Check{Pkg: p, Variant: v, Files: files, Types: tp, Info: info})
	return tp, nil
}

// named is t's named type, through a pointer.
func named(t types.Type) *types.Named {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	if n != nil {
		n = n.Origin()
	}
	return n
}

// TopLevel is obj's top-level object of one of the module's packages
// (through an instantiation), or nil when obj is not one.
func (t *Tree) TopLevel(obj types.Object) types.Object {
	if obj == nil || obj.Pkg() == nil || t.Pkgs[obj.Pkg().Path()] == nil {
		return nil
	}
	if f, ok := obj.(*types.Func); ok {
		if f.Signature().Recv() != nil {
			return nil
		}
		obj = f.Origin()
	}
	if obj.Parent() != obj.Pkg().Scope() {
		return nil
	}
	return obj
}

// record notes a use of obj by package self when obj is a top-level name of
// another package of the module, or a method of a type that is.
func (t *Tree) record(into map[use]bool, self string, obj types.Object) {
	if obj == nil || obj.Pkg() == nil {
		return
	}
	path := obj.Pkg().Path()
	if path == self || path == self+"_test" || t.Pkgs[path] == nil {
		return
	}
	if f, ok := obj.(*types.Func); ok {
		if recv := f.Signature().Recv(); recv != nil {
			if n := named(recv.Type()); n != nil {
				into[use{path, n.Obj().Name()}] = true
			}
			return
		}
	}
	if obj = t.TopLevel(obj); obj != nil {
		into[use{path, obj.Name()}] = true
	}
}

// Unused lists the exported top-level names no other package uses, by
// package path then name.
func (t *Tree) Unused() []Name {
	var out []Name
	for _, path := range t.Paths() {
		rel := t.Rel(path)
		if slices.Contains(public, rel) || !surface(rel) {
			continue
		}
		helpers := slices.Contains(t.Pkgs[path].Imports, "testing")
		for _, name := range t.checked[path].Scope().Names() {
			u := use{path, name}
			if token.IsExported(name) && !t.uses[u] && !(helpers && t.tested[u]) {
				out = append(out, Name{Path: path, Rel: rel, Name: name})
			}
		}
	}
	return out
}

// Report prints the names Unused lists, a line per package, and a total;
// it returns their number.
func Report(w io.Writer, names []Name) int {
	var pkgs int
	for i := 0; i < len(names); {
		j := i
		var list []string
		for ; j < len(names) && names[j].Path == names[i].Path; j++ {
			list = append(list, names[j].Name)
		}
		fmt.Fprintf(w, "%-28s %3d  %s\n", names[i].Rel, len(list), strings.Join(list, " "))
		pkgs++
		i = j
	}
	fmt.Fprintf(w, "exports: %d exported names in %d packages used by no other package (record is public)\n", len(names), pkgs)
	return len(names)
}
