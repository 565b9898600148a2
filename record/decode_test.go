package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
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
