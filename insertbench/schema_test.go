package insertbench

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRowGen: a batch's rows have consecutive ids, the time stamp, values
// in their ranges and padding of padMin to padMax bytes, half 'a's; and a
// batch of 100 rows allocates no more than its ids and its stamp (the
// driver's CPU per insert is mostly what it allocates and copies).
func TestRowGen(t *testing.T) {
	g := newRowGen(rand.New(rand.NewPCG(1, 2)), 100, 10, 20)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	lens := map[int]bool{}
	for b := range 3 {
		a := g.batch(int64(1000+100*b), 100, now)
		if len(a) != 700 {
			t.Fatalf("%d arguments for 100 rows", len(a))
		}
		for i := range 100 {
			r := a[7*i : 7*i+7]
			id, _ := r[0].(int64)
			stamp, _ := r[1].(time.Time)
			reg, _ := r[2].(int64)
			cust, _ := r[3].(int64)
			prod, _ := r[4].(int64)
			price, _ := r[5].(int64)
			pad, _ := r[6].([]byte)
			l := len(pad)
			lens[l] = true
			if id != int64(1000+100*b+i) || !stamp.Equal(now) || reg < 0 || reg >= cashRegisters || cust < 0 || cust >= customers ||
				prod < 0 || prod >= products || price < 0 || price >= maxPrice || l < 10 || l > 20 ||
				!bytes.Equal(pad[:l-l/2], bytes.Repeat([]byte("a"), l-l/2)) {
				t.Fatalf("batch %d row %d: %v (padding %q)", b, i, r, pad)
			}
		}
	}
	if len(lens) != 11 {
		t.Errorf("padding lengths %v, want every one of 10-20", lens)
	}
	// Ids of 1,000,000 and up are boxed one by one; the stamp once.
	if n := testing.AllocsPerRun(20, func() { g.batch(1_000_000, 100, now) }); n > 101 {
		t.Errorf("a batch of 100 rows allocates %.0f times, want at most 101", n)
	}
}
