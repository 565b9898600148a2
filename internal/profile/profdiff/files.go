package profdiff

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/perfbench/perfbench/record"
)

// WriteFiles writes, under dir, for each step a folder (the step's name made
// safe for a file name) with, for each version, VERSION.folded and
// VERSION.svg, and for each version but the base diff-VERSION-vs-BASE.svg.
// It returns the files written, in order.
func (c *Comparison) WriteFiles(dir string) ([]string, error) {
	var out []string
	write := func(path string, b []byte) error {
		if err := record.WriteFileAtomic(path, b); err != nil {
			return err
		}
		out = append(out, path)
		return nil
	}
	for _, st := range c.Steps {
		sd := filepath.Join(dir, safeName(st.Name))
		for _, v := range c.Versions {
			p := st.Versions[v]
			if p == nil {
				continue
			}
			var b bytes.Buffer
			if err := p.WriteFolded(&b); err != nil {
				return out, err
			}
			if err := write(filepath.Join(sd, safeName(v)+".folded"), b.Bytes()); err != nil {
				return out, err
			}
			b.Reset()
			title := fmt.Sprintf("%s — %s", st.Name, v)
			if err := p.WriteFlameSVG(&b, flameOptions{Title: title, PerOp: st.PerOp}); err != nil {
				return out, err
			}
			if err := write(filepath.Join(sd, safeName(v)+".svg"), b.Bytes()); err != nil {
				return out, err
			}
		}
		base := st.Versions[c.Base]
		if base == nil {
			continue
		}
		for _, v := range c.Versions[1:] {
			p := st.Versions[v]
			if p == nil {
				continue
			}
			var b bytes.Buffer
			title := fmt.Sprintf("%s — %s against %s", st.Name, v, c.Base)
			if err := p.WriteFlameSVG(&b, flameOptions{Title: title, PerOp: st.PerOp, Base: base, BaseName: c.Base}); err != nil {
				return out, err
			}
			name := fmt.Sprintf("diff-%s-vs-%s.svg", safeName(v), safeName(c.Base))
			if err := write(filepath.Join(sd, name), b.Bytes()); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// safeName keeps letters, digits and . - _ = + of s; other characters
// become _.
func safeName(s string) string {
	b := []rune(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '-', c == '_', c == '=', c == '+':
		default:
			b[i] = '_'
		}
	}
	if len(b) == 0 || string(b) == "." || string(b) == ".." {
		return "_"
	}
	return string(b)
}
