//go:build unix

package report

import (
	"io/fs"
	"syscall"

	"github.com/perfbench/perfbench/record"
)

// rawFile is a file opened for reading without the runtime's poller: a
// campaign opens thousands of small files, and os.Open spends as long
// registering each (fcntl, epoll) as reading it.
type rawFile struct {
	fd   int
	path string
}

// openFile opens a Record file without blocking on it (a FIFO opens at
// once) and refuses what is not a regular file of at most
// record.MaxFileBytes (record.CheckInput).
func openFile(path string) (rawFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return rawFile{}, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			syscall.Close(fd)
			return rawFile{}, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		if err := record.CheckInput(path, fileType(uint32(st.Mode)), st.Size, record.MaxFileBytes, "Records"); err != nil {
			syscall.Close(fd)
			return rawFile{}, err
		}
		return rawFile{fd, path}, nil
	}
}

// fileType is the type bits of a stat mode as fs.FileMode's.
func fileType(mode uint32) fs.FileMode {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	}
	return fs.ModeIrregular
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
