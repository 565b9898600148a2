package runner

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/internal/profile/pprofout"
	"github.com/perfbench/perfbench/internal/profile/profdiff"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/record"
)

// These tests start real MariaDB servers and run real sysbench. They skip
// when either is missing, naming the packages to install (see package
// testenv: where integration tests are required, as in CI, they fail).

func needTools(t *testing.T) {
	t.Helper()
	testenv.SkipIfShort(t, "starts servers and runs sysbench")
	testdb.NeedServer(t)
	testdb.NeedSysbench(t)
}

// syncBuffer is a progress writer the test reads while the run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testOptions(out string, progress *syncBuffer) Options {
	return Options{Out: out, Progress: progress, Command: []string{"perfbench", "run", "plan.toml"}, Perfbench: "test"}
}

func withResume(o Options) Options {
	o.Resume = true
	return o
}

func withMeter(o Options, m meter) Options {
	o.meter = m
	return o
}

// records reads the Records of an output folder by measurement ID.
func records(t *testing.T, out string) map[string]*record.Record {
	t.Helper()
	loaded, problems, err := record.Load([]string{filepath.Join(out, "records")}, false)
	if err != nil || len(problems) > 0 {
		t.Fatalf("read records: %v %v", err, problems)
	}
	m := map[string]*record.Record{}
	for _, l := range loaded {
		id := plan.RecordID(l.Record)
		if m[id] != nil {
			t.Errorf("two Records of %s", id)
		}
		m[id] = l.Record
	}
	return m
}

// noServerLeft fails the test when a server of the given pids still runs.
func noServerLeft(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
			if err == nil && (strings.HasPrefix(string(b), "mariadbd") || strings.HasPrefix(string(b), "mysqld")) {
				t.Errorf("server pid %d still runs after the run", pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// whenWindowOpen calls f with the server's pid once the window of a
// measurement has been open for in: its sysbench log says the threads
// started, then the window's opening read the server's status (the roles'
// read and the opening edge's: testdb.WaitOthersRead), then in passed. The
// watch ends with the test.
func whenWindowOpen(t *testing.T, out, version, step string, in time.Duration, f func(pid int)) {
	rec := record.Record{Version: version, Step: step, Threads: 1, Repeat: 1}
	logPath := filepath.Join(out, "logs", strings.TrimSuffix(record.FileName(&rec), ".json")+".sysbench.txt")
	pidFile := filepath.Join(out, "servers", version, "mysqld.pid")
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		<-done
	})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if b, err := os.ReadFile(logPath); err == nil && strings.Contains(string(b), "Threads started!") {
				if err := testdb.WaitOthersRead(filepath.Join(out, "servers", version, "mysqld.sock"), 2, stop); err != nil {
					t.Errorf("the window of %s %s did not open: %v", version, step, err)
					return
				}
				time.Sleep(in) // into the window, a pause the test makes
				b, err := os.ReadFile(pidFile)
				if err != nil {
					t.Errorf("read %s: %v", pidFile, err)
					return
				}
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				f(pid)
				return
			}
		}
	}()
}

