package perfevent

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestRootNotToldRunAsRoot: the advice on a refused open, too few
// descriptors and an unmappable ring buffer tells an unprivileged user to
// run as root, and never root (root was told "(run as root)").
func TestRootNotToldRunAsRoot(t *testing.T) {
	defer func(f func() int) { euid = f }(euid)
	refused := func(cgroup bool) error {
		root := fakeRoot(t, 100, threads(100))
		if cgroup {
			root = fakeCgroupRoot(t)
		}
		f := newFakeSys()
		f.fail = func(n int, o fakeOpen) error { return syscall.EACCES }
		_, err := attachFake(t, f, root, 100, []Event{taskClock}, Options{Cgroup: cgroup})
		if !errors.Is(err, ErrPermission) {
			t.Fatalf("cgroup %v: err = %v, want ErrPermission", cgroup, err)
		}
		return err
	}
	tooMany := func() error {
		f := newFakeSys()
		f.fail = func(n int, o fakeOpen) error { return syscall.EMFILE }
		root := fakeRoot(t, 100, threads(100, 101))
		_, err := attachFake(t, f, root, 100, []Event{taskClock}, Options{})
		if !errors.Is(err, errTooManyFiles) {
			t.Fatalf("err = %v, want ErrTooManyFiles", err)
		}
		return err
	}
	p2 := 2
	probe := func() string {
		e := one(t, "task-clock", fixture(t, "vm"))
		return (&System{Paranoid: &p2}).OpenError(e, e.Encodings[0], "pid 1", syscall.EACCES).Error()
	}
	for _, id := range []int{1000, 0} {
		euid = func() int { return id }
		for what, msg := range map[string]string{
			"open":        refused(false).Error(),
			"cgroup open": refused(true).Error(),
			"descriptors": tooMany().Error(),
			"ring buffer": mlockHint(),
			"probe":       probe(),
		} {
			told := strings.Contains(msg, "as root")
			if id == 0 && told || id != 0 && !told {
				t.Errorf("euid %d, %s: %q (told to run as root: %v)", id, what, msg, told)
			}
			if id == 0 && what != "descriptors" && what != "ring buffer" && !strings.Contains(msg, "root") {
				t.Errorf("euid 0, %s: %q does not say that root was refused", what, msg)
			}
		}
	}
}
