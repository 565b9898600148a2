package perfevent

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// baseAttr returns the perf_event_attr identity of enc with the modifiers
// applied: type, size, config words and exclude bits. Callers add what their
// use needs (read_format, inherit, disabled, sampling fields).
func (e Event) baseAttr(enc Encoding) unix.PerfEventAttr {
	a := unix.PerfEventAttr{
		Type:   enc.Type,
		Config: enc.Config,
		Ext1:   enc.Config1,
		Ext2:   enc.Config2,
	}
	a.Size = uint32(unsafe.Sizeof(a))
	m := e.Modifiers
	for _, b := range []struct {
		on  bool
		bit uint64
	}{
		{m.ExcludeUser, unix.PerfBitExcludeUser},
		{m.ExcludeKernel, unix.PerfBitExcludeKernel},
		{m.ExcludeHV, unix.PerfBitExcludeHv},
		{m.ExcludeIdle, unix.PerfBitExcludeIdle},
		{m.ExcludeHost, unix.PerfBitExcludeHost},
		{m.ExcludeGuest, unix.PerfBitExcludeGuest},
		{m.Pinned, unix.PerfBitPinned},
		{m.Exclusive, unix.PerfBitExclusive},
	} {
		if b.on {
			a.Bits |= b.bit
		}
	}
	return a
}
