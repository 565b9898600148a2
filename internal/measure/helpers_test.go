package measure

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// spinHelper spins for args[0] milliseconds, then exits.
func spinHelper(args []string) int {
	ms, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "spin: want milliseconds:", err)
		return 2
	}
	fmt.Println("ready")
	if len(args) > 1 && args[1] == "go" {
		// Count from a line on stdin (sent once the test has
		// attached), not from the start: an attach slowed by a busy
		// machine must not outlast the process.
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	x := uint64(1)
	for t0 := time.Now(); time.Since(t0) < time.Duration(ms)*time.Millisecond; {
		for range 10000 {
			x ^= x << 13
			x ^= x >> 7
		}
	}
	return int(x & 0)
}

// childLoop is the work of each child forkerHelper starts: about 20 ms of
// CPU of a shell.
const childLoop = "i=0; while [ $i -lt 10000 ]; do i=$((i+1)); done"

// forkerHelper ignores SIGCHLD, so that the kernel reaps its children, says
// "ready" and waits for a line on stdin; then it starts `sleep args[0]`
// (unless args[0] is "0"), says "forking PID" (the sleep's pid, 0 without
// one), and starts a child running childLoop every args[1] milliseconds
// until it is killed.
func forkerHelper(args []string) int {
	signal.Ignore(syscall.SIGCHLD)
	every, err := strconv.Atoi(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "forker: want milliseconds:", err)
		return 2
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	sleeper := 0
	if args[0] != "0" {
		cmd := exec.Command("sleep", args[0])
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "forker:", err)
			return 1
		}
		sleeper = cmd.Process.Pid
	}
	fmt.Println("forking", sleeper)
	for {
		if err := exec.Command("sh", "-c", childLoop).Start(); err != nil {
			fmt.Fprintln(os.Stderr, "forker:", err)
			return 1
		}
		time.Sleep(time.Duration(every) * time.Millisecond) // the workload's rate of forks
	}
}
