package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// TestDecodeAsStdlib checks that decode (github.com/goccy/go-json) reads
// Records of both schemas exactly as encoding/json does: the schema-1
// Records of testdata and each of them as Parse converts and Marshal
// writes it in schema 2.
func TestDecodeAsStdlib(t *testing.T) {
	files, err := filepath.Glob("../testdata/records/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Records in testdata: %v", err)
	}
	schemas := map[int]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		data2, err := Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, data := range [][]byte{data, data2} {
			var got, want wireRecord
			if err := decode(data, &got); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatalf("%s: encoding/json: %v", f, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: decoded\n%+v\nencoding/json decodes\n%+v", f, got, want)
			}
			schemas[got.Schema]++
		}
	}
	if schemas[1] == 0 || schemas[2] == 0 {
		t.Errorf("Records by schema: %v, want both schemas", schemas)
	}
}

// TestParsePacksCounters checks that Parse leaves the counters of a Record
// and of its roles in one array of their exact number, with the values
// encoding/json decodes, and that a Record followed by other bytes still
// reads as its first JSON value (as it did through a stream decoder).
func TestParsePacksCounters(t *testing.T) {
	r := New(KindStep)
	r.Version, r.Step, r.Outcome = "v1", "point", OutcomeOK
	for i := range 5 {
		r.Counters = append(r.Counters, Counter{Event: fmt.Sprintf("e%d", i), Raw: uint64(i), Value: float64(i), Status: StatusCounted})
	}
	r.Roles = []Role{
		{Name: "connection", Threads: 4, Counters: r.Counters[:3]},
		{Name: "empty", Counters: nil},
		{Name: "log", Threads: 1, Counters: r.Counters[2:]},
	}
	data, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var want wireRecord
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]byte{data, append(slices.Clone(data), []byte(`{"more":`)...)} {
		got, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if !reflect.DeepEqual(*got, want.Record) {
			t.Errorf("Parse gave\n%+v\nencoding/json decodes\n%+v", *got, want.Record)
		}
		lists := [][]Counter{got.Counters, got.Roles[0].Counters, got.Roles[2].Counters}
		if got.Roles[1].Counters != nil {
			t.Errorf("role without counters has %v, want nil", got.Roles[1].Counters)
		}
		next := uintptr(unsafe.Pointer(&got.Counters[0]))
		for i, l := range lists {
			if cap(l) != len(l) {
				t.Errorf("counter list %d: cap %d, len %d", i, cap(l), len(l))
			}
			if uintptr(unsafe.Pointer(&l[0])) != next {
				t.Errorf("counter list %d does not follow the one before it in one array", i)
			}
			next += uintptr(len(l)) * unsafe.Sizeof(Counter{})
		}
	}
}
