//go:build amd64 || arm64

package calibrate

// spin runs the loop of workload_$GOARCH.s n times and returns 8n.
//
//go:noescape
func spin(n uint64) uint64
