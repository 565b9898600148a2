package perfevent

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints the window as perfbench stat shows it: a header naming the
// process, its threads and the window's length, the groups, one line per
// event (total, per second, status), then the warnings. Unmeasured events
// print <not supported> or <not counted> and the reason, never a number.
func (w *Window) WriteText(out io.Writer) error {
	var b strings.Builder
	who := fmt.Sprintf("pid %d", w.Pid)
	if w.Name != "" {
		who += " (" + w.Name + ")"
	}
	what := fmt.Sprintf("%d threads", w.Coverage.Attached)
	if w.Coverage.Attached == 1 {
		what = "1 thread"
	}
	if w.Cgroup {
		what = "cgroup mode"
	}
	fmt.Fprintf(&b, "perfbench stat: %s, %s, window %.3f s", who, what, w.Total.Seconds())
	if w.Partial {
		fmt.Fprintf(&b, " (partial: %s planned)", w.Planned)
	}
	b.WriteString("\n")
	if w.Groups != "" {
		fmt.Fprintf(&b, "groups: %s\n", w.Groups)
	}
	if !w.Cgroup {
		if l := coverageLine(w.Coverage); l != "" {
			fmt.Fprintf(&b, "threads: %s\n", l)
		}
	}
	b.WriteString("\n")
	writeEventLines(&b, w.Total, w.Total.Seconds(), "")
	if ws := w.Warnings(); len(ws) > 0 {
		b.WriteString("\n")
		for _, s := range ws {
			fmt.Fprintf(&b, "warning: %s\n", s)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func writeEventLines(b *strings.Builder, r Reading, seconds float64, prefix string) {
	width := 0
	for _, ec := range r.Events {
		width = max(width, len(ec.Event.Name))
	}
	for _, ec := range r.Events {
		value, unit, rate, rateUnit := "", "", "", ""
		var status string
		switch ec.Status {
		case StatusNotSupported:
			value, status = "<not supported>", ec.Reason
		case StatusNotCounted:
			value, status = "<not counted>", ec.Reason
		default:
			v, u, prec := displayValue(ec)
			value, unit = fmt.Sprintf("%.*f", prec, v), u
			if seconds > 0 {
				rate, rateUnit = fmt.Sprintf("%.2f", v/seconds), strings.TrimSpace(u+"/s")
			}
			status = ec.Status.String()
			if ec.Status == StatusScaled {
				status += fmt.Sprintf(" (running %.1f%%)", 100*ec.Count.Fraction())
			}
		}
		line := prefix + fmt.Sprintf("%18s %-5s %-*s %16s %-8s %s", value, unit, width, ec.Event.Name, rate, rateUnit, status)
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteString("\n")
	}
}

// displayValue is an event's value in the unit people read it in: clocks in
// msec (as perf prints them), PMU aliases with a scale in their unit, counts
// as they are.
func displayValue(ec EventCount) (v float64, unit string, prec int) {
	e := ec.Event
	switch {
	case e.Unit == "ns":
		return ec.Value / 1e6, "msec", 2
	case e.Scale != 0 && e.Scale != 1:
		return ec.Value * e.Scale, e.Unit, 2
	}
	return ec.Value, e.Unit, 0
}

// coverageLine says what the attach met besides the listed threads, or ""
// when it met nothing else.
func coverageLine(c Coverage) string {
	var parts []string
	if c.Exited > 0 {
		parts = append(parts, fmt.Sprintf("%d exited before their counters opened", c.Exited))
	}
	if n := len(c.Missed); n > 0 {
		parts = append(parts, fmt.Sprintf("%d created during the attach by uncounted threads, found by the rescan and attached", n))
	}
	if c.Inherited > 0 {
		parts = append(parts, fmt.Sprintf("%d created during the attach by counted threads, counted through inheritance", c.Inherited))
	}
	if n := len(c.Ambiguous); n > 0 {
		parts = append(parts, fmt.Sprintf("%d of uncertain origin, not attached (see the warning)", n))
	}
	switch {
	case c.Raced > 0:
		parts = append(parts, fmt.Sprintf("attached %d times, as threads started during the attach (%d times with a group half open on their creator)", c.Attempts, c.Raced))
	case c.Attempts > 1:
		parts = append(parts, fmt.Sprintf("attached %d times, as threads started during the attach", c.Attempts))
	}
	return strings.Join(parts, "; ")
}
