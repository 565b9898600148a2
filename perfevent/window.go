package perfevent

import (
	"context"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
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
	// Tick, when not nil, reads the counters at each value received
	// instead of every Interval, and keeps each interval's delta in
	// Window.Series: a caller measuring several processes at once reads
	// them all at the same instants.
	Tick <-chan time.Time
	// OnInterval, when set, is called with each interval's delta as it
	// ends, for live output.
	OnInterval func(Reading)
	// OnStart and OnEnd, when set, are called right after the counters
	// are read at the window's start and at its end, with the instant of
	// the read: callers read their other sources (server status, /proc)
	// there, so every number covers the same window. An error from either
	// ends the measurement with that error.
	OnStart, OnEnd func(at time.Time) error
	// EndRead, when set, is given the start and end readings right after
	// the end read, before OnEnd: a caller reading /proc at the end can
	// skip the threads that did not run (Reading.Ran).
	EndRead func(start, end Reading)
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
	// StartTook is how long OnStart took, BeforeEndTook how long
	// BeforeEnd did: the caller's own reads inside the window. The
	// window is timed from the start read, so a StartTook beyond Planned
	// makes it late, as does any BeforeEndTook.
	StartTook, BeforeEndTook time.Duration
	// Coverage and Groups describe the attachment the window was read
	// from.
	Coverage coverage
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
	// The window and its intervals are timed from the start read: what
	// OnStart reads (a server's status, /proc of thousands of threads)
	// runs inside the window, not before it.
	var deadline <-chan time.Time
	if opts.Duration > 0 {
		t := time.NewTimer(opts.Duration - time.Since(start.End))
		defer t.Stop()
		deadline = t.C
	}
	tick := opts.Tick
	if tick == nil && opts.Interval > 0 {
		tk := time.NewTicker(opts.Interval)
		defer tk.Stop()
		tick = tk.C
	}
	if opts.OnStart != nil {
		t0 := time.Now()
		if err := opts.OnStart(start.End); err != nil {
			return nil, err
		}
		w.StartTook = time.Since(t0)
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
		t0 := time.Now()
		opts.BeforeEnd()
		w.BeforeEndTook = time.Since(t0)
	}
	end, err := a.Read()
	if err != nil {
		return nil, err
	}
	if opts.EndRead != nil {
		opts.EndRead(start, end)
	}
	if opts.OnEnd != nil {
		if err := opts.OnEnd(end.End); err != nil {
			return nil, err
		}
	}
	if tick != nil && end.End.After(prev.End) {
		if err := interval(end); err != nil {
			return nil, err
		}
	}
	if w.Total, err = end.Sub(start); err != nil {
		return nil, err
	}
	return w, nil
}

// processIdentity reads the command name (/proc/PID/comm) and executable
// (/proc/PID/exe) of pid under root; either is empty when unreadable.
func processIdentity(root string, pid int) (name, exe string) {
	p := procfs.New(root).Proc(pid)
	if c, err := p.Comm(); err == nil {
		name = strings.TrimSpace(c)
	}
	return name, exeLink(p)
}

// exeLink is the target of p's exe link as the kernel gives it (with the
// " (deleted)" suffix of a file removed or replaced since), "" when it
// cannot be read.
func exeLink(p procfs.Proc) string {
	exe, deleted, err := p.Exe()
	switch {
	case err != nil:
		return ""
	case deleted:
		return exe + " (deleted)"
	}
	return exe
}
