package suite

import (
	"errors"
	"fmt"
	"github.com/perfbench/perfbench/internal/textdist"
	"sort"
	"strconv"
	"strings"
)

// Ops sources of the suite's steps (see record.Ops).
const (
	// OpsQuestions is the default op count: the server's Questions delta.
	OpsQuestions = "Questions"
	// opsRowsRead counts rows read, for scans. MariaDB names the status
	// variable Rows_read; MySQL has Innodb_rows_read instead, and the runner
	// uses whichever the server has.
	opsRowsRead = "Rows_read"
)

// Step is one microbenchmark of the suite.
type Step struct {
	// Name is the published name: "point-query", "random-points.pre",
	// "read-only-sum", ...
	Name string
	// Range is R of the label: keys in an in-list, rows in a range, or the
	// range size sysbench was given. Steps where it means nothing carry 100,
	// as published tables do.
	Range int
	// Group is the table block of the step's row.
	Group Group
	// Write is true for steps that change rows. Read steps that follow
	// writes get the post-write flush first (see FlushAfter).
	Write bool
	// FlushAfter is true when the pages and index statistics the step
	// leaves behind must be settled (ANALYZE TABLE, dirty pages flushed)
	// before a later read step is measured: every write step. Published runs
	// do it once, after read-write, the last write step before the read
	// steps; a plan does it before any read step that follows a write step.
	FlushAfter bool
	// OpsSource and OpsPer say what one operation is: OpsQuestions and 1
	// (one statement), or opsRowsRead and 1000 for scan.
	OpsSource string
	OpsPer    float64
	// Script is the sysbench test: a stock script name ("oltp_read_only")
	// or, when Own is set, the file name of one of the project's scripts
	// ("perfbench_points.lua"), written out by WriteScripts.
	Script string
	Own    bool
	// Args are the step's own sysbench options, after the common ones.
	Args []string
	// QueriesPerEvent is how many statements one sysbench event runs,
	// BEGIN and COMMIT included (sysbench's queries: line counts them).
	QueriesPerEvent int
	// SQL describes the statements of one event.
	SQL string
}

// Label is the step as published tables print it: "<name>_range=<R>".
func (s Step) Label() string {
	return s.Name + "_range=" + strconv.Itoa(s.Range)
}

// Pre reports whether the step is the copy that runs on freshly loaded
// tables, before the write steps.
func (s Step) Pre() bool { return strings.HasSuffix(s.Name, ".pre") }

// Base is the name without the ".pre" suffix: the step whose statements it
// runs.
func (s Step) Base() string { return strings.TrimSuffix(s.Name, ".pre") }

// errUnknownStep is returned for a step name or label the suite lacks.
var errUnknownStep = errors.New("unknown step")

// errUnknownSubset is returned for a subset name the suite lacks.
var errUnknownSubset = errors.New("unknown subset")

// Subset names.
const (
	subsetFull      = "full"      // every step, in run order
	subsetPublished = "published" // the 32 steps of recent publications
	subsetFast      = "fast"      // a few point, range and write steps for CI and demos
)

// subsets lists the subset names.
func subsets() []string { return []string{subsetFull, subsetPublished, subsetFast} }

const (
	inlist = "perfbench_points.lua"
	ranges = "perfbench_ranges.lua"
	update = "perfbench_updates.lua"
	scan   = "perfbench_scan.lua"
)

// stock builds a step run by a stock sysbench script.
func stock(name string, r int, script string, qpe int, sql string, args ...string) Step {
	return Step{Name: name, Range: r, Script: script, Args: args, QueriesPerEvent: qpe, SQL: sql}
}

// own builds a step run by one of the project's scripts.
func own(name string, r int, script, shape, sql string) Step {
	s := Step{Name: name, Range: r, Script: script, Own: true, QueriesPerEvent: 1, SQL: sql}
	if shape != "" {
		s.Args = []string{"--shape=" + shape}
	}
	return s
}

// readOnlyOne is oltp_read_only with one kind of range query, in autocommit.
func readOnlyOne(name, kind, sql string) Step {
	args := []string{"--skip_trx=on", "--point_selects=0"}
	for _, k := range []string{"simple", "sum", "order", "distinct"} {
		n := "0"
		if k == kind {
			n = "1"
		}
		args = append(args, "--"+k+"_ranges="+n)
	}
	return stock(name, 1000, "oltp_read_only", 1, sql, args...)
}

