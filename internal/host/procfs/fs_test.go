package procfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var fixture = New("testdata")

func TestFixtureTasks(t *testing.T) {
	want := []int{12122, 12125, 12127, 12129, 12130, 12132, 12133, 12135, 12139, 12147, 13645}
	got, err := fixture.Proc(12122).Tasks()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("tasks of 12122: %v, %v; want %v", got, err, want)
	}
	// A thread's tasks are its process's.
	if got, err := fixture.Proc(12122).Task(12147).Tasks(); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("tasks of thread 12147: %v, %v; want %v", got, err, want)
	}
	// A zombie lists its main thread alone; a process whose main thread
	// exited lists it with the others.
	if got, err := fixture.Proc(30008).Tasks(); err != nil || !reflect.DeepEqual(got, []int{30008}) {
		t.Errorf("tasks of the zombie: %v, %v", got, err)
	}
	if got, err := fixture.Proc(29791).Tasks(); err != nil || !reflect.DeepEqual(got, []int{29791, 29793, 29794}) {
		t.Errorf("tasks of 29791: %v, %v", got, err)
	}
	_, err = fixture.Proc(4).Tasks()
	if !errors.Is(err, ErrGone) || !errors.Is(err, fs.ErrNotExist) || err.Error() != "pid 4: no such process" {
		t.Errorf("tasks of a missing pid: %v, want ErrGone wrapping ENOENT, saying %q", err, "pid 4: no such process")
	}

	// A task folder left empty: the process was released while listed.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc/9/task"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = New(root).Proc(9).Tasks()
	if !errors.Is(err, ErrGone) || err.Error() != "pid 9 has no threads left (it is exiting): no such process" {
		t.Errorf("empty task folder: %v", err)
	}
}

func TestFixtureStat(t *testing.T) {
	st, err := fixture.Proc(12122).Stat()
	want := Stat{PID: 12122, Comm: "mariadbd", State: 'S', PPID: 1, Session: 4188, MinFlt: 43948, UTime: 1114, STime: 772, NumThreads: 11, StartTime: 57677, CPU: 1}
	if err != nil || st != want {
		t.Errorf("stat of 12122: %+v, %v\nwant %+v", st, err, want)
	}
	// The threads' CPU times, summed with awk over the fixture files: less
	// than the process's, which keeps those of exited threads.
	tids, _ := fixture.Proc(12122).Tasks()
	var ut, stime, minflt uint64
	var vol, invol uint64
	for _, tid := range tids {
		task := fixture.Proc(12122).Task(tid)
		s, err := task.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if s.PID != tid || s.StartTime < st.StartTime {
			t.Errorf("tid %d: stat says pid %d, started at %d (process at %d)", tid, s.PID, s.StartTime, st.StartTime)
		}
		ut, stime, minflt = ut+s.UTime, stime+s.STime, minflt+s.MinFlt
		status, err := task.Status()
		if err != nil {
			t.Fatal(err)
		}
		if status.Tgid != 12122 || status.Pid != tid || !status.HasCtxt {
			t.Errorf("tid %d: status %+v", tid, status)
		}
		vol, invol = vol+status.Voluntary, invol+status.Involuntary
	}
	if ut != 1094 || stime != 759 || minflt != 41992 || vol != 388338 || invol != 183202 {
		t.Errorf("thread sums: utime %d stime %d minflt %d voluntary %d involuntary %d, want 1094 759 41992 388338 183202", ut, stime, minflt, vol, invol)
	}

	_, err = fixture.Proc(12122).Task(99999).Stat()
	if !errors.Is(err, ErrGone) || !errors.Is(err, fs.ErrNotExist) || err.Error() != "tid 99999 of pid 12122: no such process" {
		t.Errorf("stat of a thread that exited: %v", err)
	}

	// A file that is not a stat file names itself.
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc/9/stat"), "9 (x) S\n")
	_, err = New(root).Proc(9).Stat()
	if !errors.Is(err, errFormat) || !strings.Contains(err.Error(), filepath.Join(root, "proc/9/stat")) {
		t.Errorf("a short stat file: %v", err)
	}
}

