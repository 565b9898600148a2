package testenv

import "time"

// Await polls cond until it holds, and reports whether it did within the
// given time: a test waits for an event it can only observe (a file
// written, a state in /proc, a server's status counter) for as long as the
// event takes, instead of sleeping a guess at it. It polls every
// millisecond at first, then every 10 ms; the caller fails the test with
// what it waited for when Await returns false.
func Await(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for wait := time.Millisecond; !cond(); wait = min(2*wait, 10*time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
	return true
}
