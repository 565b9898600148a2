//go:build !linux

package perfevent

import (
	"errors"
	"runtime"
)

var errNoPerf = errors.New("perf_event_open exists only on Linux (this is " + runtime.GOOS + ")")

// Probe reports ErrNotSupported: perf events exist only on Linux.
func (s *System) Probe(e Event) error { return s.ProbePid(e, 0) }

// ProbePid reports ErrNotSupported: perf events exist only on Linux.
func (s *System) ProbePid(e Event, pid int) error {
	return &OpenError{Event: e.Name, Target: "this process", Reason: "not supported: " + errNoPerf.Error(), Err: errNoPerf, Kind: ErrNotSupported}
}