func TestFixtureIdentity(t *testing.T) {
	p := fixture.Proc(12122)
	if c, err := p.Comm(); c != "mariadbd" || err != nil {
		t.Errorf("comm: %q, %v", c, err)
	}
	if c, err := p.Task(12147).Comm(); !errors.Is(err, ErrGone) {
		t.Errorf("comm of a thread without the file: %q, %v", c, err)
	}
	if exe, deleted, err := p.Exe(); exe != "/usr/sbin/mariadbd" || deleted || err != nil {
		t.Errorf("exe: %q %v %v", exe, deleted, err)
	}
	// A zombie's entry is there without an executable: not gone.
	_, _, err := fixture.Proc(30008).Exe()
	if err == nil || errors.Is(err, ErrGone) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "pid 30008 has no executable") {
		t.Errorf("exe of the zombie: %v, want not found but not gone", err)
	}
	if _, _, err := fixture.Proc(4).Exe(); !errors.Is(err, ErrGone) {
		t.Errorf("exe of a missing pid: %v", err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc/9"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/sbin/mysqld (deleted)", filepath.Join(root, "proc/9/exe")); err != nil {
		t.Fatal(err)
	}
	if exe, deleted, err := New(root).Proc(9).Exe(); exe != "/usr/sbin/mysqld" || !deleted || err != nil {
		t.Errorf("a replaced executable: %q %v %v", exe, deleted, err)
	}

	st, err := p.Status()
	if err != nil || st.Pid != 12122 || st.RSSBytes != 194256*1024 {
		t.Errorf("status: %+v, %v", st, err)
	}
	if got := p.Path("fd"); got != filepath.Join("testdata", "proc", "12122", "fd") {
		t.Errorf("path: %s", got)
	}
	if got := fixture.Self().Task(3).Path("comm"); got != filepath.Join("testdata", "proc", "self", "task", "3", "comm") {
		t.Errorf("path: %s", got)
	}
	if got, err := fixture.PIDs(); err != nil || !reflect.DeepEqual(got, []int{12122, 29791, 30008}) {
		t.Errorf("pids: %v, %v", got, err)
	}
}

func TestFixtureAlive(t *testing.T) {
	cases := []struct {
		p    Proc
		is   error // nil: alive
		says string
	}{
		{fixture.Proc(12122), nil, ""},
		{fixture.Proc(12122).Task(12147), nil, ""},
		// The message doctor prints, word for word.
		{fixture.Proc(30008), ErrZombie, "pid 30008 (sleep) is a zombie: it has exited and its parent, pid 29944, has not reaped it: the process has exited"},
		// Its main thread is a zombie, its two others sleep.
		{fixture.Proc(29791), nil, ""},
		{fixture.Proc(29791).Task(29791), ErrGone, "tid 29791 of pid 29791 (le) has exited: no such process"},
		{fixture.Proc(29791).Task(29793), nil, ""},
		{fixture.Proc(4), ErrGone, "pid 4: no such process"},
		{fixture.Proc(12122).Task(4), ErrGone, "tid 4 of pid 12122: no such process"},
	}
	for _, c := range cases {
		err := c.p.Alive()
		if c.is == nil && err != nil || c.is != nil && (!errors.Is(err, c.is) || err.Error() != c.says) {
			t.Errorf("%s: %v, want %v saying %q", c.p, err, c.is, c.says)
		}
	}
	// A stat file that cannot be read is neither: the error says whose.
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc/7/stat"), "7 init S\n")
	if err := New(root).Proc(7).Alive(); err == nil || errors.Is(err, ErrGone) || errors.Is(err, ErrZombie) ||
		!strings.HasPrefix(err.Error(), "read the state of pid 7: parse ") {
		t.Errorf("a stat without its fields: %v", err)
	}
	// One sentinel excludes the other.
	if err := fixture.Proc(30008).Alive(); errors.Is(err, ErrGone) {
		t.Errorf("a zombie is gone: %v", err)
	}
	if err := fixture.Proc(4).Alive(); errors.Is(err, ErrZombie) {
		t.Errorf("a missing pid is a zombie: %v", err)
	}
}

func TestGoneErrors(t *testing.T) {
	cases := []struct {
		err  error
		gone bool
	}{
		{&fs.PathError{Op: "open", Path: "/proc/5/stat", Err: fs.ErrNotExist}, true},
		{&fs.PathError{Op: "read", Path: "/proc/5/stat", Err: errESRCH}, true},
		{&fs.PathError{Op: "open", Path: "/proc/5/io", Err: fs.ErrPermission}, false},
	}
	for _, c := range cases {
		err := fixture.Proc(5).fail(c.err)
		if errors.Is(err, ErrGone) != c.gone || !errors.Is(err, c.err) {
			t.Errorf("%v: %v, gone %v, want gone %v and the cause kept", c.err, err, errors.Is(err, ErrGone), c.gone)
		}
		if c.gone && err.Error() != "pid 5: no such process" {
			t.Errorf("%v: says %q", c.err, err)
		}
	}
}

func TestFixtureSysctl(t *testing.T) {
	if n, err := fixture.PerfEventParanoid(); n != 2 || err != nil {
		t.Errorf("perf_event_paranoid: %d, %v; want 2", n, err)
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc/sys/kernel/perf_event_paranoid"), "-1\n")
	writeFile(t, filepath.Join(root, "proc/sys/kernel/ns_last_pid"), "x\n")
	writeFile(t, filepath.Join(root, "proc/sys/kernel/osrelease"), "6.1.0-18-amd64\n")
	f := New(root)
	if n, err := f.PerfEventParanoid(); n != -1 || err != nil {
		t.Errorf("perf_event_paranoid -1: %d, %v", n, err)
	}
	if _, err := f.SysctlInt("kernel.ns_last_pid"); !errors.Is(err, errFormat) || err.Error() != `kernel.ns_last_pid: "x" is not a number: unexpected format` {
		t.Errorf("not a number: %v", err)
	}
	if s, err := f.Sysctl("kernel.osrelease"); s != "6.1.0-18-amd64" || err != nil {
		t.Errorf("osrelease: %q, %v", s, err)
	}
	// A kernel without perf events has no file.
	_, err := New(t.TempDir()).PerfEventParanoid()
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "read kernel.perf_event_paranoid: ") {
		t.Errorf("missing: %v", err)
	}
}

