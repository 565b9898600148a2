package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// Chart is one chart, in both formats.
type Chart struct {
	// Name is the file name without extension: rqps_HOST_t1,
	// heatmap_VERSION_HOST_t1, series_VERSION_STEP_HOST_t1.
	Name string
	SVG  []byte
	PNG  []byte
}

var (
	black   = color.RGBA{0, 0, 0, 255}
	grey    = color.RGBA{120, 120, 120, 255}
	light   = color.RGBA{225, 225, 225, 255}
	palette = []color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	}
)

func fileToken(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '=', c == '+':
			return c
		}
		return '_'
	}, s)
}

func scopeName(sc analysis.Scope) string {
	h := sc.Host
	if h == "" {
		h = "host"
	}
	return fileToken(h) + fmt.Sprintf("_t%d", sc.Threads)
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
	add := func(name string, d *drawing) error {
		if d == nil {
			return nil
		}
		p, err := d.png()
		if err != nil {
			return fmt.Errorf("draw %s: %w", name, err)
		}
		out = append(out, Chart{Name: name, SVG: d.svg(), PNG: p})
		return nil
	}
	for _, sc := range c.Scopes {
		if err := add("rqps_"+scopeName(sc), b.rqpsChart(sc)); err != nil {
			return nil, err
		}
		for _, v := range c.Others() {
			if err := add("heatmap_"+fileToken(v)+"_"+scopeName(sc), b.heatmap(sc, v)); err != nil {
				return nil, err
			}
		}
	}
	for _, sc := range c.Scopes {
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
				if err := add(name, seriesChart(withSeries, counter)); err != nil {
					return nil, err
				}
			}
		}
	}
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

