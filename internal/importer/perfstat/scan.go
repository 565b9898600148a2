package perfstat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perfbench/perfbench/record"
)

// Scanner reads perf stat output one Window at a time.
type Scanner struct {
	opts     Options
	r        *bufio.Reader
	line     int
	warnings []Warning
	err      error
	eof      bool

	ready []*Window
	out   *Window
	cur   *pending
	run   int
	dec   byte // decimal separator decided by the last text window
	sep   string

	sawBytes    bool
	sawCounters bool
	lastCut     bool // last line had no newline
}

// pending is the window being read.
type pending struct {
	w            *Window
	format       Format
	raw          []rawCounter // text counters, parsed when the window closes
	evidence     []string     // numbers printed without grouping
	keys         map[string]bool
	elapsed      string
	elapsedVar   string
	user, sys    string
	afterElapsed bool
	mixed        int // lines of another format skipped
	mixedLine    int
	lastTS       float64
}

type rawCounter struct {
	c                       Counter
	value, pct, vari, metic string
}

// NewScanner returns a Scanner reading r.
func NewScanner(r io.Reader, opts Options) *Scanner {
	if opts.MaxLine <= 0 {
		opts.MaxLine = 1 << 20
	}
	return &Scanner{opts: opts, r: bufio.NewReaderSize(r, 64<<10), dec: opts.Decimal, sep: opts.Separator}
}

// parse reads every Window of data.
func parse(data []byte, opts Options) ([]*Window, []Warning, error) {
	sc := NewScanner(bytes.NewReader(data), opts)
	var ws []*Window
	for sc.Scan() {
		ws = append(ws, sc.Window())
	}
	return ws, sc.Warnings(), sc.Err()
}

// Scan advances to the next Window, which Window then returns. It returns
// false at the end of the input or on a read error.
func (s *Scanner) Scan() bool {
	for len(s.ready) == 0 {
		if s.eof || s.err != nil {
			return false
		}
		line, ok := s.readLine()
		if !ok {
			s.eof = true
			s.close(true)
			if s.err == nil && s.sawBytes && !s.sawCounters {
				s.err = fmt.Errorf("%s: %w: %s", s.name(), ErrNoCounters, counterShapes)
			}
			continue
		}
		s.process(line)
	}
	s.out = s.ready[0]
	s.ready = s.ready[1:]
	return true
}

// Window returns the Window read by the last call to Scan.
func (s *Scanner) Window() *Window { return s.out }

// Err returns the read error that stopped the Scanner, or ErrNoCounters
// (wrapped, with the input's name) when the input held no counters.
func (s *Scanner) Err() error { return s.err }

// Warnings returns the problems met so far, by line.
func (s *Scanner) Warnings() []Warning { return sortedWarnings(s.warnings) }

func (s *Scanner) name() string {
	if s.opts.Name == "" {
		return "input"
	}
	return s.opts.Name
}

