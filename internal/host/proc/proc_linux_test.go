package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/proc/proctest"
	"github.com/perfbench/perfbench/internal/testenv"
)

func TestOutputLinesInOrder(t *testing.T) {
	// Read once Wait returned: the output has been read by then.
	var log strings.Builder
	var lines []string
	// stdout and stderr interleaved, a 100 KB line (longer than the
	// reader's buffer), and a last line without a newline.
	script := `echo one; echo two >&2; head -c 100000 /dev/zero | tr '\0' x; echo; printf 'last'`
	c, err := Start([]string{"sh", "-c", script}, Options{Log: &log, OnLine: func(s string) { lines = append(lines, s) }})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(0)
	long := strings.Repeat("x", 100000)
	want := []string{"one", "two", long, "last"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d", len(lines), len(want))
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: %.20q (%d bytes), want %.20q (%d bytes)", i, lines[i], len(lines[i]), want[i], len(want[i]))
		}
	}
	if got := log.String(); got != "one\ntwo\n"+long+"\nlast\n" {
		t.Errorf("log has %d bytes, want %d", len(got), len("one\ntwo\n"+long+"\nlast\n"))
	}
	if c.ExitCode() != 0 || c.DescribeExit() != "exit status 0" || c.Err() != nil {
		t.Errorf("exit code %d (%s, %v), want 0", c.ExitCode(), c.DescribeExit(), c.Err())
	}
}

func TestExitStatus(t *testing.T) {
	c, err := Start([]string{"sh", "-c", "exit 3"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Wait(10 * time.Second) {
		t.Fatal("sh -c 'exit 3' timed out")
	}
	if c.ExitCode() != 3 || c.DescribeExit() != "exit status 3" || c.Running() {
		t.Errorf("exit code %d, %q, running %v; want 3", c.ExitCode(), c.DescribeExit(), c.Running())
	}
	if c.Ended().Before(c.Started()) || c.Started().IsZero() {
		t.Errorf("started %v, ended %v", c.Started(), c.Ended())
	}
	if _, err := Start([]string{"/nonexistent/perfbench-no-such-command"}, Options{}); err == nil ||
		!strings.Contains(err.Error(), "start /nonexistent/perfbench-no-such-command") {
		t.Errorf("a missing command: %v", err)
	}
	if _, err := Start(nil, Options{}); err == nil {
		t.Errorf("an empty command line started")
	}
}

func TestThreadsStarted(t *testing.T) {
	c, err := Start([]string{"sh", "-c", "echo 'Initializing worker threads...'; sleep 0.3; echo 'Threads started!'; sleep 0.3"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.ThreadsStartedAt(); ok {
		t.Errorf("threads started before the line was printed")
	}
	select {
	case <-c.ThreadsStarted():
	case <-c.Exited():
		t.Fatal("the command exited before ThreadsStarted was closed")
	}
	if !c.Running() {
		t.Errorf("ThreadsStarted was closed only once the command exited")
	}
	at, ok := c.ThreadsStartedAt()
	c.Wait(0)
	if !ok || at.Before(c.Started().Add(250*time.Millisecond)) || at.After(c.Ended()) {
		t.Errorf("threads started at %v (%v), want between %v and %v", at, ok, c.Started().Add(250*time.Millisecond), c.Ended())
	}

	// A command that never says it.
	c, err = Start([]string{"true"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(0)
	select {
	case <-c.ThreadsStarted():
		t.Errorf("ThreadsStarted closed for a command that did not print the line")
	default:
	}
}

// startWithChild starts sh -c script, a script that starts a background
// process and prints its pid, and returns the command and that pid. The
// background process is killed at the end of the test.
func startWithChild(t *testing.T, script string) (*Cmd, int) {
	t.Helper()
	pids := make(chan int, 1)
	c, err := Start([]string{"sh", "-c", script}, Options{OnLine: func(s string) {
		if n, err := strconv.Atoi(s); err == nil {
			pids <- n
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	pid := <-pids
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return c, pid
}

// TestStopEndsTheGroup: Stop ends what the command started too, and a
// command that ignores SIGTERM gets SIGKILL after the grace.
func TestStopEndsTheGroup(t *testing.T) {
	c, grandchild := startWithChild(t, "trap '' TERM; sleep 60 & echo $!; wait")
	if pgid, err := syscall.Getpgid(c.Pid()); err != nil || pgid != c.Pid() {
		t.Errorf("the command's process group is %d (%v), want its own, %d", pgid, err, c.Pid())
	}
	began := time.Now()
	c.Stop(300 * time.Millisecond)
	if time.Since(began) < 300*time.Millisecond {
		t.Errorf("Stop returned before the grace, though sh ignores SIGTERM")
	}
	if c.Running() || c.ExitCode() != -1 || c.DescribeExit() != "signal: killed" {
		t.Errorf("after Stop: running %v, exit %d (%s); want killed", c.Running(), c.ExitCode(), c.DescribeExit())
	}
	proctest.WaitGone(t, grandchild, 5*time.Second)
	c.Stop(time.Second) // stopping twice returns
}

// TestDoneDespiteHeldOutput: a background process that keeps the output
// open does not hold Done up for more than the drain grace.
func TestDoneDespiteHeldOutput(t *testing.T) {
	c, bg := startWithChild(t, "sleep 60 & echo $!")
	<-c.Exited()
	select {
	case <-c.Done():
	case <-time.After(drainGrace + 5*time.Second):
		t.Fatalf("Done not closed %v after the command exited", drainGrace+5*time.Second)
	}
	if !proctest.Alive(bg) {
		t.Errorf("the background process was ended: only Stop ends the group")
	}
}

var helpers = testenv.Helpers{"start-and-hang": startAndHang}

func TestMain(m *testing.M) {
	if code, ok := helpers.Run(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestDiesWithParent starts a helper process (this test binary) that starts
// a command and is then killed with SIGKILL: the command must not outlive
// it.
func TestDiesWithParent(t *testing.T) {
	proctest.DiesWithParent(t, 10*time.Second, "start-and-hang")
}

// startAndHang, the helper of TestDiesWithParent, starts a command, says its
// pid and waits to be killed.
func startAndHang([]string) int {
	c, err := Start([]string{"sleep", "60"}, Options{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Printf("pid %d\n", c.Pid())
	time.Sleep(time.Minute) // hangs until the test kills it
	return 0
}
