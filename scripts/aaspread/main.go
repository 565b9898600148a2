// Command aaspread prints how far apart the two labels of an A/A pair came
// out in a folder of Records, cell by cell (host, step, thread count): the
// rQPS the report prints (second label against the first), its 95%
// interval, the ratio of every round (repeat) and their coefficient of
// variation. For versions measured together (duet, slices) a round's ratio
// is the geometric mean of its paired turns; for windows, the ratio of the
// two labels' QPS in that repeat. scripts/bench-compare.sh runs it:
//
//	go run ./scripts/aaspread -base a -other a2 DIR/records
//
// The last line sums the run up: the rQPS furthest from 1 and the largest
// round CV, for reading side by side with other runs.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

func main() {
	base := flag.String("base", "a", "the first label of the A/A pair")
	other := flag.String("other", "a2", "the second label")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: aaspread [-base a] [-other a2] RECORDS...")
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Args(), *base, *other); err != nil {
		fmt.Fprintln(os.Stderr, "aaspread:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, paths []string, base, other string) error {
	loaded, problems, err := record.Load(paths, true)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "aaspread: warning:", p)
	}
	var recs []*record.Record
	for _, l := range loaded {
		if l.Record.Version == base || l.Record.Version == other {
			recs = append(recs, l.Record)
		}
	}
	c, err := analysis.New(recs, base, analysis.Options{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-24s %-7s %-7s %6s %-15s %5s %6s  %s\n", "step", "threads", "mode", "rQPS", "95% interval", "pairs", "CV", "rounds")
	worst, worstCV, cells, spreads := 1.0, 0.0, 0, 0
	for _, sc := range c.Scopes {
		for _, step := range c.Steps {
			k := analysis.Key(sc, other, step)
			if !c.Has(k) || !c.Has(c.BaseKey(k)) {
				continue
			}
			cell := c.ThroughputRatio(k)
			mode, pairs, rounds := "windows", "-", roundsOfWindows(c, k)
			if p, ok := c.Pairing(k); ok {
				mode, pairs, rounds = p.Mode, fmt.Sprintf("%d", p.Pairs), p.RoundRatios
				if p.Dropped > 0 {
					pairs += fmt.Sprintf("(-%d)", p.Dropped)
				}
			}
			cvText := "    -"
			if len(rounds) >= 2 {
				cv := spread(rounds)
				worstCV = math.Max(worstCV, cv)
				cvText, spreads = fmt.Sprintf("%5.1f%%", 100*cv), spreads+1
			}
			val, ci := "-", "-"
			if cell.OK() {
				cells++
				val = fmt.Sprintf("%.3f", cell.Value)
				if math.Abs(math.Log(cell.Value)) > math.Abs(math.Log(worst)) {
					worst = cell.Value
				}
				if cell.HasCI() {
					ci = fmt.Sprintf("%.3f-%.3f", cell.Lo, cell.Hi)
				}
			}
			var rs []string
			for _, r := range rounds {
				rs = append(rs, fmt.Sprintf("%.3f", r))
			}
			fmt.Fprintf(w, "%-24s %-7d %-7s %6s %-15s %5s %6s  %s\n", step, sc.Threads, mode, val, ci, pairs, cvText, strings.Join(rs, " "))
		}
	}
	far, wide := "-", "-" // nothing measured is not 1.000 or 0.0%
	if cells > 0 {
		far = fmt.Sprintf("%.3f", worst)
	}
	if spreads > 0 {
		wide = fmt.Sprintf("%.1f%%", 100*worstCV)
	}
	fmt.Fprintf(w, "furthest rQPS %s, largest round CV %s\n", far, wide)
	return nil
}

// roundsOfWindows is the ratio of the two labels' QPS in each repeat both
// measured, in repeat order.
func roundsOfWindows(c *analysis.Comparison, k record.Key) []float64 {
	qps := func(k record.Key) map[int]float64 {
		out := map[int]float64{}
		s := c.Sample(k)
		if s == nil {
			return out
		}
		for i, r := range s.Records {
			if v := s.PerOp[i].Get(analysis.OpsPerSecond); v.OK() && v.Value > 0 {
				out[r.Repeat] = v.Value
			}
		}
		return out
	}
	a, b := qps(c.BaseKey(k)), qps(k)
	var reps []int
	for r := range b {
		if _, ok := a[r]; ok {
			reps = append(reps, r)
		}
	}
	sort.Ints(reps)
	var out []float64
	for _, r := range reps {
		out = append(out, b[r]/a[r])
	}
	return out
}

// spread is the coefficient of variation of xs (sample standard deviation
// over the mean), 0 with fewer than two.
func spread(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s/float64(len(xs)-1)) / m
}
