package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/analysis"
)

// numFormat turns a measured value into text.
type numFormat func(v float64) string

func fixed(prec int) numFormat {
	return func(v float64) string {
		if math.IsInf(v, 1) {
			return "inf"
		}
		if math.IsInf(v, -1) {
			return "-inf"
		}
		if s, ok := huge(v); ok {
			return s
		}
		return analysis.FormatFixed(v, prec)
	}
}

var (
	fmtRatio  = fixed(2) // ratios, as published: %.2f
	fmtRatio3 = fixed(3) // the average layout prints three decimals
	fmtInt    = fixed(0)
)

// hugeValue is the magnitude from which a value prints with an exponent:
// 12 digits before the point are as many as a table's column holds, and
// from 2^53 on the digits a fixed form prints are float64's, not measured.
const hugeValue = 1e12

// huge prints v with three significant digits and an exponent, "1.00e+300",
// when its magnitude is at least hugeValue: short, and no digit that was
// not measured.
func huge(v float64) (string, bool) {
	if math.Abs(v) < hugeValue || math.IsInf(v, 0) || math.IsNaN(v) {
		return "", false
	}
	return strconv.FormatFloat(v, 'e', 2, 64), true
}

// fmtAbs prints an absolute value with three or four significant digits and
// no exponent for the magnitudes per-op metrics have.
func fmtAbs(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsInf(v, 0) || a >= hugeValue:
		return fixed(0)(v)
	case a >= 1000:
		return analysis.FormatFixed(v, 0)
	case a >= 100:
		return analysis.FormatFixed(v, 1)
	case a >= 1:
		return analysis.FormatFixed(v, 2)
	case a == 0:
		return "0"
	case a >= 1e-6:
		// three significant digits: 0.500, 0.0125, 0.00400
		return analysis.FormatFixed(v, 2-int(math.Floor(math.Log10(a))))
	}
	return fmt.Sprintf("%.2g", v)
}

// fmtQPS prints throughput as whole operations per second, as the posts do,
// keeping two decimals below 10/s.
func fmtQPS(v float64) string {
	if math.Abs(v) >= 10 {
		return fmtInt(v)
	}
	return fixed(2)(v)
}

// fmtShare prints a fraction as a percentage.
func fmtShare(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	if s, ok := huge(100 * v); ok {
		return s + "%"
	}
	r := math.Round(100 * v)
	if r == 0 {
		r = 0 // no "-0%"
	}
	return fmt.Sprintf("%.0f%%", r)
}

// fmtPct prints a percentage with one decimal.
func fmtPct(v float64) string {
	if s, ok := huge(v); ok {
		return s + "%"
	}
	var buf [24]byte
	return string(append(analysis.AppendFixed(buf[:0], v, 1), '%'))
}

// fmtHist prints a histogram percentage with three decimals; a share of
// operations that is not zero but rounds to 0.000 prints "nonzero", as the
// insert benchmark does, so a rare slow operation is not hidden.
func fmtHist(v float64) string {
	if v > 0 && v < 0.0005 {
		return "nonzero"
	}
	if s, ok := huge(v); ok {
		return s
	}
	return analysis.FormatFixed(v, 3)
}

