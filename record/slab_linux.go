package record

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on x86-64 and arm64
// (with 4 KiB base pages).
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the whole 2 MiB pages inside the
// array of cs with huge pages, where transparent huge pages are enabled
// "on madvise" (the default of most distributions): a fresh 4 KiB page
// costs a fault each, and a campaign's counters fill tens of megabytes,
// each page written once. It does nothing for a smaller array, and
// nothing when the kernel says no.
func adviseHuge(cs []Counter) {
	n := uintptr(cap(cs)) * unsafe.Sizeof(Counter{})
	if n < 2*hugePage {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(cs))
	p := uintptr(base)
	from := (p + hugePage - 1) &^ (hugePage - 1)
	to := (p + n) &^ (hugePage - 1)
	if to <= from {
		return
	}
	unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, from-p)), to-from), unix.MADV_HUGEPAGE)
}
