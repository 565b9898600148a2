package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

// mountSmall mounts a tmpfs of size bytes on dir for the test's duration.
// Mounting needs root (CAP_SYS_ADMIN): without it the test skips (see
// testenv.SkipUnless).
func mountSmall(t *testing.T, dir string, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		testenv.SkipUnless(t, fmt.Errorf("mount a small tmpfs on %s: %w", dir, err), "run the tests as root", syscall.EPERM)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// fill writes to a file in dir until its filesystem is full.
func fill(dir string) error {
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		return err
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

// TestDiskFillsUp runs a plan whose records folder is a filesystem that
// fills up after its first Record: the run fails, counts only the Record on
// disk as ok, names the two it could not write and keeps them elsewhere;
// once space is freed, --resume measures those two again.
func TestDiskFillsUp(t *testing.T) {
	needTools(t)
	out := t.TempDir()
	recDir := filepath.Join(out, "records")
	mountSmall(t, recDir, "512k")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p := parsePlan(t, `
[run]
warmup = "1s"
duration = "1s"
events = ["task-clock", "context-switches"]
[data]
table_size = 1000
[steps]
list = ["point-query", "read-only_range=100", "random-points_range=100"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`)
	first := filepath.Join(recDir, "a__point-query_range=100__t1__r1.json")
	filled := make(chan error, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				filled <- errors.New("the first Record never came")
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := os.Stat(first); err == nil {
				filled <- fill(recDir)
				return
			}
		}
	}()
	o := testOptions(out, &syncBuffer{})
	var progress syncBuffer
	o.Progress, o.Tail = &progress, time.Second
	sum, err := Run(context.Background(), p, o)
	close(stop)
	wg.Wait()
	t.Logf("progress:\n%s", progress.String())
	if ferr := <-filled; ferr != nil {
		t.Fatalf("fill the records folder: %v", ferr)
	}
	if !errors.Is(err, ErrRecordsNotWritten) || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("run: %v, want ErrRecordsNotWritten (no space left on device)", err)
	}
	if sum == nil || sum.Ran != 3 || sum.OK != 1 || len(sum.Files) != 1 || len(sum.Unwritten) != 2 {
		t.Fatalf("summary %+v; want 3 ran, 1 ok and written, 2 not written", sum)
	}
	said := progress.String()
	if !strings.Contains(said, ": 3 measurements: 1 ok, 0 failed, 0 partial, 2 not written\n") {
		t.Errorf("the summary line does not count 1 ok and 2 not written")
	}
	for _, u := range sum.Unwritten {
		if !strings.Contains(said, "perfbench run: not written: "+u.ID+" (ok): ") || u.Kept == "" || !strings.HasPrefix(u.Kept, tmp) {
			t.Errorf("%s: not named in the summary, or not kept in %s: %+v", u.ID, tmp, u)
			continue
		}
		if r, err := record.Read(u.Kept); err != nil || r.Outcome != record.OutcomeOK || r.Ops.Count <= 0 {
			t.Errorf("%s: the kept Record: %v", u.ID, err)
		}
	}
	ents, _ := os.ReadDir(recDir)
	if len(ents) != 2 { // the first Record and the filler; no temporary file
		t.Errorf("the records folder holds %d files, want the first Record and the filler", len(ents))
	}

	// Space is freed: --resume measures the two again.
	if err := os.Remove(filepath.Join(recDir, "filler")); err != nil {
		t.Fatal(err)
	}
	var again syncBuffer
	o.Progress, o.Resume = &again, true
	sum, err = Run(context.Background(), p, o)
	t.Logf("resume:\n%s", again.String())
	if err != nil || sum.Ran != 2 || sum.OK != 2 || len(sum.Skipped) != 1 {
		t.Errorf("resume: %v, %+v; want 2 ran ok and 1 skipped", err, sum)
	}
	recs := records(t, out)
	for id, r := range recs {
		if r.Outcome != record.OutcomeOK || r.Ops.Count <= 0 {
			t.Errorf("%s: outcome %s, ops %+v", id, r.Outcome, r.Ops)
		}
	}
	if len(recs) != 3 {
		t.Errorf("%d Records after --resume, want 3", len(recs))
	}
	noServerLeft(t, serverPids(recs)...)
}

