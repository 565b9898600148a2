//go:build linux

package measure

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMarks: two sessions on one server learn of each other, whichever
// started first, a leftover mark of a dead perfbench is removed without a
// warning, and closing removes a session's mark.
func TestMarks(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(runtimeDirEnv, dir)
	pid := os.Getpid()
	key := serverKey(pid)
	if !strings.HasPrefix(key, strconv.Itoa(pid)+"-") {
		t.Fatalf("server key %q", key)
	}
	stale := filepath.Join(dir, key+".dead")
	if err := os.WriteFile(stale, []byte("999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newMark(pid)
	if a.f == nil || a.warning() != "" {
		t.Fatalf("first mark: file %v, warning %q", a.f, a.warning())
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("leftover mark not removed: %v", err)
	}
	b := newMark(pid)
	// b finds a's mark; a learns of b from the pid b appended to it.
	if got := b.others(); len(got) != 1 || got[0] != pid {
		t.Errorf("second mark sees %v", got)
	}
	if a.look(); len(a.others()) != 1 || !strings.HasPrefix(a.warning(), "another perfbench (pid "+strconv.Itoa(pid)+") was measuring this server") {
		t.Errorf("first mark after the second: %v, %q", a.others(), a.warning())
	}
	b.close()
	a.close()
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("marks left: %v", left)
	}
	// Another server is another key: no warning.
	c := newMark(pid)
	defer c.close()
	d := newMark(os.Getppid())
	defer d.close()
	if c.warning() != "" || d.warning() != "" {
		t.Errorf("marks of two servers warn: %q %q", c.warning(), d.warning())
	}
}
