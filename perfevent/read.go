package perfevent

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// read_format bits of perf_event_attr (include/uapi/linux/perf_event.h). The
// engine asks for both times and the id, and for a group of several events
// for the whole group: one read(2) on its leader returns the group's times
// and every member's value with its id. An event opened alone is read alone.
const (
	formatTotalTimeEnabled = 1 << 0
	formatTotalTimeRunning = 1 << 1
	formatID               = 1 << 2
	formatGroup            = 1 << 3

	singleReadFormat = formatTotalTimeEnabled | formatTotalTimeRunning | formatID
	engineReadFormat = singleReadFormat | formatGroup
)

// singleReadSize is the size of the read(2) of an event opened alone with
// singleReadFormat: value, time_enabled, time_running, id.
const singleReadSize = 32

// errShortRead is wrapped by decodeGroupRead when the buffer is shorter than
// its own header says.
var errShortRead = errors.New("short read")

// groupReadSize is the size of the read(2) buffer of a group of n members
// with engineReadFormat: nr, time_enabled, time_running, then {value, id} per
// member.
func groupReadSize(n int) int { return 8 * (3 + 2*n) }

// groupRead is a decoded read(2) of a group leader.
type groupRead struct {
	Enabled uint64 // time_enabled, ns
	Running uint64 // time_running, ns
	Values  []uint64
	IDs     []uint64
}

// decodeSingleRead decodes the read(2) buffer of an event opened alone with
// singleReadFormat: its count and times (the id it carries is not needed:
// the descriptor names the event).
func decodeSingleRead(buf []byte) (Count, error) {
	if len(buf) != singleReadSize {
		return Count{}, fmt.Errorf("decode read: %d bytes, want %d: %w", len(buf), singleReadSize, errShortRead)
	}
	le := binary.NativeEndian
	return Count{Raw: le.Uint64(buf), Enabled: le.Uint64(buf[8:]), Running: le.Uint64(buf[16:])}, nil
}

// decodeGroupRead decodes a read(2) buffer of a group leader opened with
// engineReadFormat:
//
//	u64 nr; u64 time_enabled; u64 time_running; { u64 value; u64 id; } cntr[nr];
//
// in the machine's byte order. It fails on a buffer shorter than its header or than nr members,
// and on trailing bytes; it never panics.
func decodeGroupRead(buf []byte) (groupRead, error) {
	const hdr = 24
	if len(buf) < hdr {
		return groupRead{}, fmt.Errorf("decode group read: %d bytes, need at least %d: %w", len(buf), hdr, errShortRead)
	}
	le := binary.NativeEndian
	nr := le.Uint64(buf[0:])
	// Compare in uint64 so a huge nr cannot overflow the size computation.
	if avail := uint64(len(buf)-hdr) / 16; nr > avail {
		return groupRead{}, fmt.Errorf("decode group read: header says %d members, buffer of %d bytes holds %d: %w", nr, len(buf), avail, errShortRead)
	}
	if want := hdr + 16*int(nr); len(buf) != want {
		return groupRead{}, fmt.Errorf("decode group read: %d bytes for %d members, want %d", len(buf), nr, want)
	}
	g := groupRead{
		Enabled: le.Uint64(buf[8:]),
		Running: le.Uint64(buf[16:]),
		Values:  make([]uint64, nr),
		IDs:     make([]uint64, nr),
	}
	for i := range int(nr) {
		off := hdr + 16*i
		g.Values[i] = le.Uint64(buf[off:])
		g.IDs[i] = le.Uint64(buf[off+8:])
	}
	return g, nil
}
