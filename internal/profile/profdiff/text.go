package profdiff

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// WriteText writes the comparison as text: for each step, each version's top
// functions by flat and by cumulative samples per 1,000 operations, then for
// each version the functions that grew most against the base; the warnings
// last.
func (c *Comparison) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Sampled profiles by step; base version: %s\n", c.Base)
	fmt.Fprintf(bw, "Values are samples per 1,000 operations (per 1,000 samples where a step has no operation count):\n")
	fmt.Fprintf(bw, "flat counts samples in the function itself, cum samples in it and what it calls.\n")
	for _, st := range c.Steps {
		unit := "/kop"
		if !st.PerOp {
			unit = "/ks"
		}
		fmt.Fprintf(bw, "\n== %s ==\n", st.Name)
		for _, v := range c.Versions {
			p := st.Versions[v]
			if p == nil {
				continue
			}
			fmt.Fprintf(bw, "\n%s: %s\n", v, p.summary(st.PerOp))
			writeRows(bw, "flat", unit, p.Top(st.PerOp, c.Top))
			writeRows(bw, "cum", unit, p.TopCum(st.PerOp, c.Top))
		}
		for _, v := range c.Versions[1:] {
			grew, b, x := c.Diff(st, v, c.Top)
			if st.Versions[v] == nil || st.Versions[c.Base] == nil {
				continue
			}
			fmt.Fprintf(bw, "\n%s vs %s: %s vs %s samples%s (%s); functions that grew most:\n", v, c.Base, fnum(x), fnum(b), unit, pct(x, b))
			if len(grew) == 0 {
				fmt.Fprintf(bw, "  (none grew)\n")
				continue
			}
			fmt.Fprintf(bw, "  %10s %10s %10s %10s  %s\n", "delta"+unit, c.Base, v, "cum delta", "function")
			for _, g := range grew {
				fmt.Fprintf(bw, "  %10s %10s %10s %10s  %s\n", signed(g.Delta), fnum(g.Base), fnum(g.Version), signed(g.CumDelta), g.Function)
			}
		}
	}
	if len(c.Warnings) > 0 {
		fmt.Fprintf(bw, "\nWarnings:\n")
		ws := append([]string(nil), c.Warnings...)
		sort.Strings(ws)
		for _, w := range ws {
			fmt.Fprintf(bw, "  %s\n", w)
		}
	}
	return bw.Flush()
}

// summary is a profile's totals: windows, samples, ops and, for CPU-time
// events, CPU per operation.
func (p *pooledProfile) summary(perOp bool) string {
	s := fmt.Sprintf("%d window%s, %s samples", p.Windows, plural(p.Windows), commas(p.Samples))
	if !perOp {
		return s + ", no operation count"
	}
	s += fmt.Sprintf(", %s ops, %s samples/kop", commas(int64(p.Ops+0.5)), fnum(float64(p.Samples)*1000/p.Ops))
	if p.Unit == "cpu/nanoseconds" && p.Value > 0 {
		s += fmt.Sprintf(", %.2f µs CPU/op sampled", float64(p.Value)/1000/p.Ops)
	}
	return s
}

func writeRows(w io.Writer, by, unit string, rows []row) {
	fmt.Fprintf(w, "  top by %s:\n", by)
	fmt.Fprintf(w, "  %10s %6s %10s %6s  %s\n", "flat"+unit, "flat%", "cum"+unit, "cum%", "function")
	for _, r := range rows {
		fmt.Fprintf(w, "  %10s %5.1f%% %10s %5.1f%%  %s\n", fnum(r.Flat), 100*r.FlatShare, fnum(r.Cum), 100*r.CumShare, r.Function)
	}
}

// fnum formats a per-1,000 value with three significant decimals at most.
func fnum(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100 || v <= -100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func signed(v float64) string {
	if v > 0 {
		return "+" + fnum(v)
	}
	return fnum(v)
}

// pct is the change from b to x in percent, "n/a" when b is 0.
func pct(x, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*(x-b)/b)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// commas formats n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
