//go:build linux

// Command workload is a process for perfevent's tests and benchmarks to count:
// it does a fixed amount of CPU and page-fault work on threads it creates for
// the purpose (which exit when done), keeps idle threads parked, and can churn
// short-lived threads, each on command, so that perfbench, perf stat and
// /proc observe the same work.
//
// It reads commands on stdin, one per line, and answers each on stdout:
//
//	park N              start N idle threads           -> "parked TOTAL"
//	unpark              let the parked threads exit    -> "unparked"
//	work T ITERS PAGES  on T new threads, each spins ITERS loop iterations
//	                    and faults in PAGES fresh pages, then exits
//	                                                   -> "done TID,TID,..."
//	churn on|off        keep creating threads that exit at once
//	                                                   -> "churn on|off N"
//	                    (N: threads churned so far)
//	spawn RATE ITERS    create RATE threads a second (until "spawn off"),
//	                    each spinning ITERS iterations, then exiting
//	                                                   -> "spawn on|off N"
//	                    (N: threads spawned and exited so far; "spawn
//	                    count" answers the same without changing anything)
//	fork MS             fork a child process every MS milliseconds (until
//	                    "fork off") that runs true(1); children are reaped
//	                    as they exit    -> "fork on|off N NS" (N: children
//	                    reaped so far, NS: their user+system CPU time in ns,
//	                    from wait4; "fork count" answers the same)
//	sleep N             start N child processes that sleep until "wake",
//	                    from the main thread           -> "sleeping N"
//	wake                end them                       -> "woken"
//	tids                list its threads               -> "tids TID,TID,..."
//	quit                exit                           -> (nothing)
//
// It prints "ready PID" when it starts. Commands run on the process's main
// thread (the thread-group leader), so what a command forks is forked from
// it.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// sink keeps the spin loop from being optimized away.
var sink atomic.Uint64

func spin(iters int) {
	x := uint64(88172645463325252)
	for range iters {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink.Add(x)
}

// touch faults in pages fresh anonymous pages, one minor fault each (huge
// pages are refused so a fault maps one page).
func touch(pages int) error {
	if pages <= 0 {
		return nil
	}
	ps := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, pages*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return err
	}
	_ = unix.Madvise(mem, unix.MADV_NOHUGEPAGE)
	for i := 0; i < pages; i++ {
		mem[i*ps] = 1
	}
	return unix.Munmap(mem)
}

// onNewThread runs f on an OS thread of its own that exits when f returns: a
// goroutine locked to its thread that returns without unlocking takes the
// thread with it.
func onNewThread(wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		f()
	}()
}

func main() {
	runtime.LockOSThread() // the command loop stays on the main thread
	w := &workload{out: bufio.NewWriter(os.Stdout), release: make(chan struct{}), spawner: &ticking{}, forker: &ticking{}}
	w.say("ready %d", os.Getpid())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		if !w.do(f) {
			return
		}
	}
}

// workload is the state the commands share: the threads and child
// processes it keeps.
type workload struct {
	out *bufio.Writer

	parked  int
	release chan struct{} // closed to let the parked threads exit
	parkWG  sync.WaitGroup

	churnStop chan struct{} // nil when not churning
	churnWG   sync.WaitGroup
	churned   atomic.Int64

	sleepers []*exec.Cmd
	spawner  *ticking
	forker   *ticking
	childCPU atomic.Int64 // user+system ns of the forked children reaped
}

// say answers a command.
func (w *workload) say(format string, args ...any) {
	fmt.Fprintf(w.out, format+"\n", args...)
	w.out.Flush()
}

// num is the ith field of a command as a number; 0 when missing or not one.
func num(f []string, i int) int {
	if i >= len(f) {
		return 0
	}
	n, _ := strconv.Atoi(f[i])
	return n
}

// do runs the command f; false means quit.
func (w *workload) do(f []string) bool {
	switch f[0] {
	case "park":
		w.park(num(f, 1))
	case "unpark":
		close(w.release)
		w.parkWG.Wait()
		w.release = make(chan struct{})
		w.parked = 0
		w.say("unparked")
	case "work":
		w.work(num(f, 1), num(f, 2), num(f, 3))
	case "churn":
		w.churn(f[1])
	case "spawn":
		w.spawn(f[1], num(f, 1), num(f, 2))
	case "fork":
		w.fork(f[1], num(f, 1))
	case "sleep":
		w.sleep(num(f, 1))
	case "wake":
		for _, cmd := range w.sleepers {
			cmd.Process.Kill()
			cmd.Wait()
		}
		w.sleepers = nil
		w.say("woken")
	case "tids":
		w.tids()
	case "quit":
		return false
	default:
		w.say("error unknown command %q", f[0])
	}
	return true
}

