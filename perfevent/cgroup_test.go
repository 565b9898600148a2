package perfevent

import (
	"reflect"
	"testing"
)

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
