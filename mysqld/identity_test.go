package mysqld

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/mysqld/sandbox"
)

// note encodes one ELF note.
func note(bo binary.ByteOrder, name string, typ uint32, desc []byte) []byte {
	n := append([]byte(name), 0)
	b := make([]byte, 12)
	bo.PutUint32(b[0:], uint32(len(n)))
	bo.PutUint32(b[4:], uint32(len(desc)))
	bo.PutUint32(b[8:], typ)
	b = append(b, n...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, desc...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func TestFindBuildID(t *testing.T) {
	id := []byte{0x43, 0x9d, 0xa8, 0xd9, 0x44, 0x12, 0xde, 0x2c, 0x7e, 0xb3, 0xe2, 0xc5, 0x55, 0x4b, 0xc0, 0xf3, 0x1f, 0x43, 0x8d, 0xc3}
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		// An ABI tag note (type 1) first, a Go note (type 4, name "Go"),
		// then the build-id.
		b := note(bo, "GNU", 1, []byte{0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})
		b = append(b, note(bo, "Go", 4, []byte("abc"))...)
		b = append(b, note(bo, "GNU", 3, id)...)
		got, ok := findBuildID(b, bo)
		if !ok || got != "439da8d94412de2c7eb3e2c5554bc0f31f438dc3" {
			t.Errorf("%v: findBuildID = %q, %v", bo, got, ok)
		}
		// Type 3 under another name is not a GNU build-id.
		if _, ok := findBuildID(note(bo, "XYZ", 3, id), bo); ok {
			t.Errorf("%v: build-id found under name XYZ", bo)
		}
		// Truncated: no panic, not found.
		full := note(bo, "GNU", 3, id)
		for n := 0; n < len(full); n++ {
			if got, ok := findBuildID(full[:n], bo); ok && n < len(full)-3 {
				t.Errorf("%v: truncated to %d bytes: found %q", bo, n, got)
			}
		}
	}
}

// TestBuildIDMatchesReadelf reads the build-id of the installed server
// binary and compares it with what readelf prints.
func TestBuildIDMatchesReadelf(t *testing.T) {
	testdb.NeedServer(t)
	bin, err := sandbox.FindServerBinary("")
	if err != nil {
		t.Fatal(err)
	}
	readelf := testenv.NeedBinary(t, "readelf", "binutils")
	out, err := exec.Command(readelf, "-n", bin).Output()
	if err != nil {
		t.Fatalf("readelf -n %s: %v", bin, err)
	}
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("readelf -n %s printed no build ID:\n%s", bin, out)
	}
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := buildID(f)
	if err != nil || got != string(m[1]) {
		t.Errorf("BuildID(%s) = %q, %v; readelf says %s", bin, got, err, m[1])
	}
}

func TestBuildIDNotELF(t *testing.T) {
	f, err := os.Open("identity_test.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := buildID(f); err == nil || errors.Is(err, errNoBuildID) {
		t.Errorf("BuildID of a Go source file: %v, want an ELF error", err)
	}
}
