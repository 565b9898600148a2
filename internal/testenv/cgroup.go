package testenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Cgroup makes a cgroup v2 of the test's own under the cgroup2 mount and
// returns its directory; cleanup moves what is left in it back to the
// mount's root cgroup and removes it. It skips t where cgroup v2 is not
// mounted or cannot be written (not root).
func Cgroup(t testing.TB) string {
	t.Helper()
	m, err := procfs.New("").Cgroup2Mount()
	mnt := m.MountPoint
	if err != nil {
		Skip(t, "cgroup v2 is not mounted: cgroup mode cannot be tested here", "mount -t cgroup2 none /sys/fs/cgroup")
	}
	dir := filepath.Join(mnt, fmt.Sprintf("perfbench-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	SkipUnless(t, os.Mkdir(dir, 0o755), "run the tests as root with a writable cgroup2 at "+mnt, fs.ErrPermission, syscall.EROFS)
	t.Cleanup(func() {
		// A child that is exiting leaves the cgroup a moment later.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, pid := range strings.Fields(string(procs)) {
				os.WriteFile(filepath.Join(mnt, "cgroup.procs"), []byte(pid), 0o644)
			}
			err := os.Remove(dir)
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("remove test cgroup %s: %v", dir, err)
				return
			}
		}
	})
	return dir
}

// CgroupUsage is usage_usec of cgroup dir's cpu.stat (the CPU time of
// everything that ran in it), in ns.
func CgroupUsage(t testing.TB, dir string) float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s/cpu.stat: %q", dir, line)
			}
			return n * 1e3
		}
	}
	t.Fatalf("%s/cpu.stat has no usage_usec", dir)
	return 0
}
