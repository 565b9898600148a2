package runner

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

// stepOverhead is the time a measurement takes besides its load, as first
// estimated: opening counters, sysbench connecting, writing the Record.
const stepOverhead = time.Second

// progress tells the user where the run is: on a terminal, one line redrawn
// every second (a bar, step i of N, what runs, elapsed, ETA); elsewhere, a
// line when each measurement starts and ends. Messages in between are
// printed as lines of their own.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	term  bool
	width int
	now   func() time.Time

	began time.Time
	total int
	// plannedTotal is the planned time of every measurement of the run,
	// plannedDone of those finished.
	plannedTotal, plannedDone time.Duration
	tail                      time.Duration

	// What runs now.
	i          int
	what       string
	curBegan   time.Time
	curPlanned time.Duration
	shown      bool // a bar is on the terminal's last line

	stopTick chan struct{}
	closed   bool
	// group counts the versions of each comparison.
	group map[string]int
}

func newProgress(w io.Writer, term bool, width int, pending []plan.Item, tail time.Duration) *progress {
	p := &progress{w: w, term: term, width: width, now: time.Now, tail: tail}
	if p.width <= 0 {
		p.width = 80
	}
	p.began = p.now()
	p.group = map[string]int{}
	for _, it := range pending {
		if it.Action == plan.ActionMeasure && it.Comparison != "" {
			p.group[it.Comparison]++
		}
	}
	for _, it := range pending {
		if it.Action == plan.ActionMeasure {
			p.total++
			p.plannedTotal += p.planned(it)
		}
	}
	if term {
		p.stopTick = make(chan struct{})
		go p.tick()
	}
	return p
}

// drop takes measurements the run will not make after all (repeats =
// "auto") out of the totals.
func (p *progress) drop(items []plan.Item) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, it := range items {
		p.total--
		p.plannedTotal -= p.planned(it)
	}
}

// planned is the time a measurement is expected to take. The versions of a
// comparison share its warm-up and tail, and take a window each (in slices;
// a duet takes less).
func (p *progress) planned(it plan.Item) time.Duration {
	w, d := it.Window()
	if n := p.group[it.Comparison]; n > 1 {
		return (w+p.tail+stepOverhead)/time.Duration(n) + d
	}
	return w + d + p.tail + stepOverhead
}

func (p *progress) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stopTick:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// close ends the redrawing and clears the bar.
func (p *progress) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if p.stopTick != nil {
		close(p.stopTick)
	}
	p.clear()
}

// printf prints a message line (the bar, if any, is redrawn under it).
func (p *progress) printf(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, format+"\n", args...)
	p.draw()
}

// activity says what runs between measurements (start, load, flush, stop).
func (p *progress) activity(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.what, p.curBegan, p.curPlanned = what, p.now(), 0
	p.draw()
}

// begin says that measurement i (from 1) starts.
func (p *progress) begin(i int, it plan.Item) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.i = i
	p.what = fmt.Sprintf("%s %s threads=%d repeat=%d", it.Version.Label, it.Step.Label, it.Threads, it.Repeat)
	p.curBegan, p.curPlanned = p.now(), p.planned(it)
	if !p.term {
		fmt.Fprintf(p.w, "perfbench run: [%d/%d] %s (elapsed %s, ETA %s)\n", p.i, p.total, p.what, fmtDuration(p.now().Sub(p.began)), p.eta())
		return
	}
	p.draw()
}

// beginGroup says that the measurements of a comparison, numbered from
// first, begin together.
func (p *progress) beginGroup(first int, items []plan.Item) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := first + len(items) - 1
	p.i = last
	labels := make([]string, len(items))
	planned := time.Duration(0)
	for i, it := range items {
		labels[i] = it.Version.Label
		planned += p.planned(it)
	}
	it := items[0]
	p.what = fmt.Sprintf("%s threads=%d repeat=%d: %s compared together", it.Step.Label, it.Threads, it.Repeat, strings.Join(labels, ", "))
	p.curBegan, p.curPlanned = p.now(), planned
	if !p.term {
		fmt.Fprintf(p.w, "perfbench run: [%d-%d/%d] %s (elapsed %s, ETA %s)\n", first, last, p.total, p.what, fmtDuration(p.now().Sub(p.began)), p.eta())
		return
	}
	p.draw()
}

