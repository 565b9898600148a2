package p

import "testing"

func TestTable(t *testing.T) {
	if Table != "qps" || F() != 3 {
		t.Fatal(Table)
	}
}
