// Package textdist finds the name a user probably meant: the edit distance
// behind every "did you mean" in perfbench's errors.
package textdist

// Distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two adjacent bytes each
// count as one edit. Strings longer than 256 bytes are compared for equality
// only (distance 0 or the longer length), so a pathological input cannot make
// an error message slow.
func Distance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		if a == b {
			return 0
		}
		return max(len(a), len(b))
	}
	// Three rows: i-2, i-1 and i.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Nearest returns the candidate closest to s, or "" when the closest is more
// than limit edits away. Ties go to the candidate that sorts first, so the
// answer does not depend on the candidates' order.
func Nearest(s string, cands []string, limit int) string {
	best, bestD := "", -1
	for _, c := range cands {
		d := Distance(s, c)
		if d <= limit && (bestD < 0 || d < bestD || d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best
}
