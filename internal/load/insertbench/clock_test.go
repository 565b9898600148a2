package insertbench

import (
	"context"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when told, or when something sleeps
// until a later time (then it jumps there). One goroutine only.
type fakeClock struct{ now time.Time }

func (f *fakeClock) Now() time.Time { return f.now }

func (f *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.After(f.now) {
		f.now = t
	}
	return nil
}

func (f *fakeClock) advance(d time.Duration) { f.now = f.now.Add(d) }

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// runLimited paces batches of rowsPerBatch rows at rate rows/s for the given
// time; each batch takes took(k). It returns the rows started in each
// second after start.
func runLimited(t *testing.T, rowsPerBatch, rate int, seconds int, took func(k int) time.Duration) []int {
	t.Helper()
	clk := &fakeClock{now: epoch}
	lim := newLimiter(clk, epoch, rowsPerBatch, rate)
	per := make([]int, seconds)
	for k := 0; ; k++ {
		if err := lim.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := int(clk.now.Sub(epoch) / time.Second)
		if s >= seconds {
			return per
		}
		per[s] += rowsPerBatch
		clk.advance(took(k))
	}
}

func TestLimiterExactPerSecond(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ rows, rate int }{
		{1, 100}, {100, 100}, {100, 1000}, {10, 500}, {1, 3}, {7, 1000}, {50, 100},
	} {
		interval := time.Duration(tc.rows) * time.Second / time.Duration(tc.rate)
		// Statements take up to 90% of the interval: never behind.
		per := runLimited(t, tc.rows, tc.rate, 60, func(int) time.Duration {
			return time.Duration(rng.Int64N(int64(interval) * 9 / 10))
		})
		for s, n := range per {
			// A second holds rate rows, give or take a batch when the
			// batches do not divide a second.
			if d := n - tc.rate; d < -tc.rows || d > tc.rows || (tc.rate%tc.rows == 0 && d != 0) {
				t.Errorf("%d rows/batch at %d/s: second %d started %d rows", tc.rows, tc.rate, s, n)
			}
		}
	}
}

// A limiter that slept one interval after each statement would fall
// behind by the statements' time; this one schedules against absolute
// deadlines: batch k starts at exactly start + (k+1/2)·interval.
func TestLimiterDoesNotDrift(t *testing.T) {
	clk := &fakeClock{now: epoch}
	lim := newLimiter(clk, epoch, 1, 100)
	for k := range 100_000 {
		if err := lim.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := epoch.Add(time.Duration(k)*10*time.Millisecond + 5*time.Millisecond); !clk.now.Equal(want) {
			t.Fatalf("batch %d started at %s, want %s", k, clk.now.Sub(epoch), want.Sub(epoch))
		}
		clk.advance(3 * time.Millisecond)
	}
}

// A rate that does not divide a second (3/s) does not drift by rounding
// either: the deadline is computed from the batch number.
func TestLimiterDeadlineExact(t *testing.T) {
	lim := newLimiter(&fakeClock{now: epoch}, epoch, 1, 3)
	for _, k := range []int64{0, 1, 2, 3, 1_000_000, 999_999_999} {
		// (2k+1)/6 s in ns, exactly, truncated.
		want := new(big.Int).Mul(big.NewInt(2*k+1), big.NewInt(1e9))
		want.Quo(want, big.NewInt(6))
		if got := lim.deadline(k).Sub(epoch); int64(got) != want.Int64() {
			t.Errorf("deadline of batch %d: %d ns, want %d", k, int64(got), want.Int64())
		}
	}
	// A day at 100,000 single rows/s: the product overflows 64 bits.
	lim = newLimiter(&fakeClock{now: epoch}, epoch, 1, 100_000)
	k := int64(86_400 * 100_000)
	if got, want := lim.deadline(k).Sub(epoch), 86_400*time.Second+5*time.Microsecond; got != want {
		t.Errorf("deadline of batch %d: %s, want %s", k, got, want)
	}
}

// After a stall the writer catches up at once: the rows of the stalled
// seconds are written late, and the total by the end is on target.
func TestLimiterCatchesUp(t *testing.T) {
	per := runLimited(t, 1, 100, 10, func(k int) time.Duration {
		if k == 250 {
			return 3 * time.Second // the server stalls in second 2
		}
		return time.Millisecond
	})
	total := 0
	for _, n := range per {
		total += n
	}
	if total != 1000 {
		t.Errorf("%d rows in 10 s, want 1000 (per second %v)", total, per)
	}
	if per[3] != 0 || per[4] != 0 || per[5] < 300 {
		t.Errorf("per second %v: want none while stalled (s 3, 4) and the backlog in second 5", per)
	}
}

func TestLimiterStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	lim := newLimiter(&fakeClock{now: epoch}, epoch, 1, 100)
	if err := lim.Wait(ctx); err != context.Canceled {
		t.Errorf("Wait on an ended context = %v, want context.Canceled", err)
	}
}
