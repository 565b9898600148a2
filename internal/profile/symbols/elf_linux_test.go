package symbols

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testenv"
)

// build runs a compiler command in dir.
func build(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// running is a test program that printed its functions' addresses and
// waits for its stdin to close.
type running struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addrs map[string]uint64
}

// run starts a test program and reads the "name 0xADDR" lines it prints.
func run(t *testing.T, path string, env ...string) *running {
	t.Helper()
	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &running{cmd: cmd, stdin: in, addrs: map[string]uint64{}}
	t.Cleanup(r.stop)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		name, addr, _ := strings.Cut(sc.Text(), " ")
		v, err := strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64)
		if err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		r.addrs[name] = v
		if name == "main" {
			break
		}
	}
	return r
}

func (r *running) stop() {
	r.stdin.Close()
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
}

func (r *running) maps(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(r.cmd.Process.Pid), "maps"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readelfBuildID is the build-id readelf -n prints for path.
func readelfBuildID(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(testenv.NeedBinary(t, "readelf", "binutils"), "-n", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// TestResolveBuiltPrograms builds the C test program in several ways, runs
// each, and names the addresses it printed of its own functions (and of a
// shared library's) through its real memory map: load bias of PIE and
// libraries, fixed-address executables, .symtab versus .dynsym.
func TestResolveBuiltPrograms(t *testing.T) {
	gcc := testenv.NeedBinary(t, "gcc", "gcc")
	dir := t.TempDir()
	src := testdata(t, "prog.c")
	build(t, dir, gcc, "-O1", "-shared", "-fPIC", "-o", "libtest.so", testdata(t, "lib.c"))
	build(t, dir, gcc, "-O1", "-o", "pie", src)
	build(t, dir, gcc, "-O1", "-no-pie", "-o", "nopie", src)
	build(t, dir, gcc, "-O1", "-rdynamic", "-o", "stripped", src)
	build(t, dir, testenv.NeedBinary(t, "strip", "binutils"), "--strip-all", "stripped")
	build(t, dir, gcc, "-O1", "-DWITH_LIB", "-o", "withlib", src, "-L.", "-ltest", "-Wl,-rpath,"+dir)

	for _, c := range []struct {
		bin    string
		source string
		exec   bool
		want   map[string]string // printed name → expected symbol ("" unnamed)
	}{
		{"pie", sourceSymtab, false, map[string]string{"exported_fn": "exported_fn", "hidden_fn": "hidden_fn", "main": "main"}},
		{"nopie", sourceSymtab, true, map[string]string{"exported_fn": "exported_fn", "hidden_fn": "hidden_fn", "main": "main"}},
		// Stripped: only the exported functions are left, in .dynsym.
		{"stripped", sourceDynsym, false, map[string]string{"exported_fn": "exported_fn", "hidden_fn": "", "main": "main"}},
		{"withlib", sourceSymtab, false, map[string]string{"exported_fn": "exported_fn", "lib_fn": "lib_fn"}},
	} {
		t.Run(c.bin, func(t *testing.T) {
			path := filepath.Join(dir, c.bin)
			p := run(t, path)
			r := NewResolver("")
			proc, err := r.Process(p.cmd.Process.Pid, p.maps(t))
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range c.want {
				addr, ok := p.addrs[name]
				if !ok {
					t.Fatalf("the program printed no address for %s", name)
				}
				// The function's first byte, and one inside it
				// seen as a return address.
				for _, fr := range []Frame{proc.User(addr, false), proc.User(addr+2, true)} {
					if fr.Function != want {
						t.Errorf("%s at %#x: named %q, want %q", name, fr.Addr, fr.Function, want)
					}
					if fr.Mapping == nil || fr.File == nil {
						t.Fatalf("%s: no mapping or file", name)
					}
				}
			}
			fr := proc.User(p.addrs["exported_fn"], false)
			// Every function's start is known, named or not: the
			// unwind table gives hidden_fn's in the stripped binary.
			hid := proc.User(p.addrs["hidden_fn"]+2, true)
			if bias := p.addrs["exported_fn"] - fr.Start; fr.Start == 0 || hid.Start == 0 || p.addrs["hidden_fn"]-hid.Start != bias {
				t.Errorf("function starts: exported_fn %#x at %#x, hidden_fn %#x at %#x", fr.Start, p.addrs["exported_fn"], hid.Start, p.addrs["hidden_fn"])
			}
			if fr.File.Source != c.source || fr.File.Exec != c.exec {
				t.Errorf("symbols from %q (exec %v), want %q (%v)", fr.File.Source, fr.File.Exec, c.source, c.exec)
			}
			if want := readelfBuildID(t, path); fr.File.BuildID != want || want == "" {
				t.Errorf("build-id %q, readelf says %q", fr.File.BuildID, want)
			}
			if c.bin == "withlib" {
				lf := proc.User(p.addrs["lib_fn"], false)
				if !strings.HasSuffix(lf.Mapping.Path, "libtest.so") {
					t.Errorf("lib_fn mapped from %s", lf.Mapping.Path)
				}
			}
			if w := proc.Warnings(); len(w) != 0 {
				t.Errorf("warnings: %q", w)
			}
		})
	}
}

// TestResolveCXX names C++ functions demangled, without parameters.
func TestResolveCXX(t *testing.T) {
	gxx := testenv.NeedBinary(t, "g++", "g++")
	dir := t.TempDir()
	build(t, dir, gxx, "-O1", "-o", "cxx", testdata(t, "prog.cc"))
	p := run(t, filepath.Join(dir, "cxx"))
	proc, err := NewResolver("").Process(p.cmd.Process.Pid, p.maps(t))
	if err != nil {
		t.Fatal(err)
	}
	for printed, want := range map[string]string{
		"ns::Klass::method": "ns::Klass::method",
		"ns::twice<int>":    "ns::twice<int>",
	} {
		fr := proc.User(p.addrs[printed], false)
		if fr.Function != want || !strings.HasPrefix(fr.Symbol, "_ZN2ns") {
			t.Errorf("%s: named %q (symbol %q), want %q", printed, fr.Function, fr.Symbol, want)
		}
	}
}

// TestResolveNoSymbols: a static binary stripped of everything has no
// function symbols; its frames stay unnamed and a warning says why.
func TestResolveNoSymbols(t *testing.T) {
	gcc := testenv.NeedBinary(t, "gcc", "gcc")
	dir := t.TempDir()
	build(t, dir, gcc, "-O1", "-static", "-o", "static", testdata(t, "prog.c"))
	build(t, dir, testenv.NeedBinary(t, "strip", "binutils"), "--strip-all", "static")
	p := run(t, filepath.Join(dir, "static"))
	proc, err := NewResolver("").Process(p.cmd.Process.Pid, p.maps(t))
	if err != nil {
		t.Fatal(err)
	}
	fr := proc.User(p.addrs["exported_fn"], false)
	if fr.Function != "" || fr.File == nil || fr.File.Source != sourceNone {
		t.Errorf("named %q from %q in a binary without symbols", fr.Function, fr.File.Source)
	}
	w := strings.Join(proc.Warnings(), "\n")
	if !strings.Contains(w, "has no function symbols") || !strings.Contains(w, "static") {
		t.Errorf("warnings: %q", w)
	}
}

// TestResolveDeletedBinary: the binary is deleted while it runs; its
// symbols are read from the mapped copy with a warning, and once the
// process is gone too, frames stay unnamed with a warning.
func TestResolveDeletedBinary(t *testing.T) {
	gcc := testenv.NeedBinary(t, "gcc", "gcc")
	dir := t.TempDir()
	build(t, dir, gcc, "-O1", "-o", "gone", testdata(t, "prog.c"))
	path := filepath.Join(dir, "gone")
	p := run(t, path)
	maps := p.maps(t)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	deleted := p.maps(t)
	if !strings.Contains(string(deleted), "(deleted)") {
		t.Fatalf("the kernel does not mark the deleted binary:\n%s", deleted)
	}
	proc, err := NewResolver("").Process(p.cmd.Process.Pid, deleted)
	if err != nil {
		t.Fatal(err)
	}
	if fr := proc.User(p.addrs["hidden_fn"], false); fr.Function != "hidden_fn" {
		t.Errorf("deleted binary of a live process: named %q", fr.Function)
	}
	if w := strings.Join(proc.Warnings(), "\n"); !strings.Contains(w, "deleted or replaced") || !strings.Contains(w, "map_files") {
		t.Errorf("warnings: %q", w)
	}

	// The map as read before the deletion does not say "(deleted)": the
	// path is gone, which the resolver also notices.
	pid := p.cmd.Process.Pid
	p.stop()
	proc, err = NewResolver("").Process(pid, maps)
	if err != nil {
		t.Fatal(err)
	}
	if fr := proc.User(p.addrs["hidden_fn"], false); fr.Function != "" || fr.Mapping == nil {
		t.Errorf("deleted binary of an exited process: named %q", fr.Function)
	}
	if w := strings.Join(proc.Warnings(), "\n"); !strings.Contains(w, "cannot be read") {
		t.Errorf("warnings: %q", w)
	}
}

// TestResolveMariadbd reads the installed server's symbols: stripped, so
// from .dynsym, and compares them with nm -D.
func TestResolveMariadbd(t *testing.T) {
	bin := testenv.NeedBinary(t, "/usr/sbin/mariadbd", "mariadb-server")
	fh, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := readELF(fh)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d function symbols from %s, build-id %s", bin, f.Symbols(), f.Source, f.BuildID)
	if want := readelfBuildID(t, bin); f.BuildID != want {
		t.Errorf("build-id %q, readelf says %q", f.BuildID, want)
	}
	if f.Source == sourceDynsym && f.Symbols() < 10000 {
		t.Errorf("only %d exported functions", f.Symbols())
	}
	out, err := exec.Command(testenv.NeedBinary(t, "nm", "binutils"), "-D", "--defined-only", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, line := range strings.Split(string(out), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 3 || (fs[2] != "_Z10do_commandP3THDb" && !strings.HasPrefix(fs[2], "_Z16dispatch_command")) {
			continue
		}
		v, _ := strconv.ParseUint(fs[0], 16, 64)
		s, ok := f.Lookup(v + 4)
		if !ok || s.Name != fs[2] {
			t.Errorf("%s at %#x: found %q", fs[2], v, s.Name)
		}
		if n := f.Name(s); n != "do_command" && n != "dispatch_command" {
			t.Errorf("%s demangled to %q", fs[2], n)
		}
		checked++
	}
	if checked != 2 {
		t.Errorf("found %d of do_command and dispatch_command in nm -D", checked)
	}
}

// TestKernelSymbolsHere reads this machine's kallsyms (readable with its
// addresses by root).
func TestKernelSymbolsHere(t *testing.T) {
	k, err := NewResolver("").Kernel()
	testenv.SkipUnless(t, err, "run the tests as root", errKernelHidden, fs.ErrPermission)
	if k.Symbols() < 1000 {
		t.Errorf("only %d kernel text symbols", k.Symbols())
	}
}
