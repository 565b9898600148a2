package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// A chart is laid out in points as a stack of blocks (title, plot, legend,
// notes), drawn once per format by gonum.org/v1/plot's SVG and PNG back
// ends, so both show the same thing. Text is set in Liberation Sans, which
// plot embeds (Latin with its accented letters, Greek, Cyrillic), so the
// PNG prints names as they are spelled; a character it has no glyph for
// (CJK, emoji) is written as its code point, ‹U+6570›, and the chart's
// notes and warnings say which (glyphHandler).

// pngDPI is the resolution of the PNG charts: 1 pt is 4/3 px.
const pngDPI = 96

var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}

	black = color.RGBA{0, 0, 0, 255}
	grey  = color.RGBA{110, 110, 110, 255}
	light = color.RGBA{225, 225, 225, 255}
	white = color.RGBA{255, 255, 255, 255}
	// palette is Tableau's ten colours. A version (or repeat) j is drawn
	// in colour j mod 10 with fill j/10 (bars) or dash j/10 (lines): 60
	// distinct styles before one repeats.
	palette = []color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
		{188, 189, 34, 255}, {23, 190, 207, 255},
	}
	dashes = [][]vg.Length{nil, {6, 2.5}, {1.5, 1.5}, {6, 2, 1.5, 2}, {12, 3}, {3, 3}}
)

// The fills of bars, in the order styles use them: over the colour, white
// stripes across, a white line along the middle, a row of white dots, both
// stripes and line; or a pale tint with an outline. Each overlay is one
// dashed line, which keeps the SVG small.
const (
	fillSolid = iota
	fillStripes
	fillLine
	fillDots
	fillGrid
	fillTint
	fillCount
)

func textStyle(f font.Font, size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(f, size), Handler: glyphHandler{plot.DefaultTextHandler}}
}

// glyphHandler sets text as the handler it wraps does, each character the
// charts' font cannot draw written as its code point, "‹U+6570›" (and
// "‹" itself so): the font has no CJK or emoji, and the PNG back end drew
// nothing for them, so that "数据库-8.0" and "数据仓-8.0" both showed as
// "-8.0". Written so, two different texts never look the same, and the
// chart says why (drawable).
type glyphHandler struct{ text.Handler }

func (h glyphHandler) Lines(txt string) []string { return h.Handler.Lines(drawable(txt)) }

func (h glyphHandler) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	return h.Handler.Box(drawable(txt), fnt)
}

func (h glyphHandler) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	sty.Handler = h.Handler
	h.Handler.Draw(c, drawable(txt), sty, pt)
}

// codePointOpen and codePointClose enclose the code point of a character
// the charts' font lacks.
const codePointOpen, codePointClose = "‹U+", "›"

