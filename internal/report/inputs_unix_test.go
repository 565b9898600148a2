//go:build unix

package report

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

// loadWithin runs loadInput on paths and fails the test when it has not
// returned within 10 s (a FIFO opened for reading waits for a writer;
// /dev/zero never ends).
func loadWithin(t *testing.T, paths ...string) (*Input, error) {
	t.Helper()
	type result struct {
		in  *Input
		err error
	}
	done := make(chan result, 1)
	go func() {
		in, err := loadInput(paths)
		done <- result{in, err}
	}()
	select {
	case r := <-done:
		return r.in, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("loadInput(%q) still runs after 10 s", paths)
		return nil, nil
	}
}

// TestLoadRefusesSpecialFiles gives a report a FIFO, a link to /dev/zero
// and a sparse file over the bound, each named on its own and inside a
// folder of Records, as a Record and as a CSV table: each is refused at
// once with its path and why, and a CSV line over its bound too.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.json")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, record.MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	csvFIFO := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(csvFIFO, 0o644); err != nil {
		t.Fatal(err)
	}
	csvZero := filepath.Join(dir, "zero.csv")
	if err := os.Symlink("/dev/zero", csvZero); err != nil {
		t.Fatal(err)
	}
	csvSparse := filepath.Join(dir, "sparse.csv")
	if err := os.WriteFile(csvSparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(csvSparse, maxCSVBytes+1); err != nil {
		t.Fatal(err)
	}
	// A CSV table under the size bound whose second line is a long run of
	// zero bytes.
	csvLong := filepath.Join(dir, "long.csv")
	if err := os.WriteFile(csvLong, []byte("version,step,threads,metric,value\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(csvLong, 100<<20); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
		says string
	}{
		{fifo, record.ErrNotRegular, "named pipe"},
		{zero, record.ErrNotRegular, "character device"},
		{sparse, record.ErrTooLarge, strconv.Itoa(record.MaxFileBytes)},
		{csvFIFO, record.ErrNotRegular, "named pipe"},
		{csvZero, record.ErrNotRegular, "character device"},
		{csvSparse, record.ErrTooLarge, strconv.Itoa(maxCSVBytes)},
		{csvLong, nil, strconv.Itoa(maxCSVLine)},
	} {
		_, err := loadWithin(t, "../../testdata/records", c.path)
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: error %v, want one that names it, with %q", filepath.Base(c.path), err, c.says)
		}
	}
	// Inside a folder of Records: refused as named on their own.
	for _, p := range []string{fifo, zero, sparse} {
		sub := t.TempDir()
		if err := os.Rename(p, filepath.Join(sub, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
		_, err := loadWithin(t, sub)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(sub, filepath.Base(p))) {
			t.Errorf("a folder with %s: error %v, want one that names it", filepath.Base(p), err)
		}
	}
}

// TestLoadRefusesLongNames: a Record whose version name is over maxLabel
// bytes is refused with the bound, not printed in every row.
func TestLoadRefusesLongNames(t *testing.T) {
	b, err := os.ReadFile("../../testdata/records/mariadb-11.4.3__point-query_range=100__t1__r1.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := record.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{maxLabel, maxLabel + 1} {
		r.Version = strings.Repeat("v", n)
		out, err := record.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "long.json")
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = loadWithin(t, p)
		if n <= maxLabel && err != nil {
			t.Errorf("a %d-byte version name: %v", n, err)
		}
		if n > maxLabel && (err == nil || !strings.Contains(err.Error(), strconv.Itoa(maxLabel)) || !strings.Contains(err.Error(), p)) {
			t.Errorf("a %d-byte version name: error %v, want one with the path and the bound", n, err)
		}
	}
}
