package measure

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/host/osstat"
	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/record"
)

// TestIsBusy: the decision at its edges, on hosts of 2 and 64 CPUs.
func TestIsBusy(t *testing.T) {
	for _, c := range []struct {
		other, seconds, cpus float64
		busy                 bool
	}{
		{0, 1, 2, false},
		{0.1, 1, 2, false},  // 0.1 CPU is 5% of 2: at both bounds, not over
		{0.101, 1, 2, true}, // just over both
		{1, 1, 2, true},     // one busy loop
		{0.2, 2, 2, false},  // 0.1 CPU averaged over 2 s
		{0.21, 2, 2, true},  // 0.105 CPU
		{0.15, 1, 1, true},  // over 0.1 CPU and 5% of 1 CPU
		{0.09, 1, 1, false}, // 9% of 1 CPU but under 0.1 CPU
		{3.2, 1, 64, false}, // 5% of 64 CPUs exactly
		{3.3, 1, 64, true},  // over 5% of 64
		{0.5, 1, 64, false}, // over 0.1 CPU, under 5% of 64
		{1, 0, 2, false},    // no window
		{1, 1, 0, false},    // no host capacity read
	} {
		if got := isBusy(c.other, c.seconds, c.cpus); got != c.busy {
			t.Errorf("isBusy(%g CPU-s over %g s on %g CPUs) = %v, want %v", c.other, c.seconds, c.cpus, got, c.busy)
		}
	}
}

// TestInterference: the host's busy time minus the server, perfbench and
// its descendants (the client), the others ranked, a reused pid counted
// from its own start, and the result never below 0.
func TestInterference(t *testing.T) {
	const server, self, client, grand, hog, reused, quiet = 10, 20, 21, 22, 30, 40, 50
	at := time.Unix(1000, 0)
	a := &busyEdge{at: at, host: osstat.HostCPU{User: 1000, System: 500, Idle: 5000, Steal: 7}, procs: map[int]procTimes{
		server: {comm: "mariadbd", ppid: 1, ticks: 100},
		self:   {comm: "perfbench", ppid: 1, ticks: 50},
		client: {comm: "sysbench", ppid: self, ticks: 10},
		hog:    {comm: "hog", ppid: 1, ticks: 300},
		reused: {comm: "old", ppid: 1, start: 5, ticks: 999},
		quiet:  {comm: "sleep", ppid: 1, ticks: 3},
	}}
	// 2 s at 100 ticks/s on 2 CPUs: 400 ticks in all.
	b := &busyEdge{at: at.Add(2 * time.Second), host: osstat.HostCPU{User: 1250, System: 550, Idle: 5095, Steal: 12}, procs: map[int]procTimes{
		server: {comm: "mariadbd", ppid: 1, ticks: 140},   // 40
		self:   {comm: "perfbench", ppid: 1, ticks: 55},   // 5
		client: {comm: "sysbench", ppid: self, ticks: 40}, // 30
		grand:  {comm: "sh", ppid: client, ticks: 5},      // 5, started inside
		hog:    {comm: "hog", ppid: 1, ticks: 480},        // 180
		reused: {comm: "new", ppid: 1, start: 9, ticks: 20},
		quiet:  {comm: "sleep", ppid: 1, ticks: 3},
	}}
	in := interference(a, b, server, self, 0, 100)
	// Host busy 300 ticks; own 40+5+30+5 = 80; other 220 = 2.2 CPU-s.
	want := record.Interference{OtherSeconds: 2.2, Seconds: 2, HostCPUs: 2, StealSeconds: 0.05, ClientKnown: true,
		Top: []record.OtherProcess{{Pid: hog, Comm: "hog", Seconds: 1.8}, {Pid: reused, Comm: "new", Seconds: 0.2}}}
	in.OtherSeconds = math.Round(in.OtherSeconds*1e9) / 1e9 // float sums
	if fmt.Sprint(in) != fmt.Sprint(want) {
		t.Errorf("interference\n got %+v\nwant %+v", in, want)
	}
	if !isBusy(in.OtherSeconds, in.Seconds, in.HostCPUs) {
		t.Errorf("1.1 CPU of others is not busy")
	}
	w := busyWarning(in)
	for _, s := range []string{"1.10 CPU", "55% of the host's 2 CPUs", "hog (pid 30) 0.90 CPU", "new (pid 40) 0.10 CPU"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning lacks %q: %s", s, w)
		}
	}
	if strings.Contains(w, "not started by perfbench") {
		t.Errorf("the client was known: %s", w)
	}

	// Without perfbench's children the client is unknown (its CPU,
	// here sysbench's, counts as other); the own processes' CPU above
	// the host's clamps at 0.
	a.procs[client] = procTimes{comm: "sysbench", ppid: 1, ticks: 10}
	b.procs[client] = procTimes{comm: "sysbench", ppid: 1, ticks: 40}
	delete(b.procs, grand)
	in = interference(a, b, server, self, 0, 100)
	if in.ClientKnown || math.Abs(in.OtherSeconds-2.55) > 1e-9 || in.Top[1].Comm != "sysbench" {
		t.Errorf("client unknown: %+v", in)
	}
	if w := busyWarning(in); !strings.Contains(w, "not started by perfbench") {
		t.Errorf("client unknown, not said: %s", w)
	}
	// A quiet window under load: the server, perfbench and the client
	// used all the host's busy time (40 + 5 + 30 + 5 = 80 ticks), the
	// others none: not busy, nobody named.
	quietB := &busyEdge{at: b.at, host: osstat.HostCPU{User: 1070, System: 510, Idle: 5320, Steal: 7}, procs: map[int]procTimes{
		server: b.procs[server], self: b.procs[self], client: {comm: "sysbench", ppid: self, ticks: 40},
		grand: {comm: "sh", ppid: client, ticks: 5}, hog: a.procs[hog], quiet: a.procs[quiet],
	}}
	a.procs[client] = procTimes{comm: "sysbench", ppid: self, ticks: 10}
	if in := interference(a, quietB, server, self, 0, 100); in.OtherSeconds > 1e-9 || len(in.Top) != 0 || busyWarning(in) != "" {
		t.Errorf("a quiet window under load: %+v, warning %q", in, busyWarning(in))
	}
	b.procs[server] = procTimes{comm: "mariadbd", ppid: 1, ticks: 100000}
	if in = interference(a, b, server, self, 0, 100); in.OtherSeconds != 0 || busyWarning(in) != "" {
		t.Errorf("own CPU over the host's: %+v", in)
	}
}

