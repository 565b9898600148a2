package testdb

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestParseQueries(t *testing.T) {
	// Real sysbench 1.0.20 reports (testdata/sysbench); totals typed
	// from the files.
	for file, want := range map[string]float64{
		"oltp_point_select.t1.p99.txt":     31982,
		"oltp_read_write.t2.histogram.txt": 77417,
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sysbench", file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseQueries(b)
		if err != nil || got != want {
			t.Errorf("%s: ParseQueries = %v, %v; want %v", file, got, err, want)
		}
	}
	if _, err := ParseQueries([]byte("SQL statistics:\n    queries performed:\n        read: 5\n")); err == nil {
		t.Error("no queries line: no error")
	}
}

func TestSharedAndNew(t *testing.T) {
	a := Shared(t)
	b := Shared(t)
	if a != b || !a.Running() {
		t.Fatalf("Shared returned %p and %p (running %v)", a, b, a.Running())
	}
	PrepareSysbench(t, a, Table{})
	PrepareSysbench(t, a, Table{}) // once only: a second prepare would fail on existing tables
	res := Sysbench(t, a, "oltp_point_select", Table{}, "--threads=1", "--time=0", "--events=500")
	if res.Queries != 500 {
		t.Errorf("sysbench --events=500 point selects: %v queries\n%s", res.Queries, res.Output)
	}

	var own interface{ Running() bool }
	t.Run("own", func(t *testing.T) {
		c := New(t, Options{Options: []string{"--performance-schema=OFF"}})
		if c == a || c.Port == a.Port || c.Socket == a.Socket {
			t.Errorf("New shares the shared server's port or socket")
		}
		if err := c.Exec(context.Background(), "SELECT 1"); err != nil {
			t.Error(err)
		}
		own = c
	})
	if own != nil && own.Running() {
		t.Error("New's server still runs after its test ended")
	}
}
