package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/record"
)

// Colour rules. Relative cells (ratios to the base) are yellow when the
// version is worse than the base by more than 5% and blue when it is better
// by more than 5%: for a metric where higher is better (o/s, QPS, IPC)
// below relativeLow is yellow and above relativeHigh blue, the design's rule
// taken from the insert-benchmark report, whose relative values are all
// throughputs; for a metric where lower is better (cpu/o, r/o, counters per
// op, CPI) the same thresholds swap colours, so yellow always means worse.
// Among the absolute cells compared together (the versions of one step and
// metric), those in the bottom quarter of the range between the smallest
// and largest are red when higher is better (green when lower is better)
// and those in the top quarter green (red), except that red is not used
// when the smallest is at least 80% of the largest.
const (
	relativeLow  = 0.95
	relativeHigh = 1.05
	quartile     = 0.25
	redSuppress  = 0.8
)

// colourRanges holds, for each set of absolute cells compared together,
// the range of their values and how many there are: the quartile rule
// needs every table of the report before it colours any.
type colourRanges map[string]*colourRange

type colourRange struct {
	lo, hi float64
	n      int
}

// colourable reports whether a cell takes part in the colour rules.
func colourable(c *tableCell) bool {
	return !c.Empty && !c.word && c.OK() && !math.IsInf(c.Value, 0) && !math.IsNaN(c.Value) && !c.BelowTarget
}

// add takes the absolute cells of t into the ranges.
func (cr colourRanges) add(t *table) {
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			for ci := range r.Cells {
				c := &r.Cells[ci]
				if !colourable(c) || c.rel || c.set == "" || c.better == 0 {
					continue
				}
				g := cr[c.set]
				if g == nil {
					g = &colourRange{lo: math.Inf(1), hi: math.Inf(-1)}
					cr[c.set] = g
				}
				g.lo, g.hi, g.n = math.Min(g.lo, c.Value), math.Max(g.hi, c.Value), g.n+1
			}
		}
	}
}

// colour sets the HTML class of the cells of t by the rules above, the
// absolute ones against the ranges of every table of the report.
func (cr colourRanges) colour(t *table) {
	for si := range t.Sections {
		for ri := range t.Sections[si].Rows {
			row := &t.Sections[si].Rows[ri]
			for ci := range row.Cells {
				c := &row.Cells[ci]
				if !colourable(c) {
					continue
				}
				if c.rel {
					worse, better := c.Value < relativeLow, c.Value > relativeHigh
					if c.better < 0 {
						worse, better = better, worse
					}
					if worse {
						c.Class = "yellow"
					} else if better {
						c.Class = "blue"
					}
					continue
				}
				g := cr[c.set]
				if c.set == "" || c.better == 0 || g == nil || g.n < 2 || g.hi == g.lo {
					continue
				}
				noRed := g.lo >= redSuppress*g.hi
				span := g.hi - g.lo
				bottom := c.Value <= g.lo+quartile*span
				top := c.Value >= g.hi-quartile*span
				good, bad := top, bottom
				if c.better < 0 {
					good, bad = bottom, top
				}
				switch {
				case good:
					c.Class = "green"
				case bad && !noRed:
					c.Class = "red"
				}
			}
		}
	}
}

// tested reports whether any cell of t was tested for significance
// against the base.
func (t *table) tested() bool {
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			for _, c := range r.Cells {
				if c.OK() && c.Tested {
					return true
				}
			}
		}
	}
	return false
}