// checkMeasured checks what every ok step Record must have.
func checkMeasured(t *testing.T, id string, r *record.Record) {
	t.Helper()
	if cpuGapPartial(r) {
		t.Logf("%s: partial for its CPU check, as it should be: %s", id, r.Error)
	} else if r.Outcome != record.OutcomeOK {
		t.Errorf("%s: outcome %s (%s), want ok", id, r.Outcome, r.Error)
		return
	}
	if r.Kind != record.KindStep || r.Host == "" || r.Provenance.PlanSHA256 == "" || len(r.Provenance.Command) == 0 {
		t.Errorf("%s: kind %q host %q plan sha %q command %q", id, r.Kind, r.Host, r.Provenance.PlanSHA256, r.Provenance.Command)
	}
	measured := 0
	for _, c := range r.Counters {
		if c.Measured() && c.Value > 0 {
			measured++
		}
	}
	if measured == 0 {
		t.Errorf("%s: no counter has a value: %+v", id, r.Counters)
	}
	if r.Ops.Source != "Questions" || r.Ops.Count <= 0 {
		t.Errorf("%s: ops %+v", id, r.Ops)
	}
	if r.OS == nil || r.OS.UserSeconds+r.OS.SystemSeconds <= 0 || r.OS.VoluntaryCS+r.OS.InvoluntaryCS <= 0 {
		t.Errorf("%s: OS metrics %+v", id, r.OS)
	}
	// CPU per op is the kernel's: from the cgroup in cgroup mode.
	if k := r.KernelCPU; k == nil || k.Seconds <= 0 || k.Low > k.Seconds || k.Seconds > k.High ||
		(r.Window.Counting == record.CountingCgroup) != (k.Source == record.KernelCPUCgroup) {
		t.Errorf("%s: kernel CPU time %+v of a window counted per %s", id, k, r.Window.Counting)
	}
	if len(r.Series) < 2 {
		t.Errorf("%s: %d series points", id, len(r.Series))
	} else {
		sum := 0.0
		for _, p := range r.Series {
			sum += p.Seconds
		}
		// The 1-second points tile the window.
		if math.Abs(sum-r.Window.Seconds) > 0.02*r.Window.Seconds {
			t.Errorf("%s: series covers %.3f s of a %.3f s window", id, sum, r.Window.Seconds)
		}
	}
	if r.Client == nil || r.Client.Tool != "sysbench" || r.Client.Queries <= 0 || len(r.Client.Intervals) == 0 || r.Client.Started.IsZero() {
		t.Errorf("%s: client %+v", id, r.Client)
	}
	checkPlacement(t, id, r)
	// The window ends before the load does: sysbench ran warm-up +
	// window + tail.
	if r.Client != nil && r.Client.Seconds > 0 && r.Client.Seconds < r.Window.Warmup+r.Window.Seconds {
		t.Errorf("%s: sysbench ran %.2f s, less than the warm-up and window (%.2f s)", id, r.Client.Seconds, r.Window.Warmup+r.Window.Seconds)
	}
}

func serverPids(recs map[string]*record.Record) []int {
	var pids []int
	for _, r := range recs {
		if r.Server != nil {
			pids = append(pids, r.Server.Pid)
		}
	}
	return pids
}

// TestSmokePlan runs examples/plans/smoke.toml, then again with --resume.
// runOK runs plan p into a new output folder and fails the test unless the
// run succeeded; it returns the folder, what the run said, its summary and
// its Records.
// cpuGapPartial: r is partial only because its task-clock came out
// further from the CPU time the kernel charged to what was counted, over
// the window, than the kernel's charging from wake-ups explains (more than
// 100 µs a context switch: measure's checkCPU): its counters missed CPU.
// The Record says so, which is what it must do on a host where that
// happens, and what the tests that use checkMeasured check is elsewhere.
func cpuGapPartial(r *record.Record) bool {
	return r.Outcome == record.OutcomePartial && strings.HasPrefix(r.Error, "task-clock ") &&
		strings.Contains(r.Error, "CPU time over the window") && strings.Contains(r.Error, "µs a switch is beyond")
}

// lateWindow: r failed only because its load ended before its window
// closed, the window having opened or run late on a busy host (the tail
// the load runs past the window was not enough); the Record says so.
func lateWindow(r *record.Record) bool {
	return r != nil && r.Outcome == record.OutcomeFailed && strings.HasPrefix(r.Error, "sysbench ended with exit status 0 before the window closed")
}

// cpuGapPartials counts the Records of recs that cpuGapPartial accepts.
func cpuGapPartials(recs map[string]*record.Record) int {
	n := 0
	for _, r := range recs {
		if cpuGapPartial(r) {
			n++
		}
	}
	return n
}

