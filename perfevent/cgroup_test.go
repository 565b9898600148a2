package perfevent

import (
	"reflect"
	"testing"
)

func TestParseCgroupV2Path(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		// Hybrid hierarchy, as on this machine.
		{"9:name=systemd:/\n4:memory:/process_api/5cb1\n1:cpu:/\n0::/\n", "/", true},
		{"0::/system.slice/mariadb.service\n", "/system.slice/mariadb.service", true},
		{"12:perf_event:/\n1:name=systemd:/user.slice\n", "", false},
		{"", "", false},
	} {
		got, ok := parseCgroupV2Path([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: got %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseCgroup2Mount(t *testing.T) {
	mi := `22 28 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
26 22 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
27 26 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
28 26 0:24 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
`
	got, ok := parseCgroup2Mount([]byte(mi))
	if !ok || got != "/sys/fs/cgroup/unified" {
		t.Errorf("got %q %v", got, ok)
	}
	if got, ok := parseCgroup2Mount([]byte(`40 1 0:30 / /mnt/my\040cg rw - cgroup2 none rw` + "\n")); !ok || got != "/mnt/my cg" {
		t.Errorf("escaped mount point: %q %v", got, ok)
	}
	if _, ok := parseCgroup2Mount([]byte("28 26 0:24 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\nbroken line\n")); ok {
		t.Error("found a cgroup2 mount in a v1-only table")
	}
}

func TestParseCPURanges(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0-1": {0, 1}, "0-3,8,10-11": {0, 1, 2, 3, 8, 10, 11}} {
		got, err := parseCPURanges(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "0-", "1,,2"} {
		if _, err := parseCPURanges(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