// finish adds the notes of a table: the markers its cells use, statistics,
// and the warnings of the Records behind it that concern its columns. When
// some ratio of the report was tested, ratios that could not be are marked
// "?" first; when none was, a note says which ratios rest on a single
// repeat, since no "?" marks them.
func (b *builder) finish(t *table) {
	// The notes read the keys as a set, in this order.
	t.keys = uniqueKeys(t.keys)
	m := b.marks(t)
	notes := b.scopeNotes(t)
	notes = append(notes, b.statNotes(t, m)...)
	notes = append(notes, m.markerNotes(t)...)
	t.Notes = append(t.Notes, notes...)
	if !b.c.Remarks() {
		return // no Record has a warning or a note for the table to say
	}
	topics, events := concerns(t)
	keys := t.keys
	groups, windows := b.warningGroups(keys, topics, events)
	if len(groups) == 0 {
		t.Notes = append(t.Notes, b.c.Warnings(keys, topics, events)...)
		return
	}
	grouped := map[record.Code]bool{}
	for _, g := range groups {
		grouped[g.code] = true
	}
	t.Notes = append(t.Notes, b.c.WarningsExcept(keys, topics, events, func(w record.Warning) bool { return grouped[w.Code] })...)
	for _, g := range groups {
		t.Notes = append(t.Notes, g.note(windows))
	}
	t.WindowNotes = b.c.Warnings(keys, topics, events)
}

// groupWarnings is how many different texts the warnings of one code may
// have under a table (each its own note, the windows of a text named in
// it) before the table says them in one note for the code instead.
const groupWarnings = 3

// warningGroup is the windows of a table that carry a warning of one code,
// and the different texts of those warnings.
type warningGroup struct {
	code    record.Code
	windows []warnedWindow
	texts   []string
}

// warnedWindow is one window (a Record: a repeat of a step) and the text
// of its first warning of the group's code.
type warnedWindow struct {
	key    record.Key
	repeat int
	text   string
}

// warningGroups returns, in the order their codes first appear, the codes
// of the Records' warnings that concern the table and have more than
// groupWarnings different texts there, with the windows that carry them;
// and how many windows the table rests on.
func (b *builder) warningGroups(keys []record.Key, topics analysis.Topic, events []string) ([]*warningGroup, int) {
	var all []*warningGroup
	byCode := map[record.Code]*warningGroup{}
	windows := 0
	for _, k := range keys {
		s := b.c.Sample(k)
		if s == nil {
			continue
		}
		windows += len(s.Records)
		for _, r := range s.Records {
			if len(r.Warnings) == 0 {
				continue // most windows: nothing to make a set for
			}
			seen := map[record.Code]bool{}
			for _, w := range r.Warnings {
				if !analysis.ClassifyWarning(w).Concerns(topics, events) {
					continue
				}
				g := byCode[w.Code]
				if g == nil {
					g = &warningGroup{code: w.Code}
					byCode[w.Code] = g
					all = append(all, g)
				}
				if !slices.Contains(g.texts, w.Text) {
					g.texts = append(g.texts, w.Text)
				}
				if !seen[w.Code] {
					seen[w.Code] = true
					g.windows = append(g.windows, warnedWindow{k, r.Repeat, w.Text})
				}
			}
		}
	}
	var out []*warningGroup
	for _, g := range all {
		if len(g.texts) > groupWarnings {
			out = append(out, g)
		}
	}
	return out, windows
}

// note says the group in one line: the code, how many of the table's
// windows carry it and which, and the first window's text in full.
func (g *warningGroup) note(windows int) string {
	which := "every window"
	if len(g.windows) < windows {
		var versions, steps, hosts, threads []string
		add := func(list *[]string, s string) {
			if !slices.Contains(*list, s) {
				*list = append(*list, s)
			}
		}
		for _, w := range g.windows {
			add(&versions, w.key.Version)
			add(&steps, w.key.Step)
			if w.key.Host != "" {
				add(&hosts, "host "+w.key.Host)
			}
			if w.key.Threads > 0 {
				add(&threads, plural(w.key.Threads, "thread"))
			}
		}
		which = strings.Join(versions, ", ") + ": " + strings.Join(steps, ", ")
		if scope := append(hosts, threads...); len(scope) > 0 {
			which += " (" + strings.Join(scope, ", ") + ")"
		}
	}
	first := g.windows[0]
	return fmt.Sprintf("warning %s in %d of the %d windows (%s); the first, %s: %s",
		g.code, len(g.windows), windows, which, describeWindow(first.key, first.repeat), first.text)
}

