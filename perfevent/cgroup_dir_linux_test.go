package perfevent

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestCgroupDirOf finds the directory of a process's cgroup under the
// cgroup2 mount: a mount that shows a subtree (a container's), the root of a
// cgroup namespace (a container's own cgroup, not the machine), and the
// machine's root cgroup, which is refused.
func TestCgroupDirOf(t *testing.T) {
	for _, tc := range []struct {
		name, cgroup, mountRoot string
		typeFile                bool // the directory has cgroup.type (not the hierarchy's root)
		want, err               string
	}{
		{"whole hierarchy", "/bench/db", "/", true, "cg/bench/db", ""},
		{"mount of a subtree", "/docker/abc/db", "/docker/abc", true, "cg/db", ""},
		{"mount of the process's own cgroup", "/docker/abc", "/docker/abc", true, "cg", ""},
		{"outside the mounted subtree", "/other/db", "/docker/abc", true, "", "not under the cgroup2 mount at /cg, which shows only /docker/abc"},
		{"prefix is not a parent", "/docker/abcdef", "/docker/abc", true, "", "not under"},
		{"root of a cgroup namespace", "/", "/", true, "cg", ""},
		{"root of the machine", "/", "/", false, "", "root cgroup"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "proc/100/cgroup"), "0::"+tc.cgroup+"\n")
			writeFile(t, filepath.Join(root, "proc/self/mountinfo"), "30 25 0:26 "+tc.mountRoot+" /cg rw - cgroup2 cgroup2 rw\n")
			if tc.typeFile && tc.want != "" {
				writeFile(t, filepath.Join(root, tc.want, "cgroup.type"), "domain\n")
			}
			got, err := cgroupDirOf(root, 100)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrNoCgroup) {
					t.Errorf("got %q, err %v; want an error saying %q", got, err, tc.err)
				}
			case err != nil || got != filepath.Join(root, tc.want):
				t.Errorf("got %q, err %v; want %s", got, err, filepath.Join(root, tc.want))
			}
		})
	}
}
