//go:build !linux

package perfevent

import "fmt"

// Sampling stands for sampling in progress where there is no perf_event_open.
type Sampling struct{}

// StartSampling fails: perf events exist on Linux only.
func StartSampling(pid int, opts SampleOptions) (*Sampling, error) {
	if err := validateSampleOptions(pid, &opts); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("sample pid %d: %w: %w", pid, errNotLinux, ErrNotSupported)
}

// Stop returns errSamplingActive: nothing was started.
func (s *Sampling) Stop() (*SampleSet, error) { return nil, errSamplingActive }

// Begin does nothing: nothing was started.
func (s *Sampling) Begin() {}

// End does nothing: nothing was started.
func (s *Sampling) End() {}
