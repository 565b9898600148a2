// Package proc runs the commands perfbench starts and ends again: the load
// of a window (sysbench, a custom step's command, perfbench stat --
// COMMAND) and a custom server's start and stop commands.
//
// On Linux a command runs in a process group of its own, so that Ctrl-C on
// the terminal reaches perfbench alone, which then ends the command in order
// (Stop ends the whole group: sysbench and what a shell script started); and
// it gets SIGKILL from the kernel when perfbench dies, even by SIGKILL
// (parent-death signal), so that no load outlives the measurement it was
// started for.
//
// Its standard output and error go, line by line and in the order written,
// to a log and to a callback. A sysbench run says "Threads started!" once its
// clients run: ThreadsStarted tells when, for the warm-up to count from there.
package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfbench/perfbench/internal/host/cpuset"
)

// threadsStartedLine is what sysbench prints once its client threads run.
const threadsStartedLine = "Threads started!"

// drainGrace bounds the wait for the output's end after the command exited:
// a process the command left behind (a server started in the background)
// may hold the output open for ever.
const drainGrace = 3 * time.Second

// maxLine bounds the length of a line passed to Options.OnLine; the log gets
// every byte.
const maxLine = 1 << 20

// Options say where a command's output goes. The zero value discards it.
type Options struct {
	// Log, when not nil, receives everything the command prints, line by
	// line (a last line without a newline gets one).
	Log io.Writer
	// OnLine, when not nil, is called with every line, without its line
	// ending, in order, from one goroutine, after the line went to Log.
	OnLine func(line string)
	// Env are NAME=value pairs the command gets on top of perfbench's
	// environment.
	Env []string
	// CPUs, when not empty, are the CPUs the command and everything it
	// starts may run on: its affinity is set before it runs (Linux).
	CPUs cpuset.Set
}

// Cmd is a running (or ended) command.
type Cmd struct {
	cmd     *exec.Cmd
	out     *os.File      // read end of the output pipe
	exited  chan struct{} // closed once the process has been reaped
	drained chan struct{} // closed once the output has been read to its end
	done    chan struct{} // closed once exited and drained (or drainGrace passed)
	started time.Time
	ended   time.Time // set before exited is closed
	waitErr error     // likewise

	mu        sync.Mutex
	threads   chan struct{} // closed when threadsStartedLine was seen
	threadsAt time.Time
}

// Start starts argv[0] with argv[1:]; stdin is /dev/null. On Linux the
// command gets a process group of its own and the parent-death signal.
func Start(argv []string, o Options) (*Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("start command: empty command line")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = w, w
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.SysProcAttr = sysProcAttr()
	c := &Cmd{cmd: cmd, out: r, exited: make(chan struct{}), drained: make(chan struct{}),
		done: make(chan struct{}), threads: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal fires when the thread that started the
		// child ends, not the process: keep this goroutine on its thread
		// until the child is reaped; the thread then ends with it (never
		// unlocked).
		runtime.LockOSThread()
		c.started = time.Now()
		if err := cpuset.StartOn(o.CPUs, cmd.Start); err != nil {
			started <- err
			return
		}
		started <- nil
		err := cmd.Wait()
		c.ended = time.Now()
		c.waitErr = err
		close(c.exited)
	}()
	err = <-started
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	go c.read(o)
	go func() {
		<-c.exited
		select {
		case <-c.drained:
		case <-time.After(drainGrace):
			// Closing the read end ends the reader's blocked read.
			c.out.Close()
			<-c.drained
		}
		c.out.Close()
		close(c.done)
	}()
	return c, nil
}

// read copies the output to o.Log and o.OnLine until its end.
func (c *Cmd) read(o Options) {
	defer close(c.drained)
	br := bufio.NewReaderSize(c.out, 64*1024)
	var line []byte // the line so far, for OnLine
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && o.Log != nil {
			o.Log.Write(chunk)
		}
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 {
			if err != nil && o.Log != nil {
				io.WriteString(o.Log, "\n")
			}
			c.line(strings.TrimRight(string(line), "\r\n"), o.OnLine)
			line = line[:0]
		}
		if err != nil {
			return
		}
	}
}

