package profdiff

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strings"
)

// WriteFolded writes p's stacks folded: one "root;...;leaf count" line per
// distinct stack, in samples, sorted by stack.
func (p *pooledProfile) WriteFolded(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var walk func(n *node, path []string)
	walk = func(n *node, path []string) {
		if n.Self > 0 && len(path) > 0 {
			fmt.Fprintf(bw, "%s %d\n", strings.Join(path, ";"), n.Self)
		}
		for _, c := range n.sortedChildren() {
			walk(c, append(path, c.Name))
		}
	}
	walk(p.Root, nil)
	return bw.Flush()
}

// Flame graph geometry.
const (
	flameWidth    = 1200.0
	flamePad      = 10.0
	frameHeight   = 16.0
	flameTop      = 50.0 // title and legend
	flameBottom   = 10.0
	charWidth     = 7.0  // monospace at font-size 11
	minFrameWidth = 0.25 // narrower frames are left out
)

// flameOptions say what a flame graph shows.
type flameOptions struct {
	// Title is printed at the top.
	Title string
	// PerOp scales the tooltips' values per 1,000 operations (else per
	// 1,000 samples).
	PerOp bool
	// Base, when set, makes the graph differential: shaped like the
	// profile, each frame coloured by how its samples per 1,000 ops (or
	// per 1,000 samples) on that stack grew (red) or shrank (blue)
	// against Base.
	Base *pooledProfile
	// BaseName names the base version in the legend.
	BaseName string
}

// WriteFlameSVG writes p as a self-contained SVG flame graph: the root at
// the bottom, each frame as wide as its samples, children sorted by name,
// a tooltip (title) on every frame.
func (p *pooledProfile) WriteFlameSVG(w io.Writer, o flameOptions) error {
	depth := p.Root.depth(p.Root.Value)
	height := flameTop + float64(depth)*frameHeight + flameBottom
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" `+
		`font-family="monospace" font-size="11">`+"\n", flameWidth, height, flameWidth, height)
	fmt.Fprintf(bw, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="#f8f8f8"/>`+"\n", flameWidth, height)
	fmt.Fprintf(bw, `<text x="%.0f" y="20" font-size="15" text-anchor="middle">%s</text>`+"\n", flameWidth/2, esc(o.Title))
	unit := "per 1,000 ops"
	if !o.PerOp {
		unit = "per 1,000 samples"
	}
	legend := fmt.Sprintf("width: samples of %s (%s samples); hover a frame for its values %s", p.Version, commas(p.Samples), unit)
	if o.Base != nil {
		legend = fmt.Sprintf("width: samples of %s; colour: change %s against %s on the same stack (red grew, blue shrank)", p.Version, unit, o.BaseName)
	}
	fmt.Fprintf(bw, `<text x="%.0f" y="38" font-size="11" text-anchor="middle" fill="#555">%s</text>`+"\n", flameWidth/2, esc(legend))
	if p.Root.Value == 0 {
		fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" text-anchor="middle">no samples</text>`+"\n", flameWidth/2, flameTop+12)
		fmt.Fprintf(bw, "</svg>\n")
		return bw.Flush()
	}
	k := p.scale(o.PerOp)
	var kb float64
	var maxDelta float64
	if o.Base != nil {
		kb = o.Base.scale(o.PerOp)
		maxDelta = maxPathDelta(p.Root, o.Base.Root, k, kb)
	}
	perPx := (flameWidth - 2*flamePad) / float64(p.Root.Value)
	var draw func(n, base *node, x float64, level int)
	draw = func(n, base *node, x float64, level int) {
		wd := float64(n.Value) * perPx
		if wd < minFrameWidth {
			return
		}
		y := height - flameBottom - float64(level+1)*frameHeight
		v := float64(n.Value) * k
		var fill, tip string
		if o.Base != nil {
			var b float64
			if base != nil {
				b = float64(base.Value) * kb
			}
			fill = diffColour(v-b, maxDelta)
			tip = fmt.Sprintf("%s: %s → %s %s (%s)", n.Name, fnum(b), fnum(v), unit, signed(v-b))
		} else {
			fill = nameColour(n.Name)
			tip = fmt.Sprintf("%s: %s samples, %.2f%%, %s %s", n.Name, commas(n.Value), 100*float64(n.Value)/float64(p.Root.Value), fnum(v), unit)
		}
		fmt.Fprintf(bw, `<g><title>%s</title><rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s" stroke="#fff" `+
			`stroke-width="0.5"/>`, esc(tip), x, y, wd, frameHeight-1, fill)
		if label := fit(n.Name, wd); label != "" {
			fmt.Fprintf(bw, `<text x="%.2f" y="%.1f">%s</text>`, x+3, y+frameHeight-5, esc(label))
		}
		fmt.Fprintf(bw, "</g>\n")
		cx := x
		for _, c := range n.sortedChildren() {
			var cb *node
			if base != nil {
				cb = base.Children[c.Name]
			}
			draw(c, cb, cx, level+1)
			cx += float64(c.Value) * perPx
		}
	}
	var baseRoot *node
	if o.Base != nil {
		baseRoot = o.Base.Root
	}
	draw(p.Root, baseRoot, flamePad, 0)
	fmt.Fprintf(bw, "</svg>\n")
	return bw.Flush()
}

// depth is the number of levels of frames at least minFrameWidth wide.
func (n *node) depth(total int64) int {
	if total == 0 || float64(n.Value)*(flameWidth-2*flamePad)/float64(total) < minFrameWidth {
		return 0
	}
	d := 0
	for _, c := range n.Children {
		d = max(d, c.depth(total))
	}
	return d + 1
}

// maxPathDelta is the largest |change| of any stack path of n against base.
func maxPathDelta(n, base *node, k, kb float64) float64 {
	var b float64
	if base != nil {
		b = float64(base.Value) * kb
	}
	m := math.Abs(float64(n.Value)*k - b)
	for name, c := range n.Children {
		var cb *node
		if base != nil {
			cb = base.Children[name]
		}
		m = max(m, maxPathDelta(c, cb, k, kb))
	}
	return m
}

// diffColour is white for no change, red for growth and blue for a
// decrease, saturated at the largest change of the graph.
func diffColour(d, maxDelta float64) string {
	if maxDelta == 0 || d == 0 {
		return "rgb(255,255,255)"
	}
	f := math.Min(1, math.Abs(d)/maxDelta)
	c := int(math.Round(255 - 200*f))
	if d > 0 {
		return fmt.Sprintf("rgb(255,%d,%d)", c, c)
	}
	return fmt.Sprintf("rgb(%d,%d,255)", c, c)
}

// nameColour is a warm colour chosen by the frame's name, the same for the
// same name in every graph.
func nameColour(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	r := 205 + int(v%50)
	g := 80 + int((v>>8)%150)
	b := 40 + int((v>>16)%50)
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, b)
}

// fit returns the label that fits a frame of width w, shortened with ".."
// when needed, or "" when not even three characters fit.
func fit(name string, w float64) string {
	n := int((w - 6) / charWidth)
	if n < 3 {
		return ""
	}
	r := []rune(name)
	if len(r) <= n {
		return name
	}
	return string(r[:n-2]) + ".."
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return xmlEscaper.Replace(s) }
