package testenv

import (
	"testing"
	"time"
)

// TestAwait: Await returns true as soon as cond holds (polled once more
// each time, never after it held) and false once the time has passed
// without it holding.
func TestAwait(t *testing.T) {
	n := 0
	if !Await(time.Minute, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("cond true at its third poll: Await polled %d times", n)
	}
	n = 0
	if Await(20*time.Millisecond, func() bool { n++; return false }) || n < 2 {
		t.Errorf("cond never true: Await returned true, or polled %d times", n)
	}
}
