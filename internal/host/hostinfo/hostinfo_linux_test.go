package hostinfo

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHostReadHere reads this machine and compares with what the kernel
// says through system calls.
func TestHostReadHere(t *testing.T) {
	h, err := Read("/")
	if err != nil {
		t.Fatal(err)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	if rel := unix.ByteSliceToString(u.Release[:]); h.Kernel != rel {
		t.Errorf("kernel %q, uname -r %q", h.Kernel, rel)
	}
	if host, _ := os.Hostname(); h.Hostname != host {
		t.Errorf("hostname %q, os.Hostname %q", h.Hostname, host)
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if !h.NoFile.Known || h.NoFile.Soft != rl.Cur || h.NoFile.Hard != rl.Max {
		t.Errorf("RLIMIT_NOFILE %+v, getrlimit %+v", h.NoFile, rl)
	}
	if h.Privileges.EUID != os.Geteuid() {
		t.Errorf("euid %d, os.Geteuid %d", h.Privileges.EUID, os.Geteuid())
	}
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err == nil {
		want, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if h.Paranoid == nil || *h.Paranoid != want {
			t.Errorf("paranoid %v, file %d", h.Paranoid, want)
		}
	}
	if h.CPUs < 1 || h.System == nil {
		t.Errorf("cpus %d, system %v (%v)", h.CPUs, h.System, h.SystemErr)
	}
}