// pointLookups are the in-list shapes of points-* and their SQL.
var pointLookups = []struct{ name, shape, sql string }{
	{"points-covered-pk", "covered-pk", "SELECT id FROM sbtestN WHERE id IN (R random keys)"},
	{"points-notcovered-pk", "notcovered-pk", "SELECT id, c FROM sbtestN WHERE id IN (R random keys)"},
	{"points-covered-si", "covered-si", "SELECT k FROM sbtestN WHERE k IN (R random keys)"},
	{"points-notcovered-si", "notcovered-si", "SELECT k, c FROM sbtestN WHERE k IN (R random keys)"},
}

// rangeLookups are the range shapes of range-*.
var rangeLookups = []struct{ name, shape, sql string }{
	{"range-covered-pk", "covered-pk", "SELECT id FROM sbtestN WHERE id BETWEEN x AND x+R-1"},
	{"range-notcovered-pk", "notcovered-pk", "SELECT id, c FROM sbtestN WHERE id BETWEEN x AND x+R-1"},
	{"range-covered-si", "covered-si", "SELECT k FROM sbtestN WHERE k BETWEEN x AND x+R-1"},
	{"range-notcovered-si", "notcovered-si", "SELECT k, c FROM sbtestN WHERE k BETWEEN x AND x+R-1"},
}

// readSteps are the read steps that run both on fresh tables (as .pre) and
// after the writes, in run order.
func readSteps(pre bool) []Step {
	sfx := ""
	if pre {
		sfx = ".pre"
	}
	var out []Step
	out = append(out, stock("point-query"+sfx, 100, "oltp_point_select", 1,
		"SELECT c FROM sbtestN WHERE id=?", "--skip_trx=on"))
	for _, r := range []int{10, 100, 1000} {
		out = append(out, own("random-points"+sfx, r, inlist, "random-points",
			"SELECT id, k, c, pad FROM sbtestN WHERE k IN (R random keys)"))
	}
	if !pre {
		out = append(out, own("hot-points", 100, inlist, "hot-points",
			"SELECT id, k, c, pad FROM sbtestN WHERE k IN (the same R keys from the middle of the table)"))
	}
	for _, r := range []int{10, 100, 10000} {
		out = append(out, stock("read-only"+sfx, r, "oltp_read_only", 16,
			"BEGIN; 10 × SELECT c FROM sbtestN WHERE id=?; SELECT c, SUM(k), c ... ORDER BY c, DISTINCT c ... ORDER BY c, each WHERE id BETWEEN x AND x+R-1; COMMIT"))
	}
	if !pre {
		out = append(out,
			readOnlyOne("read-only-simple", "simple", "SELECT c FROM sbtestN WHERE id BETWEEN x AND x+R-1"),
			readOnlyOne("read-only-sum", "sum", "SELECT SUM(k) FROM sbtestN WHERE id BETWEEN x AND x+R-1"),
			readOnlyOne("read-only-order", "order", "SELECT c FROM sbtestN WHERE id BETWEEN x AND x+R-1 ORDER BY c"),
			readOnlyOne("read-only-distinct", "distinct", "SELECT DISTINCT c FROM sbtestN WHERE id BETWEEN x AND x+R-1 ORDER BY c"),
			own("read-only-count", 1000, ranges, "count", "SELECT COUNT(*) FROM sbtestN WHERE id BETWEEN x AND x+R-1"),
		)
	}
	for _, p := range pointLookups {
		out = append(out, own(p.name+sfx, 100, inlist, p.shape, p.sql))
	}
	for _, p := range rangeLookups {
		out = append(out, own(p.name+sfx, 100, ranges, p.shape, p.sql))
	}
	return out
}

// writeSteps are the write steps before the post-write flush, in run order.
func writeSteps() []Step {
	return []Step{
		own("update-inlist", 100, update, "inlist", "UPDATE sbtestN SET c=? WHERE id IN (R random keys, sorted)"),
		stock("update-index", 100, "oltp_update_index", 1, "UPDATE sbtestN SET k=k+1 WHERE id=?"),
		stock("update-nonindex", 100, "oltp_update_non_index", 1, "UPDATE sbtestN SET c=? WHERE id=?"),
		own("update-one", 100, update, "one", "UPDATE sbtest1 SET c=? WHERE id=<middle row>"),
		own("update-zipf", 100, update, "zipf", "UPDATE sbtestN SET c=? WHERE id=? (zipfian keys, exponent 0.8)"),
		stock("write-only", 10000, "oltp_write_only", 6,
			"BEGIN; UPDATE k=k+1 WHERE id=?; UPDATE c=? WHERE id=?; DELETE WHERE id=?; INSERT (id=?); COMMIT"),
		stock("read-write", 10, "oltp_read_write", 20,
			"BEGIN; the 14 reads of read-only; the 4 writes of write-only; COMMIT"),
		stock("read-write", 100, "oltp_read_write", 20,
			"BEGIN; the 14 reads of read-only; the 4 writes of write-only; COMMIT"),
	}
}

