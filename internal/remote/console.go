package remote

import (
	"bytes"
	"io"
	"sync"
)

// Console writes the lines of several hosts to one writer, whole lines at
// a time, so that concurrent hosts do not mix within a line.
type Console struct {
	mu sync.Mutex
	w  io.Writer
}

// NewConsole returns a Console writing to w.
func NewConsole(w io.Writer) *Console { return &Console{w: w} }

// Writer returns a writer that prints each line it is given with prefix
// before it ("h1: "). Flush prints a last line without a newline.
func (c *Console) Writer(prefix string) *LineWriter {
	return &LineWriter{c: c, prefix: []byte(prefix)}
}

// LineWriter prefixes lines; see Console.Writer.
type LineWriter struct {
	c      *Console
	prefix []byte
	mu     sync.Mutex
	buf    []byte
}

func (l *LineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	var out []byte
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		out = append(out, l.prefix...)
		out = append(out, l.buf[:i+1]...)
		l.buf = l.buf[i+1:]
	}
	if len(out) > 0 {
		if err := l.c.write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush prints what is left of an unterminated last line.
func (l *LineWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	out := append(append(append([]byte(nil), l.prefix...), l.buf...), '\n')
	l.buf = nil
	return l.c.write(out)
}

func (c *Console) write(p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.w.Write(p)
	return err
}
