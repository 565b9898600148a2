package symbols

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseMaps(t *testing.T) {
	in := `55d0c3a00000-55d0c3a2c000 r--p 00000000 08:01 1311 /usr/sbin/mariadbd
55d0c3a2c000-55d0c4800000 r-xp 0002c000 08:01 1311 /usr/sbin/mariadbd
7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 
7f1c2b028000-7f1c2b1bd000 r-xp 00028000 08:01 2048                       /usr/lib/x86_64-linux-gnu/libc.so.6
7ffd5e1f0000-7ffd5e1f2000 r-xp 00000000 00:00 0                          [vdso]
7f0000000000-7f0000001000 r-xp 00001000 fd:00 77 /tmp/a b/old binary (deleted)
`
	got, err := parseMaps([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{Start: 0x55d0c3a00000, Limit: 0x55d0c3a2c000, Offset: 0, Perms: "r--p", Dev: "08:01", Inode: 1311, Path: "/usr/sbin/mariadbd"},
		{Start: 0x55d0c3a2c000, Limit: 0x55d0c4800000, Offset: 0x2c000, Perms: "r-xp", Dev: "08:01", Inode: 1311, Path: "/usr/sbin/mariadbd"},
		{Start: 0x7f1c2a000000, Limit: 0x7f1c2a021000, Perms: "rw-p", Dev: "00:00"},
		{Start: 0x7f1c2b028000, Limit: 0x7f1c2b1bd000, Offset: 0x28000, Perms: "r-xp", Dev: "08:01", Inode: 2048, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{Start: 0x7ffd5e1f0000, Limit: 0x7ffd5e1f2000, Perms: "r-xp", Dev: "00:00", Path: "[vdso]"},
		{Start: 0x7f0000000000, Limit: 0x7f0000001000, Offset: 0x1000, Perms: "r-xp", Dev: "fd:00", Inode: 77, Path: "/tmp/a b/old binary", Deleted: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseMaps:\n%+v\nwant\n%+v", got, want)
	}
	if !got[1].Exec() || got[0].Exec() || !got[1].File() || got[4].File() || got[2].File() {
		t.Error("Exec/File misjudged")
	}
	for _, bad := range []string{
		"55d0c3a00000 r--p 00000000 08:01 1311 /x",
		"zz-55d0c3a2c000 r--p 00000000 08:01 1311 /x",
		"2000-1000 r--p 00000000 08:01 1311 /x",
		"1000-2000 r--p 0000000g 08:01 1311 /x",
		"1000-2000 r--p 00000000 08:01 x /x",
		"1000-2000 r 00000000 08:01 1 /x",
	} {
		if _, err := parseMaps([]byte(bad)); err == nil {
			t.Errorf("ParseMaps(%q) accepted", bad)
		}
	}
}

func TestParseKallsyms(t *testing.T) {
	in := `ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81001000 t do_one_initcall
ffffffff81002000 D some_data
ffffffff81003000 W weak_fn
ffffffffc0a01000 t xfs_fn	[xfs]
`
	k, err := parseKallsyms(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr      uint64
		name, mod string
		ok        bool
	}{
		{0xffffffff81001010, "do_one_initcall", "", true},
		{0xffffffff81002010, "do_one_initcall", "", true}, // data symbols are skipped
		{0xffffffff81003000, "weak_fn", "", true},
		{0xffffffffc0a01234, "xfs_fn", "xfs", true},
		{0xffffffff80000000, "", "", false},
		{0xffffffffc0a01000 + maxKernelSymbolSpan + 1, "", "", false},
	} {
		name, mod, ok := k.Lookup(c.addr)
		if name != c.name || mod != c.mod || ok != c.ok {
			t.Errorf("Lookup(%#x) = %q %q %v, want %q %q %v", c.addr, name, mod, ok, c.name, c.mod, c.ok)
		}
	}
	hidden := "0000000000000000 T _stext\n0000000000000000 t do_one_initcall\n"
	defer func(f func() int) { euid = f }(euid)
	for _, id := range []int{1000, 0} {
		// Root is not told to run as root; another user is.
		euid = func() int { return id }
		_, err := parseKallsyms(strings.NewReader(hidden))
		if !errors.Is(err, errKernelHidden) || !strings.Contains(err.Error(), "kptr_restrict=0") || strings.Contains(err.Error(), "run as root") != (id != 0) {
			t.Errorf("hidden kallsyms, euid %d: %v", id, err)
		}
	}
	if _, err := parseKallsyms(strings.NewReader("xyz T f\n")); err == nil {
		t.Error("bad address accepted")
	}
}

func TestNoteBuildID(t *testing.T) {
	// namesz 4, descsz 4, type 3, "GNU\0", desc.
	note := []byte{4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xde, 0xad, 0xbe, 0xef}
	other := []byte{4, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 'G', 'N', 'U', 0, 0, 0, 0, 0}
	for name, c := range map[string]struct {
		b  []byte
		id string
		ok bool
	}{
		"alone":       {note, "deadbeef", true},
		"after other": {append(append([]byte{}, other...), note...), "deadbeef", true},
		"truncated":   {note[:14], "", false},
		"none":        {other, "", false},
	} {
		id, ok := noteBuildID(c.b, binary.LittleEndian)
		if id != c.id || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", name, id, ok, c.id, c.ok)
		}
	}
}

func TestFunctionsAndLookup(t *testing.T) {
	f := &File{syms: []symbol{
		{Value: 0x1000, Size: 0x100, Name: "a"},
		{Value: 0x1100, Size: 0x400, Name: "big"},
		{Value: 0x1200, Size: 0x10, Name: "inner"}, // an alias of part of big
		{Value: 0x2000, Size: 0, Name: "sizeless"},
		{Value: 0x3000, Size: 0x10, Name: "last"},
	}}
	for _, c := range []struct {
		addr uint64
		name string
	}{
		{0x0fff, ""},
		{0x1000, "a"},
		{0x10ff, "a"},
		{0x1100, "big"},
		{0x1205, "inner"},
		{0x1300, "big"}, // past inner, still in big
		{0x1500, ""},    // past big: a function without a symbol
		{0x2800, "sizeless"},
		{0x3010, ""},
	} {
		s, ok := f.Lookup(c.addr)
		if s.Name != c.name || ok != (c.name != "") {
			t.Errorf("Lookup(%#x) = %q %v, want %q", c.addr, s.Name, ok, c.name)
		}
	}
}

func TestDemangle(t *testing.T) {
	for in, want := range map[string]string{
		"_Z10do_commandP3THDb":                               "do_command",
		"_Z16dispatch_command19enum_server_commandP3THDPcjb": "dispatch_command",
		"_ZN4JOIN8optimizeEv":                                "JOIN::optimize",
		"main":                                               "main",
		"_not_mangled":                                       "_not_mangled",
	} {
		if got := demangleName(in); got != want {
			t.Errorf("Demangle(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseEHFrameHdr(t *testing.T) {
	// version 1, eh_frame_ptr pcrel|sdata4, count udata4, table
	// datarel|sdata4; eh_frame_ptr; count 3; (start, fde) pairs relative to
	// the header at 0x2000, out of order.
	var b []byte
	put := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	b = append(b, 1, 0x1b, 0x03, 0x3b)
	put(0x100)
	put(3)
	for _, rel := range []int32{-0x1000, -0x800, 0x400} {
		put(uint32(rel))
		put(0x10)
	}
	got := parseEHFrameHdr(b, 0x2000, binary.LittleEndian)
	if want := []uint64{0x1000, 0x1800, 0x2400}; !reflect.DeepEqual(got, want) {
		t.Errorf("starts %#x, want %#x", got, want)
	}
	f := &File{starts: got}
	for addr, want := range map[uint64]uint64{0x1000: 0x1000, 0x17ff: 0x1000, 0x2500: 0x2400} {
		if s, ok := f.FuncStart(addr); !ok || s != want {
			t.Errorf("FuncStart(%#x) = %#x %v, want %#x", addr, s, ok, want)
		}
	}
	if _, ok := f.FuncStart(0xfff); ok {
		t.Error("an address before every function has a start")
	}
	// Another table encoding, or a count beyond the data: no starts.
	other := append([]byte{}, b...)
	other[3] = 0x1b
	short := append([]byte{}, b[:20]...)
	for name, x := range map[string][]byte{"encoding": other, "short": short, "empty": nil} {
		if got := parseEHFrameHdr(x, 0x2000, binary.LittleEndian); got != nil {
			t.Errorf("%s: %#x", name, got)
		}
	}
}
