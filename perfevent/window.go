package perfevent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perfbench/perfbench/record"
)

// WindowOptions say how long a window lasts and what happens inside it. The
// zero value measures until ctx is done, with no series.
type WindowOptions struct {
	// Duration is the planned length of the window; 0 means until ctx is
	// done (then ending by ctx is the plan, not an interruption).
	Duration time.Duration
	// Interval, when positive, also reads the counters every Interval and
	// keeps each interval's delta in Window.Series.
	Interval time.Duration
	// OnInterval, when set, is called with each interval's delta as it
	// ends, for live output.
	OnInterval func(Reading)
	// OnStart and OnEnd, when set, are called right after the counters
	// are read at the window's start and at its end, with the instant of
	// the read: callers read their other sources (server status, /proc)
	// there, so every number covers the same window. An error from either
	// ends the measurement with that error.
	OnStart, OnEnd func(at time.Time) error
	// BeforeStart and BeforeEnd, when set, are called right before the
	// counters are read at the window's start and end: callers open and
	// close there what must cover the counters' window and nothing more
	// (a profile's samples).
	BeforeStart, BeforeEnd func()
}

// Window is one measured window.
type Window struct {
	// Pid is the process counted; Name its command name and Exe its
	// executable when they could be read at the start of the window.
	Pid  int
	Name string
	Exe  string
	// Total is the window: every counter's delta between the first and
	// the last read.
	Total Reading
	// Series holds the interval deltas when WindowOptions.Interval was
	// set; they add up to Total.
	Series []Reading
	// Planned is WindowOptions.Duration.
	Planned time.Duration
	// Partial is true when ctx ended the window before Planned.
	Partial bool
	// Coverage and Groups describe the attachment the window was read
	// from.
	Coverage Coverage
	Groups   string
	Cgroup   bool
}

// Measure reads a at the start of a window, every opts.Interval inside it,
// and at its end (after opts.Duration, or when ctx is done, which makes a
// planned window Partial), and returns the deltas. The attachment stays
// open.
func Measure(ctx context.Context, a *Attachment, opts WindowOptions) (*Window, error) {
	w := &Window{Pid: a.Pid(), Planned: opts.Duration, Coverage: a.Coverage(), Groups: a.Groups(), Cgroup: a.cgroup}
	w.Name, w.Exe = processIdentity(a.root, a.pid)
	if opts.BeforeStart != nil {
		opts.BeforeStart()
	}
	start, err := a.Read()
	if err != nil {
		return nil, err
	}
	if opts.OnStart != nil {
		if err := opts.OnStart(start.End); err != nil {
			return nil, err
		}
	}
	var deadline <-chan time.Time
	if opts.Duration > 0 {
		t := time.NewTimer(opts.Duration)
		defer t.Stop()
		deadline = t.C
	}
	var tick <-chan time.Time
	if opts.Interval > 0 {
		tk := time.NewTicker(opts.Interval)
		defer tk.Stop()
		tick = tk.C
	}
	prev := start
	interval := func(r Reading) error {
		d, err := r.Sub(prev)
		if err != nil {
			return err
		}
		w.Series = append(w.Series, d)
		if opts.OnInterval != nil {
			opts.OnInterval(d)
		}
		prev = r
		return nil
	}
loop:
	for {
		select {
		case <-ctx.Done():
			w.Partial = opts.Duration > 0
			break loop
		case <-deadline:
			break loop
		case <-tick:
			r, err := a.Read()
			if err != nil {
				return nil, err
			}
			if err := interval(r); err != nil {
				return nil, err
			}
		}
	}
	if opts.BeforeEnd != nil {
		opts.BeforeEnd()
	}
	end, err := a.Read()
	if err != nil {
		return nil, err
	}
	if opts.OnEnd != nil {
		if err := opts.OnEnd(end.End); err != nil {
			return nil, err
		}
	}
	if opts.Interval > 0 && end.End.After(prev.End) {
		if err := interval(end); err != nil {
			return nil, err
		}
	}
	if w.Total, err = end.Sub(start); err != nil {
		return nil, err
	}
	return w, nil
}

// StatOptions are the options of Stat.
type StatOptions struct {
	Attach Options
	Window WindowOptions
	// OnAttach, when set, is called once the counters are open, before the
	// window starts (for progress messages).
	OnAttach func(*Attachment)
}

// Stat counts events on process pid over one window and closes the counters:
// what perfbench stat does. Attach errors are returned as they are.
func Stat(ctx context.Context, pid int, events []Event, opts StatOptions) (*Window, error) {
	a, err := Attach(pid, events, opts.Attach)
	if err != nil {
		return nil, err
	}
	if opts.OnAttach != nil {
		opts.OnAttach(a)
	}
	w, err := Measure(ctx, a, opts.Window)
	if cerr := a.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Warnings are the window's warnings: the attachment's, multiplexed and
// never-counted events, and an interrupted window.
func (w *Window) Warnings() []string {
	out := append([]string(nil), w.Total.Warnings...)
	if w.Partial {
		out = append(out, fmt.Sprintf("interrupted: the window lasted %.3f s of the %s planned", w.Total.Seconds(), w.Planned))
	}
	return out
}

// Record builds the stat Record of the window: outcome (failed, with the
// reason, when a count is unknown: see Reading.Missing), window, counters with
// raw, enabled, running, value and status, the series, warnings, and the
// process as the Record's server. The Record's version label is the
// process's command name ("pid N" when unknown), its step "stat"; callers add
// provenance.
func (w *Window) Record() *record.Record {
	r := record.New(record.KindStat)
	if w.Partial {
		r.Outcome = record.OutcomePartial
		r.Error = fmt.Sprintf("interrupted after %.3f s of %s", w.Total.Seconds(), w.Planned)
	}
	if m := w.Total.Missing(); m != "" {
		// A count the window could not measure fails it: its other
		// counters stand, this one is not a number.
		r.Outcome = record.OutcomeFailed
		r.Error = strings.TrimPrefix(r.Error+"; "+m, "; ")
	}
	r.Step = "stat"
	r.Version = w.Name
	if r.Version == "" {
		r.Version = fmt.Sprintf("pid %d", w.Pid)
	}
	r.Host, _ = os.Hostname()
	if !w.Cgroup {
		r.Threads = w.Coverage.Attached
	}
	r.Window = record.Window{Start: w.Total.Start, End: w.Total.End, Seconds: w.Total.Seconds()}
	r.Counters = w.Total.RecordCounters()
	r.WarnText(w.Warnings()...)
	r.Server = &record.Server{Pid: w.Pid, Exe: w.Exe}
	t := 0.0
	for _, s := range w.Series {
		t += s.Seconds()
		p := record.Point{T: t, Seconds: s.Seconds(), Counters: map[string]float64{}}
		for _, ec := range s.Events {
			if ec.Status.Measured() {
				p.Counters[ec.Event.RecordName()] = ec.Value
			}
		}
		r.Series = append(r.Series, p)
	}
	return r
}

// processIdentity reads the command name (/proc/PID/comm) and executable
// (/proc/PID/exe) of pid under root; either is empty when unreadable.
func processIdentity(root string, pid int) (name, exe string) {
	dir := filepath.Join(procDir(root), strconv.Itoa(pid))
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		name = strings.TrimSpace(string(b))
	}
	exe, _ = os.Readlink(filepath.Join(dir, "exe"))
	return name, exe
}
