// Package perfstat reads what `perf stat` prints, in every form users keep:
//
//   - the default human format, with the thousands and decimal separators of
//     the locale perf ran in, `<not supported>` and `<not counted>`, the
//     `(62.50%)` share of time a multiplexed event ran, the `#` shadow metrics,
//     `seconds time elapsed` and the user/sys lines, `-r N` means with their
//     `( +- x% )` variance, `--per-thread`, `-A`, and `-I` interval prefixes;
//   - `-x SEP` separated values (with or without `-I`, `--per-thread`, `-A`,
//     `-r`);
//   - `-j` JSON lines.
//
// One file may hold several runs: `perf stat -o FILE --append` writes a
// `# started on` line before each, and scripts that append perf's stderr to
// one file leave one header (or, for -x and -j, one set of events) after
// another. Each run becomes one or more Windows: one for a plain run, one per
// interval with -I.
//
// A Scanner reads one Window at a time, like bufio.Scanner:
//
//	sc := perfstat.NewScanner(f, perfstat.Options{Name: "perf.txt"})
//	for sc.Scan() {
//		w := sc.Window()
//		for _, c := range w.Totals() { ... }
//	}
//	if err := sc.Err(); err != nil { ... }
//	for _, w := range sc.Warnings() { fmt.Println(w) } // perf.txt:12: ...
//
// Problems that lose part of the input but not all of it (a line that is not
// perf output, a truncated run, a line of another format in the middle of a
// file) are Warnings naming the file and line; Err reports only read errors
// and input that holds no perf stat counters at all.
//
// Values are kept as perf printed them: scaled by perf for multiplexed events,
// means for -r runs. Clock events printed in msec (task-clock, cpu-clock) are
// converted to ns, with Unit "ns". The text format does not print time enabled
// or running, only the percentage; Running and Enabled are then zero and
// Percent carries what was printed.
package perfstat

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/record"
)

// Format is one of the forms perf stat prints.
type Format int

// Formats.
const (
	formatUnknown Format = iota
	formatText           // the default human-readable layout
	formatCSV            // -x SEP
	formatJSON           // -j
)

func (f Format) String() string {
	switch f {
	case formatText:
		return "text"
	case formatCSV:
		return "csv"
	case formatJSON:
		return "json"
	}
	return "unknown"
}

// ErrNoCounters is returned by Scanner.Err when input that is not empty holds
// no perf stat counter line at all: it is not perf stat output.
var ErrNoCounters = errors.New("not perf stat output")

// counterShapes says what a perf stat counter line looks like, for the error
// on input that has none.
const counterShapes = `no line has the layout of a perf stat counter: "<count> [unit] <event>" ` +
	`as in "974.79 msec task-clock", "<count>,<unit>,<event>,..." (-x) or JSON lines (-j)`

// Counter is one counter line: one event, on one thread or CPU when the
// output was split (--per-thread, -A), else over everything perf counted.
type Counter struct {
	Event string
	// Value is the count as perf printed it (scaled by perf when the event
	// was multiplexed; the mean with -r). Zero unless Status is counted or
	// scaled.
	Value float64
	// Unit is "ns" for clocks (perf prints msec; Value is converted), the
	// unit perf printed for other events with one, else empty.
	Unit   string
	Status record.Status // counted, scaled, not counted or not supported
	// Running is the time the event ran, ns, as -x and -j print it;
	// HasRunning says whether the input had it (the text format does not).
	Running    uint64
	HasRunning bool
	// Percent is the share of its enabled time the event ran, as printed
	// ("(62.50%)" in text, the percentage column of -x and -j); 100 when
	// perf printed none (the event ran all the time).
	Percent float64
	// Variance is the "+- x%" of -r runs, when printed.
	Variance    float64
	HasVariance bool
	// Metric and MetricUnit are perf's shadow metric ("# 1.176 CPUs
	// utilized"), when printed and readable. perfbench recomputes derived
	// metrics; these are kept for reference only.
	Metric     float64
	MetricUnit string
	// Aggr is the thread ("mariadbd-10299"), CPU ("CPU0") or socket/die/core
	// ("S0-D0-C1") the line is for; empty for the total.
	Aggr string
	// Line is the line number of the counter in the input (1-based).
	Line int
}

// Measured reports whether the counter has a value.
func (c Counter) Measured() bool {
	return c.Status == record.StatusCounted || c.Status == record.StatusScaled
}