// describeWindow names one window as the notes of single warnings do:
// "a2 (host vm, 1 thread) point-query_range=100 repeat 1".
func describeWindow(k record.Key, repeat int) string {
	var scope []string
	if k.Host != "" {
		scope = append(scope, "host "+k.Host)
	}
	if k.Threads > 0 {
		scope = append(scope, plural(k.Threads, "thread"))
	}
	name := k.Version
	if len(scope) > 0 {
		name += " (" + strings.Join(scope, ", ") + ")"
	}
	return fmt.Sprintf("%s %s repeat %d", name, k.Step, repeat)
}

// tableMarks is what the cells of a table show that its notes explain.
type tableMarks struct {
	mux, na, nc, missing, failed, partial, inf, ci, noCI, same, untested, bothZero, estimated, short bool
	// disagree and maxReached: throughput cells marked d and m.
	disagree, maxReached bool
	// below: throughput cells marked "!" (an insert step below its
	// target insert rate).
	below bool
	// whys are the reasons of the cells not computable.
	whys []string
	// few lists the repeat counts (version, base) of tested ratios with
	// which the test cannot reach significance at all.
	few [][2]int
	// tested counts the tested cells; repeats is set when some cell is a
	// median of repeats.
	tested  int
	repeats bool
	// ratios counts the ratio cells with a value; unmarked those of them
	// from a single repeat that carry no "?" (no ratio of the report was
	// tested, so "?" would be on every one of them).
	ratios, unmarked int
	// paired are the modes of the ratios of versions measured together
	// (duet, slices); minPairs and maxPairs the fewest and most rounds one
	// of them pairs; pairedUntested and pairedDisagree are set when one
	// is marked "?" (a single pair) or d (its rounds disagree).
	paired                         []analysis.PairMode
	minPairs, maxPairs             int
	pairedUntested, pairedDisagree bool
}

// marks goes through the cells of t, marking "?" on the untested ratios
// when some ratio of the report was tested.
func (b *builder) marks(t *table) *tableMarks {
	m := &tableMarks{}
	for si := range t.Sections {
		for ri := range t.Sections[si].Rows {
			row := &t.Sections[si].Rows[ri]
			for j := range row.Cells {
				if c := &row.Cells[j]; !c.Empty && !c.word {
					b.mark(m, t, row, c)
				}
			}
		}
	}
	return m
}

// mark adds what cell c of row shows to m.
func (b *builder) mark(m *tableMarks, t *table, row *row, c *tableCell) {
	switch c.State {
	case analysis.NotSupported:
		m.na = true
	case analysis.NotCounted:
		m.nc = true
	case analysis.Missing:
		m.missing = true
	case analysis.NotComputable:
		if !contains(m.whys, c.Why) {
			m.whys = append(m.whys, c.Why)
		}
	case analysis.Failed:
		m.failed = true
	}
	if !c.OK() {
		return
	}
	m.below = m.below || c.BelowTarget
	paired := c.Paired != analysis.NotPaired
	if t.ID != tableLegacy && c.rel && row.Kind == rowValues {
		m.ratios++
		// A paired ratio from a single round is marked whatever the
		// others: it is no repeat that more of would have been tested.
		if c.FewRepeats && !c.Tested && c.format != nil {
			if b.tested || paired {
				c.Text = markedText(c.Cell, c.format, textNone, true)
				if c.BelowTarget {
					c.Text += textBelowTarget
				}
				m.untested = m.untested || !paired
				m.pairedUntested = m.pairedUntested || paired
			} else {
				m.unmarked++
			}
		}
	}
	m.mux = m.mux || c.Multiplexed()
	m.partial = m.partial || c.Partial
	m.inf = m.inf || math.IsInf(c.Value, 0)
	m.bothZero = m.bothZero || (c.BothZero && c.Value == 1)
	m.estimated = m.estimated || c.Estimated
	m.maxReached = m.maxReached || c.MaxReached
	if paired {
		m.markPaired(c)
		return
	}
	m.disagree = m.disagree || c.Disagree
	if c.N >= 2 {
		m.repeats = true
		if c.HasCI() {
			m.ci = true
		} else {
			m.noCI = true
		}
	}
	if c.Tested {
		m.tested++
		m.same = m.same || c.Same
		if p := analysis.SmallestP(c.N, c.BaseN); p >= b.alpha() && !slices.Contains(m.few, [2]int{c.N, c.BaseN}) {
			m.few = append(m.few, [2]int{c.N, c.BaseN})
		}
	}
	m.short = m.short || c.Short()
}

