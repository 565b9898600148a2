package hostinfo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoProcess and ErrExited are what Alive finds of a pid that cannot be
// counted: no such process, or a process that has exited (a zombie, or
// dead) and has no threads left.
var (
	errNoProcess = errors.New("no such process")
	ErrExited    = errors.New("the process has exited")
)

// Alive checks that pid is a running process under root (/proc/PID/stat).
// The error says which pid, and for a zombie which parent has not reaped
// it: a zombie keeps its pid and /proc entry but runs nothing, so counters
// open on it count nothing.
func Alive(root string, pid int) error {
	b, err := os.ReadFile(filepath.Join(root, "proc", strconv.Itoa(pid), "stat"))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pid %d: %w", pid, errNoProcess)
	}
	if err != nil {
		return fmt.Errorf("read the state of pid %d: %w", pid, err)
	}
	// "PID (comm) S PPID ...": the comm may hold spaces and parentheses.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return fmt.Errorf("read the state of pid %d: /proc/%d/stat has no (comm)", pid, pid)
	}
	comm := string(b[open+1 : end])
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 2 {
		return fmt.Errorf("read the state of pid %d: /proc/%d/stat is cut short", pid, pid)
	}
	switch f[0] {
	case "Z":
		return fmt.Errorf("pid %d (%s) is a zombie: it has exited and its parent, pid %s, has not reaped it: %w", pid, comm, f[1], ErrExited)
	case "X", "x":
		return fmt.Errorf("pid %d (%s) is dead: %w", pid, comm, ErrExited)
	}
	return nil
}