// Enabled is the time the event was enabled, ns, reconstructed from Running
// and Percent (Running × 100 / Percent): perf prints the percentage with two
// decimals, so this is within 0.005% of perf's own. Zero when the input did
// not carry the running time or the event never ran.
func (c Counter) Enabled() uint64 {
	if !c.HasRunning || c.Percent <= 0 {
		return 0
	}
	if c.Percent >= 100 {
		return c.Running
	}
	return uint64(math.Round(float64(c.Running) * 100 / c.Percent))
}

// Window is one run of perf stat, or one interval of a run with -I.
type Window struct {
	Format Format
	// Run numbers the runs in the input, from 1. Intervals of one -I run
	// share it.
	Run int
	// Line and EndLine are the first and last lines of the window.
	Line, EndLine int
	// Started is the date of a "# started on" line (perf -o), as printed.
	Started string
	// Target is what follows "Performance counter stats for" without the
	// trailing colon: "process id '4121'", "'sleep 1'", "system wide".
	Target string
	// Command is the command perf ran, when Target names one.
	Command string
	// Repeats is N of "(N runs)" with perf stat -r; Values are then means.
	Repeats int
	// Interval is, with -I, the time of the end of this interval in seconds
	// since perf started counting, and Start the end of the previous one
	// (0 for the first). Both are 0 without -I.
	Interval, Start float64
	// Elapsed is "seconds time elapsed" (the mean with -r); 0 when not
	// printed (-x, -j and -I do not print it).
	Elapsed         float64
	ElapsedVariance float64 // "+- x%" of the elapsed time with -r
	// User and Sys are the "seconds user" / "seconds sys" lines (perf
	// prints them when it ran the command itself).
	User, Sys  float64
	HasUserSys bool
	Counters   []Counter
	// Truncated is true when the input ended inside the window (text
	// without its "seconds time elapsed" line, or a cut last line).
	Truncated bool
}

// Seconds is the window's length: Elapsed, or the interval's length with -I.
// Zero when the input does not tell.
func (w *Window) Seconds() float64 {
	if w.Interval > 0 {
		return w.Interval - w.Start
	}
	return w.Elapsed
}

// Events lists the window's events in the order they first appear.
func (w *Window) Events() []string {
	var ev []string
	seen := map[string]bool{}
	for _, c := range w.Counters {
		if !seen[c.Event] {
			seen[c.Event] = true
			ev = append(ev, c.Event)
		}
	}
	return ev
}

// Totals returns one Counter per event, summed over threads, CPUs or cores
// when the output was split by them, in the order events first appear.
//
// Values add up over the lines that have one. A total is counted or scaled
// when any line has a value (scaled when any of them ran less than all of the
// time), not counted when no line has one but some was not counted, and not
// supported otherwise. Running adds up; Percent is recomputed from the summed
// running and enabled times when the input had them, else it is the
// value-weighted mean of the lines' percentages.
func (w *Window) Totals() []Counter {
	byEvent := map[string][]Counter{}
	for _, c := range w.Counters {
		byEvent[c.Event] = append(byEvent[c.Event], c)
	}
	var out []Counter
	for _, ev := range w.Events() {
		cs := byEvent[ev]
		if len(cs) == 1 {
			t := cs[0]
			t.Aggr = ""
			out = append(out, t)
			continue
		}
		out = append(out, sum(cs))
	}
	return out
}

func sum(cs []Counter) Counter {
	t := Counter{Event: cs[0].Event, Unit: cs[0].Unit, Line: cs[0].Line, HasRunning: true, Percent: 100}
	var measured, notCounted, scaled bool
	var enabled, running, weighted, weights float64
	for _, c := range cs {
		if !c.HasRunning {
			t.HasRunning = false
		}
		switch c.Status {
		case record.StatusNotCounted:
			notCounted = true
			continue
		case record.StatusNotSupported:
			continue
		}
		measured = true
		if c.Status == record.StatusScaled {
			scaled = true
		}
		t.Value += c.Value
		t.Running += c.Running
		if e := c.Enabled(); e > 0 {
			enabled += float64(e)
			running += float64(c.Running)
		}
		weighted += c.Value * c.Percent
		weights += c.Value
	}
	switch {
	case measured && scaled:
		t.Status = record.StatusScaled
	case measured:
		t.Status = record.StatusCounted
	case notCounted:
		t.Status = record.StatusNotCounted
	default:
		t.Status = record.StatusNotSupported
	}
	if scaled {
		switch {
		case t.HasRunning && enabled > 0:
			t.Percent = min(running*100/enabled, 100)
		case weights > 0:
			t.Percent = weighted / weights
		}
	}
	if !t.HasRunning {
		t.Running = 0
	}
	return t
}