// markPaired adds a ratio of versions measured together to m: its mode,
// its count of pairs, and its test (none of the repeats' statistics).
func (m *tableMarks) markPaired(c *tableCell) {
	if !slices.Contains(m.paired, c.Paired) {
		m.paired = append(m.paired, c.Paired)
	}
	if m.maxPairs == 0 { // the first (every paired ratio has a pair)
		m.minPairs = c.N
	}
	m.minPairs, m.maxPairs = min(m.minPairs, c.N), max(m.maxPairs, c.N)
	if c.Tested {
		m.tested++
	}
	m.pairedDisagree = m.pairedDisagree || c.Disagree
	m.short = m.short || c.Short()
}

// scopeNotes say what the table's rows cover: scan steps' operations,
// steps the base did not run, the device of r/o and w/o.
func (b *builder) scopeNotes(t *table) []string {
	var notes []string
	switch t.ID {
	case tableCPUIO, tableCPUIORel, tableCounters, tableCountersRel, tableLegacy, tableAttribution:
		if !b.opt.Analysis.KeepScanOps && t.hasRow(analysis.IsScan) {
			notes = append(notes, "scan steps: an operation is 1,000 rows read when the Record has a rows-read status")
		}
	}
	switch t.ID {
	case tableQPS, tableThreads:
		if b.slicesShown(t) {
			notes = append(notes, "o/s of versions measured in slices: over the slices in which each one's load ran (the others stopped)")
		}
	}
	switch t.ID {
	case TableRQPS, tableQPS, tableThreads, tableAverage:
		if scans := b.scanSteps(t); len(scans) > 0 {
			notes = append(notes, fmt.Sprintf("%s: o/s is thousands of rows read per second, not queries per second: an "+
				"operation of a scan step is 1,000 rows read (--keep-scan-ops counts queries)", strings.Join(scans, ", ")))
		}
	case tableSummary:
		if scans := b.scanSteps(t); len(scans) > 0 {
			notes = append(notes, fmt.Sprintf("%s: the rQPS that enters the means (and the regressions) is a ratio of rows read per second, not of queries per second: an operation of a scan step is 1,000 rows read (--keep-scan-ops counts queries)", strings.Join(scans, ", ")))
		}
	}
	switch t.ID {
	case TableRQPS, tableQPS, tableThreads, tableAverage, tableSummary, tableCPUIO, tableCPUIORel, tableAttribution:
		inserts, queries := b.insertSteps(t)
		if len(inserts) > 0 {
			notes = append(notes, fmt.Sprintf("%s: insert benchmark: an operation is an insert (a row indexed, for index creation): o/s is inserts per second, not queries", strings.Join(inserts, ", ")))
		}
		if len(queries) > 0 {
			notes = append(notes, fmt.Sprintf("%s: insert benchmark: an operation is a query, run while inserting (see the insert tables): o/s is queries per second", strings.Join(queries, ", ")))
		}
	}
	if t.Relative {
		if steps := b.baseMissing(t); len(steps) > 0 {
			notes = append(notes, fmt.Sprintf("the base (%s) did not run %s: no ratio to it there", b.c.Base, strings.Join(steps, ", ")))
		}
	}
	if dev := b.deviceNote(t); dev != "" {
		notes = append(notes, dev)
	}
	return notes
}

