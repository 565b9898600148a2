package measure

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/perfbench/perfbench/record"
)

// clientSlack is how far the client's run may stick out of the window, at
// either end, and still count as inside it: clock reads of one machine.
const clientSlack = 20 * time.Millisecond

// minClientCoverage is the share of the window (of its part during the
// client's run) that the client's per-interval lines must cover for a client
// op count summed from them. Below it there is no count: the lines left out
// are usually the run's last, partial second, and pro-rating the rest would
// be a guess. 95% lets a long window miss part of one line, never a whole
// one in a short window.
const minClientCoverage = 0.95

// ApplyClient sets r.Client to c and, when op is a client op source
// (opClientQueries, opClientTransactions, opClientEvents, each alone or
// with how many of it make one op: "client.queries/10"), sets r.Ops from
// the client's counts over the window and the per-op values from it: the
// one place a client-counted Record's counts are divided by its ops. Other op
// sources leave r.Ops alone. Whatever op is, per-interval lines that jump
// (sysbench printing [ 3s ] after [ 1s ]: the client stalled) are warned
// about.
//
// The client's counts are aligned with the window this way:
//
//   - When c.Started is known (the instant the client's clock starts:
//     sysbench's "Threads started!", else the command's start), the client
//     reported a total for op (a run cut short prints none) and its run,
//     from c.Started to c.Started + c.Seconds, lies inside the window
//     (perfbench stat with a command and no warm-up: the window opens before
//     the command starts and closes after it exits), the client's totals are
//     the window's: exact.
//   - Otherwise, with c.Started known and per-interval lines (sysbench
//     --report-interval), each interval is placed at [Started + At − length,
//     Started + At] and its rate times its overlap with the window is summed
//     over the part of the window during the client's run (outside it the
//     client sent nothing). When the lines cover at least minClientCoverage
//     of that part, the sum is scaled to all of it (the part not covered
//     taken at the covered part's rate, and Ops.Estimated set when that
//     part is over 1%) and a warning says the count is approximate:
//     sysbench's interval clock and its rounded rates, and intervals cut by
//     the window's edges, are pro-rated. When they cover
//     less (typically: the window reaches the run's end and sysbench printed
//     no line for its last, partial interval), there is no count, and the
//     warning says so and suggests the server's count (--op Questions),
//     which covers exactly the window.
//   - When c.Started is not known, the totals are used only when the window
//     had no warm-up and lasted at least the client's run, with a warning
//     that the alignment is assumed.
//   - The client's totals are never taken for a window that holds only part
//     of the run.
//   - Otherwise r.Ops has the source and no count, and a warning says why.
func ApplyClient(r *record.Record, c *record.Client, op string) {
	r.Client = c
	if c == nil {
		return
	}
	if r.Comparison != nil && r.Comparison.Mode == record.ComparisonSlices {
		// The load was stopped outside its slices: its lines jump there
		// by design.
		r.Warnf(record.WarnGeneral, "the load was stopped (SIGSTOP) outside its slices: its own per-interval lines, rates and latencies include those pauses")
	} else {
		for _, w := range clientGaps(c, r.Window.Start, r.Window.End) {
			r.Warnf(record.WarnGeneral, "%s", w)
		}
	}
	src, per, ok := clientOp(op)
	if !ok {
		return
	}
	op = src
	r.Ops = record.Ops{Source: op, Per: per}
	defer func() {
		// Counted in the client's units; an op is per of them.
		r.Ops.Count /= per
		setPerOp(r)
	}()
	total, rate := clientCounts(c, op)
	ws, we := r.Window.Start, r.Window.End
	if !c.Started.IsZero() {
		ce := c.Started.Add(seconds(c.Seconds))
		if total > 0 && c.Seconds > 0 && !c.Started.Before(ws.Add(-clientSlack)) && !ce.After(we.Add(clientSlack)) {
			r.Ops.Count, r.Ops.Counted = total, true
			return
		}
		if len(c.Intervals) == 0 {
			r.Warnf(record.WarnOpsNotCounted, "no %s count for the window: the client ran outside it (warm-up, or a window "+
				"shorter than the run) and printed no per-interval lines to align (sysbench --report-interval=1); --op Questions counts the window itself", op)
			return
		}
		// The part of the window during the client's run.
		lo, hi := ws, we
		if c.Started.After(lo) {
			lo = c.Started
		}
		if c.Seconds > 0 && ce.Before(hi) {
			hi = ce
		}
		if !hi.After(lo) {
			r.Warnf(record.WarnOpsNotCounted, "no %s count for the window: the client's run (%.3f s from %s) does not overlap "+
				"it", op, c.Seconds, c.Started.Format("15:04:05.000"))
			return
		}
		n, covered := fromIntervals(c, rate, lo, hi)
		span := hi.Sub(lo).Seconds()
		if covered < minClientCoverage {
			r.Warnf(record.WarnOpsNotCounted, "no %s count for the window: the client's per-interval lines cover only %.0f%% of "+
				"the %.3f s of the window during its run (less than %.0f%%; sysbench prints no line for its last, partial interval): "+
				"a count from them would be %.0f%% short; --op Questions counts the window itself, or end the window before the run's last second (--duration)",
				op, 100*covered, span, 100*minClientCoverage, 100*(1-covered))
			return
		}
		// A part not covered is taken at the covered part's rate; over
		// 1% of the window so taken, the count is marked estimated.
		r.Ops.Count, r.Ops.Counted = n/covered, true
		r.Ops.Estimated = covered < 0.99
		cov := "all of it covered by intervals"
		if covered < 0.9995 {
			cov = fmt.Sprintf("%.1f%% covered by intervals, scaled to all of it", 100*covered)
		}
		r.Warnf(record.WarnGeneral, "%s over the window is approximate: summed from the client's per-interval rates over the "+
			"%.3f s of the window during its run (%s), pro-rated at the window's edges", op, span, cov)
		return
	}
	if total > 0 && r.Window.Warmup == 0 && c.Seconds > 0 && c.Seconds <= r.Window.Seconds+clientSlack.Seconds() {
		r.Ops.Count, r.Ops.Counted = total, true
		r.Warnf(record.WarnGeneral, "%s assumes the window covered the client's whole run: the client's start time is not known", op)
		return
	}
	r.Warnf(record.WarnOpsNotCounted, "no %s count for the window: the client's start time is not known, so its counts cannot be aligned with the window", op)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// clientCounts returns the client's total for op and the per-interval rate of
// op.
func clientCounts(c *record.Client, op string) (float64, func(record.Interval) float64) {
	switch op {
	case opClientQueries:
		return c.Queries, func(iv record.Interval) float64 { return iv.QPS }
	case opClientTransactions:
		return c.Transactions, func(iv record.Interval) float64 { return iv.TPS }
	default: // events: sysbench's interval "tps" is events per second
		return c.Events, func(iv record.Interval) float64 { return iv.TPS }
	}
}

// fromIntervals sums rate × overlap of each interval with [lo, hi] and
// returns the fraction of [lo, hi] the intervals cover.
func fromIntervals(c *record.Client, rate func(record.Interval) float64, lo, hi time.Time) (count, covered float64) {
	win := hi.Sub(lo).Seconds()
	if win <= 0 {
		return 0, 0
	}
	prev := 0.0
	sec := func(at float64) time.Time { return c.Started.Add(seconds(at)) }
	over := 0.0
	for _, iv := range c.Intervals {
		b, e := sec(prev), sec(iv.At)
		prev = iv.At
		if b.Before(lo) {
			b = lo
		}
		if e.After(hi) {
			e = hi
		}
		if !e.After(b) {
			continue
		}
		d := e.Sub(b).Seconds()
		count += rate(iv) * d
		over += d
	}
	return count, min(over/win, 1)
}

// clientGaps warns about per-interval lines further apart than stallFactor
// times the usual spacing (the median one): the client, or the machine,
// stalled and the lines around the gap average over it. With c.Started
// known, only gaps that overlap [ws, we] count.
func clientGaps(c *record.Client, ws, we time.Time) []string {
	if len(c.Intervals) < 3 {
		return nil
	}
	var steps []float64
	prev := 0.0
	for _, iv := range c.Intervals {
		steps = append(steps, iv.At-prev)
		prev = iv.At
	}
	sorted := append([]float64(nil), steps...)
	sort.Float64s(sorted)
	usual := sorted[len(sorted)/2]
	if usual <= 0 {
		return nil
	}
	var gaps []string
	n := 0
	prev = 0
	for i, iv := range c.Intervals {
		from := prev
		prev = iv.At
		if steps[i] <= stallFactor*usual {
			continue
		}
		if !c.Started.IsZero() && !ws.IsZero() {
			b, e := c.Started.Add(seconds(from)), c.Started.Add(seconds(iv.At))
			if !e.After(ws) || !b.Before(we) {
				continue
			}
		}
		n++
		if len(gaps) < 3 {
			gaps = append(gaps, fmt.Sprintf("[%gs] to [%gs]", from, iv.At))
		}
	}
	if n == 0 {
		return nil
	}
	more := ""
	if n > len(gaps) {
		more = fmt.Sprintf(" and %d more", n-len(gaps))
	}
	return []string{fmt.Sprintf("the client's per-interval lines jump %s%s where they come every %g s: the client or the "+
		"machine stalled; the client's rates there average over the stall", strings.Join(gaps, ", "), more, usual)}
}
