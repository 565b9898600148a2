//go:build !linux

package calibrate

import (
	"fmt"
	"runtime"

	"github.com/perfbench/perfbench/perfevent"
)

func newMachine(sys *perfevent.System, root string) (machine, error) {
	return nil, fmt.Errorf("calibrate on %s: perf events exist on Linux only: %w", runtime.GOOS, errUnsupported)
}

func releaseThread(machine) error { return errUnsupported }
