//go:build !linux

package hugeheap

// Advise does nothing where Linux's transparent huge pages do not exist.
func Advise(n int) (marked int, err error) { return 0, nil }