// rqpsChart is a horizontal bar chart: a group of bars per step, one bar per
// version, the value printed after each bar as the tables print it, and a
// line at 1.0.
func (b *builder) rqpsChart(sc analysis.Scope) *drawing {
	others := b.c.Others()
	steps := b.stepsIn(sc, false)
	if len(others) == 0 || len(steps) == 0 {
		return nil
	}
	labelW := 80.0
	for _, s := range steps {
		labelW = math.Max(labelW, textWidth(s)+12)
	}
	const barH, top, plotW = 12.0, 50.0, 480.0
	groupH := float64(len(others))*barH + 8
	cells := make([][]analysis.Cell, len(steps))
	var all []analysis.Cell
	xmax := 1.2
	for i, s := range steps {
		for _, v := range others {
			cell := b.c.ThroughputRatio(analysis.Key(sc, v, s))
			cells[i] = append(cells[i], cell)
			all = append(all, cell)
			if cell.OK() && !math.IsInf(cell.Value, 0) {
				xmax = math.Max(xmax, cell.Value)
			}
		}
	}
	marked := anyCellTested(all)
	keys := markerLegend(all, marked)
	xmax = math.Ceil(xmax*5) / 5
	plotH := float64(len(steps)) * groupH
	d := &drawing{w: int(labelW + plotW + 110), h: int(top + plotH + 40 + 16*float64(len(others)+len(keys)) + 10)}
	for _, k := range keys {
		d.w = max(d.w, int(26+textWidth(k)+10))
	}
	X := func(v float64) float64 { return labelW + v/xmax*plotW }
	d.text(10, 20, chartTitle("Relative QPS vs "+b.c.Base, sc), -1, black)
	for v := 0.0; v <= xmax+1e-9; v += 0.2 {
		d.line(X(v), top-4, X(v), top+plotH, light)
		d.text(X(v), top+plotH+16, fmt.Sprintf("%.1f", v), 0, grey)
	}
	d.line(X(1), top-8, X(1), top+plotH, black)
	for i, s := range steps {
		y0 := top + float64(i)*groupH
		d.text(labelW-6, y0+groupH/2+4, s, 1, black)
		for j := range others {
			cell := cells[i][j]
			y := y0 + 4 + float64(j)*barH
			txt := markedText(cell, fmtRatio, textNone, marked)
			if cell.OK() && !math.IsInf(cell.Value, 0) {
				d.rect(labelW, y, X(cell.Value)-labelW, barH-2, palette[j%len(palette)])
				d.text(X(cell.Value)+4, y+barH-3, txt, -1, black)
			} else {
				d.text(labelW+4, y+barH-3, txt, -1, grey)
			}
		}
	}
	ly := top + plotH + 36
	for j, v := range others {
		d.rect(10, ly+float64(j)*16-9, 10, 10, palette[j%len(palette)])
		d.text(26, ly+float64(j)*16, v, -1, black)
	}
	for j, k := range keys {
		d.text(26, ly+float64(len(others)+j)*16, k, -1, grey)
	}
	return d
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
		if !c.OK() {
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
	mix := func(to color.RGBA, f float64) color.RGBA {
		m := func(a uint8) uint8 { return uint8(math.Round(255 + (float64(a)-255)*f)) }
		return color.RGBA{m(to.R), m(to.G), m(to.B), 255}
	}
	if t > 0 {
		return mix(color.RGBA{214, 39, 40, 255}, t)
	}
	return mix(color.RGBA{31, 119, 180, 255}, -t)
}

// heatmap shows every counter-per-op ratio of a version against the base:
// steps down, metrics across, the value in each cell as the tables print it.
func (b *builder) heatmap(sc analysis.Scope, version string) *drawing {
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
	labelW := 80.0
	for _, s := range steps {
		labelW = math.Max(labelW, textWidth(s)+12)
	}
	cells := make([][]analysis.Cell, len(steps))
	texts := make([][]string, len(steps))
	colW := make([]float64, len(metrics))
	for j, m := range metrics {
		colW[j] = textWidth(m) + 10
	}
	var all []analysis.Cell
	for i, s := range steps {
		for _, m := range metrics {
			cell := b.c.Ratio(analysis.Key(sc, version, s), m)
			cells[i] = append(cells[i], cell)
			all = append(all, cell)
		}
	}
	marked := anyCellTested(all)
	for i := range steps {
		for j := range metrics {
			t := markedText(cells[i][j], fmtRatio, textNone, marked)
			texts[i] = append(texts[i], t)
			colW[j] = math.Max(colW[j], textWidth(t)+10)
		}
	}
	legendLines := []string{"red: more per operation than the base (IPC: less), blue: the reverse; full colour at 2x and 0.5x; grey: no ratio, or 1 for two zeros"}
	if devs := b.devices(heatKeys(b, sc, version, steps)); len(devs) > 0 && (contains(metrics, analysis.ReadsPerOp) || contains(metrics, analysis.WritesPerOp)) {
		legendLines = append(legendLines, "r/o: device-wide, every process on "+strings.Join(devs, ", ")+", not only the server")
	}
	legendLines = append(legendLines, markerLegend(all, marked)...)
	const rowH, top = 18.0, 56.0
	total := labelW
	for _, w := range colW {
		total += w
	}
	d := &drawing{w: int(total + 20), h: int(top + rowH*float64(len(steps)) + 24 + 16*float64(len(legendLines)))}
	for _, l := range legendLines {
		d.w = max(d.w, int(10+textWidth(l)+10))
	}
	d.text(10, 20, chartTitle(version+": ratio to "+b.c.Base+" per operation", sc), -1, black)
	x := labelW
	for j, m := range metrics {
		d.text(x+colW[j]/2, top-8, m, 0, black)
		x += colW[j]
	}
	for i, s := range steps {
		y := top + float64(i)*rowH
		d.text(labelW-6, y+rowH-5, s, 1, black)
		x := labelW
		for j, m := range metrics {
			cell := cells[i][j]
			bg := light
			fg := grey
			if cell.OK() && !math.IsInf(cell.Value, 0) && cell.Value > 0 && !cell.BothZero {
				bg, fg = heatColour(cell.Value, analysis.LowerIsBetter(m)), black
			}
			d.rect(x+1, y+1, colW[j]-2, rowH-2, bg)
			d.text(x+colW[j]/2, y+rowH-5, texts[i][j], 0, fg)
			x += colW[j]
		}
	}
	for i, l := range legendLines {
		d.text(10, top+rowH*float64(len(steps))+24+16*float64(i), l, -1, grey)
	}
	return d
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

// niceTop is the smallest round number at or above v (1, 2, 4, 6 or 8 times
// a power of ten), so that the axis ticks at 0, half of it and it are round
// too.
func niceTop(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 4, 6, 8, 10} {
		if top := m * p; top >= v*(1-1e-12) {
			return top
		}
	}
	return 10 * p
}

// secondStep is the distance between x ticks: whole seconds, at most about
// 10 ticks over tmax seconds.
func secondStep(tmax float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600} {
		if tmax/s <= 10 {
			return s
		}
	}
	return 60 * math.Ceil(tmax/600)
}