// catalogue is every step in run order, with the fields derived from the
// name filled in.
var catalogue = func() []Step {
	var all []Step
	all = append(all, readSteps(true)...)
	all = append(all, writeSteps()...)
	all = append(all, readSteps(false)...)
	all = append(all,
		own("scan", 100, scan, "", "SELECT id FROM sbtestN WHERE LENGTH(c) < 0 (reads every row, returns none)"),
		stock("delete", 100, "oltp_delete", 1, "DELETE FROM sbtestN WHERE id=?"),
		stock("insert", 100, "oltp_insert", 1, "INSERT INTO sbtestN (id, k, c, pad) VALUES (auto, ?, ?, ?)"),
	)
	for i := range all {
		s := &all[i]
		s.Group = GroupOf(s.Name)
		s.Write = s.Group == GroupWrites
		s.FlushAfter = s.Write
		s.OpsSource, s.OpsPer = OpsQuestions, 1
		if s.Name == "scan" {
			s.OpsSource, s.OpsPer = opsRowsRead, 1000
		}
	}
	return all
}()

// steps returns every step of the suite in run order (the full subset): the
// .pre read steps on freshly loaded tables, the write steps, the read steps
// again, scan, delete and insert. The caller may modify the result.
func steps() []Step {
	return clone(catalogue)
}

func clone(steps []Step) []Step {
	out := make([]Step, len(steps))
	for i, s := range steps {
		s.Args = append([]string(nil), s.Args...)
		out[i] = s
	}
	return out
}

// published is the 32-step subset of recent publications: every step
// except the .pre copies.
func published() []Step {
	var out []Step
	for _, s := range catalogue {
		if !s.Pre() {
			out = append(out, s)
		}
	}
	return out
}

// fastLabels is the fast subset, in run order.
var fastLabels = []string{
	"point-query_range=100",
	"random-points_range=100",
	"read-only_range=100",
	"range-covered-si_range=100",
	"update-index_range=100",
	"insert_range=100",
}

// Subset returns the steps of a named subset, in run order:
//
//   - full: every step (47).
//   - published: the 32 steps of recent publications, the full list
//     without the .pre copies: 9 point, 13 range and 10 write steps.
//   - fast: point-query, random-points (R=100), read-only (R=100),
//     range-covered-si, update-index and insert, for CI and demos.
func Subset(name string) ([]Step, error) {
	switch name {
	case subsetFull:
		return steps(), nil
	case subsetPublished:
		return clone(published()), nil
	case subsetFast:
		var out []Step
		for _, l := range fastLabels {
			s, _ := Lookup(l)
			out = append(out, s...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w %q: the subsets are %s", errUnknownSubset, name, strings.Join(subsets(), ", "))
}

// Lookup returns the steps a name or label designates, in run order: a
// label ("random-points_range=100") designates one step, a name
// ("random-points") every range of it. The error wraps errUnknownStep and
// suggests the nearest name.
func Lookup(nameOrLabel string) ([]Step, error) {
	var out []Step
	for _, s := range catalogue {
		if s.Label() == nameOrLabel || s.Name == nameOrLabel {
			out = append(out, s)
		}
	}
	if len(out) > 0 {
		return clone(out), nil
	}
	hint := ""
	if near := Nearest(nameOrLabel); near != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", near)
	}
	return nil, fmt.Errorf("%w %q%s", errUnknownStep, nameOrLabel, hint)
}

// Nearest returns the step name or label closest to s in edit distance, or
// "" when nothing is close (more than a third of the longer string differs).
func Nearest(s string) string {
	var cands []string
	for _, st := range catalogue {
		cands = append(cands, st.Name, st.Label())
	}
	sort.Strings(cands)
	best, bestD := "", -1
	for _, c := range cands {
		d := textdist.Distance(s, c)
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	longer := max(len(s), len(best))
	if bestD < 0 || bestD*3 > longer {
		return ""
	}
	return best
}
