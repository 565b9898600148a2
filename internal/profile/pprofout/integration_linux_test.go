package pprofout

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/mysqld/sandbox"
	"github.com/perfbench/perfbench/perfevent"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

var loadTable = testdb.Table{Tables: 1, Size: 2000}

// startLoad runs sysbench oltp_point_select against srv until the test ends.
func startLoad(t *testing.T, srv *sandbox.Server) {
	t.Helper()
	testdb.PrepareSysbench(t, srv, loadTable)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := testdb.SysbenchCommand(ctx, srv, "oltp_point_select", loadTable, "--threads=2", "--time=300", "run")
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	testdb.WaitStatus(t, srv, "Handler_read_key", 100) // connected and running
}

// questions reads the server's Questions counter.
func questions(t *testing.T, srv *sandbox.Server) float64 {
	t.Helper()
	db, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name string
	var v float64
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// roles reads the server's thread roles with the mysqld package.
func roles(t *testing.T, srv *sandbox.Server) map[int]string {
	t.Helper()
	c, err := mysqld.Target{Socket: srv.Socket, User: "root"}.Client(mysqld.ClientEnv{Home: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	db, err := mysqld.Connect(context.Background(), c, nil, mysqld.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Roles(context.Background(), srv.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// window samples srv for d at freq and writes the profile to path.
func window(t *testing.T, srv *sandbox.Server, freq int, d time.Duration, path, version string) *Result {
	t.Helper()
	q0 := questions(t, srv)
	w, err := Start(srv.Pid, perfevent.SampleOptions{Freq: freq})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(d) // the window
	ops := questions(t, srv) - q0
	res, err := w.Finish(path, Options{Roles: roles(t, srv), Ops: ops, OpsSource: "Questions", Version: version, Step: "point-query"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d samples, %+v, %.0f ops, warnings %q", version, res.Samples, res.Stats, ops, res.Warnings)
	return res
}

// TestProfileMariaDB is the acceptance test: a window of a sandbox MariaDB
// under oltp_point_select gives a profile pprof opens, whose samples in the
// server are mostly named, with server functions on the stacks; two
// windows diff with -diff_base.
func TestProfileMariaDB(t *testing.T) {
	testenv.NeedRoot(t, "CPU-wide sampling")
	srv := testdb.Shared(t)
	startLoad(t, srv)
	dir := t.TempDir()
	a := window(t, srv, 999, 2*time.Second, filepath.Join(dir, "a", defaultFileName), "a")
	b := window(t, srv, 999, 2*time.Second, filepath.Join(dir, "b", defaultFileName), "b")
	for _, r := range []*Result{a, b} {
		if r.Stats.Exe < 100 {
			t.Fatalf("only %d samples in the server binary", r.Stats.Exe)
		}
		// The Debian mariadbd is stripped: functions it does not
		// export (most of InnoDB) have no name for perfbench or perf,
		// which leaves 50-65% of the samples whose leaf is in the
		// server named here. Nearly every server sample has named
		// server functions on its stack.
		if f := r.Stats.ExeNamedFraction(); f < 0.4 {
			t.Errorf("%.0f%% of the samples whose leaf is in the server binary are named, want about 60%%", 100*f)
		}
		if f := r.Stats.ExeStackNamedFraction(); f < 0.9 {
			t.Errorf("%.0f%% of the samples with server frames have a named one, want nearly all", 100*f)
		}
		if r.Stats.Kernel > 0 && r.Stats.KernelNamed < r.Stats.Kernel*9/10 {
			t.Errorf("%d of %d kernel samples named", r.Stats.KernelNamed, r.Stats.Kernel)
		}
	}
	top := pprofTool(t, "-top", "-cum", "-symbolize=none", "-sample_index=samples", a.Path)
	rows := parseTop(t, top)
	for _, fn := range []string{"do_command", "dispatch_command"} {
		if rows[fn].cum < float64(a.Stats.Exe)/4 {
			t.Errorf("%s has %.0f samples cumulated, want a large share of the %d in the server:\n%s", fn, rows[fn].cum, a.Stats.Exe, top)
		}
	}
	// The connection threads carry the statements.
	conn := parseTop(t, pprofTool(t, "-top", "-cum", "-symbolize=none", "-sample_index=samples", "-tagfocus=role=connection", a.Path))
	if conn["do_command"].cum < rows["do_command"].cum*9/10 {
		t.Errorf("do_command: %.0f samples on connection threads of %.0f", conn["do_command"].cum, rows["do_command"].cum)
	}
	diff := pprofTool(t, "-top", "-symbolize=none", "-sample_index=samples", "-diff_base="+a.Path, b.Path)
	if !strings.Contains(diff, "do_command") && !strings.Contains(diff, "dispatch_command") {
		t.Errorf("diff names no server function:\n%s", diff)
	}
}

// TestProfileServerExits: the server dies inside the window; the profile is
// still written, with a warning.
func TestProfileServerExits(t *testing.T) {
	testenv.NeedRoot(t, "CPU-wide sampling")
	srv := testdb.New(t, testdb.Options{})
	startLoad(t, srv)
	w, err := Start(srv.Pid, perfevent.SampleOptions{Freq: 999})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the part of the window sampled before the server dies
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), defaultFileName)
	res, err := w.Finish(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "exited during the window") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if res.Stats.ExeNamed == 0 {
		t.Errorf("no named samples before the exit: %+v", res.Stats)
	}
	pprofTool(t, "-top", "-symbolize=none", path)
}

// serverCopy makes a basedir whose server binary is a copy of the installed
// one (edited by edit), with the installed scripts and share files.
func serverCopy(t *testing.T, edit func(t *testing.T, path string)) string {
	t.Helper()
	testdb.NeedServer(t)
	bin, err := sandbox.FindServerBinary("")
	if err != nil {
		t.Fatal(err)
	}
	install := testenv.NeedBinary(t, "mariadb-install-db", "mariadb-server")
	base := t.TempDir()
	for _, d := range []string{"sbin", "bin", "share"} {
		os.MkdirAll(filepath.Join(base, d), 0o755)
	}
	dst := filepath.Join(base, "sbin", filepath.Base(bin))
	copyFile(t, bin, dst)
	edit(t, dst)
	if err := os.Symlink(install, filepath.Join(base, "bin", "mariadb-install-db")); err != nil {
		t.Fatal(err)
	}
	share := "/usr/share/mysql"
	_, err = os.Stat(filepath.Join(share, "english"))
	testenv.SkipUnless(t, err, "apt-get install mariadb-server", fs.ErrNotExist)
	if err := os.Symlink(share, filepath.Join(base, "share", "mysql")); err != nil {
		t.Fatal(err)
	}
	return base
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// dropDynsym turns the .dynsym section header of an ELF file into a null
// section: the dynamic loader, which reads the program headers, still runs
// it, but the file has no symbol table for a profiler any more.
func dropDynsym(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var idx = -1
	for i, s := range f.Sections {
		if s.Type == elf.SHT_DYNSYM {
			idx = i
		}
	}
	f.Close()
	if idx < 0 {
		t.Fatal("the server binary has no .dynsym")
	}
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var hdr [64]byte
	if _, err := fh.ReadAt(hdr[:], 0); err != nil {
		t.Fatal(err)
	}
	shoff := binary.LittleEndian.Uint64(hdr[0x28:])
	shentsize := uint64(binary.LittleEndian.Uint16(hdr[0x3a:]))
	var zero [4]byte // sh_type is the second word of a section header
	if _, err := fh.WriteAt(zero[:], int64(shoff+uint64(idx)*shentsize+4)); err != nil {
		t.Fatal(err)
	}
}

// TestProfileServerWithoutSymbols: a server whose binary has no symbol
// table gives a profile with unnamed server frames and warnings, not an
// error.
func TestProfileServerWithoutSymbols(t *testing.T) {
	testenv.NeedRoot(t, "CPU-wide sampling")
	base := serverCopy(t, dropDynsym)
	srv := testdb.New(t, testdb.Options{Basedir: base})
	startLoad(t, srv)
	res := window(t, srv, 999, time.Second, filepath.Join(t.TempDir(), defaultFileName), "stripped")
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "has no function symbols") || !strings.Contains(w, "have function names") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if res.Stats.Exe == 0 || res.Stats.ExeNamed != 0 {
		t.Errorf("stats %+v: want samples in the server, none named", res.Stats)
	}
	top := pprofTool(t, "-top", "-symbolize=none", res.Path)
	if !strings.Contains(top, "mariadbd+0x") {
		t.Errorf("server frames not shown as file offsets:\n%s", top)
	}
}

// TestProfileDeletedBinary: the server's binary is deleted after it
// started (an upgrade under a running server); symbols are read from the
// mapped copy, with a warning.
func TestProfileDeletedBinary(t *testing.T) {
	testenv.NeedRoot(t, "CPU-wide sampling")
	base := serverCopy(t, func(*testing.T, string) {})
	srv := testdb.New(t, testdb.Options{Basedir: base})
	if err := os.Remove(srv.Binary); err != nil {
		t.Fatal(err)
	}
	startLoad(t, srv)
	res := window(t, srv, 999, time.Second, filepath.Join(t.TempDir(), defaultFileName), "deleted")
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "was deleted or replaced") {
		t.Errorf("warnings %q", res.Warnings)
	}
	// mariadbd's dynamic symbols name about half the leaf frames in the
	// server (its static functions have none), too close to any threshold;
	// with symbols nearly every server stack has a named frame
	// (do_command, dispatch_command), without them none.
	if res.Stats.ExeStackNamedFraction() < 0.9 {
		t.Errorf("stats %+v: the mapped copy's symbols were not used", res.Stats)
	}
}
