package sandbox

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// newCgroup creates a cgroup v2 for the server below perfbench's own and
// opens it: the server is created in it (clone3's CLONE_INTO_CGROUP), so
// that it and nothing else is in it from its first instruction.
func newCgroup() (dir string, f *os.File, err error) {
	fs := procfs.New("")
	cg, err := fs.Self().Cgroup()
	if err != nil {
		return "", nil, fmt.Errorf("find perfbench's cgroup: %w", err)
	}
	parent, err := fs.CgroupDir(cg)
	if err != nil {
		return "", nil, err
	}
	dir, err = os.MkdirTemp(parent, "perfbench-server-")
	if err != nil {
		return "", nil, fmt.Errorf("create a cgroup for the server under %s: %w", parent, err)
	}
	f, err = os.Open(dir)
	if err != nil {
		os.Remove(dir)
		return "", nil, fmt.Errorf("open the server's cgroup %s: %w", dir, err)
	}
	return dir, f, nil
}

// intoCgroup has the process attr starts be created in the cgroup open as
// f.
func intoCgroup(attr *syscall.SysProcAttr, f *os.File) {
	attr.UseCgroupFD = true
	attr.CgroupFD = int(f.Fd())
}

// removeCgroup removes the server's cgroup once it has exited: the kernel
// refuses (EBUSY) while an exiting process is still in it, for a moment.
func removeCgroup(dir string) error {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove the server's cgroup %s: %w", dir, err)
		}
	}
}
