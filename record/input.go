package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by the errors of OpenInput and CheckInput for
// an input that is not a regular file: a FIFO (which would block the
// reader until something writes to it), a device such as /dev/zero
// (which never ends), a socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the errors of OpenInput, CheckInput and
// ReadInput for an input over its size bound.
var ErrTooLarge = errors.New("over the size bound")

// MaxFileBytes is the largest Record file Read and the reports read: a
// Record of a long series with many roles takes a few MiB.
const MaxFileBytes = 64 << 20

// OpenInput opens the input file path for reading without blocking on it
// (O_NONBLOCK where there is such a flag, so a FIFO opens at once) and
// refuses, with its path and the bound, what is not a regular file and a
// file of more than limit bytes. what names the inputs in the error
// ("Records", "CSV tables"). The size is the file's when opened: read
// it through ReadInput or LimitInput, which stop at the bound.
func OpenInput(path string, limit int64, what string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = CheckInput(path, fi.Mode(), fi.Size(), limit, what)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// CheckInput is OpenInput's check of a file opened otherwise, from its
// mode and size.
func CheckInput(path string, mode fs.FileMode, size, limit int64, what string) error {
	if !mode.IsRegular() {
		return fmt.Errorf("%s is %s, %w: perfbench reads %s from regular files only (copy it to one)", path, kindOf(mode), ErrNotRegular, what)
	}
	if size > limit {
		return tooLarge(path, size, limit, what)
	}
	return nil
}

func tooLarge(path string, size, limit int64, what string) error {
	return fmt.Errorf("%s is %d bytes, %w of %d bytes (%d MiB) on files of %s: split it or leave it out", path, size, ErrTooLarge, limit, limit>>20, what)
}

// kindOf names a file type that is not a regular file.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode.IsDir():
		return "a folder"
	}
	return "not a regular file (" + mode.Type().String() + ")"
}

// ReadInput reads the input file path whole, as OpenInput opens it: at
// most limit bytes, or an error that states the bound (a file that grew
// past it while read included).
func ReadInput(path string, limit int64, what string) ([]byte, error) {
	f, size, err := OpenInput(path, limit, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, size+1)
	b, err = readLimited(f, b, limit)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, (&limitedInput{path: path, limit: limit, what: what}).err()
	}
	return b, nil
}

// readLimited appends what r holds to b, up to limit+1 bytes.
func readLimited(r io.Reader, b []byte, limit int64) ([]byte, error) {
	for int64(len(b)) <= limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(int64(cap(b)), limit+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// LimitInput is r (an input file path opened by OpenInput) read to at
// most limit bytes: a Read past the bound fails with an error that
// states it.
func LimitInput(r io.Reader, path string, limit int64, what string) io.Reader {
	return &limitedInput{r: r, path: path, left: limit, limit: limit, what: what}
}

type limitedInput struct {
	r     io.Reader
	path  string
	left  int64
	limit int64
	what  string
}

func (l *limitedInput) Read(b []byte) (int, error) {
	if l.left < 0 {
		return 0, l.err()
	}
	if int64(len(b)) > l.left+1 {
		b = b[:l.left+1]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, l.err()
	}
	return n, err
}

func (l *limitedInput) err() error {
	return fmt.Errorf("%s holds more than %d bytes, %w (%d MiB) on files of %s: split it or leave it out", l.path, l.limit, ErrTooLarge, l.limit>>20, l.what)
}
