//go:build !linux

package cpuset

import "errors"

var errNotLinux = errors.New("CPU placement needs Linux")

// Own returns the CPUs perfbench may run on; Linux only.
func Own() (Set, error) { return nil, errNotLinux }

// StartOn calls start; pinning it is Linux only.
func StartOn(s Set, start func() error) error {
	if len(s) > 0 {
		return errNotLinux
	}
	return start()
}

// PinProcess sets every thread's CPU affinity; Linux only.
func PinProcess(int, Set) (int, error) { return 0, errNotLinux }

// allowed reads where a process may run; Linux only.
func allowed(int) (Set, int, error) { return nil, 0, errNotLinux }
