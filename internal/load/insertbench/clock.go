package insertbench

import (
	"context"
	"math"
	"math/bits"
	"time"
)

// clock is the time source of the rate limiter, the q steps' end and the
// per-second memory samples; tests replace it with a fake or a late one.
type clock interface {
	Now() time.Time
	// SleepUntil returns at t, or with ctx's error when ctx ends first.
	SleepUntil(ctx context.Context, t time.Time) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// limiter paces a writer at a rate of rows per second, one batch of rows
// at a time, against absolute deadlines: batch k (0-based) of n rows may
// start at start + (k + 1/2)·n/rate seconds, computed from k and not from
// the previous batch, so time spent in statements or in waking up never
// adds up to drift. A writer that falls behind (a slow server, a stall)
// starts its late batches at once until it is back on schedule. The half
// interval keeps a batch away from the second boundaries where the
// per-second counts are read: at a rate of 100/s in batches of 100, each
// second holds exactly one batch.
type limiter struct {
	clock clock
	start time.Time
	// num/den is the interval between batches in ns: rows·1e9 / rate.
	// The deadline of batch k is start + (2k+1)·num / (2·den), computed
	// in integers so that even a rate that does not divide a second
	// never drifts.
	num, den int64
	k        int64
}

func newLimiter(c clock, start time.Time, rowsPerBatch, ratePerSecond int) *limiter {
	return &limiter{clock: c, start: start, num: int64(rowsPerBatch) * int64(time.Second), den: int64(ratePerSecond)}
}

// deadline returns when batch k may start. The product is taken in 128
// bits: a day at 100,000 single-row batches a second overflows 64.
func (l *limiter) deadline(k int64) time.Time {
	hi, lo := bits.Mul64(uint64(2*k+1), uint64(l.num))
	if hi >= uint64(2*l.den) { // centuries away: Div64 would overflow
		return l.start.Add(math.MaxInt64)
	}
	q, _ := bits.Div64(hi, lo, uint64(2*l.den))
	return l.start.Add(time.Duration(min(q, math.MaxInt64)))
}

// Wait waits for the next batch's deadline.
func (l *limiter) Wait(ctx context.Context) error {
	t := l.deadline(l.k)
	l.k++
	return l.clock.SleepUntil(ctx, t)
}
