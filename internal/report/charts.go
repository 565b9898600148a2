package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// Chart is one chart, in both formats.
type Chart struct {
	// Name is the file name without extension: rqps_HOST_t1,
	// heatmap_VERSION_HOST_t1, series_VERSION_STEP_HOST_t1, in ASCII (accents
	// dropped, other letters _); a name two charts would share gets a short
	// hash of what the chart is about.
	Name string
	SVG  []byte
	PNG  []byte
	// Warnings say what the chart could not draw to scale; the chart's
	// notes say it too.
	Warnings []string
}

// fileToken is s in letters a file name keeps everywhere: ASCII letters
// and digits, . - = +; accents are dropped (é is e) and anything else is _.
func fileToken(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '=', c == '+':
			return c
		case unicode.Is(unicode.Mn, c):
			return -1
		}
		return '_'
	}, norm.NFD.String(s))
}

func scopeName(sc analysis.Scope) string {
	h := sc.Host
	if h == "" {
		h = "host"
	}
	return fileToken(h) + fmt.Sprintf("_t%d", sc.Threads)
}

// maxNameLen keeps chart file names (with ".svg") within the 255 bytes file
// systems allow.
const maxNameLen = 200

// uniqueNames appends "_" and 8 hex digits of the hash of a chart's
// identity to every name that two charts share (letters compared without
// case, as macOS and Windows compare them) or that is too long, so that
// no chart overwrites another.
func uniqueNames(charts []Chart, ids []string) {
	count := map[string]int{}
	for _, c := range charts {
		count[strings.ToLower(c.Name)]++
	}
	for i := range charts {
		n := charts[i].Name
		if count[strings.ToLower(n)] == 1 && len(n) <= maxNameLen {
			continue
		}
		sum := sha256.Sum256([]byte(ids[i]))
		charts[i].Name = n[:min(len(n), maxNameLen)] + "_" + hex.EncodeToString(sum[:4])
	}
}

// Charts draws, for every scope: rQPS by step and version; for every
// version but the base, a heat map of its counter-per-op ratios (steps ×
// counters); and for every version and step whose Records have a 1-second
// series, one chart of its operations per second and counter per operation
// each second, one line per repeat (so the number of files does not grow
// with the repeats). counter names the event of the series charts (""
// means instructions, or the first event the series has).
func Charts(recs []*record.Record, opt Options, counter string) ([]Chart, error) {
	c, err := analysis.New(recs, opt.Base, opt.Analysis)
	if err != nil {
		return nil, err
	}
	b := &builder{c: c, opt: opt}
	var out []Chart
	var ids []string
	add := func(name, id string, f figure, warnings []string) error {
		if f == nil {
			return nil
		}
		ch, err := f.render(name)
		if err != nil {
			return err
		}
		if missing := undrawn(ch.SVG); len(missing) > 0 {
			// Said on the chart and with the report's warnings.
			note := "‹U+XXXX›: a character the chart's font (Liberation Sans) cannot draw, written as its Unicode code point: " + strings.Join(missing, ", ")
			if ch, err = append(f, notesBlock([]string{note})).render(name); err != nil {
				return err
			}
			warnings = append(warnings, note)
		}
		for _, w := range warnings {
			ch.Warnings = append(ch.Warnings, name+": "+w)
		}
		out = append(out, ch)
		ids = append(ids, id)
		return nil
	}
	for _, sc := range c.Scopes {
		scope := fmt.Sprintf("%s\x00%d", sc.Host, sc.Threads)
		f, warnings := b.rqpsChart(sc)
		if err := add("rqps_"+scopeName(sc), "rqps\x00"+scope, f, warnings); err != nil {
			return nil, err
		}
		for _, v := range c.Others() {
			if err := add("heatmap_"+fileToken(v)+"_"+scopeName(sc), "heatmap\x00"+v+"\x00"+scope, b.heatmap(sc, v), nil); err != nil {
				return nil, err
			}
		}
	}
	for _, sc := range c.Scopes {
		scope := fmt.Sprintf("%s\x00%d", sc.Host, sc.Threads)
		for _, step := range c.Steps {
			for _, v := range c.Versions {
				s := c.Sample(analysis.Key(sc, v, step))
				if s == nil {
					continue
				}
				var withSeries []*record.Record
				for _, r := range s.Records {
					if len(r.Series) > 0 && r.Outcome != record.OutcomeFailed {
						withSeries = append(withSeries, r)
					}
				}
				if len(withSeries) == 0 {
					continue
				}
				name := fmt.Sprintf("series_%s_%s_%s", fileToken(v), fileToken(step), scopeName(sc))
				if err := add(name, "series\x00"+v+"\x00"+step+"\x00"+scope, seriesChart(withSeries, counter), nil); err != nil {
					return nil, err
				}
			}
		}
	}
	uniqueNames(out, ids)
	return out, nil
}

