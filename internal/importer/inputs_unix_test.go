//go:build unix

package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

// TestImportRefusesSpecialFiles imports a FIFO, a link to /dev/zero and a
// sparse file over maxInputBytes as perf stat output, as sysbench output
// (--sysbench) and inside a results folder: each is refused at once
// (within 10 s) with its path and why, and the import of the others goes
// on.
func TestImportRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.txt")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.txt")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, maxInputBytes+1); err != nil {
		t.Fatal(err)
	}
	within := func(what string, f func() *Result) *Result {
		t.Helper()
		done := make(chan *Result, 1)
		go func() { done <- f() }()
		select {
		case res := <-done:
			return res
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still runs after 10 s", what)
			return nil
		}
	}
	want := map[string]error{fifo: record.ErrNotRegular, zero: record.ErrNotRegular, sparse: record.ErrTooLarge}
	good := filepath.Join("..", "..", "testdata", "perfstat", "default.txt")
	for p, e := range want {
		res := within("import perf-stat "+p, func() *Result {
			return PerfStat([]string{p, good}, Options{Version: "v", Step: "s", Ops: 1})
		})
		if err := errors.Join(res.Failures...); err == nil || !errors.Is(err, e) || !strings.Contains(err.Error(), p) || res.Count != 1 {
			t.Errorf("perf stat output %s: failures %v, %d Records; want it refused by name (%v) and the other file imported", filepath.Base(p), err, res.Count, e)
		}
		res = within("import --sysbench "+p, func() *Result {
			return PerfStat([]string{good}, Options{Version: "v", Step: "s", Ops: 1, Sysbench: p})
		})
		if err := errors.Join(res.Failures...); err == nil || !errors.Is(err, e) || !strings.Contains(err.Error(), p) {
			t.Errorf("sysbench output %s: failures %v; want it refused by name (%v)", filepath.Base(p), err, e)
		}
	}
	// A results folder with each of them as a version's perf output.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	i := 0
	for p := range want {
		i++
		if err := os.Rename(p, filepath.Join(root, "v1", fmt.Sprintf("sb.perf.hw.point-query.range100.pk1.%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	res := within("import dir", func() *Result { return Dir(root, DirOptions{}) })
	err := errors.Join(res.Failures...)
	t.Logf("import dir: %v", err)
	for _, e := range []error{record.ErrNotRegular, record.ErrTooLarge} {
		if !errors.Is(err, e) {
			t.Errorf("import dir: failures %v; want the FIFO, the link and the sparse file refused (%v)", err, e)
		}
	}
}
