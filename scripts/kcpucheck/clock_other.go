//go:build !linux

package main

import "time"

// processCPU: no per-process CPU clocks outside Linux.
func processCPU(int) (time.Duration, bool) { return 0, false }