// Cell markers. A cell's text is its value followed by, in this order:
//
//	(62%)   the counters behind it were multiplexed and ran 62% of the
//	        window; the value is scaled (Value = Raw × enabled / running)
//	[1/3]   the value rests on 1 of the 3 repeats (in a ratio, the
//	        version's, else the base's): the others have none for it
//	±4%     half-width of the 95% confidence interval of the median over
//	        repeats, relative to the value (of a paired ratio: the
//	        Student t interval of its rounds' ratios)
//	~       the difference to the base is not significant (ratio cells)
//	?       a ratio from fewer than 2 repeats of the version or the base:
//	        not tested for significance (printed when some other ratio of
//	        the report was tested, so that no "~" does not read as
//	        significant; when none was, the table's notes say that its
//	        ratios rest on a single repeat instead); a paired ratio
//	        (versions measured together) from a single round, always
//	d       throughput: the repeats disagree (a coefficient of variation
//	        above 3%, or two groups of repeats far apart: see
//	        analysis.DisagreeCV); on a ratio, the version's or the base's;
//	        on a paired ratio, the ratios of its rounds (repeats)
//	m       throughput, repeats = "auto": the step ran the most repeats the
//	        plan allows and the interval is still wider than it asks
//	e       the op count behind the value was estimated from the client's
//	        whole-run rate, not counted in the window
//	p       the value comes from a window cut short (partial step)
//	!       insert benchmark: inserts/s below 95% of the step's target
//	        insert rate, or the queries/s of a version that fell below it
//	        (a value that can be ignored); see Cell.BelowTarget
//
// A ratio whose version and base are both 0 prints "1" (the metrics
// reference's convention), not "1.00": it is no measured equality. Cells
// without a value print n/a (not supported), nc (not counted), failed (the
// step failed) or the table's missing text, "-" (not recorded, or not
// computable: the notes say why).
const (
	textNA     = "n/a"
	textNC     = "nc"
	textFailed = "failed"
	textNone   = "-"
	// textBelowTarget follows the text of a BelowTarget cell.
	textBelowTarget = "!"
	// textDisagree and textMaxReached mark throughput cells whose repeats
	// disagree, or that stopped at the maximum of repeats = "auto".
	textDisagree   = "d"
	textMaxReached = "m"
)

// cellText decorates the formatted value with the markers above, the "?"
// mark left out.
func cellText(c analysis.Cell, f numFormat, missing string) string {
	return markedText(c, f, missing, false)
}

// markedText is cellText with the "?" mark on a ratio from too few repeats
// when untested is set.
func markedText(c analysis.Cell, f numFormat, missing string, untested bool) string {
	switch c.State {
	case analysis.NotSupported:
		return textNA
	case analysis.NotCounted:
		return textNC
	case analysis.Failed:
		return textFailed
	case analysis.Missing, analysis.NotComputable:
		return missing
	}
	num := "1"
	if !c.BothZero || c.Value != 1 {
		num = f(c.Value)
	}
	w := c.HalfWidth() * 100
	if !c.Multiplexed() && c.N >= c.Of && c.BaseN >= c.BaseOf && math.IsNaN(w) && !(c.Tested && c.Same) &&
		!(untested && c.FewRepeats && !c.Tested) && !c.Disagree && !c.MaxReached && !c.Estimated && !c.Partial {
		return num // no marker: most cells
	}
	var b strings.Builder
	b.WriteString(num)
	if c.Multiplexed() {
		fmt.Fprintf(&b, "(%d%%)", runningPct(c.Running))
	}
	switch {
	case c.N < c.Of:
		fmt.Fprintf(&b, "[%d/%d]", c.N, c.Of)
	case c.BaseN < c.BaseOf:
		fmt.Fprintf(&b, "[%d/%d]", c.BaseN, c.BaseOf)
	}
	if !math.IsNaN(w) {
		if w < 1 {
			fmt.Fprintf(&b, "±%.1f%%", w)
		} else {
			fmt.Fprintf(&b, "±%.0f%%", w)
		}
	}
	if c.Tested && c.Same {
		b.WriteString("~")
	} else if untested && c.FewRepeats && !c.Tested {
		b.WriteString("?")
	}
	if c.Disagree {
		b.WriteString(textDisagree)
	}
	if c.MaxReached {
		b.WriteString(textMaxReached)
	}
	if c.Estimated {
		b.WriteString("e")
	}
	if c.Partial {
		b.WriteString("p")
	}
	return b.String()
}

// runningPct is the running fraction as a whole percentage, rounded down so
// that a counter that missed part of the window never shows 100%.
func runningPct(f float64) int {
	p := int(math.Floor(f * 100))
	if p >= 100 && f < 1 {
		p = 99
	}
	return p
}
