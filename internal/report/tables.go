package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/record"
)

type builder struct {
	c   *analysis.Comparison
	opt Options
	// want is the set of table IDs asked for; empty means all.
	want map[string]bool
	// tested is set when some ratio of the report was tested for
	// significance: ratios that could not be are then marked "?".
	tested bool
	// ranges are the value ranges of the absolute colour rule.
	ranges colourRanges
	// aa maps the second label of an A/A pair to the first (aaPairs).
	aa map[string]string
	// built are the tables prepare kept, in report order, until
	// tables emits them.
	built []*table
	// compared is set when some Record was measured with other versions
	// (record.Comparison): its ratios may be paired.
	compared bool
}

// build builds the tables of id, calling emit with each in report order.
// Tables that are built scope by scope are built only for scopes (see
// byScope); the others for every scope.
func (b *builder) build(id string, scopes []analysis.Scope, emit func(*table)) {
	switch id {
	case tableSummary:
		b.summary(emit)
	case TableRQPS:
		b.rqps(scopes, emit)
	case tableQPS:
		b.qps(scopes, emit)
	case tableThreads:
		b.threads(emit)
	case tableAverage:
		b.average(emit)
	case tablePairs:
		b.pairs(scopes, emit)
	case tableCPUIO:
		b.cpuio(scopes, emit)
	case tableCPUIORel:
		b.cpuioRel(scopes, emit)
	case tableCounters:
		b.counters(false, scopes, emit)
	case tableCountersRel:
		b.counters(true, scopes, emit)
	case tableLegacy:
		b.legacy(scopes, emit)
	case tableAttribution:
		b.attribution(scopes, emit)
	case tableCorrelation:
		b.correlation(scopes, emit)
	case tableRoles:
		b.roles(scopes, emit)
	case tableInsert:
		b.insert(false, scopes, emit)
	case tableInsertRel:
		b.insert(true, scopes, emit)
	case tableInsertTarget:
		b.insertTarget(scopes, emit)
	case tableInsertLine:
		b.insertLine(scopes, emit)
	case tableInsertHist:
		b.insertHist(scopes, emit)
	}
}

// byScope reports whether the tables of id are built scope by scope, each
// scope's alone: in report order those of one scope come before those of
// the next, and none depends on another scope's. The summary (its
// regressions table spans the scopes), the per-thread-count and the
// average layouts (a table per host or one for all) are built whole.
func byScope(id string) bool {
	return id != tableSummary && id != tableThreads && id != tableAverage
}