// Warning is a problem that lost part of the input.
type Warning struct {
	Name string // file name given in Options, or "" for unnamed input
	Line int    // 1-based; 0 when it concerns the whole input
	Msg  string
}

func (w Warning) String() string {
	name := w.Name
	if name == "" {
		name = "input"
	}
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", name, w.Line, w.Msg)
	}
	return name + ": " + w.Msg
}

// Options controls a Scanner. The zero value reads any format, detects the
// separator and the locale's decimal separator.
type Options struct {
	// Name names the input in warnings and errors (a file name).
	Name string
	// Separator is the -x separator; empty detects it (",", ";", tab, "|",
	// ":" and spaces are tried).
	Separator string
	// Decimal is the decimal separator of the text format, '.' or ',';
	// 0 detects it from the numbers perf prints without grouping (the
	// elapsed time, percentages, shadow metrics).
	Decimal byte
	// MaxLine is the longest line read, in bytes (default 1 MiB); longer
	// lines are skipped with a warning.
	MaxLine int
}

// number parsing -------------------------------------------------------------

// groupChars are the characters locales use to group thousands (besides '.'
// and ','): space, no-break space, narrow no-break space, apostrophes, and
// the Latin-1 no-break space byte.
const groupChars = " \u00a0\u202f'\u2019\xa0"

// isValueToken reports whether s looks like a counter value: a number with
// optional grouping, or one of perf's placeholders.
func isValueToken(s string) bool {
	if s == notCounted || s == notSupported {
		return true
	}
	return looksNumeric(s)
}

func looksNumeric(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' || c == ',' || c == '\'' || c >= 0x80:
		default:
			return false
		}
	}
	return digits
}

const (
	notCounted   = "<not counted>"
	notSupported = "<not supported>"
)

// parseGrouped parses a number perf printed with the locale's grouping: every
// separator that is not dec is a thousands separator and is dropped.
func parseGrouped(s string, dec byte) (float64, error) {
	var b strings.Builder
	seenDec := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
			i++
		case c == dec:
			if seenDec {
				return 0, fmt.Errorf("number %q has two decimal separators", s)
			}
			seenDec = true
			b.WriteByte('.')
			i++
		case c == '.' || c == ',':
			if seenDec {
				return 0, fmt.Errorf("number %q has a thousands separator after its decimal separator", s)
			}
			i++
		default:
			n := groupLen(s[i:])
			if n == 0 || seenDec {
				return 0, fmt.Errorf("%q is not a number", s)
			}
			i += n
		}
	}
	return finite(b.String(), s)
}

func groupLen(s string) int {
	for _, g := range []string{"\u00a0", "\u202f", "\u2019", "'", " ", "\xa0"} {
		if strings.HasPrefix(s, g) {
			return len(g)
		}
	}
	return 0
}

// parsePlain parses a number printed without grouping, whose only separator
// (if any) is the decimal one, '.' or ','.
func parsePlain(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if strings.Count(s, ",")+strings.Count(s, ".") > 1 {
		return 0, fmt.Errorf("%q is not a plain number", s)
	}
	return finite(strings.Replace(s, ",", ".", 1), s)
}

func finite(clean, orig string) (float64, error) {
	if clean == "" || clean == "." {
		return 0, fmt.Errorf("%q is not a number", orig)
	}
	for i := 0; i < len(clean); i++ {
		if (clean[i] < '0' || clean[i] > '9') && clean[i] != '.' {
			return 0, fmt.Errorf("%q is not a number", orig)
		}
	}
	v, err := strconv.ParseFloat(clean, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a finite number", orig)
	}
	return v, nil
}

// decimalEvidence returns the decimal separator a number printed without
// grouping shows ('.' or ','), or 0 when it has none.
func decimalEvidence(s string) byte {
	if strings.Count(s, ".")+strings.Count(s, ",") != 1 {
		return 0
	}
	if strings.Contains(s, ",") {
		return ','
	}
	return '.'
}

// applyUnit converts perf's msec clocks to ns.
func applyUnit(v float64, unit string) (float64, string) {
	switch unit {
	case "msec":
		return math.Round(v * 1e6), "ns"
	case "usec":
		return math.Round(v * 1e3), "ns"
	}
	return v, unit
}

// sortedWarnings orders warnings by line, stable.
func sortedWarnings(ws []Warning) []Warning {
	out := append([]Warning(nil), ws...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}
