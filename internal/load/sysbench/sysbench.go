// Package sysbench reads what sysbench 1.0.x prints for a run: the banner and
// options (version, threads, report interval, a warm-up announcement), the
// --report-interval lines, the --histogram table and the final report (SQL
// statistics, general statistics, latency, threads fairness).
//
// Parse reads a whole output; a Parser takes one line at a time, for output
// read live from a running sysbench:
//
//	p := sysbench.NewParser()
//	for sc.Scan() {
//		p.Line(sc.Text())
//	}
//	res := p.Result() // what was read so far
//
// Lines a Lua script prints are kept in Result.Extra and otherwise ignored.
// Output that stops before the final report (an interrupted or failed run)
// gives a Result with Complete false, whatever intervals were printed, and a
// warning; FATAL lines are kept in Result.Fatal.
package sysbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perfbench/perfbench/record"
)

// errNotSysbench is returned by Parse for input with no line sysbench prints.
var errNotSysbench = errors.New("no sysbench output found")

// Result is one sysbench run as its output shows it.
type Result struct {
	// Version is sysbench's banner, "sysbench 1.0.20 (using system LuaJIT
	// 2.1.0-beta3)".
	Version string
	// Threads is "Number of threads".
	Threads int
	// ReportInterval is --report-interval in seconds (0 when off).
	ReportInterval float64
	// Warmup is the announced warm-up, seconds (sysbench builds with
	// --warmup-time print it; 1.0.20 does not have the option).
	Warmup float64

	// Queries performed, by kind, and in total.
	Reads, Writes, Other, Total float64
	// Transactions, Queries, IgnoredErrors and Reconnects are the counts of
	// the SQL statistics, each with its per-second rate.
	Transactions, TPS    float64
	Queries, QPS         float64
	IgnoredErrors, ErrPS float64
	Reconnects, ReconnPS float64
	HasSQL               bool // the SQL statistics section was read
	TotalTime            float64
	Events               float64
	LatencyMin           float64 // ms
	LatencyAvg           float64 // ms
	LatencyMax           float64 // ms
	LatencyPct           float64 // ms, at Percentile
	LatencySum           float64 // ms
	Percentile           float64 // 95 unless --percentile said otherwise; 0 when disabled
	EventsAvg, EventsStd float64 // threads fairness: events (avg/stddev)
	ExecAvg, ExecStd     float64 // threads fairness: execution time (avg/stddev), seconds
	Intervals            []record.Interval
	Histogram            []record.Bucket
	// Complete is true when the final report was read through its general
	// statistics (total time and number of events).
	Complete bool
	// Fatal holds sysbench's "FATAL:" lines.
	Fatal []string
	// Extra holds lines sysbench does not print itself (a Lua script's
	// output), up to 100.
	Extra []string
	// Warnings are problems met while reading, by line.
	Warnings []Warning
}

// Warning is a problem that lost part of the output.
type Warning struct {
	Line int // 1-based; 0 for the whole output
	Msg  string
}

func (w Warning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("line %d: %s", w.Line, w.Msg)
	}
	return w.Msg
}

// Parse reads a whole sysbench output. The error is a read error, or
// errNotSysbench when nothing in r is sysbench output; an interrupted run is
// not an error (Complete is false and a warning says so).
func Parse(r io.Reader) (*Result, error) {
	p := NewParser()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br, 1<<20)
		if line != nil {
			if len(line) > 1<<20 {
				p.n++
				p.warn("line longer than 1 MiB skipped")
			} else {
				p.Line(string(line))
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return p.Result(), fmt.Errorf("read sysbench output after line %d: %w", p.n, err)
		}
	}
	res := p.Result()
	if !p.recognized {
		return res, errNotSysbench
	}
	return res, nil
}

