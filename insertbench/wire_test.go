package insertbench

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// TestWireSplit: a command of 16 MB or more goes as packets of 16 MB - 1
// bytes numbered from 0, the last shorter (empty when the command is a
// multiple of 16 MB - 1), and what follows it in the buffer after them.
func TestWireSplit(t *testing.T) {
	for _, size := range []int{maxPayload - 1, maxPayload, 2 * maxPayload, 2*maxPayload + 5} {
		a, b := net.Pipe()
		w := newWireConn(a, 0)
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = byte(i * 7)
		}
		w.out = append(append([]byte{0, 0, 0, 0}, payload...), "tail"...)
		got := make(chan []byte)
		go func() { p, _ := io.ReadAll(b); got <- p }()
		if err := w.send(size); err != nil {
			t.Fatal(err)
		}
		a.Close()
		p := <-got
		var joined []byte
		seq := byte(0)
		for len(p) >= 4 {
			n := int(p[0]) | int(p[1])<<8 | int(p[2])<<16
			if p[3] != seq || len(p) < 4+n {
				t.Fatalf("%d bytes: packet %d numbered %d, of %d bytes with %d left", size, seq, p[3], n, len(p)-4)
			}
			joined = append(joined, p[4:4+n]...)
			p = p[4+n:]
			seq++
			if n < maxPayload {
				break
			}
		}
		if want := size/maxPayload + 1; int(seq) != want || w.seq != seq || !bytes.Equal(joined, payload) || string(p) != "tail" {
			t.Errorf("%d bytes: %d packets (want %d; next answer numbered %d), payload equal: %v, then %q",
				size, seq, want, w.seq, bytes.Equal(joined, payload), p)
		}
	}
}