// TestInterferenceForkingServer: a server's child processes are its own
// CPU, not other processes': those alive at an edge by their ticks, those
// reaped inside the window by its cutime+cstime, less what they ran before
// it. A server whose children took 0.9 CPU over 2 s beside a hog of 0.05
// CPU is not busy, and its children are not named.
func TestInterferenceForkingServer(t *testing.T) {
	const server, self, kid, reaped, grand, hog = 10, 20, 60, 61, 62, 30
	at := time.Unix(1000, 0)
	a := &busyEdge{at: at, host: osstat.HostCPU{User: 1000, System: 500, Idle: 5000}, procs: map[int]procTimes{
		server: {comm: "leader", ppid: 1, ticks: 100},
		self:   {comm: "perfbench", ppid: 1, ticks: 50},
		kid:    {comm: "leader", ppid: server, ticks: 5},
		reaped: {comm: "leader", ppid: server, ticks: 4}, // reaped inside the window
		hog:    {comm: "hog", ppid: 1, ticks: 300},
	}}
	// 2 s at 100 ticks/s on 2 CPUs: 400 ticks. Busy: server 40, perfbench
	// 5, kid 20, grand (started inside) 10, hog 10, and the children
	// reaped inside the window 150 (the reaped child's 16 in the window
	// and 134 of children that came and went): 235.
	b := &busyEdge{at: at.Add(2 * time.Second), host: osstat.HostCPU{User: 1190, System: 545, Idle: 5165}, procs: map[int]procTimes{
		server: {comm: "leader", ppid: 1, ticks: 140},
		self:   {comm: "perfbench", ppid: 1, ticks: 55},
		kid:    {comm: "leader", ppid: server, ticks: 25},
		grand:  {comm: "leader", ppid: kid, ticks: 10},
		hog:    {comm: "hog", ppid: 1, ticks: 310},
	}}
	// The server's cutime+cstime grew by the reaped children's whole CPU:
	// 4 before the window, 150 in it.
	in := interference(a, b, server, self, 154, 100)
	if math.Abs(in.OtherSeconds-0.1) > 1e-9 || busyWarning(in) != "" {
		t.Errorf("other %.3f CPU-s, want 0.1 (the hog's); warning %q", in.OtherSeconds, busyWarning(in))
	}
	if len(in.Top) != 1 || in.Top[0].Pid != hog {
		t.Errorf("others named: %+v, want the hog alone", in.Top)
	}
}

