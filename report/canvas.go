package report

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	fx "golang.org/x/image/math/fixed"
)

// A chart is drawn once as a list of shapes and rendered to SVG (by hand) and
// to PNG (image/png, text in the 7×13 basic font), so both show the same
// thing. Coordinates are pixels, y down; text y is the baseline.

const charW = 7 // width of a character in the basic font, and about that of 12px monospace

type shapeKind int

const (
	shapeRect shapeKind = iota
	shapeLine
	shapePolyline
	shapeText
)

type shape struct {
	kind   shapeKind
	x, y   float64 // rect origin, line start, text anchor point
	w, h   float64 // rect size; line end is (x+w, y+h)
	pts    [][2]float64
	col    color.RGBA
	text   string
	anchor int // text: -1 left, 0 centre, 1 right
}

type drawing struct {
	w, h   int
	shapes []shape
}

func (d *drawing) rect(x, y, w, h float64, c color.RGBA) {
	d.shapes = append(d.shapes, shape{kind: shapeRect, x: x, y: y, w: w, h: h, col: c})
}

func (d *drawing) line(x1, y1, x2, y2 float64, c color.RGBA) {
	d.shapes = append(d.shapes, shape{kind: shapeLine, x: x1, y: y1, w: x2 - x1, h: y2 - y1, col: c})
}

func (d *drawing) polyline(pts [][2]float64, c color.RGBA) {
	if len(pts) > 1 {
		d.shapes = append(d.shapes, shape{kind: shapePolyline, pts: pts, col: c})
	}
}

func (d *drawing) text(x, y float64, s string, anchor int, c color.RGBA) {
	d.shapes = append(d.shapes, shape{kind: shapeText, x: x, y: y, text: s, anchor: anchor, col: c})
}

func textWidth(s string) float64 { return float64(charW * width(s)) }

func hex(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

func num(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v), "0"), ".")
}

// svg renders the drawing as a standalone SVG document.
func (d *drawing) svg() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="12">`+"\n", d.w, d.h, d.w, d.h)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", d.w, d.h)
	for _, s := range d.shapes {
		switch s.kind {
		case shapeRect:
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", num(s.x), num(s.y), num(s.w), num(s.h), hex(s.col))
		case shapeLine:
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", num(s.x), num(s.y), num(s.x+s.w), num(s.y+s.h), hex(s.col))
		case shapePolyline:
			var p []string
			for _, pt := range s.pts {
				p = append(p, num(pt[0])+","+num(pt[1]))
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", strings.Join(p, " "), hex(s.col))
		case shapeText:
			anchor := map[int]string{-1: "start", 0: "middle", 1: "end"}[s.anchor]
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="%s" fill="%s">%s</text>`+"\n", num(s.x), num(s.y), anchor, hex(s.col), html.EscapeString(s.text))
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// png renders the drawing as a PNG image.
func (d *drawing) png() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, d.w, d.h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	for _, s := range d.shapes {
		switch s.kind {
		case shapeRect:
			r := image.Rect(int(math.Round(s.x)), int(math.Round(s.y)), int(math.Round(s.x+s.w)), int(math.Round(s.y+s.h)))
			draw.Draw(img, r, image.NewUniform(s.col), image.Point{}, draw.Src)
		case shapeLine:
			plotLine(img, s.x, s.y, s.x+s.w, s.y+s.h, s.col)
		case shapePolyline:
			for i := 1; i < len(s.pts); i++ {
				plotLine(img, s.pts[i-1][0], s.pts[i-1][1], s.pts[i][0], s.pts[i][1], s.col)
				plotLine(img, s.pts[i-1][0], s.pts[i-1][1]+1, s.pts[i][0], s.pts[i][1]+1, s.col)
			}
		case shapeText:
			x := s.x
			switch s.anchor {
			case 0:
				x -= textWidth(s.text) / 2
			case 1:
				x -= textWidth(s.text)
			}
			dr := font.Drawer{Dst: img, Src: image.NewUniform(s.col), Face: basicfont.Face7x13,
				Dot: fx.P(int(math.Round(x)), int(math.Round(s.y)))}
			dr.DrawString(s.text)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// plotLine draws a one-pixel line by stepping along its longer axis.
func plotLine(img *image.RGBA, x1, y1, x2, y2 float64, c color.RGBA) {
	n := int(math.Max(math.Abs(x2-x1), math.Abs(y2-y1)))
	if n == 0 {
		img.SetRGBA(int(math.Round(x1)), int(math.Round(y1)), c)
		return
	}
	for i := 0; i <= n; i++ {
		t := float64(i) / float64(n)
		img.SetRGBA(int(math.Round(x1+t*(x2-x1))), int(math.Round(y1+t*(y2-y1))), c)
	}
}
