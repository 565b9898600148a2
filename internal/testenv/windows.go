package testenv

import (
	"os"
	"strconv"
	"testing"
)

// ChurnWindows is how many 1 s windows the tests that measure a process
// creating threads and processes all the time make in each case: def (a
// few, for CI), or PERFBENCH_CHURN_WINDOWS (20 for the acceptance runs
// the README quotes).
func ChurnWindows(t testing.TB, def int) int {
	t.Helper()
	if s := os.Getenv("PERFBENCH_CHURN_WINDOWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("PERFBENCH_CHURN_WINDOWS=%q: want a number of windows", s)
		}
		return n
	}
	return def
}