// readLine returns the next line without its newline; a line longer than max
// is returned as max+1 bytes (the rest is discarded). nil at EOF.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	long := false
	for {
		frag, err := br.ReadSlice('\n')
		if !long {
			if len(buf)+len(frag) > max {
				long = true
				buf = make([]byte, max+1)
			} else {
				buf = append(buf, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(buf) == 0 {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if long {
			return buf, err
		}
		return []byte(strings.TrimRight(string(buf), "\r\n")), err
	}
}

// Parser reads sysbench output one line at a time.
type Parser struct {
	res        Result
	n          int
	section    string
	inHist     bool
	recognized bool
	finalSeen  bool
}

// NewParser returns a Parser.
func NewParser() *Parser { return &Parser{res: Result{Percentile: 95}} }

func (p *Parser) warn(format string, args ...any) {
	p.res.Warnings = append(p.res.Warnings, Warning{Line: p.n, Msg: fmt.Sprintf(format, args...)})
}

// Result returns what was read so far. Before the final report it has
// Complete false and a warning saying the report is missing.
func (p *Parser) Result() *Result {
	r := p.res
	r.Intervals = append([]record.Interval(nil), p.res.Intervals...)
	r.Histogram = append([]record.Bucket(nil), p.res.Histogram...)
	r.Warnings = append([]Warning(nil), p.res.Warnings...)
	r.Fatal = append([]string(nil), p.res.Fatal...)
	r.Extra = append([]string(nil), p.res.Extra...)
	if !r.Complete && p.recognized {
		msg := "no final report: sysbench was interrupted or failed"
		if len(r.Fatal) > 0 {
			msg += " (" + r.Fatal[len(r.Fatal)-1] + ")"
		}
		if len(r.Intervals) > 0 {
			msg += fmt.Sprintf("; %d interval line(s) kept", len(r.Intervals))
		}
		r.Warnings = append(r.Warnings, Warning{Msg: msg})
	}
	return &r
}

var (
	reBanner   = regexp.MustCompile(`^sysbench \d+\.\d+\S*`)
	reThreads  = regexp.MustCompile(`^Number of threads: (\d+)$`)
	reEvery    = regexp.MustCompile(`^Report intermediate results every (\d+(?:\.\d+)?) second`)
	reWarm     = regexp.MustCompile(`(?i)^warm(?:ing)?[ -]?up\D*?(\d+(?:\.\d+)?)\s*s`)
	reInterval = regexp.MustCompile(`^\[\s*(\d+(?:\.\d+)?)s\s*\]\s+(.*)$`)
	reField    = regexp.MustCompile(`(thds|tps|qps|eps|err/s|reconn/s):\s*(\S+)`)
	reRWO      = regexp.MustCompile(`\(r/w/o:\s*(\S+?)/(\S+?)/(\S+?)\)`)
	reLat      = regexp.MustCompile(`lat \(ms,(\d+)%\):\s*(\S+)`)
	reCountPS  = regexp.MustCompile(`^(transactions|queries|ignored errors|reconnects):\s+(\d+)\s+\((\S+) per sec\.\)$`)
	reKV       = regexp.MustCompile(`^([a-z][a-z ]*?|\d+th percentile):\s+(\S+)$`)
	reAvgStd   = regexp.MustCompile(`^(events|execution time) \(avg/stddev\):\s+(\S+)/(\S+)$`)
	reHistRow  = regexp.MustCompile(`^(\S+)\s+\|\**\s+(\d+)$`)
)

func num(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}

// Line reads one line of output (without its newline).
func (p *Parser) Line(line string) {
	p.n++
	if !utf8.ValidString(line) {
		p.warn("line is not UTF-8 text; skipped")
		return
	}
	t := strings.TrimSpace(line)
	if p.inHist {
		if m := reHistRow.FindStringSubmatch(t); m != nil {
			le, err1 := num(m[1])
			c, err2 := num(m[2])
			if err1 != nil || err2 != nil {
				p.warn("histogram row %q unreadable; skipped", t)
				return
			}
			p.res.Histogram = append(p.res.Histogram, record.Bucket{UpToMs: le, Count: c})
			return
		}
		if strings.HasPrefix(t, "value") {
			return
		}
		p.inHist = false
	}
	if t == "" {
		return
	}
	if m := reInterval.FindStringSubmatch(t); m != nil {
		p.recognized = true
		p.interval(m[1], m[2])
		return
	}
	switch {
	case reBanner.MatchString(t):
		p.recognized = true
		p.res.Version = t
		return
	case strings.HasPrefix(t, "FATAL:"):
		p.recognized = true
		p.res.Fatal = append(p.res.Fatal, t)
		return
	case t == "Latency histogram (values are in milliseconds)":
		p.recognized = true
		p.inHist = true
		if len(p.res.Histogram) > 0 {
			p.warn("second latency histogram; it replaces the first")
			p.res.Histogram = nil
		}
		return
	case t == "SQL statistics:" || t == "General statistics:" || t == "Latency (ms):" || t == "Threads fairness:" || t == "queries performed:":
		p.recognized = true
		if t == "SQL statistics:" || (t == "General statistics:" && p.section != "sql" && p.section != "queries") {
			if p.finalSeen {
				p.warn("second final report (checkpoint report?); it replaces the first")
				keep := p.res
				p.res = Result{Version: keep.Version, Threads: keep.Threads, ReportInterval: keep.ReportInterval, Warmup: keep.Warmup,
					Percentile: 95, Intervals: keep.Intervals, Histogram: keep.Histogram, Fatal: keep.Fatal, Extra: keep.Extra, Warnings: keep.Warnings}
			}
			p.finalSeen = true
		}
		p.section = map[string]string{"SQL statistics:": "sql", "queries performed:": "queries", "General " +
			"statistics:": "general", "Latency (ms):": "latency", "Threads fairness:": "fairness"}[t]
		return
	}
	if m := reThreads.FindStringSubmatch(t); m != nil {
		p.recognized = true
		p.res.Threads, _ = strconv.Atoi(m[1])
		return
	}
	if m := reEvery.FindStringSubmatch(t); m != nil {
		p.res.ReportInterval, _ = num(m[1])
		return
	}
	if m := reWarm.FindStringSubmatch(t); m != nil {
		if v, err := num(m[1]); err == nil {
			p.res.Warmup = v
		}
		return
	}
	switch t {
	case "Running the test with following options:", "Initializing worker threads...", "Threads started!", "Done.":
		p.recognized = true
		return
	}
	if strings.HasPrefix(t, "Initializing random number generator") || strings.HasPrefix(t, "(last message repeated") {
		return
	}
	if p.section != "" && p.final(t) {
		return
	}
	if len(p.res.Extra) < 100 {
		p.res.Extra = append(p.res.Extra, t)
	}
}

// final reads a line of the final report; false when it is not one.
func (p *Parser) final(t string) bool {
	set := func(dst *float64, s, what string) {
		v, err := num(s)
		if err != nil {
			p.warn("%s: %v", what, err)
			return
		}
		*dst = v
	}
	if m := reCountPS.FindStringSubmatch(t); m != nil && p.section == "sql" || m != nil && p.section == "queries" {
		p.res.HasSQL = true
		var cnt, ps *float64
		switch m[1] {
		case "transactions":
			cnt, ps = &p.res.Transactions, &p.res.TPS
		case "queries":
			cnt, ps = &p.res.Queries, &p.res.QPS
		case "ignored errors":
			cnt, ps = &p.res.IgnoredErrors, &p.res.ErrPS
		case "reconnects":
			cnt, ps = &p.res.Reconnects, &p.res.ReconnPS
		}
		set(cnt, m[2], m[1])
		set(ps, m[3], m[1]+" per second")
		p.section = "sql"
		return true
	}
	if m := reAvgStd.FindStringSubmatch(t); m != nil && p.section == "fairness" {
		if m[1] == "events" {
			set(&p.res.EventsAvg, m[2], "events avg")
			set(&p.res.EventsStd, m[3], "events stddev")
		} else {
			set(&p.res.ExecAvg, m[2], "execution time avg")
			set(&p.res.ExecStd, m[3], "execution time stddev")
		}
		return true
	}
	if p.section == "latency" && strings.HasPrefix(t, "percentile stats:") {
		p.res.Percentile = 0 // --percentile=0
		return true
	}
	m := reKV.FindStringSubmatch(t)
	if m == nil {
		return false
	}
	k, v := m[1], m[2]
	switch p.section {
	case "queries":
		switch k {
		case "read":
			set(&p.res.Reads, v, k)
		case "write":
			set(&p.res.Writes, v, k)
		case "other":
			set(&p.res.Other, v, k)
		case "total":
			set(&p.res.Total, v, k)
		default:
			return false
		}
		p.res.HasSQL = true
	case "general":
		switch k {
		case "total time":
			set(&p.res.TotalTime, v, k)
		case "total number of events":
			set(&p.res.Events, v, k)
			p.res.Complete = p.res.TotalTime > 0 || p.res.Complete
		default:
			return false
		}
	case "latency":
		switch {
		case k == "min":
			set(&p.res.LatencyMin, v, "latency min")
		case k == "avg":
			set(&p.res.LatencyAvg, v, "latency avg")
		case k == "max":
			set(&p.res.LatencyMax, v, "latency max")
		case k == "sum":
			set(&p.res.LatencySum, v, "latency sum")
		case strings.HasSuffix(k, "th percentile"):
			set(&p.res.Percentile, strings.TrimSuffix(k, "th percentile"), "percentile")
			set(&p.res.LatencyPct, v, "latency percentile")
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// interval reads "[ 1s ] thds: 2 tps: … qps: … (r/w/o: …) lat (ms,95%): …
// err/s: … reconn/s: …" (and the eps form of non-SQL tests).
func (p *Parser) interval(at, rest string) {
	var iv record.Interval
	var err error
	if iv.At, err = num(at); err != nil {
		p.warn("interval time: %v; line skipped", err)
		return
	}
	if strings.Contains(rest, "Checkpoint report") {
		return
	}
	bad := func(what string, e error) {
		p.warn("interval at %ss: %s: %v; line skipped", at, what, e)
	}
	found := false
	for _, m := range reField.FindAllStringSubmatch(rest, -1) {
		v, e := num(m[2])
		if e != nil {
			bad(m[1], e)
			return
		}
		found = true
		switch m[1] {
		case "thds":
			iv.Threads = int(v)
		case "tps":
			iv.TPS = v
		case "qps":
			iv.QPS = v
		case "eps":
			iv.TPS = v // events per second of non-SQL tests
		case "err/s":
			iv.Errors = v
		case "reconn/s":
			iv.Reconnects = v
		}
	}
	if m := reRWO.FindStringSubmatch(rest); m != nil {
		for i, dst := range []*float64{&iv.Reads, &iv.Writes, &iv.Other} {
			v, e := num(m[i+1])
			if e != nil {
				bad("r/w/o", e)
				return
			}
			*dst = v
		}
	}
	if m := reLat.FindStringSubmatch(rest); m != nil {
		v, e := num(m[2])
		if e != nil {
			bad("latency", e)
			return
		}
		iv.LatencyMs = v
	}
	if !found {
		p.warn("interval line without counts; skipped")
		return
	}
	if n := len(p.res.Intervals); n > 0 && iv.At <= p.res.Intervals[n-1].At {
		p.warn("interval at %ss does not follow %vs; kept", at, p.res.Intervals[n-1].At)
	}
	p.res.Intervals = append(p.res.Intervals, iv)
}

// Client maps the Result into the Record's client section (Tool "sysbench").
// Queries is the "queries:" count (sysbench counts BEGIN and COMMIT too);
// LatencyP95 holds the latency at Percentile, and Percentile is set when it
// is not 95.
func (r *Result) Client() *record.Client {
	c := &record.Client{
		Tool:         "sysbench",
		Seconds:      r.TotalTime,
		Queries:      r.Queries,
		Reads:        r.Reads,
		Writes:       r.Writes,
		Other:        r.Other,
		Transactions: r.Transactions,
		Events:       r.Events,
		Errors:       r.IgnoredErrors,
		Reconnects:   r.Reconnects,
		LatencyMin:   r.LatencyMin,
		LatencyAvg:   r.LatencyAvg,
		LatencyMax:   r.LatencyMax,
		LatencyP95:   r.LatencyPct,
		Intervals:    append([]record.Interval(nil), r.Intervals...),
		Histogram:    append([]record.Bucket(nil), r.Histogram...),
	}
	if r.Percentile != 95 {
		c.Percentile = r.Percentile
	}
	if !r.HasSQL {
		c.Queries = 0
	}
	return c
}