// statNotes explain the statistics of the cells: medians, intervals,
// significance and what the repeats allow.
func (b *builder) statNotes(t *table, m *tableMarks) []string {
	notes := b.pairedNotes(t, m)
	if m.repeats {
		notes = append(notes, "values are medians over repeats")
	}
	if m.ci {
		notes = append(notes, "±x%: half-width of the 95% confidence interval of the median, relative to the value")
	}
	if m.noCI {
		notes = append(notes, "no confidence interval is shown for cells with fewer than 6 repeats: too few for a 95% interval of the median")
	}
	if m.same {
		notes = append(notes, fmt.Sprintf("~: not significantly different from the base (Mann-Whitney U test, p >= %.2g)", b.alpha()))
	}
	if m.untested {
		notes = append(notes, "?: from a single repeat of the version or the base: cells from a single repeat are not tested "+
			"for significance, so a ratio without ~ is not shown to differ from the base")
	}
	if m.unmarked > 0 && !t.singleWindowNoted {
		what := fmt.Sprintf("%d of the %d ratios rest", m.unmarked, m.ratios)
		if m.unmarked == m.ratios {
			what = "every ratio rests"
			if m.ratios == 1 {
				what = "the ratio rests"
			}
		}
		notes = append(notes, what+" on a single repeat (one window) of the version or the base: not tested for significance; "+
			"run at least 4 repeats per version to get ~ (6 for ±x% intervals)")
	}
	if len(m.few) > 0 {
		slices.SortFunc(m.few, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
		var pairs, ps []string
		for _, f := range m.few {
			pairs = append(pairs, fmt.Sprintf("%d against %d", f[0], f[1]))
			ps = append(ps, fmt.Sprintf("%.2g", analysis.SmallestP(f[0], f[1])))
		}
		notes = append(notes, fmt.Sprintf("with %s repeats (version against base) no difference can be significant at α = "+
			"%.2g: the smallest p-value the test can give is %s; 4 repeats of each can reach it",
			strings.Join(pairs, " or "), b.alpha(), strings.Join(ps, ", ")))
	}
	if n := float64(m.tested); n*b.alpha() >= 0.5 {
		notes = append(notes, fmt.Sprintf("%d comparisons to the base at α = %.2g: about %.1f of them are expected to look "+
			"significant by chance alone", m.tested, b.alpha(), n*b.alpha()))
	}
	return notes
}

// pairedNotes explain the ratios of versions measured together: each
// mode's measuring, the statistic, the turns left out. A line each, as
// the cells' markers are explained (no line over 160 characters).
func (b *builder) pairedNotes(t *table, m *tableMarks) []string {
	var notes []string
	// A mixed ratio pairs the turns of both modes: both are explained.
	mixed := slices.Contains(m.paired, analysis.PairedMixed)
	if mixed || slices.Contains(m.paired, analysis.PairedDuet) {
		notes = append(notes, "duet: the versions ran at once, each on CPUs of its own, swapped every slice; a turn: every version once on every set of CPUs")
	}
	if mixed || slices.Contains(m.paired, analysis.PairedSlices) {
		notes = append(notes, "slices: one version's load ran at a time, the others stopped, switching every slice in a random order; a turn: a slice of each")
	}
	if mixed {
		notes = append(notes, "mixed: the ratio pairs the turns of duet and of slices comparisons (the mode changed between repeats)")
	}
	if len(m.paired) > 0 {
		n := itoa(m.minPairs)
		if m.maxPairs > m.minPairs {
			n += "–" + itoa(m.maxPairs)
		}
		rounds := "rounds"
		if n == "1" {
			rounds = "round"
		}
		notes = append(notes, fmt.Sprintf("paired ratios: geometric mean of %s %s, a round the geometric mean of its turns' version/base ratios; ±x%%: 95%% t interval on their logs; ~: p >= %.2g",
			n, rounds, b.alpha()))
	}
	if m.pairedUntested {
		notes = append(notes, "?: a paired ratio from a single round (repeat): not tested for significance, its turns are not independent samples")
	}
	if m.pairedDisagree {
		notes = append(notes, fmt.Sprintf("d: a paired ratio whose rounds (repeats) disagree: their ratios' CV is above %g%% (pairs table)", 100*analysis.DisagreeCV))
	}
	if t.pairs != nil && t.ID != tablePairs {
		notes = append(notes, t.pairs.note()...)
	}
	return notes
}

// markerNotes explain the markers and words the cells of t use.
func (m *tableMarks) markerNotes(t *table) []string {
	var notes []string
	if m.short {
		notes = append(notes, "[n/m]: from n of the m repeats (in a ratio: the version's, or the base's when the version's "+
			"are all there); the others have no value for it (failed, not counted or not supported there: see below)")
	}
	if m.mux {
		notes = append(notes, "(N%): the counters behind the value were multiplexed and counted N% of the window; the value is scaled by time enabled / time running")
	}
	if m.disagree {
		notes = append(notes, fmt.Sprintf("d: the repeats' throughputs disagree (in a ratio: the version's or the base's): a "+
			"coefficient of variation above %g%%, or two groups of repeats, each of at least two, with a gap more than %g times "+
			"either group's range and more than %g%% of the median; the median describes neither group: look for what changed "+
			"between repeats (CPU placement, other processes)",
			100*analysis.DisagreeCV, analysis.BimodalGap, 100*analysis.DisagreeCV))
	}
	if m.maxReached {
		notes = append(notes, "m: repeats = \"auto\": the step ran the most repeats the plan allows and this interval is "+
			"still wider than the precision asked for (the note at the top says which)")
	}
	if m.estimated {
		notes = append(notes, "e: operations estimated from the client's whole-run rate, not counted in the window")
	}
	if m.na {
		notes = append(notes, "n/a: event not supported on the machine that measured it")
	}
	if m.nc {
		notes = append(notes, "nc: event enabled but never scheduled (not counted)")
	}
	if t.ID != tableInsertLine {
		switch {
		case m.missing && len(m.whys) > 0:
			notes = append(notes, "-: not recorded, or not computable: "+strings.Join(m.whys, "; "))
		case m.missing:
			notes = append(notes, "-: not recorded")
		case len(m.whys) > 0:
			notes = append(notes, "-: not computable: "+strings.Join(m.whys, "; "))
		}
	}
	if m.inf {
		notes = append(notes, "inf: the base's value is 0")
	}
	if m.bothZero {
		notes = append(notes, "1: both values are 0 (printed 1 by convention, not a measured equality)")
	}
	if m.failed {
		notes = append(notes, "failed: the step failed; its reason is listed below")
	}
	if m.partial {
		notes = append(notes, "p: from a window cut short (partial step); see below")
	}
	if m.below && t.ID != tableInsert && t.ID != tableInsertRel && t.ID != tableInsertTarget {
		// The insert tables say it in their own words.
		notes = append(notes, fmt.Sprintf("%s: insert benchmark: the version (in a ratio: the version or the base) did not sustain the step's target insert rate (inserts/s below %.0f%% of it, see the insert-target table): its throughput can be ignored; grey in HTML, never coloured, and left out of averages and of the attribution", textBelowTarget, 100*record.TargetFraction))
	}
	return notes
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// concerns returns the note topics and events a table shows: Record notes
// about anything else are not printed under it.
func concerns(t *table) (analysis.Topic, []string) {
	cpuEvents := []string{"task-clock", "cpu-clock", "context-switches"}
	switch t.ID {
	case tableCPUIO, tableCPUIORel, tableInsertLine:
		return analysis.TopicGeneral | analysis.TopicPerOp | analysis.TopicCPU | analysis.TopicIO | analysis.TopicCounters, cpuEvents
	case tableCounters, tableCountersRel:
		return analysis.TopicGeneral | analysis.TopicPerOp | analysis.TopicCounters, metricEvents(t.metric)
	case tableLegacy:
		return analysis.TopicGeneral | analysis.TopicCounters, []string{t.metric}
	case tableAttribution:
		return analysis.TopicGeneral | analysis.TopicPerOp | analysis.TopicCPU | analysis.TopicCounters, []string{"instructions", "cycles", "task-clock", "cpu-clock"}
	case tableCorrelation:
		return analysis.TopicGeneral | analysis.TopicPerOp | analysis.TopicCPU | analysis.TopicIO | analysis.TopicCounters, nil
	case tableRoles:
		return analysis.TopicGeneral | analysis.TopicRoles | analysis.TopicCounters, nil
	}
	return analysis.TopicGeneral, []string{}
}

// metricEvents returns the events a counter metric is computed from.
func metricEvents(m string) []string {
	switch {
	case m == analysis.IPC || m == analysis.CPI:
		return []string{"instructions", "cycles"}
	case strings.HasPrefix(m, "MPKI(") && strings.HasSuffix(m, ")"):
		return []string{m[5 : len(m)-1], "instructions"}
	case analysis.EventOf(m) != "":
		return []string{analysis.EventOf(m)}
	}
	return []string{m}
}

// scanSteps lists the steps of the table whose Records count an operation
// as 1,000 rows read.
func (b *builder) scanSteps(t *table) []string {
	var out []string
	for _, k := range t.keys {
		s := b.c.Sample(k)
		if s == nil || slices.Contains(out, k.Step) {
			continue
		}
		for _, p := range s.PerOp {
			if p.OpsPer == 1000 && !p.Failed {
				out = append(out, k.Step)
				break
			}
		}
	}
	return out
}

// insertSteps lists the insert-benchmark steps of the table by what
// their Records count as an operation: inserts (rows indexed, for index
// creation) or queries.
func (b *builder) insertSteps(t *table) (inserts, queries []string) {
	for _, k := range t.keys {
		if b.c.Group(k.Step) != suite.GroupInsert || slices.Contains(inserts, k.Step) || slices.Contains(queries, k.Step) {
			continue
		}
		s := b.c.Sample(k)
		if s == nil || len(s.Records) == 0 {
			continue
		}
		if analysis.InsertQueries(s.Records[0]) {
			queries = append(queries, k.Step)
		} else {
			inserts = append(inserts, k.Step)
		}
	}
	return inserts, queries
}

// slicesShown reports whether a Record behind the table was measured in a
// slices comparison: its o/s is over the seconds its load ran.
func (b *builder) slicesShown(t *table) bool {
	for _, k := range t.keys {
		if s := b.c.Sample(k); s != nil {
			for _, r := range s.Records {
				if r.Comparison != nil && r.Comparison.Mode == record.ComparisonSlices {
					return true
				}
			}
		}
	}
	return false
}

// baseMissing lists the steps (with their scope when the table spans
// several) on which a version of the table has Records and the base has
// none: their ratios are "-" or their rows left out.
func (b *builder) baseMissing(t *table) []string {
	var out []string
	for _, k := range t.keys {
		if k.Version == b.c.Base || !b.c.Has(k) || b.c.Has(b.c.BaseKey(k)) {
			continue
		}
		where := k.Step
		if t.Threads == 0 && k.Threads > 0 && len(b.c.Threads) > 1 {
			where += " (" + plural(k.Threads, "thread") + ")"
		}
		if !slices.Contains(out, where) {
			out = append(out, where)
		}
	}
	return out
}

// deviceNote says that the disk-stats columns a table shows count every
// process on the device, naming the devices of the Records behind it.
func (b *builder) deviceNote(t *table) string {
	var cols string
	switch t.ID {
	case tableCPUIO, tableCPUIORel:
		if !contains(t.Header, analysis.ReadsPerOp) && !contains(t.Header, analysis.WritesPerOp) {
			return ""
		}
		cols = "r/o: reads of the data directory's device per operation"
	case tableCorrelation:
		if !t.hasRow(func(l string) bool { return l == analysis.ReadsPerOp || l == analysis.WritesPerOp }) {
			return ""
		}
		cols = "r/o: reads of the data directory's device per operation"
	case tableInsertLine:
		cols = "rps, rmbps, wps, wmbps, rpq, rkbpq, wpi, wkbpi: reads and writes of the data directory's device"
	default:
		return ""
	}
	devs := b.devices(t.keys)
	if len(devs) == 0 {
		return ""
	}
	d := strings.Join(devs, ", ")
	return fmt.Sprintf("%s, device-wide: every process on %s, not only the server", cols, d)
}

// devices returns the block devices of the Records behind the keys, sorted.
func (b *builder) devices(keys []record.Key) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		s := b.c.Sample(k)
		if s == nil {
			continue
		}
		for _, p := range s.PerOp {
			if p.Device != "" && !seen[p.Device] {
				seen[p.Device] = true
				out = append(out, p.Device)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (b *builder) alpha() float64 {
	if b.opt.Analysis.Alpha > 0 {
		return b.opt.Analysis.Alpha
	}
	return 0.05
}

// uniqueKeys returns the keys without duplicates, sorted by version order of
// first appearance, then host, step and threads, in keys' own storage
// (which it writes over). That order tells any two
// keys apart, so the keys are sorted first and equal neighbours dropped:
// no set of the keys is made (a counters table has hundreds of keys).
func uniqueKeys(keys []record.Key) []record.Key {
	if len(keys) == 0 {
		return nil
	}
	// Each key's version rank is looked up once, not in every
	// comparison.
	rp, _ := rankedKeys.Get().(*[]rankedKey)
	if rp == nil {
		rp = new([]rankedKey)
	}
	rs := slices.Grow((*rp)[:0], len(keys))[:len(keys)]
	defer func() {
		clear(rs)
		*rp = rs[:0]
		rankedKeys.Put(rp)
	}()
	var versions []string
	for i, k := range keys {
		v := slices.Index(versions, k.Version)
		if v < 0 {
			v = len(versions)
			versions = append(versions, k.Version)
		}
		rs[i] = rankedKey{v, k}
	}
	order := func(a, b rankedKey) int {
		return cmp.Or(cmp.Compare(a.version, b.version), strings.Compare(a.k.Host, b.k.Host),
			strings.Compare(a.k.Step, b.k.Step), cmp.Compare(a.k.Threads, b.k.Threads))
	}
	if !slices.IsSortedFunc(rs, order) {
		slices.SortFunc(rs, order)
	}
	out := keys[:0] // rs holds the keys: they are written over in place
	for i, r := range rs {
		if i == 0 || r.k != rs[i-1].k {
			out = append(out, r.k)
		}
	}
	clear(keys[len(out):]) // (no strings held past the end)
	return out
}

// rankedKey is a key and the rank of its version, as uniqueKeys sorts
// them.
type rankedKey struct {
	version int
	k       record.Key
}

// rankedKeys keeps uniqueKeys' scratch from table to table.
var rankedKeys sync.Pool

// hasRow reports whether a value row's label satisfies f.
func (t *table) hasRow(f func(string) bool) bool {
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			if r.Kind == rowValues && f(r.Label) {
				return true
			}
		}
	}
	return false
}