// drawable is s with each character that Liberation Sans (regular or
// bold) has no glyph for, and each "‹", written "‹U+XXXX›".
func drawable(s string) string {
	if isASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == '‹' || !hasGlyph(r) {
			fmt.Fprintf(&b, "%s%04X%s", codePointOpen, r, codePointClose)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasGlyph reports whether both faces of the charts' font draw r (line
// breaks are the handler's).
func hasGlyph(r rune) bool {
	if r == '\n' {
		return true
	}
	if ok, seen := glyphs.Load(r); seen {
		return ok.(bool)
	}
	ok := r != utf8.RuneError
	var buf sfnt.Buffer
	for _, f := range []font.Font{sans, sansBold} {
		face := font.DefaultCache.Lookup(f, 10)
		if face.Face == nil {
			ok = false
			break
		}
		if i, err := face.Face.GlyphIndex(&buf, r); err != nil || i == 0 {
			ok = false
		}
	}
	glyphs.Store(r, ok)
	return ok
}

// glyphs caches hasGlyph by rune.
var glyphs sync.Map

// styleOf is the colour and the fill or dash index of style j.
func styleOf(j int) (color.RGBA, int) {
	return palette[j%len(palette)], (j / len(palette)) % fillCount
}

// lineStyle is the line of repeat (or version) j.
func lineStyle(j int) draw.LineStyle {
	c, d := styleOf(j)
	return draw.LineStyle{Color: c, Width: 1.2, Dashes: dashes[d]}
}

// fillBar fills r in style j.
func fillBar(c draw.Canvas, r vg.Rectangle, j int) {
	col, f := styleOf(j)
	if r.Max.X-r.Min.X <= 0 || r.Max.Y-r.Min.Y <= 0 {
		return
	}
	if f == fillTint {
		c.FillPolygon(tint(col, 0.3), rectPoints(r))
		c.StrokeLines(draw.LineStyle{Color: col, Width: 0.8}, append(rectPoints(r), r.Min))
		return
	}
	c.FillPolygon(col, rectPoints(r))
	h, y := r.Max.Y-r.Min.Y, (r.Min.Y+r.Max.Y)/2
	overlay := func(width vg.Length, dashes ...vg.Length) {
		c.StrokeLine2(draw.LineStyle{Color: white, Width: width, Dashes: dashes}, r.Min.X, y, r.Max.X, y)
	}
	switch f {
	case fillStripes:
		overlay(h, 0.8, 2.2)
	case fillLine:
		overlay(h / 4)
	case fillDots:
		overlay(h/4, h/4, h/4)
	case fillGrid:
		overlay(h, 0.8, 2.2)
		overlay(h / 6)
	}
}

// tint is c moved towards white, keeping f of it.
func tint(c color.RGBA, f float64) color.RGBA {
	m := func(v uint8) uint8 { return uint8(math.Round(255 + (float64(v)-255)*f)) }
	return color.RGBA{m(c.R), m(c.G), m(c.B), 255}
}

func rectPoints(r vg.Rectangle) []vg.Point {
	return []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
}

// A block is a part of a chart, w by h points, drawn in the canvas it is
// given (its own rectangle, left-aligned).
type block struct {
	w, h vg.Length
	draw func(c draw.Canvas)
}

// margin surrounds the whole chart and separates its blocks.
const margin = vg.Length(8)

// figure stacks blocks from the top down and renders them.
type figure []block

func (f figure) size() (w, h vg.Length) {
	for _, b := range f {
		w = max(w, b.w)
		h += b.h + margin
	}
	return w + 2*margin, h + margin
}

func (f figure) drawOn(c draw.Canvas) {
	c.SetColor(white)
	c.Fill(c.Rectangle.Path())
	y := c.Max.Y - margin
	for _, b := range f {
		r := vg.Rectangle{Min: vg.Point{X: c.Min.X + margin, Y: y - b.h}, Max: vg.Point{X: c.Min.X + margin + b.w, Y: y}}
		b.draw(draw.Canvas{Canvas: c.Canvas, Rectangle: r})
		y -= b.h + margin
	}
}

// render draws the figure as SVG and as PNG.
func (f figure) render(name string) (ch Chart, err error) {
	defer func() {
		// gonum's back ends panic on what they cannot draw.
		if r := recover(); r != nil {
			err = fmt.Errorf("draw chart %s: %v", name, r)
		}
	}()
	w, h := f.size()
	sv := vgsvg.New(w, h)
	f.drawOn(draw.New(sv))
	var s bytes.Buffer
	if _, err := sv.WriteTo(&s); err != nil {
		return Chart{}, fmt.Errorf("write chart %s as SVG: %w", name, err)
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))
	f.drawOn(draw.New(img))
	var p bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&p); err != nil {
		return Chart{}, fmt.Errorf("write chart %s as PNG: %w", name, err)
	}
	return Chart{Name: name, SVG: svgFallback(s.Bytes()), PNG: p.Bytes()}, nil
}

// svgFallback lets an SVG viewer without Liberation Sans use Arial, whose
// letters have the same widths, so the layout holds.
func svgFallback(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
}

