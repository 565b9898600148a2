// Package hugeheap asks the kernel to back the Go heap of a short-lived,
// memory-hungry perfbench process (perfbench report over a campaign) with
// transparent huge pages.
//
// Why: where the kernel gives huge pages only on request (transparent
// huge pages in "madvise" mode, the default of Debian and Ubuntu), the Go
// heap never gets them, so every 4 KiB the process touches for the first
// time is one page fault. A campaign's report touches about 190 MB:
// 46,000 faults, which on a virtual machine with shadowed page tables cost
// 10–12 µs each, a third of the report's CPU time. With huge pages the
// same memory takes about 2,000 faults.
//
// How: the Go runtime maps its heap as it grows and never asks for huge
// pages itself (it only turns them off under GODEBUG=disablethp=1). Advise
// allocates one large block, which makes the runtime map that much heap
// at once without touching it; marks the block MADV_HUGEPAGE; and lets it
// go. The runtime then places the process's next allocations in those
// pages, and the kernel backs them 2 MiB at a time. One byte of the block
// is written (to find it), so it costs address space, not memory.
package hugeheap

// result says what advise did.
type result struct {
	// Bytes is how much of the heap was marked for huge pages; 0 when
	// nothing was (Skipped says why).
	Bytes int
	// Start is the address of the first byte marked (for tests).
	Start uintptr
	// Skipped is why nothing was marked: the kernel's mode, a GODEBUG
	// setting, too little memory, a platform without the call.
	Skipped string
}
