package perfevent

import (
	"errors"
	"fmt"
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
		// A cgroup outside perfbench's cgroup namespace has no folder
		// under the mount (joined to it, it would name one outside).
		{"outside the cgroup namespace", "/../other", "/", true, "", "outside this process's cgroup namespace"},
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
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, errNoCgroup) {
					t.Errorf("got %q, err %v; want an error saying %q", got, err, tc.err)
				}
			case err != nil || got != filepath.Join(root, tc.want):
				t.Errorf("got %q, err %v; want %s", got, err, filepath.Join(root, tc.want))
			}
		})
	}
}

// TestAloneInCgroup: a process is alone in its cgroup when every process
// there and in the cgroups below is it or descends from it (its forked
// children, and theirs); a process of another parent in the cgroup, or in a
// cgroup below, is named; the root cgroup is refused.
func TestAloneInCgroup(t *testing.T) {
	stat := func(pid, ppid int) string {
		return fmt.Sprintf("%d (x) S %d 1 1 0 -1 4194560 10 0 0 0 3 1 0 0 20 0 1 0 5217 8712192 873\n", pid, ppid)
	}
	for _, tc := range []struct {
		name       string
		procs, sub string // cgroup.procs of the process's cgroup and of one below it
		alone      bool
		why        string
	}{
		{"alone", "100\n", "", true, ""},
		{"with its child and grandchild", "100\n101\n", "102\n", true, ""},
		{"with a child gone while looked at", "100\n109\n", "", true, ""},
		{"with another process", "100\n200\n", "", false, "holds other processes too (pid 200)"},
		{"another process in a cgroup below", "100\n", "101\n200\n", false, "(pid 200)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "proc/100/cgroup"), "0::/db\n")
			writeFile(t, filepath.Join(root, "proc/self/mountinfo"), "30 25 0:26 / /cg rw - cgroup2 cgroup2 rw\n")
			writeFile(t, filepath.Join(root, "proc/100/stat"), stat(100, 1))
			writeFile(t, filepath.Join(root, "proc/101/stat"), stat(101, 100))
			writeFile(t, filepath.Join(root, "proc/102/stat"), stat(102, 101))
			writeFile(t, filepath.Join(root, "proc/200/stat"), stat(200, 1))
			writeFile(t, filepath.Join(root, "cg/db/cgroup.procs"), tc.procs)
			writeFile(t, filepath.Join(root, "cg/db/sub/cgroup.procs"), tc.sub)
			dir, why := aloneInCgroup(root, 100)
			if tc.alone {
				if dir != filepath.Join(root, "cg/db") || why != "" {
					t.Errorf("got %q, %q; want %s, alone", dir, why, filepath.Join(root, "cg/db"))
				}
				return
			}
			if dir != "" || !strings.Contains(why, tc.why) {
				t.Errorf("got %q, %q; want none, saying %q", dir, why, tc.why)
			}
		})
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc/100/cgroup"), "0::/\n")
	writeFile(t, filepath.Join(root, "proc/self/mountinfo"), "30 25 0:26 / /cg rw - cgroup2 cgroup2 rw\n")
	if dir, why := aloneInCgroup(root, 100); dir != "" || !strings.Contains(why, "root cgroup") {
		t.Errorf("in the root cgroup: got %q, %q; want none, saying so", dir, why)
	}
}
