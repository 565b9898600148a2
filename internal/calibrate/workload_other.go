//go:build !amd64 && !arm64

package calibrate

// There is no calibration loop for this architecture (loop.supported is
// false): Run says so and never calls spin.
func spin(n uint64) uint64 { return 0 }
