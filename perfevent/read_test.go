package perfevent

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// encodeGroupRead builds the read(2) buffer of a group leader opened with
// engineReadFormat, the way the kernel lays it out (perf_read_group).
func encodeGroupRead(enabled, running uint64, values, ids []uint64) []byte {
	b := make([]byte, 0, groupReadSize(len(values)))
	b = binary.NativeEndian.AppendUint64(b, uint64(len(values)))
	b = binary.NativeEndian.AppendUint64(b, enabled)
	b = binary.NativeEndian.AppendUint64(b, running)
	for i, v := range values {
		b = binary.NativeEndian.AppendUint64(b, v)
		b = binary.NativeEndian.AppendUint64(b, ids[i])
	}
	return b
}

func TestDecodeGroupRead(t *testing.T) {
	for _, tc := range []struct {
		name             string
		enabled, running uint64
		values, ids      []uint64
	}{
		{"one counter running all the time", 5_000_000, 5_000_000, []uint64{123456}, []uint64{7}},
		{"multiplexed group of 3", 10_000_000, 2_500_000, []uint64{1, 2, 3}, []uint64{40, 41, 42}},
		{"never running", 10_000_000, 0, []uint64{0, 0}, []uint64{9, 10}},
		{"large values", 1 << 62, 1 << 61, []uint64{1<<64 - 1, 1 << 63}, []uint64{1<<64 - 1, 0}},
		{"group of 8", 3, 3, []uint64{1, 2, 3, 4, 5, 6, 7, 8}, []uint64{11, 12, 13, 14, 15, 16, 17, 18}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := encodeGroupRead(tc.enabled, tc.running, tc.values, tc.ids)
			if len(buf) != groupReadSize(len(tc.values)) {
				t.Fatalf("helper built %d bytes, groupReadSize says %d", len(buf), groupReadSize(len(tc.values)))
			}
			g, err := decodeGroupRead(buf)
			if err != nil {
				t.Fatal(err)
			}
			want := groupRead{Enabled: tc.enabled, Running: tc.running, Values: tc.values, IDs: tc.ids}
			if !reflect.DeepEqual(g, want) {
				t.Errorf("decoded %+v, want %+v", g, want)
			}
		})
	}
}

func TestDecodeGroupReadErrors(t *testing.T) {
	full := encodeGroupRead(100, 50, []uint64{1, 2}, []uint64{3, 4})
	hugeNR := append([]byte(nil), full...)
	binary.NativeEndian.PutUint64(hugeNR, 1<<63)
	for _, tc := range []struct {
		name  string
		buf   []byte
		short bool
	}{
		{"empty", nil, true},
		{"half a header", full[:12], true},
		{"header only, nr 2", full[:24], true},
		{"one member of two", full[:40], true},
		{"last id cut", full[:len(full)-1], true},
		{"nr near 2^63", hugeNR, true},
		{"trailing bytes", append(append([]byte(nil), full...), 0, 0, 0, 0, 0, 0, 0, 0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeGroupRead(tc.buf)
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, errShortRead) != tc.short {
				t.Errorf("errors.Is(err, errShortRead) = %v, want %v (%v)", !tc.short, tc.short, err)
			}
		})
	}
}

// FuzzDecodeGroupRead checks that no buffer makes the decoder panic, that it
// accepts exactly the buffers whose length matches their member count, and
// that what it accepts encodes back to the same bytes.
func FuzzDecodeGroupRead(f *testing.F) {
	f.Add(encodeGroupRead(1, 1, []uint64{5}, []uint64{6}))
	f.Add(encodeGroupRead(100, 0, []uint64{0, 0, 0}, []uint64{1, 2, 3}))
	f.Add([]byte{})
	f.Add(make([]byte, 23))
	f.Fuzz(func(t *testing.T, buf []byte) {
		g, err := decodeGroupRead(buf)
		valid := len(buf) >= 24 && (len(buf)-24)%16 == 0 && binary.NativeEndian.Uint64(buf) == uint64(len(buf)-24)/16
		if valid != (err == nil) {
			t.Fatalf("len %d: valid=%v but err=%v", len(buf), valid, err)
		}
		if err != nil {
			return
		}
		if back := encodeGroupRead(g.Enabled, g.Running, g.Values, g.IDs); !reflect.DeepEqual(back, buf) {
			t.Fatalf("round trip changed the buffer")
		}
	})
}
