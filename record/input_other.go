//go:build !unix

package record

// openNonblock: no such flag here.
const openNonblock = 0