func (s *Scanner) warn(line int, format string, args ...any) {
	s.warnings = append(s.warnings, Warning{Name: s.opts.Name, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// readLine returns the next line without its end of line; lines longer than
// MaxLine are skipped with a warning.
func (s *Scanner) readLine() (string, bool) {
	for {
		var buf []byte
		tooLong := false
		for {
			frag, err := s.r.ReadSlice('\n')
			if len(frag) > 0 {
				s.sawBytes = true
			}
			if !tooLong {
				if len(buf)+len(frag) > s.opts.MaxLine {
					tooLong = true
					buf = nil
				} else {
					buf = append(buf, frag...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && err != io.EOF {
				s.err = fmt.Errorf("read %s after line %d: %w", s.name(), s.line, err)
				return "", false
			}
			if err == io.EOF && len(frag) == 0 && len(buf) == 0 && !tooLong {
				return "", false
			}
			s.line++
			if err == io.EOF {
				s.lastCut = true
			}
			break
		}
		if tooLong {
			s.warn(s.line, "line longer than %d bytes skipped", s.opts.MaxLine)
			if s.lastCut {
				return "", false
			}
			continue
		}
		return strings.TrimRight(string(buf), "\r\n"), true
	}
}

var (
	reElapsed = regexp.MustCompile(`^([0-9][0-9.,]*)(?:\s+\+-\s+[0-9][0-9.,]*)?\s+seconds time elapsed(?:\s+\(\s*\+-\s*([0-9][0-9.,]*)\s*%\s*\))?$`)
	reUserSys = regexp.MustCompile(`^([0-9][0-9.,]*)(?:\s+\+-\s+[0-9][0-9.,]*)?\s+seconds (user|sys)(?:\s+\(\s*\+-\s*[0-9][0-9.,]*\s*%\s*\))?$`)
	reHeader  = regexp.MustCompile(`Performance counter stats for (.*?):?\s*$`)
	reRuns    = regexp.MustCompile(`^(.*?)\s+\((\d+) runs\)$`)
	reVar     = regexp.MustCompile(`\(\s*\+-\s*([0-9][0-9.,]*)\s*%\s*\)`)
	rePct     = regexp.MustCompile(`\(\s*([0-9][0-9.,]*)\s*%\s*\)`)
	reTS      = regexp.MustCompile(`^[0-9]+[.,][0-9]{9}$`)
	reUnit    = regexp.MustCompile(`^[A-Za-z%/][A-Za-z0-9%/._-]*$`)

	// reEvent is an event name as perf prints it: perf's own names and
	// those of its JSON event lists ("task-clock", "L1-dcache-load-misses",
	// "inst_retired.any"), raw events ("r003c"), tracepoints and
	// breakpoints ("sched:sched_switch", "mem:0x401000:rw"), each with
	// optional ":modifiers" ("cycles:ukp"); and sysfs PMU events with
	// optional modifiers after the closing slash ("cpu/event=0x3c/u",
	// "cpu_core/cycles/", "power/energy-pkg/").
	reEvent = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_.-]*(?::[A-Za-z0-9_.*/-]+)*|[A-Za-z_][A-Za-z0-9_.-]*/[A-Za-z0-9_.,=:@~-]*/[A-Za-z]*)$`)
	// reAggr is what perf prints before a counter when it splits the
	// counts: a CPU (-A), socket, die, core or cache (--per-socket,
	// --per-die, --per-core, --per-cache), NUMA node (--per-node) or
	// thread as comm-tid (--per-thread; a comm may hold spaces).
	reAggr = regexp.MustCompile(`^(?:CPU\d+|S\d+(?:-D\d+)?(?:-C\d+|-L\d+-ID\d+)?|N\d+|\S.*-\d+)$`)
)

func (s *Scanner) process(line string) {
	n := s.line
	if !utf8.ValidString(line) && strings.IndexByte(line, 0xa0) < 0 {
		s.warn(n, "line is not UTF-8 text; skipped")
		return
	}
	t := strings.TrimSpace(line)
	switch {
	case t == "":
		return
	case strings.HasPrefix(t, "# started on"):
		s.close(false)
		s.begin(n)
		s.cur.w.Started = strings.TrimSpace(strings.TrimPrefix(t, "# started on"))
		return
	case strings.HasPrefix(t, "#"):
		return // column header of -I output
	}
	if m := reHeader.FindStringSubmatch(t); m != nil {
		if s.cur == nil || len(s.cur.w.Counters)+len(s.cur.raw) > 0 || s.cur.afterElapsed || s.cur.w.Target != "" {
			s.close(false)
			s.begin(n)
		}
		target := m[1]
		if r := reRuns.FindStringSubmatch(target); r != nil {
			target = r[1]
			s.cur.w.Repeats, _ = strconv.Atoi(r[2])
		}
		s.cur.w.Target = target
		if len(target) >= 2 && target[0] == '\'' && target[len(target)-1] == '\'' {
			s.cur.w.Command = target[1 : len(target)-1]
		}
		s.cur.format = formatText
		return
	}
	if m := reElapsed.FindStringSubmatch(t); m != nil {
		if s.cur == nil {
			s.warn(n, "elapsed time without counters before it; skipped")
			return
		}
		s.cur.elapsed, s.cur.elapsedVar = m[1], m[2]
		s.cur.afterElapsed = true
		s.cur.w.EndLine = n
		return
	}
	if m := reUserSys.FindStringSubmatch(t); m != nil {
		if s.cur == nil {
			s.warn(n, "user/sys time without counters before it; skipped")
			return
		}
		if m[2] == "user" {
			s.cur.user = m[1]
		} else {
			s.cur.sys = m[1]
		}
		s.cur.w.EndLine = n
		return
	}
	var (
		c      Counter
		ts     string
		format Format
		rc     *rawCounter
		err    error
	)
	switch {
	case t[0] == '{':
		format = formatJSON
		var skip bool
		c, ts, skip, err = parseJSONLine(t)
		if skip {
			return
		}
	default:
		var ok bool
		if s.sep == "" && (s.cur == nil || s.cur.format != formatText) {
			s.sep = detectSep(line)
		}
		if s.sep != "" {
			c, ts, ok, err = parseCSVLine(line, s.sep)
			if ok {
				format = formatCSV
				break
			}
			if err != nil {
				break
			}
		}
		var r rawCounter
		r, ts, ok = parseTextLine(line)
		if ok {
			format = formatText
			rc = &r
			c = r.c
			err = nil
			break
		}
		if s.sep == "" {
			// a -x line inside text output
			if sep := detectSep(line); sep != "" {
				c, ts, ok, err = parseCSVLine(line, sep)
				if ok && err == nil {
					format = formatCSV
					break
				}
			}
		}
		if err == nil {
			if strings.Trim(t, ",;|:\t ") == "" || isMetricOnly(line, s.sep) {
				return // a continuation line with a metric only
			}
			err = errors.New("not a perf stat line")
		}
	}
	if err != nil {
		s.warn(n, "%v; line skipped", err)
		return
	}
	s.add(n, format, c, ts, rc)
}

// isMetricOnly reports a -x line that has only a metric (perf prints one for
// the second and later shadow metrics of an event).
func isMetricOnly(line, sep string) bool {
	if sep == "" {
		return false
	}
	f := strings.Split(line, sep)
	return len(f) >= 3 && strings.TrimSpace(f[0]) == "" && strings.TrimSpace(f[1]) == "" && strings.TrimSpace(f[2]) == ""
}

// begin starts a new run's window.
func (s *Scanner) begin(line int) {
	s.run++
	s.cur = &pending{w: &Window{Run: s.run, Line: line, EndLine: line}, keys: map[string]bool{}}
}

// add files a counter into the current window, starting a new window (and,
// when the counters start over, a new run) when needed.
func (s *Scanner) add(n int, format Format, c Counter, tsRaw string, rc *rawCounter) {
	c.Line = n
	if rc != nil {
		rc.c.Line = n
	}
	var ts float64
	if tsRaw != "" {
		v, err := parsePlain(tsRaw)
		if err != nil {
			s.warn(n, "interval time %q: %v; line skipped", tsRaw, err)
			return
		}
		ts = v
	}
	key := c.Aggr + "\x00" + c.Event
	if s.cur != nil && s.cur.format != formatUnknown && s.cur.format != format && (len(s.cur.w.Counters)+len(s.cur.raw) > 0 || s.cur.w.Target != "") {
		if s.cur.mixed == 0 {
			s.cur.mixedLine = n
		}
		s.cur.mixed++
		return
	}
	switch {
	case s.cur == nil || s.cur.afterElapsed:
		s.close(false)
		s.begin(n)
	case ts > 0 && s.cur.w.Interval > 0 && ts != s.cur.w.Interval:
		// next interval: same run when time goes on, else a new run
		prev := s.cur.w
		s.close(false)
		if ts > prev.Interval {
			s.cur = &pending{w: &Window{Run: prev.Run, Line: n, EndLine: n, Start: prev.Interval, Target: prev.Target,
				Command: prev.Command, Started: prev.Started}, keys: map[string]bool{}}
		} else {
			s.begin(n)
		}
	case s.cur.keys[key] || (ts > 0) != (s.cur.w.Interval > 0) && len(s.cur.keys) > 0:
		s.close(false)
		s.begin(n)
	}
	p := s.cur
	p.format = format
	p.w.Format = format
	p.keys[key] = true
	p.w.EndLine = n
	if ts > 0 {
		p.w.Interval = ts
	}
	s.sawCounters = true
	if rc != nil {
		p.raw = append(p.raw, *rc)
		return
	}
	p.w.Counters = append(p.w.Counters, c)
}

// close finishes the current window and queues it.
func (s *Scanner) close(atEOF bool) {
	p := s.cur
	s.cur = nil
	if p == nil {
		return
	}
	w := p.w
	if p.mixed > 0 {
		s.warn(p.mixedLine, "%d line(s) of another perf stat format inside %s output (mixed formats); skipped", p.mixed, p.format)
	}
	if len(p.raw) == 0 && len(w.Counters) == 0 {
		if w.Target != "" || w.Started != "" {
			s.warn(w.Line, "perf stat run with no counter lines (perf failed, or the file is truncated)")
		}
		return
	}
	if len(p.raw) > 0 {
		s.finishText(p)
	}
	if atEOF && s.lastCut {
		w.Truncated = true
		s.warn(s.line, "input ends in the middle of a line: the last run may be cut short")
	}
	if atEOF && w.Format == formatText && w.Interval == 0 && p.elapsed == "" && !w.Truncated {
		w.Truncated = true
		s.warn(w.EndLine, "run ends without its \"seconds time elapsed\" line: the file may be truncated")
	}
	s.ready = append(s.ready, w)
}

// finishText decides the decimal separator of a text window and parses its
// numbers.
func (s *Scanner) finishText(p *pending) {
	w := p.w
	dec := s.opts.Decimal
	if dec == 0 {
		var dots, commas int
		ev := append([]string{p.elapsed, p.elapsedVar, p.user, p.sys}, p.evidence...)
		for _, r := range p.raw {
			ev = append(ev, r.pct, r.vari, r.metic)
		}
		for _, e := range ev {
			switch decimalEvidence(e) {
			case '.':
				dots++
			case ',':
				commas++
			}
		}
		switch {
		case commas > dots:
			s.dec = ','
		case dots > 0:
			s.dec = '.'
		}
		dec = s.dec
		if dec == 0 {
			dec = '.'
		}
	}
	plain := func(str, what string, line int) float64 {
		if str == "" {
			return 0
		}
		v, err := parseGrouped(str, dec)
		if err != nil {
			s.warn(line, "%s: %v", what, err)
			return 0
		}
		return v
	}
	if p.elapsed != "" {
		w.Elapsed = plain(p.elapsed, "elapsed time", w.EndLine)
		w.ElapsedVariance = plain(p.elapsedVar, "elapsed time variance", w.EndLine)
	}
	if p.user != "" || p.sys != "" {
		w.HasUserSys = true
		w.User = plain(p.user, "user time", w.EndLine)
		w.Sys = plain(p.sys, "sys time", w.EndLine)
	}
	for _, r := range p.raw {
		c := r.c
		if r.value != notCounted && r.value != notSupported {
			v, err := parseGrouped(r.value, dec)
			if err != nil {
				s.warn(c.Line, "value of %s: %v; line skipped", c.Event, err)
				continue
			}
			c.Value, c.Unit = applyUnit(v, c.Unit)
		} else {
			_, c.Unit = applyUnit(0, c.Unit)
		}
		c.Percent = 100
		if r.pct != "" {
			c.Percent = plain(r.pct, "percentage of "+c.Event, c.Line)
			if c.Percent > 100 {
				s.warn(c.Line, "%s ran %v%% of the time, more than 100%%; line skipped", c.Event, c.Percent)
				continue
			}
		}
		if r.vari != "" {
			c.HasVariance = true
			c.Variance = plain(r.vari, "variance of "+c.Event, c.Line)
		}
		if r.metic != "" {
			c.Metric, c.MetricUnit = parseMetric(r.metic, dec)
		}
		c.Status = status(r.value, c.Percent)
		w.Counters = append(w.Counters, c)
	}
}

func status(value string, pct float64) record.Status {
	switch value {
	case notCounted:
		return record.StatusNotCounted
	case notSupported:
		return record.StatusNotSupported
	}
	if pct < 100 {
		return record.StatusScaled
	}
	return record.StatusCounted
}

// parseMetric reads "1.176 CPUs utilized" after the '#'.
func parseMetric(m string, dec byte) (float64, string) {
	f := strings.Fields(m)
	if len(f) == 0 {
		return 0, ""
	}
	num := strings.TrimSuffix(f[0], "%")
	unit := strings.Join(f[1:], " ")
	if num != f[0] {
		unit = strings.TrimSpace("% " + unit)
	}
	v, err := parseGrouped(num, dec)
	if err != nil {
		return 0, ""
	}
	return v, unit
}

// splitSpaces splits on ASCII spaces and tabs only: no-break spaces group
// thousands in some locales.
func splitSpaces(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
}

// parseTextLine reads one counter line of the default format.
func parseTextLine(line string) (rawCounter, string, bool) {
	var r rawCounter
	s := line
	if m := reVar.FindStringSubmatchIndex(s); m != nil {
		r.vari = s[m[2]:m[3]]
		s = s[:m[0]] + s[m[1]:]
	}
	if m := rePct.FindStringSubmatchIndex(s); m != nil {
		r.pct = s[m[2]:m[3]]
		s = s[:m[0]] + s[m[1]:]
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		r.metic = strings.TrimSpace(s[i+1:])
		s = s[:i]
	}
	s = strings.ReplaceAll(s, notCounted, "<not_counted>")
	s = strings.ReplaceAll(s, notSupported, "<not_supported>")
	tok := splitSpaces(s)
	for i := range tok {
		switch tok[i] {
		case "<not_counted>":
			tok[i] = notCounted
		case "<not_supported>":
			tok[i] = notSupported
		}
	}
	for i := 0; i < len(tok) && i < 6; i++ {
		if !isValueToken(tok[i]) {
			continue
		}
		rest := tok[i+1:]
		var unit, event string
		switch {
		case len(rest) == 1 && eventLike(rest[0]):
			event = rest[0]
		case len(rest) == 2 && reUnit.MatchString(rest[0]) && eventLike(rest[1]):
			unit, event = rest[0], rest[1]
		default:
			continue
		}
		prefix := tok[:i]
		var ts string
		if len(prefix) > 0 && reTS.MatchString(prefix[0]) {
			ts = prefix[0]
			prefix = prefix[1:]
		}
		if len(prefix) > 1 && isDigits(prefix[len(prefix)-1]) {
			prefix = prefix[:len(prefix)-1] // number of CPUs aggregated (--per-core, --per-socket)
		}
		aggr := strings.Join(prefix, " ")
		if aggr != "" && !reAggr.MatchString(aggr) {
			continue
		}
		r.value = tok[i]
		r.c = Counter{Event: event, Unit: unit, Aggr: aggr}
		return r, ts, true
	}
	return r, "", false
}

// eventLike reports whether s is an event name as perf prints it (reEvent).
func eventLike(s string) bool {
	return reEvent.MatchString(s)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// detectSep finds the -x separator of a line, or "".
func detectSep(line string) string {
	for _, sep := range []string{",", ";", "\t", "|", ":"} {
		if !strings.Contains(line, sep) {
			continue
		}
		if _, _, ok, _ := parseCSVLine(line, sep); ok {
			return sep
		}
	}
	return ""
}

// parseCSVLine reads one -x line. ok is false when the line does not have
// the -x layout; err is set when it has it but a field is wrong.
func parseCSVLine(line, sep string) (c Counter, ts string, ok bool, err error) {
	f := strings.Split(line, sep)
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	vi := -1
	for i := 0; i+2 < len(f) && i < 4; i++ {
		if isCSVValue(f[i]) && (f[i+1] == "" || reUnit.MatchString(f[i+1])) && eventLike(f[i+2]) {
			vi = i
			break
		}
	}
	if vi < 0 {
		return c, "", false, nil
	}
	prefix := f[:vi]
	if len(prefix) > 0 && isPlainFloat(prefix[0]) && strings.ContainsAny(prefix[0], ".,") {
		ts = prefix[0]
		prefix = prefix[1:]
	}
	if len(prefix) > 1 && isDigits(prefix[len(prefix)-1]) {
		prefix = prefix[:len(prefix)-1]
	}
	c.Aggr = strings.Join(prefix, sep)
	if c.Aggr != "" && !reAggr.MatchString(c.Aggr) {
		return Counter{}, "", false, nil
	}
	c.Event = f[vi+2]
	value := f[vi]
	rest := f[vi+3:]
	j := 0
	if j < len(rest) && rest[j] != "" && !strings.HasSuffix(rest[j], "%") && !isDigits(rest[j]) {
		j++ // cgroup (-G)
	}
	if j < len(rest) && strings.HasSuffix(rest[j], "%") {
		v, e := parsePlain(strings.TrimSuffix(rest[j], "%"))
		if e != nil {
			return c, ts, true, fmt.Errorf("variance of %s: %w", c.Event, e)
		}
		c.Variance, c.HasVariance = v, true
		j++
	}
	c.Percent = 100
	if j < len(rest) && rest[j] != "" {
		run, e := strconv.ParseUint(rest[j], 10, 64)
		if e != nil {
			return c, ts, true, fmt.Errorf("running time of %s: %q is not a count of ns", c.Event, rest[j])
		}
		c.Running, c.HasRunning = run, true
	}
	if j+1 < len(rest) && rest[j+1] != "" {
		p, e := parsePlain(rest[j+1])
		if e != nil || p > 100 {
			return c, ts, true, fmt.Errorf("running percentage of %s: %q is not a percentage", c.Event, rest[j+1])
		}
		c.Percent = p
	}
	if j+2 < len(rest) && rest[j+2] != "" {
		if m, e := parsePlain(rest[j+2]); e == nil {
			c.Metric = m
			if j+3 < len(rest) {
				c.MetricUnit = rest[j+3]
			}
		}
	}
	c.Unit = f[vi+1]
	if value != notCounted && value != notSupported {
		v, e := parsePlain(value)
		if e != nil {
			return c, ts, true, fmt.Errorf("value of %s: %w", c.Event, e)
		}
		c.Value, c.Unit = applyUnit(v, c.Unit)
	} else {
		_, c.Unit = applyUnit(0, c.Unit)
	}
	c.Status = status(value, c.Percent)
	return c, ts, true, nil
}

func isCSVValue(s string) bool {
	return s == notCounted || s == notSupported || isPlainFloat(s)
}

func isPlainFloat(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	seps := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '.' || c == ',':
			seps++
		default:
			return false
		}
	}
	return seps <= 1
}

// jsonLine is one line of perf stat -j (perf 6.x).
type jsonLine struct {
	Interval     *float64        `json:"interval"`
	CPU          json.RawMessage `json:"cpu"`
	Thread       string          `json:"thread"`
	Core         string          `json:"core"`
	Die          string          `json:"die"`
	Socket       json.RawMessage `json:"socket"`
	Node         string          `json:"node"`
	CounterValue *string         `json:"counter-value"`
	Unit         string          `json:"unit"`
	Event        string          `json:"event"`
	Variance     *float64        `json:"variance"`
	EventRuntime *float64        `json:"event-runtime"`
	PcntRunning  *float64        `json:"pcnt-running"`
	MetricValue  *float64        `json:"metric-value"`
	MetricUnit   string          `json:"metric-unit"`
}

func parseJSONLine(t string) (c Counter, ts string, skip bool, err error) {
	var j jsonLine
	if err := json.Unmarshal([]byte(t), &j); err != nil {
		return c, "", false, fmt.Errorf("bad perf stat -j line: %w", err)
	}
	if j.CounterValue == nil || j.Event == "" {
		return c, "", true, nil // metric-only line
	}
	if j.Interval != nil {
		if *j.Interval <= 0 {
			return c, "", false, fmt.Errorf("interval time %v is not positive", *j.Interval)
		}
		ts = strconv.FormatFloat(*j.Interval, 'f', -1, 64)
	}
	if !eventLike(j.Event) {
		return c, "", false, fmt.Errorf("perf stat -j line: %q is not an event name perf prints", j.Event)
	}
	c.Event = j.Event
	switch {
	case j.Thread != "":
		c.Aggr = j.Thread
	case len(j.CPU) > 0:
		c.Aggr = "CPU" + strings.Trim(string(j.CPU), `"`)
	case j.Core != "":
		c.Aggr = j.Core
	case j.Die != "":
		c.Aggr = j.Die
	case len(j.Socket) > 0:
		c.Aggr = strings.Trim(string(j.Socket), `"`)
	case j.Node != "":
		c.Aggr = j.Node
	}
	c.Percent = 100
	if j.PcntRunning != nil {
		if *j.PcntRunning < 0 || *j.PcntRunning > 100 {
			return c, "", false, fmt.Errorf("running percentage %v of %s is not a percentage", *j.PcntRunning, c.Event)
		}
		c.Percent = *j.PcntRunning
	}
	if j.EventRuntime != nil {
		if *j.EventRuntime < 0 || *j.EventRuntime > 1.8e19 {
			return c, "", false, fmt.Errorf("running time %v of %s is out of range", *j.EventRuntime, c.Event)
		}
		c.Running, c.HasRunning = uint64(*j.EventRuntime), true
	}
	if j.Variance != nil {
		c.Variance, c.HasVariance = *j.Variance, true
	}
	if j.MetricValue != nil && j.MetricUnit != "" {
		c.Metric, c.MetricUnit = *j.MetricValue, j.MetricUnit
	}
	value := *j.CounterValue
	c.Unit = j.Unit
	if value != notCounted && value != notSupported {
		v, e := parsePlain(value)
		if e != nil {
			return c, "", false, fmt.Errorf("value of %s: %w", c.Event, e)
		}
		c.Value, c.Unit = applyUnit(v, c.Unit)
	} else {
		_, c.Unit = applyUnit(0, c.Unit)
	}
	c.Status = status(value, c.Percent)
	return c, ts, false, nil
}