// cmdlines returns the command lines of every process, by pid.
func cmdlines() map[string][]byte {
	out := map[string][]byte{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if b, err := os.ReadFile(d + "/cmdline"); err == nil {
			out[filepath.Base(d)] = b
		}
	}
	return out
}

// TestPasswordOffCommandLines samples every process's command line each
// 100 ms while a plan with a data password loads its data and runs a step:
// none holds the password (sysbench reads it from an option file), and
// neither do the Records and logs.
func TestPasswordOffCommandLines(t *testing.T) {
	needTools(t)
	const password = `pb-S3cret, "q" $(x)`
	p := parsePlan(t, `
[run]
warmup = "1s"
duration = "2s"
events = ["task-clock"]
[data]
table_size = 1000
password = 'pb-S3cret, "q" $(x)'
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`)
	out := t.TempDir()
	stop := make(chan struct{})
	done := make(chan struct{})
	var leaks []string
	samples, sysbenchSeen := 0, 0
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			samples++
			seen := false
			for pid, cl := range cmdlines() {
				// Its first word too: the password split into arguments
				// is on the command line all the same.
				if bytes.Contains(cl, []byte(password)) || bytes.Contains(cl, []byte("pb-S3cret")) {
					leaks = append(leaks, pid+": "+string(bytes.ReplaceAll(cl, []byte{0}, []byte{' '})))
				}
				seen = seen || bytes.Contains(cl, []byte("--config-file=")) && bytes.HasPrefix(cl, []byte("sysbench"))
			}
			if seen {
				sysbenchSeen++
			}
		}
	}()
	var progress syncBuffer
	o := testOptions(out, &progress)
	o.Tail = time.Second
	sum, err := Run(context.Background(), p, o)
	close(stop)
	<-done
	t.Logf("progress:\n%s", progress.String())
	if err != nil || sum.OK != 1 {
		t.Fatalf("run: %v, %+v", err, sum)
	}
	if len(leaks) > 0 {
		t.Errorf("the password was on %d command lines: %q", len(leaks), leaks)
	}
	// sysbench runs warm-up + window + tail = 4 s: most samples saw it.
	if sysbenchSeen < 10 {
		t.Errorf("%d of %d samples saw sysbench with its option file: the sampling missed the load", sysbenchSeen, samples)
	}
	for _, dir := range []string{"records", "logs"} {
		filepath.WalkDir(filepath.Join(out, dir), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(password)) {
					t.Errorf("%s holds the password", path)
				}
			}
			return nil
		})
	}
	noServerLeft(t, serverPids(records(t, out))...)
}

// TestBusyPort: a managed version whose port another process listens on is
// said once, in one line naming the port, the process and the plan's line,
// not in the server's error log printed at the start and again at the load.
func TestBusyPort(t *testing.T) {
	needTools(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	p := parsePlan(t, `
[run]
warmup = "1s"
duration = "1s"
events = ["task-clock"]
[data]
table_size = 1000
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
port = `+strconv.Itoa(port)+`
options = ["innodb_buffer_pool_size=64M"]
`)
	out := t.TempDir()
	var progress syncBuffer
	_, err = Run(context.Background(), p, testOptions(out, &progress))
	said := progress.String()
	t.Logf("progress:\n%s", said)
	if !errors.Is(err, ErrStepsFailed) {
		t.Errorf("run: %v, want ErrStepsFailed", err)
	}
	want := "perfbench run: start a: the port is in use: port " + strconv.Itoa(port) + " is taken by pid " + strconv.Itoa(os.Getpid()) +
		" (" + filepath.Base(os.Args[0])[:min(15, len(filepath.Base(os.Args[0])))] + "); give version a (line 10 of the plan) " +
		"another port, or none to let perfbench pick a free one\n"
	before, _, _ := strings.Cut(said, "[1/1]")
	if !strings.Contains(said, want) || strings.Count(before, "is taken") != 1 || strings.Contains(said, "[Note]") {
		t.Errorf("want the cause once before the measurement, in one line:\n%s", want)
	}
	r := records(t, out)["a/point-query_range=100/t1/r1"]
	if r == nil || r.Outcome != record.OutcomeFailed || strings.Contains(r.Error, "\n") || !strings.Contains(r.Error, "port "+strconv.Itoa(port)+" is taken") {
		t.Errorf("the Record: %+v", r)
	}
}
