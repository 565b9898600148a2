package measure

import (
	"fmt"
	"strings"
	"time"

	"github.com/perfbench/perfbench/record"
)

// A window or an interval that lasts much longer than planned means that
// perfbench's timer fired late or that a read at its edge (SHOW GLOBAL
// STATUS, /proc) took that long: the machine or the server stalled. Counts
// per op stay right (counters and op count cover the same stretch), rates per
// second do not describe the load as planned.
const (
	// stallFactor: a series interval lasting more than stallFactor times
	// the planned interval is warned about.
	stallFactor = 1.5
	// overrunFraction and overrunMin: a window lasting more than its plan
	// plus both of these is warned about.
	overrunFraction = 0.25
	overrunMin      = 500 * time.Millisecond
)

// stallWarnings returns the warnings for a window planned to last planned
// (0: no planned length) that lasted secs, with series points planned every
// interval (0: no series).
func stallWarnings(planned time.Duration, secs float64, interval time.Duration, points []record.Point) []string {
	var out []string
	if planned > 0 {
		over := secs - planned.Seconds()
		if over > overrunFraction*planned.Seconds() && over > overrunMin.Seconds() {
			out = append(out, fmt.Sprintf("the window lasted %.2f s for a planned %g s: the machine or the server stalled; numbers per second are unreliable, numbers per op are still counted", secs, planned.Seconds()))
		}
	}
	if interval > 0 {
		var long []string
		n := 0
		for _, p := range points {
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
			out = append(out, fmt.Sprintf("%d series %s of a planned %g s lasted over %gx that (%s%s): the machine or the server stalled; those points' numbers per second are unreliable", n, what, interval.Seconds(), stallFactor, strings.Join(long, ", "), more))
		}
	}
	return out
}

// longInterval reports whether series point p lasted more than stallFactor
// times the planned interval.
func longInterval(p record.Point, interval time.Duration) bool {
	return interval > 0 && p.Seconds > stallFactor*interval.Seconds()
}