// tickLabel prints an axis value without float noise: 0.5, 20000, 1.2e+06.
func tickLabel(v float64) string {
	if v != 0 && (math.Abs(v) >= 1e6 || math.Abs(v) < 1e-3) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// seriesChart plots, for each second of the windows of one version and
// step, the operations per second and the counter per operation, in two
// panels, one line per repeat.
func seriesChart(recs []*record.Record, counter string) *drawing {
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
	const left, top, plotW, panelH, gap = 70.0, 56.0, 560.0, 130.0, 50.0
	panels := 1
	if has {
		panels = 2
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
	var legend []string
	if len(recs) > 1 {
		for _, r := range recs {
			l := "repeat " + strconv.Itoa(r.Repeat)
			if r.Outcome == record.OutcomePartial {
				l += " (partial window)"
			}
			legend = append(legend, l)
		}
	} else if first.Outcome == record.OutcomePartial {
		title += ", partial window"
	}
	d := &drawing{w: int(math.Max(left+plotW+30, textWidth(title)+20)), h: int(top + float64(panels)*(panelH+gap) + 10 + 16*float64(len(legend)))}
	d.text(10, 20, title, -1, black)
	tmax := 0.0
	for _, r := range recs {
		for _, p := range r.Series {
			tmax = math.Max(tmax, p.T)
		}
	}
	if tmax <= 0 {
		tmax = 1
	}
	X := func(t float64) float64 { return left + t/tmax*plotW }
	panel := func(i int, label string, val func(p record.Point) (float64, bool)) {
		y0 := top + float64(i)*(panelH+gap)
		vmax := 0.0
		for _, r := range recs {
			for _, p := range r.Series {
				if v, ok := val(p); ok {
					vmax = math.Max(vmax, v)
				}
			}
		}
		ytop := niceTop(vmax)
		Y := func(v float64) float64 { return y0 + panelH - v/ytop*panelH }
		d.text(left, y0-8, label, -1, black)
		d.line(left, y0, left, y0+panelH, grey)
		d.line(left, y0+panelH, left+plotW, y0+panelH, grey)
		for _, v := range []float64{0, ytop / 2, ytop} {
			d.line(left-3, Y(v), left+plotW, Y(v), light)
			d.text(left-6, Y(v)+4, tickLabel(v), 1, grey)
		}
		step := secondStep(tmax)
		for t := 0.0; t <= tmax+1e-9; t += step {
			d.text(X(t), y0+panelH+16, tickLabel(t)+"s", 0, grey)
		}
		for j, r := range recs {
			col := palette[j%len(palette)]
			var run [][2]float64
			for _, p := range r.Series {
				v, ok := val(p)
				if !ok {
					d.polyline(run, col)
					run = nil
					continue
				}
				run = append(run, [2]float64{X(p.T), Y(v)})
			}
			d.polyline(run, col)
		}
	}
	panel(0, "operations per second", func(p record.Point) (float64, bool) {
		if p.Seconds <= 0 {
			return 0, false
		}
		return p.Ops / p.Seconds, true
	})
	if has {
		panel(1, counter+" per operation", func(p record.Point) (float64, bool) {
			v, ok := p.Counters[counter]
			if !ok || p.Ops <= 0 {
				return 0, false
			}
			return v / p.Ops, true
		})
	}
	ly := top + float64(panels)*(panelH+gap)
	for j, l := range legend {
		d.rect(10, ly+float64(j)*16-9, 10, 10, palette[j%len(palette)])
		d.text(26, ly+float64(j)*16, l, -1, black)
	}
	return d
}
