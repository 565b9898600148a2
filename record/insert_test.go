package record

import "testing"

// The 95% line: 94.9 of 100 is below it, 95.0 is not; 760 of 800 (the
// seed's 8 clients × 100/s) is exactly on it, 759 below; no target, never
// below.
func TestBelowTarget(t *testing.T) {
	for _, c := range []struct {
		achieved, target float64
		want             bool
	}{
		{94.9, 100, true},
		{95.0, 100, false},
		{100, 100, false},
		{120, 100, false},
		{760, 800, false},
		{759, 800, true},
		{797, 800, false},
		{0, 800, true},
		{10, 0, false},
	} {
		if got := BelowTarget(c.achieved, c.target); got != c.want {
			t.Errorf("BelowTarget(%v, %v) = %v, want %v", c.achieved, c.target, got, c.want)
		}
	}
}
