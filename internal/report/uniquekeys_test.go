package report

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// TestUniqueKeys checks uniqueKeys against its definition on random lists
// with duplicates: each key once, the versions in order of first
// appearance, then host, step and threads ascending.
func TestUniqueKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	for range 200 {
		var keys []record.Key
		for range rng.IntN(60) {
			keys = append(keys, record.Key{Host: pick([]string{"", "h1", "h2"}), Version: pick([]string{"v3", "v1", "v2"}),
				Step: pick([]string{"scan", "point", "insert"}), Threads: rng.IntN(3)})
		}
		got := uniqueKeys(slices.Clone(keys))
		// The definition, the long way: first appearances, then a
		// sort by that order.
		var want []record.Key
		var versions []string
		for _, k := range keys {
			if !slices.Contains(want, k) {
				want = append(want, k)
			}
			if !slices.Contains(versions, k.Version) {
				versions = append(versions, k.Version)
			}
		}
		less := func(a, b record.Key) bool {
			if va, vb := slices.Index(versions, a.Version), slices.Index(versions, b.Version); va != vb {
				return va < vb
			}
			if a.Host != b.Host {
				return a.Host < b.Host
			}
			if a.Step != b.Step {
				return a.Step < b.Step
			}
			return a.Threads < b.Threads
		}
		for i := 1; i < len(want); i++ {
			for j := i; j > 0 && less(want[j], want[j-1]); j-- {
				want[j], want[j-1] = want[j-1], want[j]
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("uniqueKeys(%v) = %v, want %v", keys, got, want)
		}
	}
}
