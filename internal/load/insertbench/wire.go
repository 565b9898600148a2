package insertbench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The parts of the MySQL client/server protocol the INSERTs speak.
const (
	comPing        = 0x0e
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
	typeLongLong   = 0x08 // an int64 (the driver's type for one)
	typeString     = 0xfe // a length-prefixed string ([]byte)
	maxPayload     = 1<<24 - 1
)

// wireConn runs a client's INSERTs on the socket of one of the MySQL
// driver's connections, which the driver leaves idle meanwhile (they run
// inside sql.Conn.Raw): the driver has connected and logged in; this
// prepares the INSERTs and sends each COM_STMT_EXECUTE from a buffer that
// the rows are generated into and that is reused from batch to batch.
// The server gets the packet the driver would send for the same rows
// (the same types, the new-params-bound flag set), without the driver's
// per-value interfaces and copies, most of the driver's CPU per row.
type wireConn struct {
	c net.Conn
	r *bufio.Reader
	// timeout, when not 0, is set as the deadline of each command (a
	// connection that does not time out by itself).
	timeout time.Duration
	out     []byte // the packet being built, its 4-byte header first
	in      []byte // the last packet read
	seq     byte   // the sequence number of the next packet read
}

func newWireConn(c net.Conn, timeout time.Duration) *wireConn {
	return &wireConn{c: c, r: bufio.NewReaderSize(c, 4096), timeout: timeout}
}

// wireStmt is a prepared INSERT.
type wireStmt struct {
	w *wireConn
	// head is the COM_STMT_EXECUTE payload before the values.
	head []byte
}

// brokenConn marks an error that leaves the connection unusable, as the
// driver does for its own.
func brokenConn(err error) error { return fmt.Errorf("%w: %w", mysql.ErrInvalidConn, err) }

// prepare prepares q, an INSERT of rows rows of rowTypes, and checks the
// server counts its parameters alike.
//
// The server follows the parameters' definitions with an EOF packet or
// not, as the driver and it agreed at login (which this does not see): a
// COM_PING sent with the prepare tells where the answer ends.
func (w *wireConn) prepare(q string, rows int) (*wireStmt, error) {
	w.out = append(append(w.out[:0], 0, 0, 0, 0, comStmtPrepare), q...)
	w.out = append(w.out, 1, 0, 0, 0, comPing)
	if err := w.send(len(w.out) - 9); err != nil {
		return nil, err
	}
	p, err := w.read()
	if err != nil {
		return nil, err
	}
	prepErr := w.errPacket(p)
	var id uint32
	var cols, params int
	switch {
	case prepErr != nil:
	case p[0] != 0 || len(p) < 12:
		return nil, brokenConn(fmt.Errorf("prepare: unexpected answer %x", p[:min(len(p), 16)]))
	default:
		id = binary.LittleEndian.Uint32(p[1:])
		cols, params = int(binary.LittleEndian.Uint16(p[5:])), int(binary.LittleEndian.Uint16(p[7:]))
	}
	for range params + cols {
		if _, err := w.read(); err != nil {
			return nil, err
		}
	}
	// An EOF packet, or the ping's OK.
	if b, err := w.r.Peek(5); err != nil {
		return nil, brokenConn(err)
	} else if b[4] == 0xfe && params+cols > 0 {
		if _, err := w.read(); err != nil {
			return nil, err
		}
	}
	w.seq = 1
	if p, err = w.read(); err != nil {
		return nil, err
	}
	if p[0] != 0 {
		return nil, brokenConn(fmt.Errorf("prepare: %x where the ping's OK was due", p[:min(len(p), 16)]))
	}
	if prepErr != nil {
		return nil, prepErr
	}
	if cols != 0 {
		return nil, fmt.Errorf("prepare: the server says the INSERT returns %d columns", cols)
	}
	if params != rows*insertColumns {
		return nil, fmt.Errorf("prepare: the server counts %d parameters in an INSERT of %d rows, want %d", params, rows, rows*insertColumns)
	}
	s := &wireStmt{w: w}
	s.head = binary.LittleEndian.AppendUint32([]byte{comStmtExecute}, id)
	s.head = append(s.head, 0, 1, 0, 0, 0)                 // no cursor, 1 iteration
	s.head = append(s.head, make([]byte, (params+7)/8)...) // no NULLs
	s.head = append(s.head, 1)                             // new params bound: the types follow
	for range rows {
		for _, t := range rowTypes {
			s.head = append(s.head, t, 0)
		}
	}
	return s, nil
}

