package main

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/perfevent/metric"
)

// TestTablesSpelling: the Go the generator writes names metric's types and
// operators as the checked-in tables.go does, so that regenerating it
// compiles, also after scripts/unexport renamed them (Source → source,
// OpAdd → opAdd): every metric's expression printed by Expr.GoString is
// in the file, and so are the set, source, metric and event types.
func TestTablesSpelling(t *testing.T) {
	b, err := os.ReadFile("../../perfevent/metric/tables.go")
	if err != nil {
		t.Fatal(err)
	}
	tables := string(b)
	want := []string{
		fmt.Sprintf("var sets = []%s{\n", reflect.TypeFor[metric.Set]().Name()),
		fmt.Sprintf("Source: %s{Release: ", setField("Source")),
		fmt.Sprintf("Metrics: []%s{\n", setField("Metrics")),
		fmt.Sprintf("Events: []%s{\n", setField("Events")),
	}
	n := 0
	for _, s := range metric.Sets() {
		for _, m := range s.Metrics {
			want = append(want, fmt.Sprintf("Expr: %#v},\n", m.Expr))
			n++
		}
	}
	if n < 100 {
		t.Fatalf("%d metrics in the tables, want at least 100", n)
	}
	for _, w := range want {
		if !strings.Contains(tables, w) {
			t.Errorf("tables.go has no %q", w)
		}
	}
}
