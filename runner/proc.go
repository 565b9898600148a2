package runner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// child is a command perfbench runs for a while and then ends: sysbench,
// a custom step's command, a custom server start command. Its standard
// output and error go, line by line and in the order written, to a log and
// to a callback.
type child struct {
	argv    []string
	cmd     *exec.Cmd
	exited  chan struct{} // closed once the process has been reaped
	drained chan struct{} // closed once its output has been read to the end
	out     *os.File      // read end of the output pipe
	waitErr error
	ended   time.Time // when it exited
}

// startChild starts argv. Every line it prints is written to log (when not
// nil) and passed to onLine (when not nil), from one goroutine, in order.
func startChild(argv []string, log io.Writer, onLine func(string)) (*child, error) {
	if len(argv) == 0 {
		return nil, errors.New("start command: empty command line")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = procAttr()
	c := &child{argv: argv, cmd: cmd, exited: make(chan struct{}), drained: make(chan struct{}), out: r}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal fires when the thread that started the
		// child ends: keep this goroutine on its thread until the child
		// is reaped; the thread then ends with it (never unlocked).
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.waitErr = cmd.Wait()
		c.ended = time.Now()
		close(c.exited)
	}()
	err = <-started
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	go func() {
		defer close(c.drained)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			if log != nil {
				io.WriteString(log, line+"\n")
			}
			if onLine != nil {
				onLine(line)
			}
		}
	}()
	return c, nil
}

// Pid is the child's process id (and process group id).
func (c *child) Pid() int { return c.cmd.Process.Pid }

// Exited is closed when the child has exited.
func (c *child) Exited() <-chan struct{} { return c.exited }

// running reports whether the child has not exited yet.
func (c *child) running() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// finish waits for the child's output to be read to its end after the child
// exited. A grandchild still holding the output open (a daemon the command
// started) does not hold perfbench up for more than a few seconds.
func (c *child) finish() {
	<-c.exited
	select {
	case <-c.drained:
	case <-time.After(3 * time.Second):
		c.out.Close()
		<-c.drained
	}
	c.out.Close()
}

// wait waits for the child to exit (at most timeout when positive; then it
// is stopped) and for its output to be read.
func (c *child) wait(timeout time.Duration) (timedOut bool) {
	if timeout > 0 {
		select {
		case <-c.exited:
		case <-time.After(timeout):
			timedOut = true
			c.stop(5 * time.Second)
		}
	}
	c.finish()
	return timedOut
}

// stop ends the child and everything in its process group: SIGTERM, then
// SIGKILL after grace. It returns once the child has exited.
func (c *child) stop(grace time.Duration) {
	if !c.running() {
		c.finish()
		return
	}
	_ = killGroup(c.Pid(), syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(grace):
		_ = killGroup(c.Pid(), syscall.SIGKILL)
		<-c.exited
	}
	// Members of the group that outlived the leader.
	_ = killGroup(c.Pid(), syscall.SIGKILL)
	c.finish()
}

// exitCode is the child's exit status: -1 when a signal ended it.
func (c *child) exitCode() int {
	if c.cmd.ProcessState == nil {
		return -1
	}
	return c.cmd.ProcessState.ExitCode()
}

// describeExit says how the child ended: "exit status 1",
// "signal: killed".
func (c *child) describeExit() string {
	if c.waitErr == nil {
		return "exit status 0"
	}
	return c.waitErr.Error()
}
