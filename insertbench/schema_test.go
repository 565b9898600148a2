package insertbench

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRowGen: a batch's rows have consecutive ids, the time stamp (UTC, as
// the MySQL driver sends a time.Time, without the fraction), values
// in their ranges and padding of padMin to padMax bytes, half 'a's; and a
// batch of 100 rows allocates no more than its numbers.
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
			stamp, _ := r[1].([]byte)
			reg, _ := r[2].(int64)
			cust, _ := r[3].(int64)
			prod, _ := r[4].(int64)
			price, _ := r[5].(int64)
			pad, _ := r[6].([]byte)
			l := len(pad)
			lens[l] = true
			if id != int64(1000+100*b+i) || string(stamp) != "2026-12-01 12:00:00" || reg < 0 || reg >= cashRegisters || cust < 0 || cust >= customers ||
				prod < 0 || prod >= products || price < 0 || price >= maxPrice || l < 10 || l > 20 ||
				!bytes.Equal(pad[:l-l/2], bytes.Repeat([]byte("a"), l-l/2)) {
				t.Fatalf("batch %d row %d: %v (padding %q)", b, i, r, pad)
			}
		}
	}
	if len(lens) != 11 {
		t.Errorf("padding lengths %v, want every one of 10-20", lens)
	}
	// The numbers are boxed one by one (those below 256 are not: Go has
	// them made); the padding and the stamp are not.
	if n := testing.AllocsPerRun(20, func() { g.batch(1_000_000, 100, now) }); n > 500 {
		t.Errorf("a batch of 100 rows allocates %.0f times, want at most 5 a row", n)
	}
	if a := g.batch(1, 1, now.Add(1500*time.Millisecond).In(time.FixedZone("x", 3600))); string(a[1].([]byte)) != "2026-12-01 12:00:01" {
		t.Errorf("the stamp a second and a half later, in another zone: %s", a[1])
	}
}