// end says how measurement it ended, and whether its Record could not be
// written (werr).
func (p *progress) end(it plan.Item, rec *record.Record, werr error) {
	p.endOf(p.i, it, rec, werr)
}

// endOf is end for measurement i.
func (p *progress) endOf(i int, it plan.Item, rec *record.Record, werr error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.plannedDone += p.planned(it)
	p.curPlanned = 0
	how := string(rec.Outcome)
	if rec.Outcome == record.OutcomeOK {
		secs := rec.Window.Seconds
		if a := rec.ActiveSeconds(); a > 0 {
			secs = a
		}
		if rec.Ops.Count > 0 && secs > 0 {
			how += fmt.Sprintf(", %.0f %s/s", rec.Ops.Count/secs, opsName(rec.Ops))
		}
		if cmp := rec.Comparison; cmp != nil {
			how += fmt.Sprintf(" (%s, %d slices)", cmp.Mode, ranSlices(cmp.Slices))
		}
	} else if rec.Error != "" {
		how += ": " + firstLine(rec.Error)
	}
	if n := len(rec.Warnings); n > 0 && rec.Outcome == record.OutcomeOK {
		first := shorten(firstLine(rec.Warnings[0].Text), 100)
		if n == 1 {
			how += " (warning: " + first + ")"
		} else {
			how += fmt.Sprintf(" (%d warnings in the Record; the first: %s)", n, first)
		}
	}
	if werr != nil {
		how += "; its Record was not written: " + werr.Error()
	}
	p.clear()
	fmt.Fprintf(p.w, "perfbench run: [%d/%d] %s %s %s\n", i, p.total, it.Version.Label, it.Step.Label, how)
	p.draw()
}

func opsName(o record.Ops) string {
	if o.Per > 0 && o.Per != 1 {
		return fmt.Sprintf("%s/%g", o.Source, o.Per)
	}
	return o.Source
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// eta estimates the time left: the planned time of what is left, scaled by
// how the run has kept to its plan so far.
func (p *progress) eta() string {
	now := p.now()
	cur := now.Sub(p.curBegan)
	if cur > p.curPlanned {
		cur = p.curPlanned
	}
	if p.curPlanned == 0 {
		cur = 0
	}
	doneP := p.plannedDone + cur
	left := p.plannedTotal - doneP
	if left < 0 {
		left = 0
	}
	// Scale once a measurement has finished: before, the elapsed time is
	// mostly starting servers and loading data.
	if elapsed := now.Sub(p.began); p.plannedDone > 0 && elapsed > 0 {
		left = time.Duration(float64(left) * float64(elapsed) / float64(doneP))
	}
	return fmtDuration(left)
}

// line is the bar's text.
func (p *progress) line() string {
	frac := 0.0
	if p.plannedTotal > 0 {
		cur := p.now().Sub(p.curBegan)
		if p.curPlanned == 0 {
			cur = 0
		} else if cur > p.curPlanned {
			cur = p.curPlanned
		}
		frac = float64(p.plannedDone+cur) / float64(p.plannedTotal)
	}
	const barWidth = 20
	filled := int(frac*barWidth + 0.5)
	if filled > barWidth {
		filled = barWidth
	}
	bar := "[" + strings.Repeat("#", filled) + strings.Repeat(".", barWidth-filled) + "]"
	// What runs comes last: a narrow terminal cuts it, not the times.
	s := fmt.Sprintf("%s %d/%d  elapsed %s  ETA %s  %s", bar, p.i, p.total, fmtDuration(p.now().Sub(p.began)), p.eta(), p.what)
	if r := []rune(s); len(r) > p.width-1 {
		s = string(r[:p.width-1])
	}
	return s
}

func (p *progress) draw() {
	if !p.term || p.closed {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", p.line())
	p.shown = true
}

func (p *progress) clear() {
	if p.term && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// fmtDuration prints a duration for people: "4.2s", "3:07", "1:02:03".
func fmtDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	s := int(d.Round(time.Second) / time.Second)
	if s < 3600 {
		return fmt.Sprintf("%d:%02d", s/60, s%60)
	}
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// shorten cuts s to at most n runes, ending it with "..." when cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}