// packet returns the connection's buffer holding the header of a
// COM_STMT_EXECUTE of s, for the values to be appended to.
func (s *wireStmt) packet() []byte {
	return append(append(s.w.out[:0], 0, 0, 0, 0), s.head...)
}

// exec sends p, a packet from packet with the values of the statement's
// rows appended, and reads the answer: the rows the server inserted.
func (s *wireStmt) exec(p []byte) (int64, error) {
	w := s.w
	w.out = p // keep the buffer as it grew
	if err := w.send(len(p) - 4); err != nil {
		return 0, err
	}
	a, err := w.read()
	if err != nil {
		return 0, err
	}
	if err := w.errPacket(a); err != nil {
		return 0, err
	}
	if a[0] != 0 {
		return 0, brokenConn(fmt.Errorf("execute: unexpected answer %x", a[:min(len(a), 16)]))
	}
	n, _ := lenEnc(a[1:])
	return int64(n), nil
}

// send sends the command in w.out of payload bytes (after its 4-byte
// header, and anything after it already framed): in packets of at most
// maxPayload bytes, numbered from 0, the last shorter than maxPayload.
func (w *wireConn) send(payload int) error {
	if w.timeout > 0 {
		if err := w.c.SetDeadline(time.Now().Add(w.timeout)); err != nil {
			return brokenConn(err)
		}
	}
	if payload < maxPayload {
		putHeader(w.out, payload, 0)
		w.seq = 1
		return w.write(w.out)
	}
	// A packet over 16 MB: each part gets a header of its own.
	b, seq := w.out[4:4+payload], byte(0)
	for {
		n := min(len(b), maxPayload)
		var h [4]byte
		putHeader(h[:], n, seq)
		if err := w.write(h[:]); err != nil {
			return err
		}
		if err := w.write(b[:n]); err != nil {
			return err
		}
		b, seq = b[n:], seq+1
		if n < maxPayload {
			break
		}
	}
	w.seq = seq
	return w.write(w.out[4+payload:])
}

func putHeader(h []byte, n int, seq byte) {
	h[0], h[1], h[2], h[3] = byte(n), byte(n>>8), byte(n>>16), seq
}

func (w *wireConn) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := w.c.Write(b); err != nil {
		return brokenConn(err)
	}
	return nil
}

// read reads one answer packet, checking its sequence number. Answers
// here are short: one of 16 MB or more is an error.
func (w *wireConn) read() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(w.r, h[:]); err != nil {
		return nil, brokenConn(err)
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if h[3] != w.seq || n == 0 || n == maxPayload {
		return nil, brokenConn(fmt.Errorf("answer packet %d of %d bytes, want packet %d of 1 to %d bytes", h[3], n, w.seq, maxPayload-1))
	}
	w.seq++
	if cap(w.in) < n {
		w.in = make([]byte, n)
	}
	w.in = w.in[:n]
	if _, err := io.ReadFull(w.r, w.in); err != nil {
		return nil, brokenConn(err)
	}
	return w.in, nil
}

// errPacket returns the server's error in p, an error packet, as the
// driver would (nil for any other packet).
func (w *wireConn) errPacket(p []byte) error {
	if p[0] != 0xff {
		return nil
	}
	if len(p) < 3 {
		return brokenConn(errors.New("short error packet"))
	}
	e := &mysql.MySQLError{Number: binary.LittleEndian.Uint16(p[1:])}
	msg := p[3:]
	if len(msg) >= 6 && msg[0] == '#' {
		copy(e.SQLState[:], msg[1:6])
		msg = msg[6:]
	}
	e.Message = string(msg)
	return e
}

// lenEnc reads a length-encoded integer.
func lenEnc(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	var n int
	switch b[0] {
	case 0xfc:
		n = 2
	case 0xfd:
		n = 3
	case 0xfe:
		n = 8
	default:
		return uint64(b[0]), 1
	}
	if len(b) < 1+n {
		return 0, 0
	}
	var v uint64
	for i := n; i >= 1; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, 1 + n
}

// appendLenEnc appends n as a length-encoded integer.
func appendLenEnc(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}