func runOK(t *testing.T, p *plan.Plan) (string, string, *Summary, map[string]*record.Record) {
	t.Helper()
	out := t.TempDir()
	var progress syncBuffer
	sum, err := Run(context.Background(), p, testOptions(out, &progress))
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out, progress.String(), sum, records(t, out)
}

func TestSmokePlan(t *testing.T) {
	needTools(t)
	t.Setenv("PERFBENCH_SECOND_BASEDIR", "")
	p, err := plan.Load("../../../examples/plans/smoke.toml")
	if err != nil {
		t.Fatal(err)
	}
	out, said, sum, recs := runOK(t, p)
	// One Record per (version, step).
	for _, v := range []string{"default", "pfs"} {
		for _, st := range []string{"point-query_range=100", "update-index_range=100", "read-only_range=100"} {
			id := v + "/" + st + "/t1/r1" // the measurement ID: version/step/threads/repeat
			r := recs[id]
			if r == nil {
				t.Errorf("no Record of %s", id)
				continue
			}
			checkMeasured(t, id, r)
			// A sandbox perfbench starts runs in a cgroup of its
			// own and is counted in cgroup mode; the split by
			// role comes from per-thread counters beside it.
			conn := slices.ContainsFunc(r.Roles, func(role record.Role) bool { return role.Name == mysqld.RoleConnection })
			if r.Window.Counting != record.CountingCgroup || !conn {
				t.Errorf("%s: counting %q, roles %+v; want cgroup, with a connection role", id, r.Window.Counting, r.Roles)
			}
		}
	}
	if len(recs) != 6 || sum.OK != 6 || sum.Ran != 6 {
		t.Errorf("%d Records, summary %+v; want 6 ok", len(recs), sum)
	}
	// The read step after the write step got the post-write flush.
	if !strings.Contains(said, "default: post-write flush done") {
		t.Errorf("no post-write flush reported")
	}
	if !strings.Contains(said, "perfbench report "+filepath.Join(out, "records")) {
		t.Errorf("the summary does not say how to report")
	}
	noServerLeft(t, serverPids(recs)...)

	// Again with --resume: nothing to do, and it says so.
	var again syncBuffer
	sum, err = Run(context.Background(), p, withResume(testOptions(out, &again)))
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if sum.Ran != 0 || len(sum.Skipped) != 6 {
		t.Errorf("resume ran %d and skipped %d, want 0 and 6", sum.Ran, len(sum.Skipped))
	}
	if !strings.Contains(again.String(), "nothing to run: all 6 measurements have Records") || strings.Contains(again.String(), "started") {
		t.Errorf("resume said:\n%s", again.String())
	}
	// Without --resume the Records are not rewritten.
	if _, err := Run(context.Background(), p, testOptions(out, &again)); !errors.Is(err, errRecordsExist) {
		t.Errorf("run again without --resume: %v, want ErrRecordsExist", err)
	}
}

const crashPlan = `
name = "crash"
[run]
compare = "windows"
warmup = "1s"
duration = "3s"
events = ["task-clock", "context-switches"]
[data]
table_size = 1000
[steps]
list = ["point-query", "read-only_range=100"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
[[version]]
label = "b"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`