// scopeText describes a scope for titles: "host bench1, 1 thread".
func scopeText(host string, threads int) string {
	var parts []string
	if host != "" {
		parts = append(parts, "host "+host)
	}
	if threads > 0 {
		parts = append(parts, plural(threads, "thread"))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (b *builder) newTable(id, title string, sc analysis.Scope) *table {
	if s := scopeText(sc.Host, sc.Threads); s != "" {
		title += " (" + s + ")"
	}
	return &table{ID: id, Title: title, Host: sc.Host, Threads: sc.Threads, pad: padAuto, keys: newKeys(0)}
}

// others are the versions compared with the base: Options.Compare's, else
// every version but the base, in input order.
func (b *builder) others() []string {
	if len(b.opt.Compare) == 0 {
		return b.c.Others()
	}
	var out []string
	for _, v := range b.c.Others() {
		if slices.Contains(b.opt.Compare, v) {
			out = append(out, v)
		}
	}
	return out
}

// addRatioKeys adds the keys of a ratio cell to the table's, the base's
// once for the cells of one row that share it.
func (t *table) addRatioKeys(k, base record.Key) {
	t.addKey(k)
	if base != t.lastBase || len(t.keys) == 1 {
		t.keys = append(t.keys, base)
		t.lastBase = base
	}
}

// addKey adds the key of a cell to the table's keys, unless it is the
// key added last (a table's cells of one Record sample are mostly side
// by side): the keys are read as a set, in order of first appearance.
func (t *table) addKey(k record.Key) {
	if n := len(t.keys); n > 0 && t.keys[n-1] == k {
		return
	}
	t.keys = append(t.keys, k)
}

// colLabel is the heading of the i-th version column (0-based): the
// user's label for the version (Options.Labels), else "col-N".
func (b *builder) colLabel(i int, version string) string {
	if l := b.opt.Labels[version]; l != "" {
		return l
	}
	return fmt.Sprintf("col-%d", i+1)
}

// colHeader heads one column per version.
func (b *builder) colHeader(versions []string) []string {
	h := make([]string, len(versions))
	for i, v := range versions {
		h[i] = b.colLabel(i, v)
	}
	return h
}

// legend says which version each column is: "col-1 : 8.0.39".
func (b *builder) legend(versions []string) []string {
	var out []string
	for i, v := range versions {
		out = append(out, fmt.Sprintf("%s : %s", b.colLabel(i, v), v))
	}
	return out
}

// baseLabel names the base the way the user labels it.
func (b *builder) baseLabel() string {
	if l := b.opt.Labels[b.c.Base]; l != "" {
		return l
	}
	return b.c.Base
}

// stepsIn returns the table steps that have a Record in the scope; with
// insert set, only insert-benchmark steps.
func (b *builder) stepsIn(sc analysis.Scope, insert bool) []string {
	var out []string
	for _, s := range b.c.Steps {
		if insert && b.c.Group(s) != suite.GroupInsert {
			continue
		}
		for _, v := range b.c.Versions {
			if b.c.Has(analysis.Key(sc, v, s)) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// group is the name of the step's row group: the one Options.Groups gives
// it, else its Records' or the suite's (point, range, writes, insert
// benchmark).
func (b *builder) group(step string) string {
	if g, ok := b.opt.Groups[step]; ok {
		return g
	}
	if g := b.c.Group(step); g != suite.GroupInsert {
		return string(g)
	}
	return "insert benchmark"
}

// sections groups the steps' rows by row group. With Options.Groups the
// groups come in the order they first appear and their steps keep their
// order inside them.
func (b *builder) sections(steps []string, row func(step string) row) []section {
	if len(b.opt.Groups) > 0 {
		first := map[string]int{}
		for _, s := range steps {
			if _, ok := first[b.group(s)]; !ok {
				first[b.group(s)] = len(first)
			}
		}
		steps = slices.Clone(steps)
		sort.SliceStable(steps, func(i, j int) bool { return first[b.group(steps[i])] < first[b.group(steps[j])] })
	}
	var out []section
	for _, s := range steps {
		g := b.group(s)
		if len(out) == 0 || out[len(out)-1].Name != g {
			out = append(out, section{Name: g})
		}
		out[len(out)-1].Rows = append(out[len(out)-1].Rows, row(s))
	}
	return out
}

// grouped marks a table built with b.sections to print its group names
// when the user named the groups.
func (b *builder) grouped(t *table) {
	if len(b.opt.Groups) > 0 {
		t.sectionNames, t.headerPerSection, t.sectionGap = true, true, true
	}
}

func better(metric string) int {
	if analysis.LowerIsBetter(metric) {
		return -1
	}
	return 1
}

// value is the metric of key k as an absolute cell; set names the cells the
// colour rule compares it with.
func (b *builder) value(t *table, k record.Key, metric string, f numFormat, set string) tableCell {
	t.addKey(k)
	ac := b.c.Value(k, metric)
	c := tableCell{Cell: ac, Text: cellText(ac, f, textNone), Version: k.Version, Step: k.Step, Metric: metric, set: set, better: int8(better(metric)), format: f}
	b.markBelow(&c, k)
	return c
}

// markBelow marks a throughput cell (o/s, or a ratio of it) of an
// insert-benchmark step where a version of keys fell below its target
// insert rate: "!", grey in HTML, out of the colour rules, and left out
// of the averages that read the table's cells.
func (b *builder) markBelow(c *tableCell, keys ...record.Key) {
	if c.Metric != analysis.OpsPerSecond || !c.OK() || c.BelowTarget {
		return
	}
	for _, k := range keys {
		if b.c.BelowTarget(k) {
			c.BelowTarget, c.Class = true, "grey"
			c.Text += textBelowTarget
			return
		}
	}
}

// ratio is the metric of key k relative to the base.
func (b *builder) ratio(t *table, k record.Key, metric string, f numFormat) tableCell {
	t.addRatioKeys(k, b.c.BaseKey(k))
	b.tallyPairs(t, k, b.c.Base)
	c := ratioCell(b.c.Ratio(k, metric), f, k, metric)
	b.markBelow(&c, k, b.c.BaseKey(k))
	return c
}

func ratioCell(ac analysis.Cell, f numFormat, k record.Key, metric string) tableCell {
	return tableCell{Cell: ac, Text: cellText(ac, f, textNone), Version: k.Version, Step: k.Step, Metric: metric,
		better: int8(better(metric)), rel: true, format: f}
}

func (b *builder) rqps(scopes []analysis.Scope, emit func(*table)) {
	floors := b.floors()
	others := slices.DeleteFunc(b.others(), func(v string) bool { return slices.Contains(floors, v) })
	if len(others)+len(floors) == 0 {
		return
	}
	floorLegend, floorNotes := b.floorNotes(floors)
	for _, sc := range scopes {
		t := b.newTable(TableRQPS, "Relative QPS", sc)
		t.Relative, t.pad, t.padIfWide = true, padNone, true
		t.Preamble = append(append([]string{"Relative to: " + b.c.Base}, b.legend(others)...), floorLegend...)
		t.Header = b.colHeader(others)
		for i := range floors {
			t.Header = append(t.Header, floorHeader(i, len(floors)))
		}
		t.Notes = append(t.Notes, floorNotes...)
		b.grouped(t)
		t.Sections = b.sections(b.stepsIn(sc, false), func(step string) row {
			row := row{Label: step, Cells: newCells(len(others) + len(floors))}
			for _, v := range others {
				row.Cells = append(row.Cells, b.ratio(t, analysis.Key(sc, v, step), analysis.OpsPerSecond, fmtRatio))
			}
			for _, v := range floors {
				row.Cells = append(row.Cells, b.floorCell(t, analysis.Key(sc, v, step)))
			}
			return row
		})
		emit(t)
	}
}

func (b *builder) qps(scopes []analysis.Scope, emit func(*table)) {
	for _, sc := range scopes {
		t := b.newTable(tableQPS, "QPS", sc)
		t.pad, t.padIfWide = padNone, true
		t.Preamble = b.legend(b.c.Versions)
		t.Header = b.colHeader(b.c.Versions)
		b.grouped(t)
		t.Sections = b.sections(b.stepsIn(sc, false), func(step string) row {
			row := row{Label: step, Cells: newCells(len(b.c.Versions))}
			for _, v := range b.c.Versions {
				row.Cells = append(row.Cells, b.value(t, analysis.Key(sc, v, step), analysis.OpsPerSecond, fmtQPS, "qps|"+sc.Host+"|"+strconv.Itoa(sc.Threads)+"|"+step))
			}
			return row
		})
		emit(t)
	}
}

// threads is the per-thread-count layout: for each step, a block with the
// QPS of each version at each thread count and its ratio to the base at the
// lowest thread count, hosts as "- host" lines.
func (b *builder) threads(emit func(*table)) {
	if len(b.c.Threads) < 2 {
		return
	}
	ths := append([]int(nil), b.c.Threads...)
	sort.Ints(ths)
	low := ths[0]
	t := &table{ID: tableThreads, Title: "QPS by thread count", pad: padNone, headerPerSection: true, sectionNames: true}
	for _, th := range ths {
		t.Header = append(t.Header, strconv.Itoa(th))
	}
	t.LabelHeader = "concurrency"
	t.Header = append(t.Header, fmt.Sprintf("vs %s at %s", b.baseLabel(), plural(low, "thread")))
	t.Trailing = 1
	blank := false
	others := b.others()
	for _, step := range b.c.Steps {
		sec := section{Name: step}
		for _, host := range b.c.Hosts {
			var rows []row
			for _, v := range b.c.Versions {
				has := false
				for _, th := range ths {
					has = has || b.c.Has(record.Key{Host: host, Version: v, Step: step, Threads: th})
				}
				if !has {
					continue
				}
				row := row{Label: v, Cells: newCells(len(ths) + 1)}
				// Thread counts the version did not run print blank
				// after the last it ran, as published ("1077
				// in-5635.opt"); one missing between two it ran is "-",
				// so no value moves under another count's heading.
				last := -1
				for i, th := range ths {
					if b.c.Has(record.Key{Host: host, Version: v, Step: step, Threads: th}) {
						last = i
					}
				}
				for i, th := range ths {
					k := record.Key{Host: host, Version: v, Step: step, Threads: th}
					if i > last {
						row.Cells = append(row.Cells, tableCell{Empty: true, Version: v, Step: step, Metric: analysis.OpsPerSecond})
						blank = true
						continue
					}
					row.Cells = append(row.Cells, b.value(t, k, analysis.OpsPerSecond, fmtInt, fmt.Sprintf("threads|%s|%s|%d", host, step, th)))
				}
				if v == b.c.Base || !slices.Contains(others, v) {
					row.Cells = append(row.Cells, tableCell{Empty: true, Text: ""})
				} else {
					row.Cells = append(row.Cells, b.ratio(t, record.Key{Host: host, Version: v, Step: step, Threads: low}, analysis.OpsPerSecond, fmtRatio))
				}
				rows = append(rows, row)
			}
			if len(rows) == 0 {
				continue
			}
			if host != "" || len(b.c.Hosts) > 1 {
				sec.Rows = append(sec.Rows, row{Label: "- " + host, Kind: rowHeading})
			}
			sec.Rows = append(sec.Rows, rows...)
		}
		if len(sec.Rows) > 0 {
			t.Sections = append(t.Sections, sec)
		}
	}
	if blank {
		t.Notes = append(t.Notes, "a row with fewer values than thread counts: the version did not run the higher thread counts")
	}
	emit(t)
}

// average is the ratio layout with an average row, one block per thread
// count, one table per host.
func (b *builder) average(emit func(*table)) {
	others := b.others()
	if len(others) == 0 {
		return
	}
	ths := append([]int(nil), b.c.Threads...)
	sort.Ints(ths)
	for _, host := range b.c.Hosts {
		title := "QPS ratios with their average"
		if host != "" {
			title += " (host " + host + ")"
		}
		t := &table{ID: tableAverage, Title: title, Host: host, Relative: true, pad: padFixed,
			headerPerSection: true, sectionNames: true, sectionGap: true}
		t.Preamble = []string{"QPS ratio:"}
		for i, v := range others {
			t.Preamble = append(t.Preamble, fmt.Sprintf("* %s = %s / %s", b.colLabel(i, v), v, b.c.Base))
		}
		t.Header = b.colHeader(others)
		for _, th := range ths {
			sc := analysis.Scope{Host: host, Threads: th}
			steps := b.stepsIn(sc, false)
			if len(steps) == 0 {
				continue
			}
			name := "threads unknown"
			if th > 0 {
				name = plural(th, "connection")
			}
			sec := section{Name: name}
			for _, step := range steps {
				row := row{Label: step, Cells: newCells(len(others))}
				for _, v := range others {
					row.Cells = append(row.Cells, b.ratio(t, analysis.Key(sc, v, step), analysis.OpsPerSecond, fmtRatio3))
				}
				sec.Rows = append(sec.Rows, row)
			}
			avg := row{Label: "average", Kind: rowAverage}
			for i, v := range others {
				var sum float64
				n, skipped, below := 0, 0, 0
				running, partial, estimated := 1.0, false, false
				for _, r := range sec.Rows {
					c := r.Cells[i]
					if c.BelowTarget {
						below++
						continue
					}
					// A ratio of two zeros is 1 by convention, not a
					// measured ratio: it does not enter the average.
					if !c.OK() || math.IsInf(c.Value, 0) || c.BothZero {
						skipped++
						continue
					}
					sum += c.Value
					n++
					running = math.Min(running, c.Running)
					partial = partial || c.Partial
					estimated = estimated || c.Estimated
				}
				ac := analysis.Stated(analysis.Missing)
				if n > 0 {
					ac = analysis.Val(sum / float64(n))
					ac.Running, ac.Partial, ac.Estimated = running, partial, estimated
					if math.IsInf(ac.Value, 0) {
						ac = analysis.NoValue(analysis.WhyNotFinite)
					}
				}
				avg.Cells = append(avg.Cells, tableCell{Cell: ac, Text: cellText(ac, fmtRatio3, textNone), Version: v,
					Step: "average", Metric: analysis.OpsPerSecond, rel: true, better: 1, format: fmtRatio3})
				if skipped > 0 {
					t.Notes = append(t.Notes, fmt.Sprintf("%s, %s: the average leaves out %s without a finite measured ratio (not "+
						"recorded, failed, inf, or 1 for two zeros)", name, b.colLabel(i, v), plural(skipped, "step")))
				}
				if below > 0 {
					t.Notes = append(t.Notes, fmt.Sprintf("%s, %s: the average leaves out %s marked %s (below the target insert rate)", name, b.colLabel(i, v), plural(below, "step"), textBelowTarget))
				}
			}
			sec.Rows = append(sec.Rows, row{Kind: rowRule}, avg)
			t.Sections = append(t.Sections, sec)
		}
		t.Notes = append([]string{"average: arithmetic mean of the ratios above it, as published"}, t.Notes...)
		emit(t)
	}
}

// cpuioUnits says what the columns of a CPU and IO table are, of those
// in header only (check drops the columns no step has).
func cpuioUnits(header []string) string {
	var parts []string
	for _, u := range []struct {
		cols []string
		what string
	}{
		{[]string{analysis.OpsPerSecond}, "operations per second"},
		{[]string{analysis.CPUPerOp}, "µs of CPU per operation"},
		{[]string{analysis.CSPerOp}, "context switches per operation"},
		{[]string{analysis.ReadsPerOp, analysis.WritesPerOp}, "storage reads and writes per operation"},
		{[]string{analysis.ReadKBPerOp, analysis.WriteKBPerOp}, "KB read and written per operation"},
	} {
		var shown []string
		for _, c := range u.cols {
			if slices.Contains(header, c) {
				shown = append(shown, c)
			}
		}
		what := u.what
		if len(shown) == 1 && len(u.cols) == 2 {
			// "storage reads per operation" for r/o alone.
			what = strings.Replace(strings.Replace(what, " and writes", "", 1), " and written", "", 1)
			if shown[0] == u.cols[1] {
				what = strings.Replace(strings.Replace(u.what, "reads and ", "", 1), "read and ", "", 1)
			}
		}
		if len(shown) > 0 {
			parts = append(parts, strings.Join(shown, ", ")+": "+what)
		}
	}
	return strings.Join(parts, "; ")
}

func cpuioFormat(m string) numFormat {
	if m == analysis.OpsPerSecond {
		return fmtQPS
	}
	return fmtAbs
}

func (b *builder) cpuio(scopes []analysis.Scope, emit func(*table)) {
	for _, sc := range scopes {
		for _, v := range b.c.Versions {
			t := b.newTable(tableCPUIO, "CPU and IO per operation: "+v, sc)
			t.Version = v
			t.Header = analysis.CPUIOMetrics
			var steps []string
			for _, s := range b.stepsIn(sc, false) {
				if b.c.Has(analysis.Key(sc, v, s)) {
					steps = append(steps, s)
				}
			}
			b.grouped(t)
			t.Sections = b.sections(steps, func(step string) row {
				row := row{Label: step, Cells: newCells(len(analysis.CPUIOMetrics))}
				for _, m := range analysis.CPUIOMetrics {
					set := fmt.Sprintf("cpuio|%s|%d|%s|%s", sc.Host, sc.Threads, step, m)
					row.Cells = append(row.Cells, b.value(t, analysis.Key(sc, v, step), m, cpuioFormat(m), set))
				}
				return row
			})
			// The units note comes in check, with the columns kept.
			emit(t)
		}
	}
}

func (b *builder) cpuioRel(scopes []analysis.Scope, emit func(*table)) {
	for _, sc := range scopes {
		for _, v := range b.others() {
			t := b.newTable(tableCPUIORel, "CPU and IO per operation relative to the base: "+v, sc)
			t.Version, t.Relative = v, true
			t.Preamble = []string{"Relative to: " + b.c.Base, "Version: " + v}
			t.Header = analysis.CPUIOMetrics
			b.grouped(t)
			t.Sections = b.sections(b.stepsIn(sc, false), func(step string) row {
				row := row{Label: step, Cells: newCells(len(analysis.CPUIOMetrics))}
				for _, m := range analysis.CPUIOMetrics {
					row.Cells = append(row.Cells, b.ratio(t, analysis.Key(sc, v, step), m, fmtRatio))
				}
				return row
			})
			t.Notes = []string{"each value is the version's divided by the base's; above 1 for o/s is faster, above 1 for the others is more work per operation"}
			emit(t)
		}
	}
}

// metricTitle names a metric in a title.
func metricTitle(m string) string {
	switch {
	case m == analysis.IPC:
		return "IPC (instructions per cycle)"
	case m == analysis.CPI:
		return "CPI (cycles per instruction)"
	case strings.HasPrefix(m, "MPKI(") && strings.HasSuffix(m, ")"):
		return strings.TrimSuffix(strings.TrimPrefix(m, "MPKI("), ")") + " per 1,000 instructions (MPKI)"
	case analysis.EventOf(m) == "task-clock" || analysis.EventOf(m) == "cpu-clock":
		return analysis.EventOf(m) + " ns per operation"
	case analysis.EventOf(m) != "":
		return analysis.EventOf(m) + " per operation"
	}
	return m
}

func (b *builder) counters(rel bool, scopes []analysis.Scope, emit func(*table)) {
	versions := b.c.Versions
	id, suffix := tableCounters, ""
	if rel {
		versions, id, suffix = b.others(), tableCountersRel, ", relative to the base"
		if len(versions) == 0 {
			return
		}
	}
	for _, sc := range scopes {
		for _, m := range b.c.CounterMetrics() {
			if !b.c.HasMetric(sc, m) {
				continue
			}
			t := b.newTable(id, metricTitle(m)+suffix, sc)
			t.Relative, t.metric = rel, m
			t.Preamble = b.legend(versions)
			if rel {
				t.Preamble = append([]string{"Relative to: " + b.c.Base}, t.Preamble...)
			}
			t.Header = b.colHeader(versions)
			b.grouped(t)
			// The cells of a step are compared with each other by the
			// colour rule: one set name for the row.
			set := fmt.Sprintf("counters|%s|%d|%s|", sc.Host, sc.Threads, m)
			steps := b.stepsIn(sc, false)
			// A key per cell, and the base's per row.
			t.keys = newKeys(len(steps) * (len(versions) + 1))
			t.Sections = b.sections(steps, func(step string) row {
				row := row{Label: step, Cells: newCells(len(versions))}
				stepSet := set + step
				for _, v := range versions {
					k := analysis.Key(sc, v, step)
					if rel {
						row.Cells = append(row.Cells, b.ratio(t, k, m, fmtRatio))
					} else {
						row.Cells = append(row.Cells, b.value(t, k, m, fmtAbs, stepSet))
					}
				}
				return row
			})
			emit(t)
		}
	}
}

func (b *builder) legacy(scopes []analysis.Scope, emit func(*table)) {
	others := b.others()
	if len(others) == 0 {
		return
	}
	for _, sc := range scopes {
		for _, e := range b.c.Events() {
			if !b.c.HasMetric(sc, analysis.PerOpName(e)) {
				continue
			}
			t := b.newTable(tableLegacy, e+": legacy normalization", sc)
			t.Relative, t.metric = true, e
			t.Preamble = append([]string{"Relative to: " + b.c.Base}, b.legend(others)...)
			t.Header = b.colHeader(others)
			b.grouped(t)
			t.Sections = b.sections(b.stepsIn(sc, false), func(step string) row {
				row := row{Label: step, Cells: newCells(len(others))}
				for _, v := range others {
					k := analysis.Key(sc, v, step)
					t.addRatioKeys(k, b.c.BaseKey(k))
					row.Cells = append(row.Cells, ratioCell(b.c.LegacyRatio(k, e), fmtRatio, k, analysis.PerOpName(e)))
				}
				return row
			})
			t.Notes = []string{"legacy normalization, for comparison with earlier posts: (count_v / count_base) / (QPS_v / " +
				"QPS_base) with counts as rates over the counter window and QPS over the whole step as the load generator reports " +
				"it; the counters-rel tables divide by the operations of the counter window instead; these ratios are not tested for significance"}
			emit(t)
		}
	}
}

// shareCell is an attribution share, carrying the state, running fraction
// and partial and estimated marks of the ratios it comes from; noShares is
// why the attribution computed no share although rQPS was measured.
func shareCell(v float64, noShares string, k record.Key, metric string, from ...analysis.Cell) tableCell {
	ac := analysis.Val(v)
	for _, f := range from {
		if !f.OK() {
			ac = analysis.Stated(f.State)
			ac.Why = f.Why
			break
		}
		ac.Running = math.Min(ac.Running, f.Running)
		ac.Partial = ac.Partial || f.Partial
		ac.Estimated = ac.Estimated || f.Estimated
	}
	if ac.OK() && (math.IsNaN(v) || math.IsInf(v, 0)) {
		ac = analysis.NoValue(analysis.WhyInfRatio)
		if noShares != "" {
			ac = analysis.NoValue(noShares)
		}
	}
	return tableCell{Cell: ac, Text: cellText(ac, fmtShare, textNone), Version: k.Version, Step: k.Step, Metric: metric, format: fmtShare}
}

func (b *builder) attribution(scopes []analysis.Scope, emit func(*table)) {
	for _, sc := range scopes {
		for _, v := range b.others() {
			t := b.newTable(tableAttribution, "Where the throughput change comes from: "+v, sc)
			t.Version = v
			t.Preamble = []string{"Relative to: " + b.c.Base, "Version: " + v}
			t.Header = []string{"rQPS", "r(cpu/o)", "r(instr/o)", "r(CPI)", "code", "memory", "rest", "wait", topDownHeader, "verdict"}
			hasTopDown := false
			var steps []string
			for _, s := range b.stepsIn(sc, false) {
				if b.c.Has(analysis.Key(sc, v, s)) {
					steps = append(steps, s)
				}
			}
			b.grouped(t)
			t.Sections = b.sections(steps, func(step string) row {
				k := analysis.Key(sc, v, step)
				t.addRatioKeys(k, b.c.BaseKey(k))
				a := b.c.Attribute(k)
				row := row{Label: step, Cells: newCells(10)}
				q := ratioCell(a.RQPS, fmtRatio, k, analysis.OpsPerSecond)
				b.markBelow(&q, k, b.c.BaseKey(k))
				row.Cells = append(row.Cells,
					q,
					ratioCell(a.RCPU, fmtRatio, k, analysis.CPUPerOp),
					ratioCell(a.RInstructions, fmtRatio, k, analysis.PerOpName("instructions")),
					ratioCell(a.RCPI, fmtRatio, k, analysis.CPI),
					shareCell(a.Code, a.NoShares, k, "share:code", a.RQPS, a.RInstructions),
					shareCell(a.Memory, a.NoShares, k, "share:memory", a.RQPS, a.RCPI),
					shareCell(a.Rest, a.NoShares, k, "share:rest", a.RQPS, a.RInstructions, a.RCPI),
					shareCell(a.Wait, a.NoShares, k, "share:wait", a.RQPS, a.RCPU),
					topDownCell(a.TopDown, k),
					tableCell{Cell: analysis.Stated(analysis.Missing), Text: string(a.Verdict), Version: v, Step: step, Metric: "verdict", word: true},
				)
				hasTopDown = hasTopDown || a.TopDown.Set != ""
				return row
			})
			t.Notes = []string{
				"ln(1/rQPS) = ln r(instr/o) + ln r(CPI) + ln r(rest); code, memory and rest are each term's share of ln(1/rQPS); wait is the share not explained by CPU per operation, 1 − ln r(cpu/o) / ln(1/rQPS)",
				fmt.Sprintf("verdict: none when rQPS is within %.2f–%.3f or not significantly different; code, memory or wait when that share is the largest and at least %.0f%%; cpu when only CPU per operation was measured and explains at least %.0f%%; n/a when rQPS, or too few ratios to split the whole change (instructions and CPI, or CPU per operation), were measured; mixed otherwise", math.Exp(-analysis.NoChange), math.Exp(analysis.NoChange), 100*analysis.Dominant, 100*analysis.Dominant),
			}
			if hasTopDown {
				t.Notes = append(t.Notes, topDownNote)
			} else {
				dropTopDownColumn(t)
			}
			if n, of := singleWindowVerdicts(t); n > 0 {
				what := fmt.Sprintf("%d of the %d verdicts rest", n, of)
				if n == of {
					what = "every verdict rests"
					if n == 1 {
						what = "the verdict rests"
					}
				}
				t.singleWindowNoted = true
				t.Notes = append(t.Notes, what+" on a single window of the version or the base: its rQPS was not tested for "+
					"significance, so the change it explains may be noise; with at least 4 repeats per version a verdict says none when the change is not significant")
			}
			emit(t)
		}
	}
}

// singleWindowVerdicts counts the attribution rows with a verdict other
// than n/a whose rQPS comes from fewer than 2 repeats on either side.
func singleWindowVerdicts(t *table) (n, of int) {
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			if len(r.Cells) == 0 {
				continue
			}
			v := r.Cells[len(r.Cells)-1]
			if v.Text == string(analysis.VerdictNA) {
				continue
			}
			of++
			if q := r.Cells[0]; q.OK() && q.FewRepeats && !q.Tested {
				n++
			}
		}
	}
	return n, of
}

func (b *builder) correlation(scopes []analysis.Scope, emit func(*table)) {
	metrics := append(append([]string(nil), b.c.CounterMetrics()...), analysis.CPUIOMetrics[1:]...)
	for _, sc := range scopes {
		for _, v := range b.others() {
			t := b.newTable(tableCorrelation, "Counters ranked by how their ratio tracks 1/rQPS: "+v, sc)
			t.Version = v
			t.Header = []string{"rho", "steps"}
			t.LabelHeader = "metric"
			sec := section{}
			var mux []string
			ns := map[int]bool{}
			untested, est := 0, false
			for _, cr := range b.c.Correlate(sc, v, metrics) {
				if cr.N == 0 {
					continue
				}
				rho := analysis.Val(cr.Rho)
				if math.IsNaN(cr.Rho) {
					rho = analysis.NoValue(analysis.WhyFewSteps)
				} else {
					ns[cr.N] = true
					untested = max(untested, cr.Untested)
				}
				rho.Estimated = rho.OK() && cr.Estimated
				est = est || rho.Estimated
				if cr.Multiplexed {
					mux = append(mux, cr.Metric)
				}
				n := analysis.Val(float64(cr.N))
				sec.Rows = append(sec.Rows, row{Label: cr.Metric, Cells: []tableCell{
					{Cell: rho, Text: cellText(rho, fmtRatio, textNone), Version: v, Metric: "rho:" + cr.Metric, format: fmtRatio},
					{Cell: n, Text: cellText(n, fmtInt, textNone), Version: v, Metric: "steps:" + cr.Metric, format: fmtInt},
				}})
			}
			for _, s := range b.stepsIn(sc, false) {
				k := analysis.Key(sc, v, s)
				t.addRatioKeys(k, b.c.BaseKey(k))
			}
			t.Sections = []section{sec}
			t.Notes = []string{"rho: Spearman rank correlation, across the steps of this version, of the metric's ratio to the " +
				"base with 1/rQPS; near 1 the metric grows where throughput drops; steps: how many steps rho rests on"}
			if few := chanceNote(ns); few != "" {
				t.Notes = append(t.Notes, few)
			}
			if untested > 0 {
				t.Notes = append(t.Notes, fmt.Sprintf("on up to %d of the steps behind a rho, the ratios come from a single window "+
					"of the version or the base: not tested for significance, each carries that window's noise", untested))
			}
			if len(mux) > 0 {
				t.Notes = append(t.Notes, "some ratios behind these used multiplexed counters: "+strings.Join(mux, ", "))
			}
			emit(t)
		}
	}
}

// chanceNote says how often |rho| = 1 comes out by chance with the step
// counts of a correlation table, for those below 7 steps (where it is at
// least 1 in 2,520).
func chanceNote(ns map[int]bool) string {
	var counts []int
	for n := range ns {
		if n < 7 {
			counts = append(counts, n)
		}
	}
	if len(counts) == 0 {
		return ""
	}
	sort.Ints(counts)
	var parts []string
	for _, n := range counts {
		parts = append(parts, fmt.Sprintf("1 in %.0f with %d steps", 1/analysis.ChanceOfPerfect(n), n))
	}
	return "few steps say little: with no relation at all, |rho| = 1 comes out by chance " + strings.Join(parts, ", ") + " (2 of the n! orderings of n steps)"
}

func (b *builder) roles(scopes []analysis.Scope, emit func(*table)) {
	// The metric names of a role's cells, made once for the tables of
	// every step and version: roles and events are few, tables many.
	type roleEvent struct{ role, event string }
	names := map[roleEvent]string{}
	metric := func(role, event string) string {
		n, ok := names[roleEvent{role, event}]
		if !ok {
			n = analysis.RoleMetric(role, event)
			names[roleEvent{role, event}] = n
		}
		return n
	}
	for _, sc := range scopes {
		for _, step := range b.stepsIn(sc, false) {
			for _, v := range b.c.Versions {
				k := analysis.Key(sc, v, step)
				s := b.c.Sample(k)
				if s == nil {
					continue
				}
				// A Sample's roles and events are a handful: a list
				// is searched faster than a map is made.
				var roles, events []string
				for _, r := range s.Records {
					for i := range r.Roles {
						role := &r.Roles[i] // not copied: read in place
						if !slices.Contains(roles, role.Name) {
							roles = append(roles, role.Name)
						}
						for j := range role.Counters {
							if e := role.Counters[j].Event; !slices.Contains(events, e) {
								events = append(events, e)
							}
						}
					}
				}
				if len(roles) == 0 {
					continue
				}
				t := b.newTable(tableRoles, "Share of each counter by thread role: "+v+" "+step, sc)
				t.Version, t.Step = v, step
				t.Header = append([]string{"threads"}, events...)
				t.LabelHeader = "role"
				sec := section{Rows: make([]row, 0, len(roles))}
				for _, role := range roles {
					row := row{Label: role, Cells: newCells(1 + len(events))}
					row.Cells = append(row.Cells, b.value(t, k, metric(role, "threads"), fmtInt, ""))
					for _, e := range events {
						row.Cells = append(row.Cells, b.value(t, k, metric(role, e), fmtRoleShare, ""))
					}
					sec.Rows = append(sec.Rows, row)
				}
				t.Sections = []section{sec}
				t.Notes = []string{"each counter's share of the server's total by thread role; unattributed: threads that came and " +
					"went between reads, counted through inheritance"}
				emit(t)
			}
		}
	}
}

// fmtRoleShare prints a role's share of a counter (a fraction) as a
// percentage with one decimal.
func fmtRoleShare(x float64) string { return fmtPct(100 * x) }

// insertThroughputMetric is queries/s for steps that ran queries, else
// inserts/s.
func (b *builder) insertThroughputMetric(sc analysis.Scope, step string) string {
	for _, v := range b.c.Versions {
		if s := b.c.Sample(analysis.Key(sc, v, step)); s != nil {
			for _, r := range s.Records {
				if analysis.InsertQueries(r) {
					return "qps"
				}
			}
		}
	}
	return "ips"
}

func (b *builder) insertVersions(sc analysis.Scope, steps []string) []string {
	var out []string
	for _, v := range b.c.Versions {
		for _, s := range steps {
			if b.c.Has(analysis.Key(sc, v, s)) {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

func (b *builder) insert(rel bool, scopes []analysis.Scope, emit func(*table)) {
	for _, sc := range scopes {
		steps := b.stepsIn(sc, true)
		if len(steps) == 0 {
			continue
		}
		title, id := "Insert benchmark: throughput", tableInsert
		if rel {
			title, id = "Insert benchmark: throughput relative to the base", tableInsertRel
		}
		t := b.newTable(id, title, sc)
		t.Relative = rel
		if rel {
			t.Preamble = []string{"Relative to: " + b.c.Base}
		}
		t.Header = steps
		t.LabelHeader = "dbms"
		sec := section{}
		ignored := false
		for _, v := range b.insertVersions(sc, steps) {
			if rel && v != b.c.Base && !slices.Contains(b.others(), v) {
				continue
			}
			row := row{Label: v}
			for _, s := range steps {
				m := b.insertThroughputMetric(sc, s)
				k := analysis.Key(sc, v, s)
				switch {
				case !rel:
					c := b.value(t, k, m, fmtInt, "insert|"+sc.Host+"|"+strconv.Itoa(sc.Threads)+"|"+s)
					if m == "qps" && c.OK() && b.belowTarget(k) {
						// Queries ran with fewer inserts than the step
						// asks for: the rate can be ignored, and does not
						// set the colour quartiles of the others.
						c.BelowTarget, c.Class, c.set = true, "grey", ""
						c.Text += textBelowTarget
						ignored = true
					}
					row.Cells = append(row.Cells, c)
				default:
					var c tableCell
					if v == b.c.Base {
						t.addKey(k)
						base := b.c.Value(k, m)
						one := analysis.Ratio(base, base)
						one.FewRepeats = false // the base against itself: nothing to test
						c = ratioCell(one, fmtRatio, k, m)
					} else {
						c = b.ratio(t, k, m, fmtRatio)
					}
					// A ratio of queries/s where the version or the base
					// did not sustain the target insert rate compares
					// rates that can be ignored: marked, grey, never
					// painted better or worse.
					if m == "qps" && c.OK() && (b.belowTarget(k) || b.belowTarget(b.c.BaseKey(k))) {
						c.BelowTarget, c.Class = true, "grey"
						c.Text += textBelowTarget
						ignored = true
					}
					row.Cells = append(row.Cells, c)
				}
			}
			sec.Rows = append(sec.Rows, row)
		}
		t.Sections = []section{sec}
		t.Notes = []string{"inserts/s for load steps (l.*; rows indexed/s for index creation), queries/s for steps that run queries"}
		switch {
		case ignored && rel:
			t.Notes = append(t.Notes, fmt.Sprintf("%s: the version or the base did not sustain the step's target insert rate "+
				"(inserts/s below %.0f%% of it, see the insert-target table): the ratio of their queries/s can be ignored; grey in "+
				"HTML, never yellow or blue", textBelowTarget, 100*record.TargetFraction))
		case ignored:
			t.Notes = append(t.Notes, fmt.Sprintf("%s: the version did not sustain the step's target insert rate (inserts/s "+
				"below %.0f%% of it, see the insert-target table): its queries/s can be ignored; grey in HTML and left out of the "+
				"colour quartiles", textBelowTarget, 100*record.TargetFraction))
		}
		emit(t)
	}
}

// belowTarget reports whether the version of k fell below 95% of its
// target insert rate on the step (medians over repeats).
func (b *builder) belowTarget(k record.Key) bool {
	ips, target := b.c.Value(k, "ips"), b.c.Value(k, analysis.TargetIPS)
	return ips.OK() && target.OK() && record.BelowTarget(ips.Value, target.Value)
}

// insertTarget is the average inserts/s of each version on the steps that
// limit inserts to a target rate (read+write steps, which run queries at
// the same time), with a last row of the targets.
func (b *builder) insertTarget(scopes []analysis.Scope, emit func(*table)) {
	for _, sc := range scopes {
		var steps []string
		for _, s := range b.stepsIn(sc, true) {
			for _, v := range b.c.Versions {
				if b.c.Value(analysis.Key(sc, v, s), analysis.TargetIPS).OK() {
					steps = append(steps, s)
					break
				}
			}
		}
		if len(steps) == 0 {
			continue
		}
		t := b.newTable(tableInsertTarget, "Insert benchmark: inserts/s of the steps with a target insert rate", sc)
		t.Header = steps
		t.LabelHeader = "dbms"
		versions := b.insertVersions(sc, steps)
		sec := section{}
		missed := false
		for _, v := range versions {
			row := row{Label: v}
			for _, s := range steps {
				k := analysis.Key(sc, v, s)
				c := b.value(t, k, "ips", fmtInt, "")
				if c.OK() && b.belowTarget(k) {
					c.BelowTarget, c.Class = true, "red"
					c.Text += textBelowTarget
					missed = true
				}
				row.Cells = append(row.Cells, c)
			}
			sec.Rows = append(sec.Rows, row)
		}
		target := row{Label: "target"}
		for _, s := range steps {
			target.Cells = append(target.Cells, b.targetCell(sc, versions, s))
		}
		sec.Rows = append(sec.Rows, target)
		t.Sections = []section{sec}
		t.Notes = []string{"average inserts/s over each step, which ran queries while inserting at a limited rate (the " +
			"queries/s are in the insert table); target: the rate the step's writers were limited to, summed over clients"}
		if missed {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: below %.0f%% of the target: the version did not sustain the step's insert "+
				"rate (red in HTML)", textBelowTarget, 100*record.TargetFraction))
		}
		emit(t)
	}
}

// targetCell is the target insert rate of a step: the one every version
// that ran it had, or not computable when they differ (each version's
// cell is compared with its own target).
func (b *builder) targetCell(sc analysis.Scope, versions []string, step string) tableCell {
	var seen []string
	var value float64
	n := 0
	for _, v := range versions {
		tc := b.c.Value(analysis.Key(sc, v, step), analysis.TargetIPS)
		if !tc.OK() {
			continue
		}
		seen = append(seen, fmt.Sprintf("%s %s", v, fmtInt(tc.Value)))
		if n > 0 && tc.Value != value {
			n = -1
		}
		if n >= 0 {
			value, n = tc.Value, n+1
		}
	}
	ac := analysis.Stated(analysis.Missing)
	switch {
	case n > 0:
		ac = analysis.Val(value)
	case n < 0:
		ac = analysis.NoValue("versions ran " + step + " with different targets (" + strings.Join(seen, ", ") + "); each is compared with its own")
	}
	return tableCell{Cell: ac, Text: cellText(ac, fmtInt, textNone), Step: step, Metric: analysis.TargetIPS, format: fmtInt}
}

// insertColumnFormat is the format of each column of the insert-benchmark
// metrics line.
var insertColumnFormat = map[string]numFormat{
	"ips": fmtInt, "qps": fmtInt, "rps": fmtInt, "rmbps": fixed(1), "wps": fixed(1), "wmbps": fixed(1),
	"rpq": fixed(3), "rkbpq": fixed(3), "wpi": fixed(3), "wkbpi": fixed(3), "csps": fmtInt, "cpups": fixed(1),
	"cspq": fixed(3), "cpupq": fmtInt, "dbgb1": fixed(1), "dbgb2": fixed(1), "rss": fixed(1), "maxop": fixed(3),
	"p50": fmtInt, "p99": fmtInt,
}

func (b *builder) insertLine(scopes []analysis.Scope, emit func(*table)) {
	for _, sc := range scopes {
		for _, step := range b.stepsIn(sc, true) {
			t := b.newTable(tableInsertLine, "Insert benchmark metrics: "+step, sc)
			t.Step, t.pad = step, padNone
			t.Header = analysis.InsertColumns
			t.LabelHeader = "tag"
			sec := section{}
			for _, v := range b.insertVersions(sc, []string{step}) {
				k := analysis.Key(sc, v, step)
				row := row{Label: v}
				for _, m := range analysis.InsertColumns {
					c := b.value(t, k, m, insertColumnFormat[m], "")
					if c.State == analysis.Missing {
						c.Text = "NA"
					}
					row.Cells = append(row.Cells, c)
				}
				sec.Rows = append(sec.Rows, row)
			}
			t.Sections = []section{sec}
			t.Notes = []string{"ips, qps: inserts and queries per second; rps, wps: storage reads and writes per second; rmbps, " +
				"wmbps: MB/s read and written; rpq, rkbpq: reads and KB read per operation (per query when the step runs queries, " +
				"else per insert); wpi, wkbpi: writes and KB written per insert; csps, cspq: context switches per second and per " +
				"operation; cpups: server CPU as % of all CPUs; cpupq: µs of server CPU per operation; dbgb1, dbgb2: database and " +
				"data-directory size, GB; rss: server RSS, GB; maxop: slowest operation, s; p50, p99: per-interval rates; NA: not recorded"}
			emit(t)
		}
	}
}

// kindTitle names a kind of operation at the start of a title.
var kindTitle = map[string]string{record.OpQuery: "Query", record.OpInsert: "Insert", record.OpDelete: "Delete"}

// insertHist is one response-time histogram per step and kind of
// operation (query, insert, delete) that the step's Records have.
func (b *builder) insertHist(scopes []analysis.Scope, emit func(*table)) {
	for _, sc := range scopes {
		for _, step := range b.stepsIn(sc, true) {
			for _, kind := range analysis.HistogramKinds {
				t := b.newTable(tableInsertHist, kindTitle[kind]+" response time histogram: "+step, sc)
				t.Step, t.pad = step, padNone
				for _, bk := range record.InsertBuckets {
					t.Header = append(t.Header, bk.Name)
				}
				t.Header = append(t.Header, "max")
				t.LabelHeader = "tag"
				sec := section{}
				for _, v := range b.insertVersions(sc, []string{step}) {
					k := analysis.Key(sc, v, step)
					row := row{Label: v}
					for _, bk := range record.InsertBuckets {
						c := b.value(t, k, analysis.KindHistogramMetric(kind, bk.Name), fmtHist, "")
						c.better = 0
						row.Cells = append(row.Cells, c)
					}
					row.Cells = append(row.Cells, b.value(t, k, analysis.MaxMetric(kind), fixed(3), "hist-max|"+sc.Host+"|"+strconv.Itoa(sc.Threads)+"|"+step+"|"+kind))
					sec.Rows = append(sec.Rows, row)
				}
				t.Sections = []section{sec}
				t.Notes = []string{"each cell is the percentage of " + kind + " operations that took at most the column's time and " +
					"more than the previous column's; gt: more than 16 s; nonzero: more than 0 but less than 0.0005%; max: slowest " + kind + ", s"}
				emit(t)
			}
		}
	}
}