// WriteCharts writes each chart as NAME.svg and NAME.png in dir and returns
// the paths written.
func WriteCharts(dir string, charts []Chart) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create chart folder: %w", err)
	}
	var paths []string
	for _, ch := range charts {
		for ext, data := range map[string][]byte{".svg": ch.SVG, ".png": ch.PNG} {
			p := filepath.Join(dir, ch.Name+ext)
			if err := record.WriteFileAtomic(p, data); err != nil {
				return paths, err
			}
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths, nil
}

func chartTitle(title string, sc analysis.Scope) string {
	if s := scopeText(sc.Host, sc.Threads); s != "" {
		return title + " (" + s + ")"
	}
	return title
}

// undrawn lists the characters a chart wrote as code points (see
// drawable), "数 U+6570", in order of code point.
func undrawn(svg []byte) []string {
	var points []rune
	rest := string(svg)
	for {
		i := strings.Index(rest, codePointOpen)
		if i < 0 {
			break
		}
		rest = rest[i+len(codePointOpen):]
		hex, _, ok := strings.Cut(rest, codePointClose)
		if n, err := strconv.ParseUint(hex, 16, 32); ok && err == nil && !slices.Contains(points, rune(n)) {
			points = append(points, rune(n))
		}
	}
	slices.Sort(points)
	out := make([]string, len(points))
	for i, r := range points {
		out[i] = fmt.Sprintf("%c U+%04X", r, r)
	}
	return out
}

func titleBlock(title string) block { return textBlock(textStyle(sansBold, 11, black), title) }

func notesBlock(lines []string) block { return textBlock(textStyle(sans, 8.5, grey), lines...) }

// fmtChartRatio is fmtRatio, with 3 significant digits from a million up
// (a ratio that large is a broken base, and its digits would fill the
// chart).
func fmtChartRatio(v float64) string {
	if math.Abs(v) >= 1e6 && !math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return fmtRatio(v)
}

// chartCell is the text of a ratio in a chart, and whether it has a value
// that can be drawn: measured, finite, not negative. NaN prints as "-".
func chartCell(c analysis.Cell, marked bool) (string, bool) {
	if c.OK() && math.IsNaN(c.Value) {
		return textNone, false
	}
	return markedText(c, fmtChartRatio, textNone, marked), c.OK() && !math.IsInf(c.Value, 0) && c.Value >= 0
}

// offScale says which rQPS bars rqpsLimit cuts.
const offScale = "more than 10 times the median of the chart's bars and more than 10 (or more than 1e15)"

// rqpsLimit is the largest rQPS drawn to scale: 10 times the median of the
// values, at least 10 and at most 1e15 (so that the axis's ticks stay
// finite). A bar beyond it (a base that barely ran) is cut at
// the end of the axis with its value printed, so that it does not squash
// the others to nothing.
func rqpsLimit(values []float64) float64 {
	if len(values) == 0 {
		return 10
	}
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	return min(1e15, 10*max(1, v[(len(v)-1)/2]))
}

// rqpsChart is a horizontal bar chart: a group of bars per step, one bar per
// version, the value printed after each bar as the tables print it, and a
// line at 1.0. With more versions than colours each bar also names its
// version.
func (b *builder) rqpsChart(sc analysis.Scope) (figure, []string) {
	others := b.c.Others()
	steps := b.stepsIn(sc, false)
	if len(others) == 0 || len(steps) == 0 {
		return nil, nil
	}
	cells := make([][]analysis.Cell, len(steps))
	var all []analysis.Cell
	var values []float64
	for i, s := range steps {
		for _, v := range others {
			cell := b.c.ThroughputRatio(analysis.Key(sc, v, s))
			cells[i] = append(cells[i], cell)
			all = append(all, cell)
			if _, ok := chartCell(cell, false); ok {
				values = append(values, cell.Value)
			}
		}
	}
	marked := anyCellTested(all)
	limit := rqpsLimit(values)
	xmax := 1.2
	for _, v := range values {
		if v <= limit {
			xmax = max(xmax, v)
		}
	}
	named := len(others) > len(palette)
	label := textStyle(sans, 7.5, black)
	label.YAlign = draw.YCenter
	texts := make([][]string, len(steps))
	drawn := make([][]bool, len(steps))
	var right vg.Length
	var warnings []string
	for i, s := range steps {
		for j, v := range others {
			t, ok := chartCell(cells[i][j], marked)
			if named {
				t += "  " + v
			}
			texts[i], drawn[i] = append(texts[i], t), append(drawn[i], ok)
			right = max(right, label.Width(t)+12)
			if ok && cells[i][j].Value > xmax {
				warnings = append(warnings, fmt.Sprintf("rQPS of %s at %s is %s, %s: its bar is cut at the end of the axis", v, s,
					fmtChartRatio(cells[i][j].Value), offScale))
			}
		}
	}

	p := newPlot()
	p.X.Min, p.X.Max = 0, xmax
	p.X.Label.Text = "QPS relative to " + b.c.Base
	p.Y.Min, p.Y.Max = -0.5, float64(len(steps))-0.5
	names := make([]string, len(steps))
	for i, s := range steps {
		names[len(steps)-1-i] = s
	}
	p.NominalY(names...)
	p.Y.Tick.Label.Color = black
	p.Y.Tick.Label.Font = font.From(sans, 9)
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = light
	const barH, groupGap = vg.Length(9), vg.Length(8)
	n := len(others)
	p.Add(grid, plotterFunc(func(c draw.Canvas, p *plot.Plot) {
		trX, trY := p.Transforms(&c)
		// One step is one unit of y: its bars fill all of it but the gap.
		h := (trY(1) - trY(0) - groupGap) / vg.Length(n)
		for i := range steps {
			top := trY(float64(len(steps)-1-i)) + h*vg.Length(n)/2
			for j := range others {
				y1 := top - h*vg.Length(j)
				y0 := y1 - h + 0.6
				v := cells[i][j].Value
				end := c.Min.X + 3
				sty := label
				if drawn[i][j] {
					end = trX(min(v, xmax))
					fillBar(c, vg.Rectangle{Min: vg.Point{X: trX(0), Y: y0}, Max: vg.Point{X: end, Y: y1}}, j)
					if v > xmax {
						cutMark(c, end, y0, y1)
					}
				} else {
					sty.Color = grey
				}
				c.FillText(sty, vg.Point{X: end + 3, Y: (y0 + y1) / 2}, texts[i][j])
			}
		}
		one := trX(1)
		c.StrokeLine2(draw.LineStyle{Color: black, Width: 0.8}, one, c.Min.Y, one, c.Max.Y)
	}))
	plotH := vg.Length(len(steps)) * (vg.Length(n)*barH + groupGap)
	body := plotBlock(p, 420, plotH, right)
	var entries []legendEntry
	for j, v := range others {
		entries = append(entries, legendEntry{label: v, swatch: barSwatch(j)})
	}
	notes := markerLegend(all, marked)
	if len(warnings) > 0 {
		notes = append(notes, "//: a bar cut at the end of the axis, its value printed: "+offScale)
	}
	f := figure{titleBlock(chartTitle("Relative QPS vs "+b.c.Base, sc)), body, legendBlock(entries, body.w)}
	if len(notes) > 0 {
		f = append(f, notesBlock(notes))
	}
	return f, warnings
}

// cutMark draws two white slashes across the end of a bar cut at x.
func cutMark(c draw.Canvas, x, y0, y1 vg.Length) {
	sty := draw.LineStyle{Color: white, Width: 1.5}
	d := (y1 - y0) / 3
	for _, dx := range []vg.Length{-8, -4} {
		c.StrokeLine2(sty, x+dx-d, y0-1, x+dx+d, y1+1)
	}
}

// anyCellTested reports whether any of the cells was tested for
// significance: the untested ones are then marked "?".
func anyCellTested(cells []analysis.Cell) bool {
	for _, c := range cells {
		if c.OK() && c.Tested {
			return true
		}
	}
	return false
}

// markerLegend explains the markers the ratio cells of a chart print, in
// the words of the table notes.
func markerLegend(cells []analysis.Cell, marked bool) []string {
	var same, untested, est, partial, mux, inf, zero, na, nc, failed, none bool
	for _, c := range cells {
		switch c.State {
		case analysis.NotSupported:
			na = true
		case analysis.NotCounted:
			nc = true
		case analysis.Failed:
			failed = true
		case analysis.Missing, analysis.NotComputable:
			none = true
		}
		if !c.OK() || math.IsNaN(c.Value) {
			none = none || c.OK()
			continue
		}
		same = same || (c.Tested && c.Same)
		untested = untested || (marked && c.FewRepeats && !c.Tested)
		est = est || c.Estimated
		partial = partial || c.Partial
		mux = mux || c.Multiplexed()
		inf = inf || math.IsInf(c.Value, 0)
		zero = zero || (c.BothZero && c.Value == 1)
	}
	var out []string
	add := func(ok bool, s string) {
		if ok {
			out = append(out, s)
		}
	}
	add(mux, "(N%): multiplexed counters that counted N% of the window, scaled")
	add(same, "~: not significantly different from the base")
	add(untested, "?: from a single repeat, not tested for significance")
	add(est, "e: operations estimated from the client's whole-run rate")
	add(partial, "p: from a window cut short")
	add(inf, "inf: the base's value is 0")
	add(zero, "1: both values are 0")
	add(na, "n/a: not supported")
	add(nc, "nc: not counted")
	add(failed, "failed: the step failed")
	add(none, "-: not recorded or not computable")
	return out
}

// heatColour maps a ratio to a colour: white at 1, red when the version does
// more per op (worse), blue when less (better), full at 2× and 0.5×.
func heatColour(r float64, lowerBetter bool) color.RGBA {
	t := math.Max(-1, math.Min(1, math.Log2(r)))
	if !lowerBetter {
		t = -t
	}
	if t > 0 {
		return tint(palette[3], t)
	}
	return tint(palette[0], -t)
}

// heatmap shows every counter-per-op ratio of a version against the base:
// steps down, metrics across, the value in each cell as the tables print it.
func (b *builder) heatmap(sc analysis.Scope, version string) figure {
	var steps []string
	for _, s := range b.stepsIn(sc, false) {
		if b.c.Has(analysis.Key(sc, version, s)) {
			steps = append(steps, s)
		}
	}
	// Metrics without one ratio that has a value because the event is not
	// supported are left out, as the tables leave them out.
	var metrics []string
	for _, m := range append(append([]string(nil), b.c.CounterMetrics()...), analysis.CPUIOMetrics[1:]...) {
		if !b.c.HasMetric(sc, m) {
			continue
		}
		measured, na := false, false
		for _, s := range steps {
			c := b.c.Ratio(analysis.Key(sc, version, s), m)
			measured = measured || c.OK() || c.State == analysis.NotCounted
			na = na || c.State == analysis.NotSupported
		}
		if measured || !na {
			metrics = append(metrics, m)
		}
	}
	if len(metrics) == 0 || len(steps) == 0 {
		return nil
	}
	cells := make([][]analysis.Cell, len(steps))
	var all []analysis.Cell
	for i, s := range steps {
		for _, m := range metrics {
			cell := b.c.Ratio(analysis.Key(sc, version, s), m)
			cells[i] = append(cells[i], cell)
			all = append(all, cell)
		}
	}
	marked := anyCellTested(all)
	sty := textStyle(sans, 8, black)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	texts := make([][]string, len(steps))
	cellW := vg.Length(30)
	for i := range steps {
		for j := range metrics {
			t, _ := chartCell(cells[i][j], marked)
			texts[i] = append(texts[i], t)
			cellW = max(cellW, sty.Width(t)+8)
		}
	}
	const cellH = vg.Length(15)

	p := newPlot()
	p.X.Min, p.X.Max = -0.5, float64(len(metrics))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(steps))-0.5
	p.NominalX(metrics...)
	names := make([]string, len(steps))
	for i, s := range steps {
		names[len(steps)-1-i] = s
	}
	p.NominalY(names...)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Tick.Label.Color = black
		a.Tick.Label.Font = font.From(sans, 8.5)
		a.Padding = 2 // a name is never wider than its column unless rotated
	}
	for _, m := range metrics {
		if p.X.Tick.Label.Width(m) > cellW-4 {
			// Names wider than the cells run down to the left of their
			// column.
			p.X.Tick.Label.Rotation = math.Pi / 4
			p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
			break
		}
	}
	p.Add(plotterFunc(func(c draw.Canvas, p *plot.Plot) {
		trX, trY := p.Transforms(&c)
		for i := range steps {
			y := float64(len(steps) - 1 - i)
			for j, m := range metrics {
				cell := cells[i][j]
				bg, fg := light, grey
				if _, ok := chartCell(cell, marked); ok && cell.Value > 0 && !cell.BothZero {
					bg, fg = heatColour(cell.Value, analysis.LowerIsBetter(m)), black
				}
				x := float64(j)
				r := vg.Rectangle{Min: vg.Point{X: trX(x-0.5) + 0.5, Y: trY(y-0.5) + 0.5}, Max: vg.Point{X: trX(x+0.5) - 0.5, Y: trY(y+0.5) - 0.5}}
				c.FillPolygon(bg, rectPoints(r))
				sty := sty
				sty.Color = fg
				c.FillText(sty, vg.Point{X: trX(x), Y: trY(y)}, texts[i][j])
			}
		}
	}))
	body := plotBlock(p, cellW*vg.Length(len(metrics)), cellH*vg.Length(len(steps)), 0)
	notes := []string{"red: more per operation than the base (IPC: less), blue: the reverse; full colour at 2x and 0.5x; grey: no ratio, or 1 for two zeros"}
	if devs := b.devices(heatKeys(b, sc, version, steps)); len(devs) > 0 && (contains(metrics, analysis.ReadsPerOp) || contains(metrics, analysis.WritesPerOp)) {
		notes = append(notes, "r/o: device-wide, every process on "+strings.Join(devs, ", ")+", not only the server")
	}
	notes = append(notes, markerLegend(all, marked)...)
	return figure{titleBlock(chartTitle(version+": ratio to "+b.c.Base+" per operation", sc)), body, notesBlock(notes)}
}

