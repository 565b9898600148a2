//go:build unix

package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Guard runs argv on a host as the remote side of Conn.Run with a guard:
// the command's output is passed on, and the command is stopped (SIGTERM
// to its process group, then SIGKILL to every process left in the
// guard's session after grace) when ctx ends, when beats (the controller's
// heartbeats on ssh's standard input) ends, or when timeout passes without
// a heartbeat; in that last case the link is taken for lost and the
// host's sshd process of the connection is ended too. Whatever is left in
// the session when the command exits is killed. It returns the command's
// exit status, and an error when it stopped the command.
func Guard(ctx context.Context, argv []string, beats io.Reader, stdout, stderr io.Writer, timeout, grace time.Duration) (int, error) {
	if len(argv) == 0 {
		return 1, errors.New("guard: no command")
	}
	// Writes to a closed link return an error instead of ending the guard.
	signal.Ignore(syscall.SIGPIPE)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = keepWriting{stdout}, keepWriting{stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("guard: start %s: %w", argv[0], err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	hb := readHeartbeats(beats, true)
	defer hb.close()
	stopped := make(chan struct{})
	var why error
	go func() {
		defer close(stopped)
		ended, err := hb.wait(timeout, ctx.Done(), exited)
		switch {
		case err != nil:
			why = fmt.Errorf("%w for %s: the link dropped", err, timeout)
			endSSHSession()
		case ended:
			why = errors.New("the controller closed the connection")
		default:
			select {
			case <-exited:
				return // the command exited by itself
			default:
				why = ctx.Err()
			}
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(grace):
		}
	}()
	<-stopped
	killSession(cmd.Process.Pid)
	<-exited
	code := cmd.ProcessState.ExitCode()
	if why != nil {
		return code, fmt.Errorf("guard: %s stopped: %w", argv[0], why)
	}
	return code, nil
}

// keepWriting passes writes on and drops what cannot be written (a closed
// link), so that the command is not stopped by it.
type keepWriting struct{ w io.Writer }

func (k keepWriting) Write(p []byte) (int, error) {
	k.w.Write(p)
	return len(p), nil
}

// killSession kills every process of the caller's session but the caller
// (a guard is its session's leader), and waits a while for them to go; a
// caller that leads no session kills the command's process group alone.
// pid, the command's, is reaped by its Wait.
func killSession(pid int) {
	self := os.Getpid()
	st, ok := procStat(self)
	if !ok || st.session != self {
		// Not a session's leader (not started by Conn.Run): its
		// session is not the command's alone; the group is.
		syscall.Kill(-pid, syscall.SIGKILL)
		return
	}
	sid := st.session
	for i := 0; i < 50; i++ {
		left := sessionMembers(sid, self)
		if len(left) == 0 {
			return
		}
		for _, p := range left {
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sessionMembers lists the live processes of session sid but skip.
func sessionMembers(sid, skip int) []int {
	pids, err := procfs.New("").PIDs()
	if err != nil {
		return nil
	}
	var out []int
	for _, pid := range pids {
		if pid == skip {
			continue
		}
		st, ok := procStat(pid)
		if !ok || st.state == "Z" || st.session != sid {
			continue
		}
		out = append(out, pid)
	}
	return out
}

type procStatus struct {
	comm    string
	state   string
	ppid    int
	session int
}

// procStat reads the fields of /proc/PID/stat a guard needs.
func procStat(pid int) (procStatus, bool) {
	st, err := procfs.New("").Proc(pid).Stat()
	if err != nil {
		return procStatus{}, false
	}
	return procStatus{comm: st.Comm, state: string(st.State), ppid: st.PPID, session: st.Session}, true
}

// endSSHSession ends the host's sshd process of the caller's connection:
// its nearest sshd ancestor (sshd's per-connection session process),
// which would otherwise wait for the lost link for hours. Only a session's
// leader does (a remote command is one: see startScript and Pull); a
// process started otherwise ends no sshd.
func endSSHSession() {
	if st, ok := procStat(os.Getpid()); !ok || st.session != os.Getpid() {
		return
	}
	for p, n := os.Getppid(), 0; p > 1 && n < 16; n++ {
		st, ok := procStat(p)
		if !ok {
			return
		}
		if strings.HasPrefix(st.comm, "sshd") {
			syscall.Kill(p, syscall.SIGTERM)
			return
		}
		p = st.ppid
	}
}

// Clean stops what earlier campaigns left running on this host (see
// guard.go): perfbench processes of the work folder dir's binary whose
// controller is gone. It writes a line per process it stopped to w.
func Clean(dir string, w io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	bin := filepath.Join(abs, "bin", "perfbench")
	pids, err := procfs.New("").PIDs()
	if err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	self := os.Getpid()
	for _, pid := range pids {
		if pid == self {
			continue
		}
		if what := leftBehind(pid, bin, abs); what != "" {
			stopLeftover(pid)
			fmt.Fprintf(w, "stopped pid %d (%s), left running by an earlier campaign whose link dropped\n", pid, what)
		}
	}
	return nil
}

// leftBehind returns the command line of pid when it is a perfbench of bin
// that an earlier campaign left, else "".
func leftBehind(pid int, bin, dir string) string {
	proc := procfs.New("").Proc(pid)
	exe, _, err := proc.Exe()
	if err != nil || exe != bin {
		return ""
	}
	b, err := proc.ReadFile("cmdline")
	if err != nil {
		return ""
	}
	args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	line := "perfbench " + strings.Join(args[1:], " ")
	st, ok := procStat(pid)
	if !ok || len(args) < 3 {
		return ""
	}
	switch {
	case args[1] == "hosts" && (args[2] == "guard" || args[2] == "watch"):
		fi, err := os.Stat(filepath.Join(dir, liveDir, strconv.Itoa(pid)))
		if err == nil && time.Since(fi.ModTime()) < 2*heartbeatTimeout {
			return "" // its controller is there
		}
		if err != nil && args[2] == "guard" && time.Since(procStart(pid)) < 2*heartbeatTimeout {
			return "" // just started
		}
		if err != nil && args[2] == "watch" && slicesContains(args, "--heartbeat") && time.Since(procStart(pid)) < 2*heartbeatTimeout {
			return ""
		}
		return line
	case args[1] == "run" && st.session == pid && strings.HasPrefix(args[2], "runs/") && slicesContains(args, "--out"):
		// A campaign's run that no guard started: perfbench before
		// heartbeats, which left it when the link dropped.
		return line
	}
	return ""
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// procStart is when pid started (the zero time when unknown).
func procStart(pid int) time.Time {
	fi, err := os.Stat(procfs.New("").Proc(pid).Path())
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// stopLeftover stops a process left behind, with its sshd process and, if
// it leads a session, the session: SIGTERM, then SIGKILL after 10 s.
func stopLeftover(pid int) {
	st, ok := procStat(pid)
	if !ok {
		return
	}
	// Its sshd session process: the nearest sshd ancestor.
	for p, n := st.ppid, 0; p > 1 && n < 16; n++ {
		a, ok := procStat(p)
		if !ok {
			break
		}
		if strings.HasPrefix(a.comm, "sshd") {
			syscall.Kill(p, syscall.SIGTERM)
			break
		}
		p = a.ppid
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 100; i++ {
		if s, ok := procStat(pid); !ok || s.state == "Z" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	members := []int{pid}
	if st.session == pid {
		members = sessionMembers(pid, os.Getpid())
	}
	for _, m := range members {
		syscall.Kill(m, syscall.SIGKILL)
	}
}
