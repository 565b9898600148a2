// Command funclen lists the functions of the perfbench module's non-test
// code longer than 120 lines, from the line of func to that of the closing
// brace (a function literal counts in the function that holds it).
//
//	go run ./scripts/funclen [-max 120] [-fail]
//
// It prints one line per function, longest first, and a total. With -fail
// it exits 1 when it listed any.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/perfbench/perfbench/scripts/internal/gosrc"
)

func main() {
	max := flag.Int("max", 120, "the longest a function may be, in lines")
	fail := flag.Bool("fail", false, "exit 1 when a function is listed")
	flag.Parse()
	n, err := run(os.Stdout, ".", *max)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	if *fail && n > 0 {
		os.Exit(1)
	}
}

// long is a function over the limit.
type long struct {
	pos   token.Position
	name  string
	lines int
}

func run(w io.Writer, root string, max int) (int, error) {
	fset := token.NewFileSet()
	var found []long
	files, err := gosrc.Files(root)
	if err != nil {
		return 0, err
	}
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return 0, err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > max {
				found = append(found, long{start, funcName(fd), n})
			}
		}
	}
	slices.SortFunc(found, func(a, b long) int {
		return cmp.Or(b.lines-a.lines, cmp.Compare(a.pos.Filename, b.pos.Filename), a.pos.Line-b.pos.Line)
	})
	for _, l := range found {
		fmt.Fprintf(w, "%s:%d: %s: %d lines\n", filepath.ToSlash(l.pos.Filename), l.pos.Line, l.name, l.lines)
	}
	fmt.Fprintf(w, "funclen: %d functions of non-test code over %d lines\n", len(found), max)
	return len(found), nil
}

// funcName is "F", "T.M" or "(*T).M".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := false
	if s, ok := t.(*ast.StarExpr); ok {
		t, star = s.X, true
	}
	switch x := t.(type) { // generic receivers: T[K, V]
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	recv := "?"
	if id, ok := t.(*ast.Ident); ok {
		recv = id.Name
	}
	if star {
		return "(*" + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}
