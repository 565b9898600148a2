package insertbench

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
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

// fakeServer answers the commands read from c with the packets of
// answers, one slice of payloads per command (COM_STMT_PREPARE and the
// COM_PING after it are two), each numbered from 1.
func fakeServer(c net.Conn, answers ...[][]byte) {
	r := bufio.NewReader(c)
	for _, ans := range answers {
		var h [4]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return
		}
		if _, err := r.Discard(int(h[0]) | int(h[1])<<8 | int(h[2])<<16); err != nil {
			return
		}
		var out []byte
		for i, p := range ans {
			out = append(out, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), byte(i+1))
			out = append(out, p...)
		}
		c.Write(out)
	}
}

// TestWirePrepare: the answer to a prepare is read to its end whether the
// server ends the parameters' definitions with an EOF packet or not, and
// an error, as the driver gives it, leaves the connection in step for the
// next command.
func TestWirePrepare(t *testing.T) {
	prepOK := []byte{0, 7, 0, 0, 0, 0, 0, 14, 0, 0, 0, 0}
	def := []byte("\x03def\x00\x00\x00\x01?\x00\x0c\x3f\x00\x00\x00\x00\x00\xfd\x80\x00\x00\x00\x00")
	eof := []byte{0xfe, 0, 0, 2, 0}
	ok := []byte{0, 0, 0, 2, 0, 0, 0}
	inserted := []byte{0, 2, 0, 2, 0, 0, 0} // 2 rows
	fail := append([]byte{0xff, 0x7a, 0x04, '#', '4', '2', 'S', '0', '2'}, "Table 'x' doesn't exist"...)
	defs := func(end ...[]byte) [][]byte {
		p := [][]byte{prepOK}
		for range 14 {
			p = append(p, def)
		}
		return append(p, end...)
	}
	for _, withEOF := range []bool{false, true} {
		a, b := net.Pipe()
		prep := defs()
		if withEOF {
			prep = defs(eof)
		}
		go fakeServer(b, [][]byte{fail}, [][]byte{ok}, prep, [][]byte{ok}, [][]byte{inserted})
		w := newWireConn(a, time.Second)
		_, err := w.prepare("INSERT INTO x ...", 2)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1146 || string(me.SQLState[:]) != "42S02" || me.Message != "Table 'x' doesn't exist" {
			t.Errorf("EOF %v: a prepare the server refused: %v", withEOF, err)
		}
		s, err := w.prepare("INSERT INTO x ...", 2)
		if err != nil {
			t.Fatalf("EOF %v: %v", withEOF, err)
		}
		want := []byte{comStmtExecute, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}
		for range 2 {
			for _, ty := range rowTypes {
				want = append(want, ty, 0)
			}
		}
		if !bytes.Equal(s.head, want) {
			t.Errorf("EOF %v: the packet's head %x, want %x", withEOF, s.head, want)
		}
		// The ping's OK was read: the next answer read is the execute's.
		if n, err := s.exec(append(s.packet(), make([]byte, 10)...)); err != nil || n != 2 {
			t.Errorf("EOF %v: execute: %d rows, %v", withEOF, n, err)
		}
		a.Close()
	}
}
