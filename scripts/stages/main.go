// Command stages checks that no package of the tree imports one of a later
// stage: the packages are ordered by what they are, from the leaves (the
// helpers every other package may use, then the Record) to the command,
// and a package imports only packages of its own stage or earlier ones.
// The stages, earliest first:
//
//	helpers    internal/eventname, internal/textdist, internal/host/procfs,
//	           internal/host/cpuset, internal/host/proc, internal/hugeheap,
//	           internal/tomlpos
//	record     record (the on-disk contract)
//	metric     perfevent/metric (the metric formulas know no perfevent type)
//	perfevent  perfevent
//	host       mysqld (and mysqld/sandbox), internal/host/osstat,
//	           internal/host/hostinfo, internal/profile/symbols,
//	           internal/profile/pprofout
//	load       internal/load/suite, internal/load/sysbench,
//	           internal/load/insertbench
//	measure    internal/measure
//	plan       internal/run/plan
//	import     internal/importer, internal/importer/perfstat
//	analysis   analysis
//	runner     internal/run/runner (its adaptive repeats stop on
//	           analysis's precision)
//	profdiff   internal/profile/profdiff
//	report     internal/report
//	tools      internal/demo, internal/remote, internal/calibrate
//	cmd        cmd/...
//	scripts    scripts/...
//	tests      internal/testdb, internal/testenv, internal/testhosts,
//	           internal/host/proc/proctest, perfevent/internal/workload,
//	           internal/report/internal/campaign/... (only tests import them)
//
// A package is in the stage of the longest path above that is it or holds
// it. The imports are those of the non-test files, as go list gives them
// for linux, darwin and windows.
//
//	go run ./scripts/stages [-fail]
//
// It prints each import of a later stage and each package that is in no
// stage, and a total. With -fail it exits 1 when there are any.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// stage is a step of the order and the paths (relative to the module) of
// its packages.
type stage struct {
	name  string
	paths []string
}

// order is the stages, earliest first (see the package doc).
var order = []stage{
	{"helpers", []string{"internal/eventname", "internal/textdist", "internal/host/procfs", "internal/host/cpuset",
		"internal/host/proc", "internal/hugeheap", "internal/tomlpos"}},
	{"record", []string{"record"}},
	{"metric", []string{"perfevent/metric"}},
	{"perfevent", []string{"perfevent"}},
	{"host", []string{"mysqld", "internal/host/osstat", "internal/host/hostinfo", "internal/profile/symbols", "internal/profile/pprofout"}},
	{"load", []string{"internal/load/suite", "internal/load/sysbench", "internal/load/insertbench"}},
	{"measure", []string{"internal/measure"}},
	{"plan", []string{"internal/run/plan"}},
	{"import", []string{"internal/importer", "internal/importer/perfstat"}},
	{"analysis", []string{"analysis"}},
	{"runner", []string{"internal/run/runner"}},
	{"profdiff", []string{"internal/profile/profdiff"}},
	{"report", []string{"internal/report"}},
	{"tools", []string{"internal/demo", "internal/remote", "internal/calibrate"}},
	{"cmd", []string{"cmd"}},
	{"scripts", []string{"scripts"}},
	{"tests", []string{"internal/testdb", "internal/testenv", "internal/testhosts", "internal/host/proc/proctest",
		"perfevent/internal/workload", "internal/report/internal/campaign"}},
}

// goos are the systems whose files are listed: a file for one system may
// import what the others' do not.
var goos = []string{"linux", "darwin", "windows"}

func main() {
	fail := flag.Bool("fail", false, "exit 1 when a package imports one of a later stage or is in no stage")
	flag.Parse()
	n, err := run(os.Stdout, ".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "stages:", err)
		os.Exit(2)
	}
	if *fail && n > 0 {
		os.Exit(1)
	}
}

// pkg is a package of the tree and what its non-test files import.
type pkg struct {
	ImportPath string
	Imports    []string
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// run lists the packages of the module at root and prints what breaks the
// order; it returns how many things it printed.
func run(w io.Writer, root string) (int, error) {
	var module string
	imports := map[string][]string{}
	for _, sys := range goos {
		pkgs, err := list(root, sys)
		if err != nil {
			return 0, err
		}
		for _, p := range pkgs {
			if p.Error != nil {
				return 0, fmt.Errorf("go list %s (GOOS=%s): %s", p.ImportPath, sys, p.Error.Err)
			}
			if p.Module != nil {
				module = p.Module.Path
			}
			for _, imp := range p.Imports {
				if !slices.Contains(imports[p.ImportPath], imp) {
					imports[p.ImportPath] = append(imports[p.ImportPath], imp)
				}
			}
			if _, ok := imports[p.ImportPath]; !ok {
				imports[p.ImportPath] = nil
			}
		}
	}
	if module == "" {
		return 0, fmt.Errorf("go list found no package of a module under %s", root)
	}
	later, unstaged := check(module, imports)
	for _, l := range later {
		fmt.Fprintln(w, l)
	}
	if len(unstaged) > 0 {
		fmt.Fprintf(w, "packages in no stage (add them to scripts/stages): %s\n", strings.Join(unstaged, " "))
	}
	fmt.Fprintf(w, "stages: %d imports of a later stage, %d packages in no stage\n", len(later), len(unstaged))
	return len(later) + len(unstaged), nil
}

// list runs go list in root for system goos.
func list(root, goos string) ([]pkg, error) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Module,Error", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list (GOOS=%s): %v: %s", goos, err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("read go list's output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// check returns, sorted, the imports of a later stage ("report imports
// runner: runner (stage runner) is later than report (stage report)") and
// the packages of module in no stage. imports maps each package of the
// module to what it imports; imports from outside the module are left
// alone.
func check(module string, imports map[string][]string) (later, unstaged []string) {
	rel := func(path string) (string, bool) {
		if path == module {
			return "", true
		}
		r, ok := strings.CutPrefix(path, module+"/")
		return r, ok
	}
	for p, imps := range imports {
		from, ok := rel(p)
		if !ok {
			continue
		}
		fi, fname := stageOf(from)
		if fi < 0 {
			unstaged = append(unstaged, from)
			continue
		}
		for _, imp := range imps {
			to, ok := rel(imp)
			if !ok {
				continue
			}
			ti, tname := stageOf(to)
			if ti > fi {
				later = append(later, fmt.Sprintf("%s imports %s: %s (stage %s) is later than %s (stage %s)", from, to, to, tname, from, fname))
			}
		}
	}
	slices.Sort(later)
	slices.Sort(unstaged)
	return later, unstaged
}

// stageOf returns the index and name of the stage of package path
// (relative to the module): that of the longest path of order that is path
// or holds it; -1 when none does.
func stageOf(path string) (int, string) {
	best, bestLen, name := -1, -1, ""
	for i, s := range order {
		for _, p := range s.paths {
			if (path == p || strings.HasPrefix(path, p+"/")) && len(p) > bestLen {
				best, bestLen, name = i, len(p), s.name
			}
		}
	}
	return best, name
}