// textBlock is lines of text, one under the other.
func textBlock(sty text.Style, lines ...string) block {
	lh := sty.Font.Size * 1.3
	var w vg.Length
	for _, l := range lines {
		w = max(w, sty.Width(l))
	}
	return block{w: w, h: lh * vg.Length(len(lines)), draw: func(c draw.Canvas) {
		sty := sty
		sty.YAlign = draw.YTop
		for i, l := range lines {
			c.FillText(sty, vg.Point{X: c.Min.X, Y: c.Max.Y - lh*vg.Length(i)}, l)
		}
	}}
}

// A legendEntry is a swatch drawn in a rectangle and its label.
type legendEntry struct {
	label  string
	swatch func(c draw.Canvas, r vg.Rectangle)
}

// legendBlock lays the entries out in as many columns as fit in width.
func legendBlock(entries []legendEntry, width vg.Length) block {
	sty := textStyle(sans, 9, black)
	const sw, gap, lh = vg.Length(16), vg.Length(4), vg.Length(12)
	var colW vg.Length
	for _, e := range entries {
		colW = max(colW, sw+gap+sty.Width(e.label)+12)
	}
	cols := max(1, min(len(entries), int(width/colW)))
	rows := (len(entries) + cols - 1) / cols
	return block{w: colW * vg.Length(cols), h: lh * vg.Length(rows), draw: func(c draw.Canvas) {
		sty := sty
		sty.YAlign = draw.YCenter
		for i, e := range entries {
			x := c.Min.X + colW*vg.Length(i/rows)
			y := c.Max.Y - lh*vg.Length(i%rows) - lh/2
			e.swatch(c, vg.Rectangle{Min: vg.Point{X: x, Y: y - 4}, Max: vg.Point{X: x + sw, Y: y + 4}})
			c.FillText(sty, vg.Point{X: x + sw + gap, Y: y}, e.label)
		}
	}}
}

// barSwatch and lineSwatch draw style j as the legend shows it.
func barSwatch(j int) func(draw.Canvas, vg.Rectangle) {
	return func(c draw.Canvas, r vg.Rectangle) { fillBar(c, r, j) }
}

func lineSwatch(j int) func(draw.Canvas, vg.Rectangle) {
	return func(c draw.Canvas, r vg.Rectangle) {
		y := (r.Min.Y + r.Max.Y) / 2
		c.StrokeLine2(lineStyle(j), r.Min.X, y, r.Max.X, y)
	}
}

// newPlot is a plot in the charts' fonts, without a title (the chart
// prints its own).
func newPlot() *plot.Plot {
	p := plot.New()
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 9)
		a.Tick.Label.Font = font.From(sans, 8)
		a.Label.TextStyle.Handler = glyphHandler{plot.DefaultTextHandler}
		a.Tick.Label.Handler = glyphHandler{plot.DefaultTextHandler}
		a.Tick.Label.Color = grey
		a.Color = grey
		a.Tick.Color = grey
		a.Padding = 2
	}
	return p
}

// plotBlock is p with a data area of dataW by dataH points and room
// right of it for labels that run past the data area (right).
func plotBlock(p *plot.Plot, dataW, dataH, right vg.Length) block {
	// The axes take the same room whatever the size: measure it once.
	const probe = 1000
	da := p.DataCanvas(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: probe, Y: probe}}})
	w := dataW + probe - (da.Max.X - da.Min.X)
	h := dataH + probe - (da.Max.Y - da.Min.Y)
	return block{w: w + right, h: h, draw: func(c draw.Canvas) {
		c.Max.X -= right
		p.Draw(c)
	}}
}

// plotterFunc makes a plot.Plotter of a function.
type plotterFunc func(c draw.Canvas, p *plot.Plot)

func (f plotterFunc) Plot(c draw.Canvas, p *plot.Plot) { f(c, p) }
