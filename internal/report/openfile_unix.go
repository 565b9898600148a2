//go:build unix

package report

import (
	"io/fs"
	"syscall"
)

// rawFile is a file opened for reading without the runtime's poller: a
// campaign opens thousands of small files, and os.Open spends as long
// registering each (fcntl, epoll) as reading it.
type rawFile struct {
	fd   int
	path string
}

func openFile(path string) (rawFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return rawFile{}, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return rawFile{fd, path}, nil
	}
}

// Read reads into b; 0 bytes and no error is the end of the file.
func (f rawFile) Read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		return n, nil
	}
}

// Seek sets where the next Read reads, as os.File's Seek does.
func (f rawFile) Seek(offset int64, whence int) (int64, error) {
	off, err := syscall.Seek(f.fd, offset, whence)
	if err != nil {
		return 0, &fs.PathError{Op: "seek", Path: f.path, Err: err}
	}
	return off, nil
}

func (f rawFile) Close() error { return syscall.Close(f.fd) }
