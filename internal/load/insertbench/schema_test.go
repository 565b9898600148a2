package insertbench

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRowGen: a batch's values, read back as the server reads the binary
// protocol, are rows with consecutive ids, the time stamp (UTC, as the
// MySQL driver sends a time.Time, without the fraction), values in their
// ranges and padding of padMin to padMax bytes, half 'a's; and a batch
// allocates nothing.
func TestRowGen(t *testing.T) {
	g := newRowGen(rand.New(rand.NewPCG(1, 2)), 10, 20)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	lens := map[int]bool{}
	var buf []byte
	for b := range 3 {
		buf = g.appendRows(buf[:0], int64(1000+100*b), 100, now)
		p := buf
		for i := range 100 {
			num := func() int64 { v := int64(binary.LittleEndian.Uint64(p)); p = p[8:]; return v }
			str := func() []byte { n, k := lenEnc(p); v := p[k : k+int(n)]; p = p[k+int(n):]; return v }
			id, stamp, reg, cust, prod, price, pad := num(), str(), num(), num(), num(), num(), str()
			l := len(pad)
			lens[l] = true
			if id != int64(1000+100*b+i) || string(stamp) != "2026-12-01 12:00:00" || reg < 0 || reg >= cashRegisters || cust < 0 || cust >= customers ||
				prod < 0 || prod >= products || price < 0 || price >= maxPrice || l < 10 || l > 20 ||
				!bytes.Equal(pad[:l-l/2], bytes.Repeat([]byte("a"), l-l/2)) {
				t.Fatalf("batch %d row %d: %d %q %d %d %d %d %q", b, i, id, stamp, reg, cust, prod, price, pad)
			}
		}
		if len(p) != 0 {
			t.Fatalf("batch %d: %d bytes after 100 rows", b, len(p))
		}
	}
	if len(lens) != 11 {
		t.Errorf("padding lengths %v, want every one of 10-20", lens)
	}
	if n := testing.AllocsPerRun(20, func() { buf = g.appendRows(buf[:0], 1_000_000, 100, now) }); n != 0 {
		t.Errorf("a batch of 100 rows allocates %.0f times, want none", n)
	}
	later := now.Add(1500 * time.Millisecond).In(time.FixedZone("x", 3600))
	if p := g.appendRows(nil, 1, 1, later); string(p[9:28]) != "2026-12-01 12:00:01" {
		t.Errorf("the stamp a second and a half later, in another zone: %q", p[8:28])
	}
}

// TestAppendLenEnc: the lengths of the protocol, at the edges of their
// sizes, read back as written.
func TestAppendLenEnc(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		size int
	}{{0, 1}, {250, 1}, {251, 3}, {1<<16 - 1, 3}, {1 << 16, 4}, {1<<24 - 1, 4}, {1 << 24, 9}} {
		b := appendLenEnc([]byte{}, c.n)
		if n, k := lenEnc(b); n != c.n || k != c.size || len(b) != c.size {
			t.Errorf("%d: %x, read back as %d from %d bytes; want %d bytes", c.n, b, n, k, c.size)
		}
	}
}