// TestServerKilledMidStep kills a's server in the middle of its first
// window: that step is failed with the end of the error log, a's server is
// started again (without loading the data again) for its second step, b runs
// as planned. --resume then runs the failed step alone.
func TestServerKilledMidStep(t *testing.T) {
	needTools(t)
	p := parsePlan(t, crashPlan)
	out := t.TempDir()
	killed := make(chan int, 1)
	// The window opens 1 s (the warm-up) after sysbench's threads start and
	// lasts 3 s.
	whenWindowOpen(t, out, "a", "point-query_range=100", 700*time.Millisecond, func(pid int) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill server %d: %v", pid, err)
		}
		killed <- pid
	})
	var progress syncBuffer
	sum, err := Run(context.Background(), p, testOptions(out, &progress))
	t.Logf("progress:\n%s", progress.String())
	if !errors.Is(err, ErrStepsFailed) {
		t.Errorf("run: %v, want ErrStepsFailed", err)
	}
	var pid int
	select {
	case pid = <-killed:
	default:
		t.Fatal("the server was not killed")
	}
	recs := records(t, out)
	if len(recs) != 4 || sum.Ran != 4 || sum.OK != 3 || sum.Failed != 1 {
		t.Errorf("%d Records, summary %+v; want 4 with 1 failed", len(recs), sum)
	}
	crashed := recs["a/point-query_range=100/t1/r1"]
	if crashed == nil {
		t.Fatal("no Record of the step whose server was killed")
	}
	if crashed.Outcome != record.OutcomeFailed || !strings.Contains(crashed.Error, "pid "+strconv.Itoa(pid)+") exited during the step") ||
		!strings.Contains(crashed.Error, "\nits error log ends:\n") {
		t.Errorf("crashed step: outcome %s, error %q", crashed.Outcome, crashed.Error)
	}
	for _, id := range []string{"a/read-only_range=100/t1/r1", "b/point-query_range=100/t1/r1", "b/read-only_range=100/t1/r1"} {
		if r := recs[id]; r == nil {
			t.Errorf("no Record of %s", id)
		} else {
			checkMeasured(t, id, r)
		}
	}
	after := recs["a/read-only_range=100/t1/r1"]
	if after != nil && (after.Server == nil || after.Server.Pid == pid || !strings.Contains(strings.Join(after.WarningTexts(), "\n"), "started again")) {
		t.Errorf("the step after the crash: server %+v, warnings %q", after.Server, after.Warnings)
	}
	if n := strings.Count(progress.String(), "perfbench run: loaded a:"); n != 1 {
		t.Errorf("a's data loaded %d times, want once (crash recovery keeps the tables)", n)
	}
	noServerLeft(t, serverPids(recs)...)

	// --resume runs the failed step again, alone; the failed Record moves
	// aside.
	var again syncBuffer
	sum, err = Run(context.Background(), p, withResume(testOptions(out, &again)))
	t.Logf("resume:\n%s", again.String())
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if sum.Ran != 1 || sum.OK != 1 || len(sum.Skipped) != 3 {
		t.Errorf("resume: %+v, want 1 run ok and 3 skipped", sum)
	}
	if strings.Contains(again.String(), "loaded") || strings.Contains(again.String(), "started b") {
		t.Errorf("resume loaded data or started b:\n%s", again.String())
	}
	recs = records(t, out)
	checkMeasured(t, "a/point-query_range=100/t1/r1", recs["a/point-query_range=100/t1/r1"])
	moved, _ := filepath.Glob(filepath.Join(out, "records", ".replaced", "a__point-query_range=100__t1__r1.*.json"))
	if len(moved) != 1 {
		t.Errorf("the failed Record was not kept aside: %v", moved)
	}
	noServerLeft(t, serverPids(recs)...)
}

