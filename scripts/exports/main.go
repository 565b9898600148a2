// Command exports lists, for each package of the perfbench module, the
// exported top-level names (funcs, types, vars, consts) that no other
// package of the module uses in its non-test code: names that could be
// unexported (the rule is scripts/internal/exports'; scripts/unexport
// renames them). The public record package is left out.
//
//	go run ./scripts/exports [-fail]
//
// It prints one line per package that has such names, with their count,
// and a total. With -fail it exits 1 when it listed any.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/perfbench/perfbench/scripts/internal/exports"
)

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

func run(w io.Writer, dir string) (int, error) {
	t, err := exports.Load(dir)
	if err != nil {
		return 0, err
	}
	return exports.Report(w, t.Unused()), nil
}
