package measure

import (
	"time"

	"github.com/perfbench/perfbench/record"
)

// clientSlack is how far the client's run may stick out of the window, at
// either end, and still count as inside it: clock reads of one machine.
const clientSlack = 20 * time.Millisecond

// ApplyClient sets r.Client to c and, when op is a client op source
// (OpClientQueries, OpClientTransactions, OpClientEvents), sets r.Ops from the
// client's counts over the window and the per-op values from it. Other op
// sources leave r.Ops alone.
//
// The client's counts are aligned with the window this way:
//
//   - When c.Started is known, the client reported a total for op (a run
//     cut short prints none) and its run, from c.Started to
//     c.Started + c.Seconds, lies inside the window (perfbench stat with a
//     command and no warm-up: the window opens before the command starts and
//     closes after it exits), the client's totals are the window's: exact.
//   - Otherwise, with c.Started known and per-interval lines (sysbench
//     --report-interval), each interval is placed at [Started + At − length,
//     Started + At] and its rate times its overlap with the window is summed.
//     That is approximate, and a warning says so: sysbench's interval clock
//     starts when its threads start, a little after the command did, its
//     rates are rounded, and intervals cut by the window's edges are
//     pro-rated. A window that the intervals do not cover entirely is
//     warned about with the fraction covered.
//   - When c.Started is not known, the totals are used only when the window
//     had no warm-up and lasted at least the client's run, with a warning
//     that the alignment is assumed.
//   - The client's totals are never taken for a window that holds only part
//     of the run.
//   - Otherwise r.Ops has the source and no count, and a warning says why.
func ApplyClient(r *record.Record, c *record.Client, op string) {
	r.Client = c
	if c == nil || !IsClientOp(op) {
		return
	}
	r.Ops = record.Ops{Source: op, Per: 1}
	defer SetPerOp(r)
	total, rate := clientCounts(c, op)
	ws, we := r.Window.Start, r.Window.End
	if !c.Started.IsZero() {
		ce := c.Started.Add(time.Duration(c.Seconds * float64(time.Second)))
		if total > 0 && c.Seconds > 0 && !c.Started.Before(ws.Add(-clientSlack)) && !ce.After(we.Add(clientSlack)) {
			r.Ops.Count = total
			return
		}
		if len(c.Intervals) == 0 {
			r.Warn("no %s count for the window: the client ran outside it (warm-up, or a window shorter than the run) and printed no per-interval lines to align (sysbench --report-interval=1)", op)
			return
		}
		n, covered := fromIntervals(c, rate, ws, we)
		r.Ops.Count = n
		r.Warn("%s over the window is approximate: summed from the client's per-interval rates, pro-rated at the window's edges (%.0f%% of the window covered by intervals)", op, 100*covered)
		return
	}
	if total > 0 && r.Window.Warmup == 0 && c.Seconds > 0 && c.Seconds <= r.Window.Seconds+clientSlack.Seconds() {
		r.Ops.Count = total
		r.Warn("%s assumes the window covered the client's whole run: the client's start time is not known", op)
		return
	}
	r.Warn("no %s count for the window: the client's start time is not known, so its counts cannot be aligned with the window", op)
}

// clientCounts returns the client's total for op and the per-interval rate of
// op.
func clientCounts(c *record.Client, op string) (float64, func(record.Interval) float64) {
	switch op {
	case OpClientQueries:
		return c.Queries, func(iv record.Interval) float64 { return iv.QPS }
	case OpClientTransactions:
		return c.Transactions, func(iv record.Interval) float64 { return iv.TPS }
	default: // events: sysbench's interval "tps" is events per second
		return c.Events, func(iv record.Interval) float64 { return iv.TPS }
	}
}

// fromIntervals sums rate × overlap of each interval with [ws, we] and
// returns the fraction of the window the intervals cover.
func fromIntervals(c *record.Client, rate func(record.Interval) float64, ws, we time.Time) (count, covered float64) {
	win := we.Sub(ws).Seconds()
	if win <= 0 {
		return 0, 0
	}
	prev := 0.0
	sec := func(at float64) time.Time { return c.Started.Add(time.Duration(at * float64(time.Second))) }
	over := 0.0
	for _, iv := range c.Intervals {
		b, e := sec(prev), sec(iv.At)
		prev = iv.At
		lo, hi := b, e
		if lo.Before(ws) {
			lo = ws
		}
		if hi.After(we) {
			hi = we
		}
		if !hi.After(lo) {
			continue
		}
		d := hi.Sub(lo).Seconds()
		count += rate(iv) * d
		over += d
	}
	return count, min(over/win, 1)
}
