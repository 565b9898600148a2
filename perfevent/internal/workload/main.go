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
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	var (
		parked    int
		release   = make(chan struct{})
		parkWG    sync.WaitGroup
		churnStop chan struct{}
		churnWG   sync.WaitGroup
		churned   atomic.Int64
		sleepers  []*exec.Cmd
		spawner   = &ticking{}
		forker    = &ticking{}
		childCPU  atomic.Int64
	)
	say("ready %d", os.Getpid())
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		num := func(i int) int {
			if i >= len(f) {
				return 0
			}
			n, _ := strconv.Atoi(f[i])
			return n
		}
		switch f[0] {
		case "park":
			n := num(1)
			var started sync.WaitGroup
			started.Add(n)
			for range n {
				onNewThread(&parkWG, func() {
					started.Done()
					<-release
				})
			}
			started.Wait()
			parked += n
			say("parked %d", parked)
		case "unpark":
			close(release)
			parkWG.Wait()
			release = make(chan struct{})
			parked = 0
			say("unparked")
		case "work":
			threads, iters, pages := num(1), num(2), num(3)
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
				say("error %v", err)
				continue
			}
			waitExited(tids)
			say("done %s", joinInts(tids))
		case "churn":
			if f[1] == "on" && churnStop == nil {
				churnStop = make(chan struct{})
				stop := churnStop
				churnWG.Add(1)
				go func() {
					defer churnWG.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						var wg sync.WaitGroup
						onNewThread(&wg, func() {})
						wg.Wait()
						churned.Add(1)
					}
				}()
			} else if f[1] == "off" && churnStop != nil {
				close(churnStop)
				churnWG.Wait()
				churnStop = nil
			}
			say("churn %s %d", f[1], churned.Load())
		case "spawn":
			switch {
			case f[1] == "off":
				spawner.stop()
			case f[1] != "count":
				rate, iters := num(1), num(2)
				spawner.start(time.Second/time.Duration(max(rate, 1)), func() {
					var wg sync.WaitGroup
					onNewThread(&wg, func() { spin(iters) })
					go func() { wg.Wait(); spawner.done.Add(1) }()
				})
			}
			say("spawn %s %d", f[1], spawner.done.Load())
		case "fork":
			switch {
			case f[1] == "off":
				forker.stop()
			case f[1] != "count":
				forker.start(time.Duration(num(1))*time.Millisecond, func() {
					cmd := exec.Command("true")
					if err := cmd.Start(); err != nil {
						return
					}
					go func() {
						cmd.Wait()
						if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
							childCPU.Add(ru.Utime.Nano() + ru.Stime.Nano())
						}
						forker.done.Add(1)
					}()
				})
			}
			say("fork %s %d %d", f[1], forker.done.Load(), childCPU.Load())
		case "sleep":
			for range num(1) {
				cmd := exec.Command("sleep", "600")
				if err := cmd.Start(); err != nil {
					say("error %v", err)
					continue
				}
				sleepers = append(sleepers, cmd)
			}
			say("sleeping %d", len(sleepers))
		case "wake":
			for _, cmd := range sleepers {
				cmd.Process.Kill()
				cmd.Wait()
			}
			sleepers = nil
			say("woken")
		case "tids":
			ents, _ := os.ReadDir("/proc/self/task")
			var tids []int
			for _, e := range ents {
				if n, err := strconv.Atoi(e.Name()); err == nil {
					tids = append(tids, n)
				}
			}
			sort.Ints(tids)
			say("tids %s", joinInts(tids))
		case "quit":
			return
		default:
			say("error unknown command %q", f[0])
		}
	}
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
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil {
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
