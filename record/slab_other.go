//go:build !linux

package record

// adviseHuge does nothing where transparent huge pages are not Linux's.
func adviseHuge([]Counter) {}