// TestInterrupted cancels the run in the middle of a window: that window is
// written partial, the next step does not run, the server is stopped.
func TestInterrupted(t *testing.T) {
	needTools(t)
	p := parsePlan(t, `
[run]
warmup = "1s"
duration = "6s"
events = ["task-clock", "context-switches"]
[data]
table_size = 1000
[steps]
list = ["point-query", "read-only_range=100"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serverPid := make(chan int, 1)
	// The window opens 1 s (the warm-up) after sysbench's threads start and
	// lasts 6 s: cancel in its middle.
	whenWindowOpen(t, out, "a", "point-query_range=100", 2*time.Second, func(pid int) {
		serverPid <- pid
		cancel()
	})
	var progress syncBuffer
	sum, err := Run(ctx, p, testOptions(out, &progress))
	t.Logf("progress:\n%s", progress.String())
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("run: %v, want ErrInterrupted", err)
	}
	recs := records(t, out)
	r := recs["a/point-query_range=100/t1/r1"]
	if len(recs) != 1 || r == nil {
		t.Fatalf("Records %v, want the interrupted one alone", recs)
	}
	if r.Outcome != record.OutcomePartial || r.Window.Seconds <= 0 || r.Window.Seconds >= 6 || !strings.Contains(r.Error, "interrupted") {
		t.Errorf("outcome %s, window %.2f s, error %q; want partial, shorter than 6 s", r.Outcome, r.Window.Seconds, r.Error)
	}
	if r.Ops.Count <= 0 || len(r.Counters) == 0 || r.OS == nil {
		t.Errorf("the partial window lost what was measured: ops %+v counters %d os %v", r.Ops, len(r.Counters), r.OS)
	}
	if sum.Partial != 1 || sum.Ran != 1 {
		t.Errorf("summary %+v", sum)
	}
	if !strings.Contains(progress.String(), "--resume") {
		t.Errorf("the summary does not say how to finish")
	}
	noServerLeft(t, <-serverPid)
}

// TestFailuresGoOn: counters that cannot be opened, sysbench failing and a
// command ending before the window opened are recorded as failed, with the
// reason, and the plan goes on. The one step that runs as planned is
// measured, or, on a busy host where its window opened or ran so late
// that sysbench ended first, failed saying so.
func TestFailuresGoOn(t *testing.T) {
	needTools(t)
	p := parsePlan(t, `
[run]
warmup = "1s"
duration = "2s"
events = ["task-clock"]
[data]
table_size = 1000
[steps]
list = ["point-query", "read-only_range=100", "read-only_range=10", "quick"]
[steps.override."read-only_range=100"]
extra_args = ["--no-such-option=1"]
[[steps.custom]]
name = "quick"
command = ["true"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`)
	out := t.TempDir()
	errCounters := errors.New("open task-clock on pid 1: too many open files")
	var progress syncBuffer
	calls := 0
	sum, err := Run(context.Background(), p, withMeter(testOptions(out, &progress),
		func(ctx context.Context, cfg measure.Config) (session, error) {
			// The first measurement cannot open its counters.
			if calls++; calls == 1 {
				return nil, errCounters
			}
			return startMeasure(ctx, cfg)
		}))
	t.Logf("progress:\n%s", progress.String())
	if !errors.Is(err, ErrStepsFailed) {
		t.Errorf("run: %v, want ErrStepsFailed", err)
	}
	recs := records(t, out)
	if r := recs["a/point-query_range=100/t1/r1"]; r == nil || r.Outcome != record.OutcomeFailed || !strings.Contains(r.Error, errCounters.Error()) {
		t.Errorf("counters failed: %+v", r)
	}
	if r := recs["a/read-only_range=100/t1/r1"]; r == nil || r.Outcome != record.OutcomeFailed ||
		!strings.Contains(r.Error, "sysbench ended with exit status 1") || !strings.Contains(r.Error, "invalid option: --no-such-option=1") {
		t.Errorf("sysbench failed: %+v", r)
	} else if r.Client == nil || r.Client.ExitCode != 1 {
		t.Errorf("sysbench's exit status not recorded: %+v", r.Client)
	}
	late := 0
	if r := recs["a/read-only_range=10/t1/r1"]; lateWindow(r) {
		// A busy host: the Record is marked failed, saying why.
		t.Logf("the measured step failed for a window that opened or ran late: %s", r.Error)
		late = 1
	} else {
		checkMeasured(t, "a/read-only_range=10/t1/r1", r)
	}
	if r := recs["a/quick/t1/r1"]; r == nil || r.Outcome != record.OutcomeFailed || !strings.Contains(r.Error, "the "+
		"command ended with exit status 0") || !strings.Contains(r.Error, "before the window opened") {
		t.Errorf("command ending in the warm-up: %+v", r)
	}
	if sum.Failed != 3+late || sum.OK+sum.Partial != 1-late {
		t.Errorf("summary %+v (%d windows late)", sum, late)
	}
	noServerLeft(t, serverPids(recs)...)
}

// TestCustomStartAndStep runs a version whose server the plan's own start
// and stop commands run (mariadbd in the foreground, mariadb-admin shutdown)
// and a custom step.
func TestCustomStartAndStep(t *testing.T) {
	needTools(t)
	p := parsePlan(t, `
[run]
warmup = "1s"
duration = "2s"
events = ["task-clock", "context-switches"]
[data]
table_size = 1000
[steps]
list = ["sb-points"]
[[steps.custom]]
name = "sb-points"
command = ["{sysbench}", "oltp_point_select", "--db-driver=mysql", "--mysql-socket={socket}",
  "--mysql-user={user}", "--config-file={sysbench_options}", "--mysql-db={db}",
  "--tables={tables}", "--table-size={table_size}", "--threads={threads}",
  "--time={time}", "--report-interval=1", "run"]
[[version]]
label = "own-start"
basedir = "installed"
start = ["mariadbd", "--no-defaults", "--datadir={datadir}", "--socket={socket}", "--port={port}",
  "--pid-file={pid_file}", "--log-error={error_log}", "--user=root", "--bind-address=127.0.0.1",
  "--skip-name-resolve", "--innodb-buffer-pool-size=64M"]
stop = ["mariadb-admin", "--no-defaults", "-uroot", "--socket={socket}", "shutdown"]
`)
	out, _, sum, recs := runOK(t, p)
	r := recs["own-start/sb-points/t1/r1"]
	if r == nil || sum.OK != 1 {
		t.Fatalf("Records %v, summary %+v", recs, sum)
	}
	checkMeasured(t, "own-start/sb-points", r)
	if r.Client != nil && !strings.Contains(strings.Join(r.Client.Command, " "), "--mysql-socket="+filepath.Join(out, "servers", "own-start", "mysqld.sock")) {
		t.Errorf("placeholders not filled: %q", r.Client.Command)
	}
	if b, err := os.ReadFile(filepath.Join(out, "logs", "own-start__sb-points__t1__r1.command.txt")); err != nil ||
		!strings.Contains(string(b), "SQL statistics") {
		t.Errorf("the command's output was not kept: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "logs", "server-own-start.txt")); err != nil ||
		!strings.Contains(string(b), "mariadb-admin --no-defaults -uroot --socket="+filepath.Join(out, "servers", "own-start", "mysqld.sock")+" shutdown") {
		t.Errorf("the stop command did not run: %v\n%s", err, b)
	}
	noServerLeft(t, serverPids(recs)...)
}

// TestRunningServer measures a server the run did not start: found by its
// socket, perfbench's own connection from a defaults file. The data is
// loaded, the post-write flush runs through that connection's account, and
// the server is left running.
func TestRunningServer(t *testing.T) {
	needTools(t)
	srv := testdb.New(t, testdb.Options{})
	dir := t.TempDir()
	cnf := filepath.Join(dir, "my.cnf")
	if err := os.WriteFile(cnf, []byte("[client]\nuser=root\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := parsePlan(t, `
[run]
warmup = "1s"
duration = "2s"
events = ["task-clock", "context-switches"]
[data]
table_size = 1000
[steps]
list = ["update-index", "point-query"]
[[version]]
label = "running"
socket = "`+srv.Socket+`"
defaults_file = "`+cnf+`"
`)
	out, said, sum, recs := runOK(t, p)
	for _, id := range []string{"running/update-index_range=100/t1/r1", "running/point-query_range=100/t1/r1"} {
		r := recs[id]
		if r == nil {
			t.Errorf("no Record of %s", id)
			continue
		}
		checkMeasured(t, id, r)
		if r.Server == nil || r.Server.Pid != srv.Pid {
			t.Errorf("%s: measured server %+v, want pid %d", id, r.Server, srv.Pid)
		}
	}
	if sum.OK+sum.Partial != 2 || sum.Partial != cpuGapPartials(recs) || !strings.Contains(said, "running: post-write flush done") {
		t.Errorf("summary %+v; the post-write flush before point-query must run", sum)
	}
	if !srv.Running() {
		t.Errorf("the run stopped a server it did not start")
	}
	if _, err := os.Stat(filepath.Join(out, "servers")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a server folder was made for a running server: %v", err)
	}

	// A wrong password in the plan: the hint names the version's keys and
	// line, not perfbench stat's flags.
	bad := parsePlan(t, `
[run]
warmup = "1s"
duration = "2s"
events = ["task-clock"]
[data]
load = false
[steps]
list = ["point-query"]
[[version]]
label = "wrong"
socket = "`+srv.Socket+`"
user = "root"
password = "not-the-password"
`)
	var said2 syncBuffer
	_, err := Run(context.Background(), bad, testOptions(t.TempDir(), &said2))
	t.Logf("wrong password:\n%s", said2.String())
	want := "connect to the server of wrong as root: Access denied for user 'root'@'localhost' (using password: YES): " +
		"check user and password, or defaults_file, of version wrong (line 10 of the plan)"
	if !errors.Is(err, ErrStepsFailed) || !strings.Contains(said2.String(), want) || strings.Contains(said2.String(), "--ask-password") ||
		strings.Contains(said2.String(), "not-the-password") {
		t.Errorf("run with a wrong password: %v; want the plan's hint:\n%s", err, want)
	}
}

// TestProfiledSteps runs a plan whose steps sample the server's call stacks,
// at two rates: each Record points to its profile, which pprof opens, whose
// comments and sample count agree with the Record (samples ≈ rate × the
// server's CPU seconds), and which perfbench profile's comparison reads per
// step.
func TestProfiledSteps(t *testing.T) {
	needTools(t)
	p := parsePlan(t, `
[run]
warmup = "1s"
duration = "3s"
events = ["task-clock", "context-switches"]
profile = 99
[data]
table_size = 1000
[steps]
list = ["point-query", "read-only_range=100"]
[steps.override.point-query]
profile = 999
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`)
	out, said, sum, recs := runOK(t, p)
	recDir := filepath.Join(out, "records")
	if !strings.Contains(said, "perfbench profile "+recDir+" --base a") {
		t.Errorf("the summary does not say how to compare the profiles")
	}
	samples := map[string]int64{}
	for id, rate := range map[string]float64{"a/point-query_range=100/t1/r1": 999, "a/read-only_range=100/t1/r1": 99} {
		r := recs[id]
		if r == nil {
			t.Errorf("no Record of %s", id)
			continue
		}
		checkMeasured(t, id, r)
		name := strings.TrimSuffix(record.FileName(r), ".json")
		if r.Profile != "../profiles/"+name+".pb.gz" {
			t.Errorf("%s: profile %q, want ../profiles/%s.pb.gz", id, r.Profile, name)
			continue
		}
		path := filepath.Join(recDir, filepath.FromSlash(r.Profile))
		f, err := os.Open(path)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		prof, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: read %s: %v", id, path, err)
			continue
		}
		m := pprofout.ReadMeta(prof)
		if m.Version != "a" || m.Step != r.Step || m.Ops != r.Ops.Count || m.OpsSource != "Questions" || m.Event != "cpu-clock" {
			t.Errorf("%s: profile comments %+v; want version a, step %s, %v Questions, cpu-clock", id, m, r.Step, r.Ops.Count)
		}
		var n int64
		for _, s := range prof.Sample {
			n += s.Value[0]
		}
		if prof.SampleType[0].Type != "samples" {
			t.Fatalf("%s: first sample value is %s, want samples", id, prof.SampleType[0].Type)
		}
		samples[r.Step] = n
		// cpu-clock samples each CPU at the rate; the server's share of
		// them is its CPU time.
		cpu := r.OS.UserSeconds + r.OS.SystemSeconds
		if got := float64(n) / cpu; got < rate/3 || got > rate*3 {
			t.Errorf("%s: %d samples over %.2f s of server CPU: %.0f per CPU second, want about %v", id, n, cpu, got, rate)
		}
		cmd := exec.Command("go", "tool", "pprof", "-top", path)
		top, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(top), "Type: cpu") || !strings.Contains(string(top), "Showing nodes accounting for") {
			t.Errorf("%s: go tool pprof -top %s: %v\n%s", id, path, err, top)
		}
	}
	if sum.OK != 2 {
		t.Errorf("summary %+v", sum)
	}

	// perfbench profile's comparison, over the records folder.
	in, notes, err := profdiff.Load([]string{recDir})
	if err != nil || len(in) != 2 {
		t.Fatalf("profdiff.Load: %d inputs, %v (notes %q)", len(in), err, notes)
	}
	c, err := profdiff.Compare(in, profdiff.Options{Base: "a", Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 2 {
		t.Fatalf("%d steps compared, want 2", len(c.Steps))
	}
	for _, st := range c.Steps {
		v := st.Versions["a"]
		if !st.PerOp || v == nil || v.Samples != samples[st.Name] || v.Windows != 1 {
			t.Errorf("step %s: per op %v, profile %+v; want 1 window of %d samples", st.Name, st.PerOp, v, samples[st.Name])
		}
	}
	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== point-query_range=100 ==", "== read-only_range=100 ==", "top by flat:"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("perfbench profile's text lacks %q:\n%s", want, text.String())
		}
	}
	noServerLeft(t, serverPids(recs)...)
}

// partialSession is a session whose first window's Record is made partial
// as measure marks a per-thread window whose task-clock fell more than 5%
// below the server's CPU time.
type partialSession struct {
	session
	first *bool
}

func (p partialSession) Measure(ctx context.Context, w measure.WindowSpec) (*record.Record, error) {
	r, err := p.session.Measure(ctx, w)
	if r != nil && *p.first {
		*p.first = false
		r.Outcome, r.Error = record.OutcomePartial, "task-clock is 11.4% below the server's CPU time (as measure says it)"
	}
	return r, err
}

// TestPartialWindowGoesOn: a window that is partial for another reason
// than an interruption does not stop the run (it did: every partial Record was
// taken as an interruption).
func TestPartialWindowGoesOn(t *testing.T) {
	needTools(t)
	p := parsePlan(t, `
[run]
warmup = "1s"
duration = "1s"
events = ["task-clock"]
[data]
table_size = 1000
[steps]
list = ["point-query", "read-only_range=10"]
[[version]]
label = "a"
basedir = "installed"
options = ["innodb_buffer_pool_size=64M"]
`)
	out := t.TempDir()
	var progress syncBuffer
	first := true
	sum, err := Run(context.Background(), p, withMeter(testOptions(out, &progress),
		func(ctx context.Context, cfg measure.Config) (session, error) {
			s, err := startMeasure(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return partialSession{s, &first}, nil
		}))
	t.Logf("progress:\n%s", progress.String())
	if err != nil || sum.Ran != 2 || sum.Partial != 1 || sum.OK != 1 {
		t.Errorf("run: %v, summary %+v; want both steps measured, one partial, one ok", err, sum)
	}
	if r := records(t, out)["a/read-only_range=10/t1/r1"]; r == nil || r.Outcome != record.OutcomeOK {
		t.Errorf("the step after the partial window: %+v", r)
	}
}