func (c *Cmd) line(s string, onLine func(string)) {
	if strings.TrimSpace(s) == threadsStartedLine {
		c.mu.Lock()
		if c.threadsAt.IsZero() {
			c.threadsAt = time.Now()
			close(c.threads)
		}
		c.mu.Unlock()
	}
	if onLine != nil {
		onLine(s)
	}
}

// Pid is the command's process id (and, on Linux, process group id).
func (c *Cmd) Pid() int { return c.cmd.Process.Pid }

// Started is when the command was started.
func (c *Cmd) Started() time.Time { return c.started }

// Ended is when the command exited (zero while it runs).
func (c *Cmd) Ended() time.Time {
	select {
	case <-c.exited:
		return c.ended
	default:
		return time.Time{}
	}
}

// Exited is closed when the command has exited.
func (c *Cmd) Exited() <-chan struct{} { return c.exited }

// Done is closed when the command has exited and its output has been read
// to its end (or drainGrace passed after the exit).
func (c *Cmd) Done() <-chan struct{} { return c.done }

// Running reports whether the command has not exited yet.
func (c *Cmd) Running() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// ThreadsStarted is closed when the command printed threadsStartedLine
// (sysbench's clients run).
func (c *Cmd) ThreadsStarted() <-chan struct{} { return c.threads }

// ThreadsStartedAt is when the command printed threadsStartedLine; false
// when it has not.
func (c *Cmd) ThreadsStartedAt() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.threadsAt, !c.threadsAt.IsZero()
}

// Wait waits for the command to exit, at most timeout when it is positive
// (then the command is stopped: see Stop), and for its output to be read.
// It reports whether the timeout ended the command.
func (c *Cmd) Wait(timeout time.Duration) (timedOut bool) {
	if timeout > 0 {
		select {
		case <-c.exited:
		case <-time.After(timeout):
			timedOut = true
			c.Stop(5 * time.Second)
		}
	}
	<-c.done
	return timedOut
}

// Stop ends the command and everything in its process group: SIGTERM, then
// SIGKILL after grace. It returns once the command has exited and its
// output has been read. Stopping an ended command waits for its output only.
func (c *Cmd) Stop(grace time.Duration) {
	if !c.Running() {
		<-c.done
		return
	}
	_ = killGroup(c.Pid(), syscall.SIGTERM)
	t := time.NewTimer(grace)
	select {
	case <-c.exited:
	case <-t.C:
		_ = killGroup(c.Pid(), syscall.SIGKILL)
		<-c.exited
	}
	t.Stop()
	// Members of the group that outlived the leader.
	_ = killGroup(c.Pid(), syscall.SIGKILL)
	<-c.done
}

// ExitCode is the command's exit status: -1 while it runs or when a signal
// ended it.
func (c *Cmd) ExitCode() int {
	if c.Running() || c.cmd.ProcessState == nil {
		return -1
	}
	return c.cmd.ProcessState.ExitCode()
}

// Err is the error of the command's wait ("exit status 1", "signal:
// killed"); nil while it runs or when it exited with status 0.
func (c *Cmd) Err() error {
	if c.Running() {
		return nil
	}
	return c.waitErr
}

// DescribeExit says how the command ended: "exit status 0", "exit status
// 1", "signal: killed".
func (c *Cmd) DescribeExit() string {
	if c.Running() {
		return "still running"
	}
	if c.waitErr == nil {
		return "exit status 0"
	}
	return c.waitErr.Error()
}

// Alive reports whether process pid exists.
func Alive(pid int) bool { return pid > 0 && signal(pid, syscall.Signal(0)) == nil }

// Signal sends sig to process pid.
func Signal(pid int, sig syscall.Signal) error { return signal(pid, sig) }
