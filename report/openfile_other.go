//go:build !unix

package report

import (
	"errors"
	"io"
	"os"
)

type osFile struct{ *os.File }

func openFile(path string) (osFile, error) {
	f, err := os.Open(path)
	return osFile{f}, err
}

// ReadAt reads as rawFile's does: 0 bytes and no error at the end.
func (f osFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

func (f osFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
