package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// Chart is one chart, in both formats.
type Chart struct {
	// Name is the file name without extension: rqps_HOST_t1,
	// heatmap_VERSION_HOST_t1, series_VERSION_STEP_HOST_t1_r1.
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
// counters); and for every Record with a 1-second series, its operations
// per second and counter per operation, each second. counter names the
// event of the series charts ("" means instructions, or the first event the
// series has).
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
				for _, r := range s.Records {
					if len(r.Series) == 0 || r.Outcome == record.OutcomeFailed {
						continue
					}
					name := fmt.Sprintf("series_%s_%s_%s_r%d", fileToken(v), fileToken(step), scopeName(sc), r.Repeat)
					if err := add(name, seriesChart(r, counter)); err != nil {
						return nil, err
					}
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
	xmax := 1.2
	for i, s := range steps {
		for _, v := range others {
			cell := b.c.ThroughputRatio(analysis.Key(sc, v, s))
			cells[i] = append(cells[i], cell)
			if cell.OK() && !math.IsInf(cell.Value, 0) {
				xmax = math.Max(xmax, cell.Value)
			}
		}
	}
	xmax = math.Ceil(xmax*5) / 5
	plotH := float64(len(steps)) * groupH
	d := &drawing{w: int(labelW + plotW + 110), h: int(top + plotH + 40 + 16*float64(len(others)) + 10)}
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
			txt := cellText(cell, fmtRatio, textNone)
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
	return d
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
	var metrics []string
	for _, m := range append(append([]string(nil), b.c.CounterMetrics()...), analysis.CPUIOMetrics[1:]...) {
		if b.c.HasMetric(sc, m) {
			metrics = append(metrics, m)
		}
	}
	var steps []string
	for _, s := range b.stepsIn(sc, false) {
		if b.c.Has(analysis.Key(sc, version, s)) {
			steps = append(steps, s)
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
	for i, s := range steps {
		for j, m := range metrics {
			cell := b.c.Ratio(analysis.Key(sc, version, s), m)
			cells[i] = append(cells[i], cell)
			t := cellText(cell, fmtRatio, textNone)
			texts[i] = append(texts[i], t)
			colW[j] = math.Max(colW[j], textWidth(t)+10)
		}
	}
	const rowH, top = 18.0, 56.0
	total := labelW
	for _, w := range colW {
		total += w
	}
	d := &drawing{w: int(total + 20), h: int(top + rowH*float64(len(steps)) + 40)}
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
			if cell.OK() && !math.IsInf(cell.Value, 0) && cell.Value > 0 {
				bg, fg = heatColour(cell.Value, analysis.LowerIsBetter(m)), black
			}
			d.rect(x+1, y+1, colW[j]-2, rowH-2, bg)
			d.text(x+colW[j]/2, y+rowH-5, texts[i][j], 0, fg)
			x += colW[j]
		}
	}
	d.text(10, top+rowH*float64(len(steps))+24, "red: more per operation than the base (IPC: less), blue: the reverse; full colour at 2x and 0.5x; grey: no ratio", -1, grey)
	return d
}

// seriesChart plots, for each second of a Record's window, the operations
// per second and the counter per operation, in two panels.
func seriesChart(r *record.Record, counter string) *drawing {
	if counter == "" {
		counter = "instructions"
	}
	has := false
	var names []string
	for _, p := range r.Series {
		if _, ok := p.Counters[counter]; ok {
			has = true
		}
		for k := range p.Counters {
			names = append(names, k)
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
	title := fmt.Sprintf("%s %s, repeat %d: each second of the window", r.Version, r.Step, r.Repeat)
	if s := scopeText(r.Host, r.Threads); s != "" {
		title += " (" + s + ")"
	}
	if r.Outcome == record.OutcomePartial {
		title += ", partial window"
	}
	d := &drawing{w: int(math.Max(left+plotW+30, textWidth(title)+20)), h: int(top + float64(panels)*(panelH+gap) + 10)}
	d.text(10, 20, title, -1, black)
	tmax := 0.0
	for _, p := range r.Series {
		tmax = math.Max(tmax, p.T)
	}
	if tmax <= 0 {
		tmax = 1
	}
	X := func(t float64) float64 { return left + t/tmax*plotW }
	panel := func(i int, label string, val func(p record.Point) (float64, bool)) {
		y0 := top + float64(i)*(panelH+gap)
		vmax := 0.0
		for _, p := range r.Series {
			if v, ok := val(p); ok {
				vmax = math.Max(vmax, v)
			}
		}
		if vmax <= 0 {
			vmax = 1
		}
		vmax *= 1.1
		Y := func(v float64) float64 { return y0 + panelH - v/vmax*panelH }
		d.text(left, y0-8, label, -1, black)
		d.line(left, y0, left, y0+panelH, grey)
		d.line(left, y0+panelH, left+plotW, y0+panelH, grey)
		for _, f := range []float64{0, 0.5, 1} {
			v := vmax / 1.1 * f
			d.line(left-3, Y(v), left+plotW, Y(v), light)
			d.text(left-6, Y(v)+4, fmtAbs(v), 1, grey)
		}
		for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
			d.text(X(tmax*f), y0+panelH+16, num(tmax*f)+"s", 0, grey)
		}
		var run [][2]float64
		for _, p := range r.Series {
			v, ok := val(p)
			if !ok {
				d.polyline(run, palette[0])
				run = nil
				continue
			}
			run = append(run, [2]float64{X(p.T), Y(v)})
		}
		d.polyline(run, palette[0])
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
	return d
}