func TestFixtureCgroup(t *testing.T) {
	cg, err := fixture.Proc(12122).Cgroup()
	if cg != "/system.slice/mariadb.service" || err != nil {
		t.Fatalf("cgroup: %q, %v", cg, err)
	}
	// The fixture is a hybrid host: cgroup2 at /sys/fs/cgroup/unified.
	dir, err := fixture.CgroupDir(cg)
	if want := filepath.Join("testdata", "sys/fs/cgroup/unified/system.slice/mariadb.service"); dir != want || err != nil {
		t.Errorf("cgroup dir: %q, %v; want %q", dir, err, want)
	}
	m, err := fixture.Cgroup2Mount()
	if m.MountPoint != "/sys/fs/cgroup/unified" || m.Root != "/" || err != nil {
		t.Errorf("cgroup2 mount: %+v, %v", m, err)
	}
	if cg, err := fixture.Proc(30008).Cgroup(); cg != "/" || err != nil {
		t.Errorf("cgroup of the zombie: %q, %v", cg, err)
	}
	if _, err := fixture.Proc(4).Cgroup(); !errors.Is(err, ErrGone) {
		t.Errorf("cgroup of a missing pid: %v", err)
	}

	// A container whose cgroup2 mount shows its own cgroup, /docker/abc,
	// at /sys/fs/cgroup; cgroup v1 only for pid 9.
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc/self/mountinfo"),
		"25 1 0:23 / /sys rw,nosuid - sysfs sysfs rw\n"+
			"30 25 0:26 /docker/abc /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw\n")
	writeFile(t, filepath.Join(root, "proc/9/cgroup"), "4:memory:/a\n1:cpu:/\n")
	f := New(root)
	for _, c := range []struct{ cg, dir, err string }{
		{"/docker/abc/db", filepath.Join(root, "sys/fs/cgroup/db"), ""},
		{"/docker/abc", filepath.Join(root, "sys/fs/cgroup"), ""},
		{"/docker/abcd", "", "it is not under the cgroup2 mount at /sys/fs/cgroup, which shows only /docker/abc"},
		{"/other", "", "it is not under the cgroup2 mount at /sys/fs/cgroup, which shows only /docker/abc"},
		{"/../x", "", "outside this process's cgroup namespace"},
		{"/docker/abc/../../x", "", "is not a cgroup path"},
		{"docker", "", "is not a cgroup path"},
	} {
		dir, err := f.CgroupDir(c.cg)
		if dir != c.dir || c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("cgroup %s: %q, %v; want %q, %q", c.cg, dir, err, c.dir, c.err)
		}
	}
	if _, err := f.Proc(9).Cgroup(); !errors.Is(err, errNoCgroup2) || err.Error() != "pid 9 is in no cgroup v2 (only cgroup v1 hierarchies): no cgroup v2" {
		t.Errorf("cgroup v1 only: %v", err)
	}
	// A second cgroup2 mount that shows the whole hierarchy holds what
	// the first does not show.
	writeFile(t, filepath.Join(root, "proc/self/mountinfo"),
		"30 25 0:26 /docker/abc /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw\n"+
			"31 25 0:26 / /mnt/cg rw,nosuid - cgroup2 cgroup2 rw\n")
	if dir, err := f.CgroupDir("/other"); dir != filepath.Join(root, "mnt/cg/other") || err != nil {
		t.Errorf("cgroup /other with a second mount of the whole hierarchy: %q, %v", dir, err)
	}
	writeFile(t, filepath.Join(root, "proc/self/mountinfo"), "25 1 0:23 / /sys rw,nosuid - sysfs sysfs rw\n")
	if _, err := f.CgroupDir("/db"); !errors.Is(err, errNoCgroup2) {
		t.Errorf("no cgroup2 mount: %v", err)
	}
	if _, err := f.Cgroup2Mount(); !errors.Is(err, errNoCgroup2) {
		t.Errorf("no cgroup2 mount: %v", err)
	}
	writeFile(t, filepath.Join(root, "proc/self/mountinfo"), "25 1 0:23 / /sys rw,nosuid sysfs sysfs rw\n")
	if _, err := f.Mountinfo(); !errors.Is(err, errFormat) || !strings.Contains(err.Error(), filepath.Join(root, "proc/self/mountinfo")) {
		t.Errorf("a bad mount table: %v", err)
	}
}

func TestNewRoot(t *testing.T) {
	for _, root := range []string{"", "/"} {
		if f := New(root); f.Proc(7).Path("stat") != "/proc/7/stat" {
			t.Errorf("New(%q) reads %s", root, f.Proc(7).Path("stat"))
		}
	}
	if (FS{}).Proc(7).Path() != "/proc/7" {
		t.Errorf("the zero FS reads %s", (FS{}).Proc(7).Path())
	}
	if got := New("testdata").Path("diskstats"); got != filepath.Join("testdata", "proc", "diskstats") {
		t.Errorf("a fixture's diskstats: %s", got)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
