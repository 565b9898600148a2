// Command exports lists, for each package of the perfbench module, the
// exported top-level names (funcs, types, vars, consts) that no other
// package of the module uses in its non-test code: names that could be
// unexported. The public record package is left out. A type counts as used
// when another package names it or uses one of its methods or fields (a
// value of it returned by a function). A package of test helpers (one whose
// non-test code imports "testing": testenv, testdb, ...) counts the uses in
// other packages' tests.
//
//	go run ./scripts/exports [-fail]
//
// It prints one line per package that has such names, with their count,
// and a total. With -fail it exits 1 when it listed any.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
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
	"slices"
	"strings"
)

// public are the packages meant to be imported by programs outside the
// module: their exported names are their documented surface.
var public = []string{"record"}

func main() {
	fail := flag.Bool("fail", false, "exit 1 when a name is listed")
	flag.Parse()
	n, err := run(os.Stdout, ".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "exports:", err)
		os.Exit(2)
	}
	if *fail && n > 0 {
		os.Exit(1)
	}
}

// pkg is what go list says of a package.
type pkg struct {
	Dir, ImportPath, Name, Export      string
	GoFiles, TestGoFiles, XTestGoFiles []string
	Imports, TestImports, XTestImports []string
	Module                             *struct{ Path string }
}

func goList(dir string, args ...string) ([]*pkg, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-json"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []*pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("read go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// use is an exported top-level name of a package: "path.Name".
type use struct{ path, name string }

type checker struct {
	fset    *token.FileSet
	module  string
	ours    map[string]*pkg
	export  map[string]string // import path → export data file
	gc      types.Importer
	checked map[string]*types.Package // our packages' non-test code
	uses    map[use]bool              // by other packages' non-test code
	tested  map[use]bool              // by other packages' tests
}

func run(w io.Writer, dir string) (int, error) {
	all, err := goList(dir, "./...")
	if err != nil {
		return 0, err
	}
	c := &checker{fset: token.NewFileSet(), ours: map[string]*pkg{}, export: map[string]string{},
		checked: map[string]*types.Package{}, uses: map[use]bool{}, tested: map[use]bool{}}
	external := map[string]bool{}
	for _, p := range all {
		if p.Module != nil {
			c.module = p.Module.Path
		}
		c.ours[p.ImportPath] = p
	}
	for _, p := range all {
		for _, list := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, path := range list {
				if c.ours[path] == nil && path != "C" && path != "unsafe" {
					external[path] = true
				}
			}
		}
	}
	deps, err := goList(dir, append([]string{"-export", "-deps"}, slices.Sorted(maps.Keys(external))...)...)
	if err != nil {
		return 0, err
	}
	for _, p := range deps {
		c.export[p.ImportPath] = p.Export
	}
	c.gc = importer.ForCompiler(c.fset, "gc", func(path string) (io.ReadCloser, error) {
		f := c.export[path]
		if f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	paths := slices.Sorted(maps.Keys(c.ours))
	for _, path := range paths {
		if _, err := c.check(path); err != nil {
			return 0, err
		}
	}
	for _, path := range paths {
		if err := c.checkTests(path); err != nil {
			return 0, err
		}
	}
	return c.report(w, paths), nil
}

// importer gives our packages from source, checked once, and the others
// from their export data.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func (c *checker) importer(self string, own *types.Package) types.Importer {
	return importerFunc(func(path string) (*types.Package, error) {
		switch {
		case path == "unsafe":
			return types.Unsafe, nil
		case path == self && own != nil:
			return own, nil // an external test's package under test
		case c.ours[path] != nil:
			return c.check(path)
		}
		return c.gc.Import(path)
	})
}

// check type-checks the non-test code of our package path.
func (c *checker) check(path string) (*types.Package, error) {
	if tp, ok := c.checked[path]; ok {
		if tp == nil {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		return tp, nil
	}
	c.checked[path] = nil
	p := c.ours[path]
	tp, err := c.checkFiles(p, path, p.GoFiles, c.importer(path, nil), c.uses)
	if err != nil {
		return nil, err
	}
	c.checked[path] = tp
	return tp, nil
}

// checkTests type-checks path's tests: its in-package tests with its code,
// and its external tests against that.
func (c *checker) checkTests(path string) error {
	p := c.ours[path]
	var own *types.Package
	if len(p.TestGoFiles) > 0 || len(p.XTestGoFiles) > 0 {
		var err error
		files := append(slices.Clone(p.GoFiles), p.TestGoFiles...)
		if own, err = c.checkFiles(p, path, files, c.importer(path, nil), c.tested); err != nil {
			return err
		}
	}
	if len(p.XTestGoFiles) > 0 {
		if _, err := c.checkFiles(p, path+"_test", p.XTestGoFiles, c.importer(path, own), c.tested); err != nil {
			return err
		}
	}
	return nil
}

// checkFiles type-checks files of p's folder as the package path and
// records in into the module's exported names they use from other packages.
func (c *checker) checkFiles(p *pkg, path string, names []string, imp types.Importer, into map[use]bool) (*types.Package, error) {
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(c.fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	tp, err := conf.Check(path, c.fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", path, err)
	}
	self := p.ImportPath
	for _, obj := range info.Uses {
		c.record(into, self, obj)
	}
	for _, sel := range info.Selections {
		// A method or field of a type: the type is used.
		if n := named(sel.Recv()); n != nil {
			c.record(into, self, n.Obj())
		}
	}
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

// record notes a use of obj by package self when obj is a top-level name of
// another package of the module, or a method of a type that is.
func (c *checker) record(into map[use]bool, self string, obj types.Object) {
	if obj == nil || obj.Pkg() == nil {
		return
	}
	path := obj.Pkg().Path()
	if path == self || path == self+"_test" || c.ours[path] == nil {
		return
	}
	if f, ok := obj.(*types.Func); ok {
		if recv := f.Signature().Recv(); recv != nil {
			if n := named(recv.Type()); n != nil {
				into[use{path, n.Obj().Name()}] = true
			}
			return
		}
		obj = f.Origin()
	}
	if obj.Parent() == obj.Pkg().Scope() {
		into[use{path, obj.Name()}] = true
	}
}

// report prints the unused exported names of each package and returns
// their number.
func (c *checker) report(w io.Writer, paths []string) int {
	total, pkgs := 0, 0
	for _, path := range paths {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, c.module), "/")
		if slices.Contains(public, rel) {
			continue
		}
		helpers := slices.Contains(c.ours[path].Imports, "testing")
		var unused []string
		scope := c.checked[path].Scope()
		for _, name := range scope.Names() {
			if !token.IsExported(name) {
				continue
			}
			u := use{path, name}
			if !c.uses[u] && !(helpers && c.tested[u]) {
				unused = append(unused, name)
			}
		}
		if len(unused) == 0 {
			continue
		}
		if rel == "" {
			rel = "."
		}
		fmt.Fprintf(w, "%-28s %3d  %s\n", rel, len(unused), strings.Join(unused, " "))
		total += len(unused)
		pkgs++
	}
	fmt.Fprintf(w, "exports: %d exported names in %d packages used by no other package (record is public)\n", total, pkgs)
	return total
}