// heatKeys are the keys behind a heat map: the version's and the base's at
// each step.
func heatKeys(b *builder, sc analysis.Scope, version string, steps []string) []record.Key {
	var keys []record.Key
	for _, s := range steps {
		k := analysis.Key(sc, version, s)
		keys = append(keys, k, b.c.BaseKey(k))
	}
	return keys
}

// seriesChart plots, for each second of the windows of one version and
// step, the operations per second and the counter per operation, in two
// panels, one line per repeat. Points without a finite value break the
// line.
func seriesChart(recs []*record.Record, counter string) figure {
	if counter == "" {
		counter = "instructions"
	}
	has := false
	var names []string
	for _, r := range recs {
		for _, p := range r.Series {
			if _, ok := p.Counters[counter]; ok {
				has = true
			}
			for k := range p.Counters {
				names = append(names, k)
			}
		}
	}
	if !has && len(names) > 0 {
		sort.Strings(names)
		counter = names[0]
		has = true
	}
	first := recs[0]
	var reps []string
	for _, r := range recs {
		reps = append(reps, strconv.Itoa(r.Repeat))
	}
	title := fmt.Sprintf("%s %s, repeat %s: each second of the window", first.Version, first.Step, reps[0])
	if len(recs) > 1 {
		title = fmt.Sprintf("%s %s, repeats %s: each second of the windows", first.Version, first.Step, strings.Join(reps, ", "))
	}
	if s := scopeText(first.Host, first.Threads); s != "" {
		title += " (" + s + ")"
	}
	var legend []legendEntry
	if len(recs) > 1 {
		for j, r := range recs {
			l := "repeat " + strconv.Itoa(r.Repeat)
			if r.Outcome == record.OutcomePartial {
				l += " (partial window)"
			}
			legend = append(legend, legendEntry{label: l, swatch: lineSwatch(j)})
		}
	} else if first.Outcome == record.OutcomePartial {
		title += ", partial window"
	}
	tmax := 0.0
	for _, r := range recs {
		for _, p := range r.Series {
			if !math.IsInf(p.T, 0) && !math.IsNaN(p.T) {
				tmax = max(tmax, p.T)
			}
		}
	}
	if tmax <= 0 {
		tmax = 1
	}
	panel := func(val func(p record.Point) (float64, bool)) *plot.Plot {
		p := newPlot()
		p.X.Min, p.X.Max = 0, tmax
		grid := plotter.NewGrid()
		grid.Horizontal.Color, grid.Vertical.Color = light, light
		p.Add(grid)
		vmax := 0.0
		for j, r := range recs {
			var run plotter.XYs
			flush := func() {
				switch ls := lineStyle(j); len(run) {
				case 0:
				case 1: // a second between gaps: a dot
					p.Add(&plotter.Scatter{XYs: run, GlyphStyle: draw.GlyphStyle{Color: ls.Color, Radius: 1.5, Shape: draw.CircleGlyph{}}})
				default:
					p.Add(&plotter.Line{XYs: run, LineStyle: ls})
				}
				run = nil
			}
			for _, pt := range r.Series {
				v, ok := val(pt)
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(pt.T) || math.IsInf(pt.T, 0) {
					flush()
					continue
				}
				vmax = max(vmax, v)
				run = append(run, plotter.XY{X: pt.T, Y: v})
			}
			flush()
		}
		p.Y.Min, p.Y.Max = 0, vmax
		if vmax <= 0 {
			p.Y.Max = 1
		}
		return p
	}
	panels := []*plot.Plot{panel(func(p record.Point) (float64, bool) {
		return p.Ops / p.Seconds, p.Seconds > 0
	})}
	labels := []string{"operations per second"}
	if has {
		panels = append(panels, panel(func(p record.Point) (float64, bool) {
			v, ok := p.Counters[counter]
			return v / p.Ops, ok && p.Ops > 0
		}))
		labels = append(labels, counter+" per operation")
	}
	panels[len(panels)-1].X.Label.Text = "seconds into the window"
	f := figure{titleBlock(title), panelsBlock(panels, labels, 420, 110)}
	if len(legend) > 0 {
		f = append(f, legendBlock(legend, f[1].w))
	}
	return f
}

// panelsBlock stacks plots of the same x axis, their data areas dataW by
// dataH and aligned, each under its label.
func panelsBlock(panels []*plot.Plot, labels []string, dataW, dataH vg.Length) block {
	var w, h vg.Length
	for _, p := range panels {
		b := plotBlock(p, dataW, dataH, 0)
		w, h = max(w, b.w), max(h, b.h)
	}
	sty := textStyle(sans, 9, black)
	head := sty.Height("M") + 4
	tile := h + head
	return block{w: w, h: tile * vg.Length(len(panels)), draw: func(c draw.Canvas) {
		rows := make([][]*plot.Plot, len(panels))
		for i, p := range panels {
			rows[i] = []*plot.Plot{p}
		}
		cs := plot.Align(rows, draw.Tiles{Rows: len(panels), Cols: 1, PadTop: head, PadY: head}, c)
		for i, p := range panels {
			da := p.DataCanvas(cs[i][0])
			c.FillText(sty, vg.Point{X: da.Min.X, Y: cs[i][0].Max.Y + 4}, labels[i])
			p.Draw(cs[i][0])
		}
	}}
}