// park starts n idle threads.
func (w *workload) park(n int) {
	var started sync.WaitGroup
	started.Add(n)
	release := w.release
	for range n {
		onNewThread(&w.parkWG, func() {
			started.Done()
			<-release
		})
	}
	started.Wait()
	w.parked += n
	w.say("parked %d", w.parked)
}

// work spins iters iterations and faults in pages fresh pages on each of
// threads new threads, and waits for them to exit.
func (w *workload) work(threads, iters, pages int) {
	var wg sync.WaitGroup
	tids := make([]int, threads)
	var ferr atomic.Value
	for i := range threads {
		onNewThread(&wg, func() {
			tids[i] = unix.Gettid()
			spin(iters)
			if err := touch(pages); err != nil {
				ferr.Store(err)
			}
		})
	}
	wg.Wait()
	if err := ferr.Load(); err != nil {
		w.say("error %v", err)
		return
	}
	waitExited(tids)
	w.say("done %s", joinInts(tids))
}

// churn starts (on) or stops (off) creating threads that exit at once.
func (w *workload) churn(arg string) {
	if arg == "on" && w.churnStop == nil {
		w.churnStop = make(chan struct{})
		stop := w.churnStop
		w.churnWG.Add(1)
		go func() {
			defer w.churnWG.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var wg sync.WaitGroup
				onNewThread(&wg, func() {})
				wg.Wait()
				w.churned.Add(1)
			}
		}()
	} else if arg == "off" && w.churnStop != nil {
		close(w.churnStop)
		w.churnWG.Wait()
		w.churnStop = nil
	}
	w.say("churn %s %d", arg, w.churned.Load())
}

// spawn starts creating rate threads a second that spin iters iterations
// each, or stops (off), or counts (count).
func (w *workload) spawn(arg string, rate, iters int) {
	switch {
	case arg == "off":
		w.spawner.stop()
	case arg != "count":
		w.spawner.start(time.Second/time.Duration(max(rate, 1)), func() {
			var wg sync.WaitGroup
			onNewThread(&wg, func() { spin(iters) })
			go func() { wg.Wait(); w.spawner.done.Add(1) }()
		})
	}
	w.say("spawn %s %d", arg, w.spawner.done.Load())
}

// fork starts forking a child that runs true(1) every ms milliseconds, or
// stops (off), or counts (count).
func (w *workload) fork(arg string, ms int) {
	switch {
	case arg == "off":
		w.forker.stop()
	case arg != "count":
		w.forker.start(time.Duration(ms)*time.Millisecond, func() {
			cmd := exec.Command("true")
			if err := cmd.Start(); err != nil {
				return
			}
			go func() {
				cmd.Wait()
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					w.childCPU.Add(ru.Utime.Nano() + ru.Stime.Nano())
				}
				w.forker.done.Add(1)
			}()
		})
	}
	w.say("fork %s %d %d", arg, w.forker.done.Load(), w.childCPU.Load())
}

// sleep starts n child processes that sleep until wake.
func (w *workload) sleep(n int) {
	for range n {
		cmd := exec.Command("sleep", "600")
		if err := cmd.Start(); err != nil {
			w.say("error %v", err)
			continue
		}
		w.sleepers = append(w.sleepers, cmd)
	}
	w.say("sleeping %d", len(w.sleepers))
}

// tids lists the process's threads.
func (w *workload) tids() {
	tids, _ := procfs.New("").Self().Tasks()
	w.say("tids %s", joinInts(tids))
}

// ticking runs a function at a steady rate on a goroutine of its own
// until stopped, catching up when it falls behind; done counts what the
// function started and saw end.
type ticking struct {
	quit chan struct{}
	wg   sync.WaitGroup
	done atomic.Int64
}

func (k *ticking) start(every time.Duration, f func()) {
	k.stop()
	k.quit = make(chan struct{})
	quit := k.quit
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		next := time.Now()
		for {
			next = next.Add(every)
			if d := time.Until(next); d > 0 {
				select {
				case <-quit:
					return
				case <-time.After(d):
				}
			}
			select {
			case <-quit:
				return
			default:
			}
			f()
		}
	}()
}

func (k *ticking) stop() {
	if k.quit != nil {
		close(k.quit)
		k.wg.Wait()
		k.quit = nil
	}
}

// waitExited waits (up to a second) until the threads tids ran on have
// exited, so their exits fall inside the window that asked for the work. The
// main thread never exits: the runtime parks it instead.
func waitExited(tids []int) {
	for range 1000 {
		alive := false
		for _, tid := range tids {
			if tid == os.Getpid() {
				continue
			}
			if _, err := procfs.New("").Self().Task(tid).Stat(); err == nil {
				alive = true
				break
			}
		}
		if !alive {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