// startHog starts a shell busy loop that is no child of the test (its
// parent exits), so that it counts as another process, and returns its
// pid; it is killed at the end of the test. It runs at nice -15 (the tests
// run as root), so that it takes most of a CPU and is among the window's
// top processes even when other tests keep both CPUs busy (at nice 0 it
// got 0.3 CPU beside three other loops, and three others were named).
func startHog(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("sh", "-c", `nice -n -15 sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & echo $!`).Output()
	if err != nil {
		t.Fatalf("start the busy loop: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("busy loop pid %q: %v", out, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// spinning waits until process pid runs the shell busy loop: it is sh
// (past the exec of nice, for the hog) and has used CPU.
func spinning(t *testing.T, pid int) {
	t.Helper()
	var st procfs.Stat
	var err error
	if !testenv.Await(10*time.Second, func() bool {
		st, err = procfs.New("").Proc(pid).Stat()
		return err == nil && st.Comm == "sh" && st.UTime+st.STime > 0
	}) {
		t.Fatalf("the busy loop (pid %d) did not run within 10 s: %+v %v", pid, st, err)
	}
}

// TestMeasureBusyWindow: two 1 s windows of a sleeping process. In the
// first a busy loop the test started runs (perfbench's child: the load
// client), in the second one that is no child of the test (another
// process). The second is flagged busy and names its loop with the CPU it
// used, which the test reads itself around the window (no more than that,
// and at least half of it at its rate over the window, give or take 2
// clock ticks a read); the first never names its loop, whose CPU is the
// client's.
// Whatever else the machine runs, that holds; with nothing else running
// the first window is not flagged at all, and when it is, it names none of
// the test's processes (others' short-lived processes, exited by the
// window's end, are in its CPU but not named).
func TestMeasureBusyWindow(t *testing.T) {
	needLinux(t)
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	list, sys := events(t, "task-clock")
	s, err := Start(context.Background(), Config{Pid: sleeper.Process.Pid, Events: list, System: sys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	window := func() *record.Record {
		r, err := s.Measure(context.Background(), WindowSpec{Duration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if r.Interference == nil {
			t.Fatalf("no interference measured: %v", r.WarningTexts())
		}
		return r
	}
	named := func(r *record.Record, pid int) bool {
		return slices.ContainsFunc(r.Interference.Top, func(p record.OtherProcess) bool { return p.Pid == pid }) ||
			strings.Contains(fmt.Sprint(r.WarningTexts()), fmt.Sprintf("(pid %d)", pid))
	}
	busyCode := func(w record.Warning) bool { return w.Code == record.WarnBusy }

	client := exec.Command("sh", "-c", "while :; do :; done")
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	spinning(t, client.Process.Pid)
	quiet := window()
	client.Process.Kill()
	client.Wait()
	hog := startHog(t)
	ticks := float64(procfs.ClockTicks())
	hogCPU := func() float64 {
		st, err := procfs.New("").Proc(hog).Stat()
		if err != nil {
			t.Fatal(err)
		}
		return float64(st.UTime+st.STime) / ticks
	}
	spinning(t, hog)
	h0, t0 := hogCPU(), time.Now()
	busy := window()
	h1, t1 := hogCPU(), time.Now()
	syscall.Kill(hog, syscall.SIGKILL)

	i := slices.IndexFunc(busy.Warnings, busyCode)
	if i < 0 {
		t.Fatalf("the busy loop's window is not flagged: %+v", busy.Interference)
	}
	j := slices.IndexFunc(busy.Interference.Top, func(p record.OtherProcess) bool { return p.Pid == hog })
	if j < 0 || !named(busy, hog) {
		t.Fatalf("the busy loop (pid %d) is not named: %s %+v", hog, busy.Warnings[i].Text, busy.Interference.Top)
	}
	// The loop's CPU in the window is at most what the test read around
	// it, and at least half of what it used at its rate over the test's
	// span (each edge reads every process's stat over tens of ms on a
	// busy host, which moves the loop's read by as much: 0.98 CPU-s in a
	// 1.063 s window against 1.08 in a span 0.055 s longer); the
	// host-wide amount holds it.
	in := busy.Interference
	got, span, secs := in.Top[j].Seconds, h1-h0, t1.Sub(t0).Seconds()
	t.Logf("the busy loop used %.3f CPU-s in the window of %.3f s, %.3f over the test's span of %.3f s", got, in.Seconds, span, secs)
	if got > span+4/ticks || got < span*in.Seconds/secs/2-4/ticks || in.OtherSeconds < got-0.05 {
		t.Errorf("the busy loop used %.3f CPU-s in the window of %.3f s, %.3f in the test's span of %.3f s; other processes "+
			"%.3f CPU-s in all", got, in.Seconds, span, secs, in.OtherSeconds)
	}
	if !quiet.Interference.ClientKnown || named(quiet, client.Process.Pid) || named(quiet, sleeper.Process.Pid) || named(quiet, os.Getpid()) {
		t.Errorf("the first window counts the test's own processes as others: %+v %v", quiet.Interference, quiet.WarningTexts())
	}
	if k := slices.IndexFunc(quiet.Warnings, busyCode); k >= 0 {
		// Flagged only for work the test did not start (the checks
		// above hold that it names none of the test's processes).
		t.Logf("the first window was busy with other work: %s", quiet.Warnings[k].Text)
	}
	t.Logf("other CPU: first window %.2f CPU, second %.2f CPU: %s",
		quiet.Interference.OtherSeconds/quiet.Interference.Seconds, in.OtherSeconds/in.Seconds, busy.Warnings[i].Text)
}

// BenchmarkReadBusyEdge reads one window edge with 200 more processes than
// the machine runs (sleeping children).
func BenchmarkReadBusyEdge(b *testing.B) {
	for range 200 {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { c.Process.Kill(); c.Wait() }()
	}
	n := 0
	for b.Loop() {
		e, err := readBusyEdge("/")
		if err != nil {
			b.Fatal(err)
		}
		n = len(e.procs)
	}
	b.ReportMetric(float64(n), "procs")
}
