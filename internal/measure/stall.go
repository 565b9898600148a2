package measure

import (
	"fmt"
	"strings"
	"time"

	"github.com/perfbench/perfbench/record"
)

// A window or an interval that lasts much longer than planned means that
// perfbench's timer fired late, that its own reading inside the window
// (SHOW GLOBAL STATUS, /proc of every thread right after the start
// counters, which the window is timed from) ran past the planned end, or
// that a read at its edge took that long: perfbench says which when it
// measured its own reading, else that the machine or the server stalled.
// Counts per op stay right (counters and op count cover the same stretch),
// rates per second do not describe the load as planned.
const (
	// stallFactor: a series interval lasting more than stallFactor times
	// the planned interval is warned about.
	stallFactor = 1.5
	// overrunFraction and overrunMin: a window lasting more than its plan
	// plus both of these is warned about.
	overrunFraction = 0.25
	overrunMin      = 500 * time.Millisecond
	// ownOverrunMin: a window that perfbench's own reading made late by
	// more than overrunFraction of its plan and this is warned about.
	ownOverrunMin = 10 * time.Millisecond
)

// ownReading is what perfbench itself read inside a window: right after
// the start counter read (startTook: the server status, /proc of threads
// of the process), and between the planned end and the end counter read
// (beforeEnd). threads is how many threads /proc was read for at the
// start (0: unknown).
type ownReading struct {
	startTook, beforeEnd time.Duration
	threads              int
}

// late is how long past a plan of planned the reading kept the window
// open: the start's reads beyond the plan, and those before the end read.
func (o ownReading) late(planned time.Duration) time.Duration {
	return max(0, o.startTook-planned) + o.beforeEnd
}

// text says what took how long: "the reads after its start counters
// (/proc of 10001 threads among them) took 4.10 s, the reads before its
// end counters 0.02 s".
func (o ownReading) text() string {
	what := "the reads after its start counters"
	if o.threads > 0 {
		what = fmt.Sprintf("the reads after its start counters (/proc of %d threads among them)", o.threads)
	}
	return fmt.Sprintf("%s took %.2f s, the reads before its end counters %.2f s", what, o.startTook.Seconds(), o.beforeEnd.Seconds())
}

// stallWarnings returns the warnings for a window planned to last planned
// (0: no planned length) that lasted secs, with series points planned every
// interval (0: no series), perfbench's own reading inside it being own.
func stallWarnings(planned time.Duration, secs float64, interval time.Duration, points []record.Point, own ownReading) []string {
	var out []string
	if planned > 0 {
		over := secs - planned.Seconds()
		late := own.late(planned).Seconds()
		switch {
		case over <= overrunFraction*planned.Seconds():
		case late >= over/2 && over > ownOverrunMin.Seconds():
			out = append(out, fmt.Sprintf("the window lasted %.2f s for a planned %g s: perfbench's own reading kept it open "+
				"%.2f s longer (%s); numbers per second are unreliable, numbers per op are still counted", secs, planned.Seconds(), late, own.text()))
		case over > overrunMin.Seconds():
			out = append(out, fmt.Sprintf("the window lasted %.2f s for a planned %g s: the machine or the server stalled; "+
				"numbers per second are unreliable, numbers per op are still counted", secs, planned.Seconds()))
		}
	}
	if interval > 0 {
		var long []string
		n := 0
		for i, p := range points {
			if i == 0 && longInterval(p, interval) && p.Seconds <= stallFactor*max(interval, own.startTook).Seconds() {
				// The first interval waited for perfbench's own
				// reading at the window's start.
				out = append(out, fmt.Sprintf("the first series interval of a planned %g s lasted %.2f s: perfbench's own reading "+
					"at the window's start took %.2f s; that point's numbers per second are unreliable", interval.Seconds(), p.Seconds, own.startTook.Seconds()))
				continue
			}
			if longInterval(p, interval) {
				n++
				if len(long) < 3 {
					long = append(long, fmt.Sprintf("%.2f s ending at %.2f s", p.Seconds, p.T))
				}
			}
		}
		if n > 0 {
			more := ""
			if n > len(long) {
				more = fmt.Sprintf(" and %d more", n-len(long))
			}
			what := "interval"
			if n > 1 {
				what = "intervals"
			}
			out = append(out, fmt.Sprintf("%d series %s of a planned %g s lasted over %gx that (%s%s): the machine or the server "+
				"stalled; those points' numbers per second are unreliable", n, what, interval.Seconds(), stallFactor, strings.Join(long, ", "), more))
		}
	}
	return out
}

// longInterval reports whether series point p lasted more than stallFactor
// times the planned interval.
func longInterval(p record.Point, interval time.Duration) bool {
	return interval > 0 && p.Seconds > stallFactor*interval.Seconds()
}
