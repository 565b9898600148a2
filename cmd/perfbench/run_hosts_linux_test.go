package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/internal/testhosts"
	"github.com/perfbench/perfbench/record"
)

// hostsPlan is the smoke plan (examples/plans/smoke.toml) made short for a
// test: its two versions, two of its steps, 1 s windows, 1,000 rows, and
// a password of the test's own, to look for in the hosts' process lists.
func hostsPlan(t *testing.T, password, duration string) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/plans/smoke.toml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range []struct{ old, new string }{
		{`warmup = "2s"`, `warmup = "1s"`},
		{`duration = "5s"`, `duration = "` + duration + `"`},
		{`table_size = 10000 `, `table_size = 1000 `},
		{`list = ["point-query", "update-index", "read-only_range=100"]`, `list = ["point-query", "read-only_range=100"]`},
		{`[data]`, "[data]\npassword = \"" + password + "\""},
		// Three hosts share this machine's two CPUs: each measures its
		// versions one at a time, as the checks of lost and resumed
		// measurements below expect (package runner tests comparisons).
		{`interval = "1s"`, "interval = \"1s\"\ncompare = \"windows\""},
	} {
		if !strings.Contains(s, r.old) {
			t.Fatalf("the smoke plan has no %q any more: update this test", r.old)
		}
		s = strings.Replace(s, r.old, r.new, 1)
	}
	return writeRunPlan(t, s)
}

// hostRecords loads the Records of a host in a campaign's output folder.
func hostRecords(t *testing.T, out, host string) map[string]*record.Record {
	t.Helper()
	loaded, _, err := record.Load([]string{filepath.Join(out, "records", host)}, false)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	recs := map[string]*record.Record{}
	for _, l := range loaded {
		recs[filepath.Base(l.Path)] = l.Record
	}
	return recs
}

// waitFor polls cond every 50 ms until it holds, the command exits (a
// failure) or a minute passes.
func waitFor(t *testing.T, what string, exited <-chan struct{}, stderr func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		select {
		case <-exited:
			t.Fatalf("perfbench run exited before %s; stderr:\n%s", what, stderr())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute; stderr:\n%s", what, stderr())
		}
	}
}

// startRun starts perfbench run as a process of its own; wait returns its
// exit error once it has exited.
type startedRun struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
	mu     sync.Mutex
	stderr strings.Builder
}

func (s *startedRun) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.Write(p)
}

func (s *startedRun) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

func startRun(t *testing.T, args ...string) *startedRun {
	t.Helper()
	s := &startedRun{cmd: perfbenchCmd(t, "", args...), exited: make(chan struct{})}
	s.cmd.Stderr = s
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Signal(os.Interrupt)
		<-s.exited
	})
	return s
}

func (s *startedRun) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-s.exited:
		return s.err
	case <-time.After(3 * time.Minute):
		t.Fatalf("perfbench run did not exit; stderr:\n%s", s.output())
		return nil
	}
}

// TestRunHosts runs the smoke plan on three test hosts at once. h2 is
// lost in the middle (its sshd and sessions killed): h1 and h3 finish, h2's
// unfinished measurements are recorded failed with the reason, and after
// its sshd is back --resume completes it without measuring again what it
// had measured. The report then has a block per host. A second campaign is
// interrupted (SIGINT) in its windows: partial Records come back and no
// perfbench, mariadbd or sysbench is left on any host. No host's process
// list ever shows the plan's password.
func TestRunHosts(t *testing.T) {
	testenv.SkipIfShort(t, "starts three test hosts, servers and sysbench on each")
	testdb.NeedServer(t)
	testdb.NeedSysbench(t)
	set := testhosts.New(t, 3)
	bin := testhosts.Perfbench(t)
	password := "pw" + strings.Repeat("x", 4) + time.Now().Format("150405.000000")
	planFile := hostsPlan(t, password, "1s")
	out := filepath.Join(t.TempDir(), "out")
	names := []string{"h1", "h2", "h3"}
	const perHost = 4 // 2 versions × 2 steps

	// Watch every host's processes for the password while the runs go.
	stopWatch := make(chan struct{})
	watched := make(chan []string)
	go func() {
		var seen []string
		for {
			for _, h := range names {
				for _, p := range set.Procs(t, h) {
					if strings.Contains(p.Command, password) {
						seen = append(seen, h+": "+p.Command)
					}
				}
			}
			select {
			case <-stopWatch:
				watched <- seen
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	// 1. h2 is lost after its first Record has come back.
	run := startRun(t, "run", planFile, "--hosts", set.HostsFile, "--binary", bin, "--out", out)
	waitFor(t, "a Record of h2", run.exited, run.output, func() bool { return len(hostRecords(t, out, "h2")) > 0 })
	killSSHD(t, set, "h2")
	err := run.wait(t)
	stderr := run.output()
	t.Logf("lost h2:\n%s", stderr)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Errorf("exit %v, want status 1", err)
	}
	if !regexp.MustCompile(`(?m)^perfbench run: host h2 failed: host h2 \(root@[0-9.]+\): host unreachable: the connection was lost during the run \(ssh gives a link up after 20s without an answer; the host stops its run 15s after its last heartbeat\); check that the host is up and reachable, then run again with --resume$`).MatchString(stderr) ||
		strings.Contains(stderr, "host h1 failed") || strings.Contains(stderr, "host h3 failed") {
		t.Errorf("stderr does not name h2 alone as failed, unreachable")
	}
	for _, h := range []string{"h1", "h3"} {
		recs := hostRecords(t, out, h)
		if len(recs) != perHost {
			t.Errorf("%s: %d Records, want %d", h, len(recs), perHost)
		}
		for name, r := range recs {
			if r.Outcome != record.OutcomeOK || r.Host != h || r.Kind != record.KindStep {
				t.Errorf("%s %s: outcome %s host %q kind %s; want ok on %s", h, name, r.Outcome, r.Host, r.Kind, h)
			}
		}
	}
	before := hostRecords(t, out, "h2")
	okBefore := map[string]time.Time{}
	for name, r := range before {
		switch {
		case r.Outcome == record.OutcomeOK:
			okBefore[name] = r.Window.Start
		case r.Outcome != record.OutcomeFailed || r.Kind != record.KindStep || r.Host != "h2" ||
			!strings.HasPrefix(r.Error, "not measured: host h2 (root@") || !strings.Contains(r.Error, "host unreachable: the connection was lost during the run"):
			t.Errorf("h2 %s: kind %s outcome %s host %q error %q; want a failed step saying h2 was lost", name, r.Kind, r.Outcome, r.Host, r.Error)
		}
	}
	if len(before) != perHost || len(okBefore) == 0 || len(okBefore) == perHost {
		t.Fatalf("h2: %d Records, %d ok; want %d, some ok and some failed", len(before), len(okBefore), perHost)
	}

	// 2. h2 is back: --resume measures its failed steps alone.
	set.StartSSHD(t, "h2")
	run = startRun(t, "run", planFile, "--hosts", set.HostsFile, "--binary", bin, "--out", out, "--resume")
	if err := run.wait(t); err != nil {
		t.Fatalf("resume: %v; stderr:\n%s", err, run.output())
	}
	stderr = run.output()
	t.Logf("resume:\n%s", stderr)
	after := hostRecords(t, out, "h2")
	if len(after) != perHost {
		t.Errorf("h2 after --resume: %d Records, want %d", len(after), perHost)
	}
	for name, r := range after {
		if r.Outcome != record.OutcomeOK {
			t.Errorf("h2 %s after --resume: %s (%s)", name, r.Outcome, r.Error)
		}
		if start, ok := okBefore[name]; ok && !r.Window.Start.Equal(start) {
			t.Errorf("h2 %s was measured again (window %v, before %v)", name, r.Window.Start, start)
		}
	}
	if !strings.Contains(stderr, "h2: perfbench run: --resume: skipping") || strings.Count(stderr, "nothing to run: all 4 measurements have Records") != 2 {
		t.Errorf("resume: h2 does not skip its measured steps, or h1 and h3 run again")
	}
	// Set aside here: <Record>.json.<time>. The host's own run may have
	// set aside (<Record>.<time>Z.json) the partial Record it wrote when
	// its guard stopped it as the link dropped; that one comes back too.
	all, _ := filepath.Glob(filepath.Join(out, "records", "h2", ".replaced", "*"))
	t.Logf("h2's Records set aside: %q", all)
	if aside, _ := filepath.Glob(filepath.Join(out, "records", "h2", ".replaced", "*.json.*")); len(aside) != perHost-len(okBefore) {
		t.Errorf("h2's failed Records set aside: %d, want %d", len(aside), perHost-len(okBefore))
	}
	for _, h := range names {
		left, _ := filepath.Glob(filepath.Join(set.Host(t, h).Home, "perfbench", "runs", "*", "plan", "*"))
		if len(left) > 0 {
			t.Errorf("%s keeps the plan (it holds the password): %v", h, left)
		}
	}

	// The report has a block per host.
	code, report, rerr := runCLI(t, "report", filepath.Join(out, "records"))
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, rerr)
	}
	for _, h := range names {
		if n := strings.Count(report, "Relative QPS (host "+h+", 1 thread)"); n != 1 {
			t.Errorf("report: %d Relative QPS blocks of host %s, want 1", n, h)
		}
	}

	// 3. SIGINT while every host is in the window of its first step
	// (30 s, far longer than the hosts' start-up skew on a loaded CI
	// machine, which exceeded 8 s once; the interrupt ends it early): each
	// writes it partial and leaves nothing running.
	// The hosts are the plan's [[host]] tables this time, h1 with a
	// datadir of its own.
	planFile = hostsPlan(t, password, "30s")
	hostTables, err := os.ReadFile(set.HostsFile)
	if err != nil {
		t.Fatal(err)
	}
	tables := strings.Replace(string(hostTables), "name = \"h1\"\n", "name = \"h1\"\ndatadir = \"~/pbdata\"\n", 1)
	if tables == string(hostTables) {
		t.Fatalf("no host h1 in %s:\n%s", set.HostsFile, hostTables)
	}
	planText, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	planFile = writeRunPlan(t, string(planText)+"\n"+tables)
	out2 := filepath.Join(t.TempDir(), "out2") // named apart from out: remoteOut finds its folder by name
	run = startRun(t, "run", planFile, "--binary", bin, "--out", out2)
	for _, h := range names {
		home := set.Host(t, h).Home
		waitFor(t, "sysbench threads on "+h, run.exited, run.output, func() bool {
			b, err := os.ReadFile(filepath.Join(remoteOut(home, out2), "logs", "default__point-query_range=100__t1__r1.sysbench.txt"))
			return err == nil && strings.Contains(string(b), "Threads started!")
		})
	}
	// Every window has opened past the 1 s warm-up: its opening read the
	// server's status (the roles' read, then the opening edge's).
	for _, h := range names {
		sock := filepath.Join(remoteOut(set.Host(t, h).Home, out2), "servers", "default", "mysqld.sock")
		if h == "h1" {
			sock = filepath.Join(set.Host(t, h).Home, "pbdata", "default", "mysqld.sock")
		}
		if err := testdb.WaitOthersRead(sock, 2, run.exited); err != nil {
			t.Fatalf("the window on %s did not open: %v; stderr:\n%s", h, err, run.output())
		}
	}
	if err := run.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = run.wait(t)
	stderr = run.output()
	t.Logf("interrupted:\n%s", stderr)
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(stderr, "perfbench run: interrupted; run again with --resume to finish") {
		t.Errorf("interrupted: exit %v; want status 1 and how to finish", err)
	}
	stopped := regexp.MustCompile(`(?m)^perfbench run: host (h[123]) failed: host (h[123]): \S+/perfbench stopped: context canceled$`)
	if n := len(stopped.FindAllString(stderr, -1)); n != len(names) || strings.Contains(stderr, "may still be running") {
		t.Errorf("interrupted: %d hosts say their run stopped, want %d, and none that it may still run", n, len(names))
	}
	for _, h := range names {
		recs := hostRecords(t, out2, h)
		r := recs["default__point-query_range=100__t1__r1.json"]
		if len(recs) != 1 || r == nil || r.Outcome != record.OutcomePartial || r.Window.Seconds <= 0 || r.Window.Seconds >= 30 {
			t.Errorf("%s: Records %v; want the first step alone, partial", h, recs)
		}
		for _, p := range set.Procs(t, h) {
			if strings.Contains(p.Command, "perfbench") || strings.Contains(p.Command, "mariadbd") || strings.Contains(p.Command, "sysbench") {
				t.Errorf("%s: still running after the interrupt: pid %d %s", h, p.Pid, p.Command)
			}
		}
	}
	// h1's server ran in its datadir, the others' in their output folders.
	for _, h := range names {
		home := set.Host(t, h).Home
		inOut := filepath.Join(remoteOut(home, out2), "servers", "default")
		inDatadir := filepath.Join(home, "pbdata", "default")
		want, notWant := inOut, inDatadir
		if h == "h1" {
			want, notWant = inDatadir, inOut
		}
		if _, err := os.Stat(want); err != nil {
			t.Errorf("%s: no server folder where it should be: %v", h, err)
		}
		if _, err := os.Stat(notWant); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a server folder in %s (%v)", h, notWant, err)
		}
	}
	close(stopWatch)
	if seen := <-watched; len(seen) > 0 {
		t.Errorf("the password is on a host's command line: %v", seen)
	}
}

// killSSHD kills every sshd process of a host, the listener and the
// sessions: the host is lost to the controller as if it had gone down.
func killSSHD(t *testing.T, set *testhosts.Set, name string) {
	t.Helper()
	killed := 0
	for _, p := range set.Procs(t, name) {
		if strings.HasPrefix(p.Command, "sshd") || strings.HasPrefix(p.Command, "/usr/sbin/sshd") {
			if syscall.Kill(p.Pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	if killed < 2 {
		t.Fatalf("killed %d sshd processes of %s, want the listener and a session", killed, name)
	}
}

// remoteOut is the folder of a host's run, in its home, for a run that
// writes to out here: perfbench/runs/<out's name>-<hash of out's path>; ""
// while there is none.
func remoteOut(home, out string) string {
	m, _ := filepath.Glob(filepath.Join(home, "perfbench", "runs", filepath.Base(out)+"-*"))
	if len(m) != 1 {
		return ""
	}
	return m[0]
}

// TestRunHostsLinkCut cuts the link to a host in the middle of its run (a
// pulled cable: no reset reaches either side). The controller gives the
// host up within twice ssh's stated bound (20 s), naming it and what to
// do, and the host's side ends by itself: its run, server and load, the
// file watchers and the connection's sshd processes, within the heartbeat
// timeout and the run's grace (15 + 30 s) and some slack.
func TestRunHostsLinkCut(t *testing.T) {
	testenv.SkipIfShort(t, "starts a test host, a server and sysbench on it")
	testdb.NeedServer(t)
	testdb.NeedSysbench(t)
	set := testhosts.New(t, 1)
	bin := testhosts.Perfbench(t)
	planFile := hostsPlan(t, "pw", "120s")
	out := filepath.Join(t.TempDir(), "out")
	home := set.Host(t, "h1").Home
	run := startRun(t, "run", planFile, "--hosts", set.HostsFile, "--binary", bin, "--out", out)
	waitFor(t, "sysbench threads on h1", run.exited, run.output, func() bool {
		b, err := os.ReadFile(filepath.Join(remoteOut(home, out), "logs", "default__point-query_range=100__t1__r1.sysbench.txt"))
		return err == nil && strings.Contains(string(b), "Threads started!")
	})
	cut := time.Now()
	set.CutLink(t, "h1")
	defer set.MendLink(t, "h1")
	var noticed time.Duration
	select {
	case <-run.exited:
		noticed = time.Since(cut)
	case <-time.After(100 * time.Second):
		t.Fatalf("the run did not end within 100 s of the cut; stderr:\n%s", run.output())
	}
	stderr := run.output()
	t.Logf("noticed after %.1f s:\n%s", noticed.Seconds(), stderr)
	if noticed > 40*time.Second {
		t.Errorf("the cut was noticed after %.1f s, want within twice the stated 20 s", noticed.Seconds())
	}
	if !regexp.MustCompile(`(?m)^perfbench run: host h1 failed: host h1 \(root@[0-9.]+\): host unreachable: the connection was lost during the run .*; check that the host is up and reachable, then run again with --resume$`).MatchString(stderr) {
		t.Errorf("stderr does not name h1 as lost and what to do")
	}
	// The host's side ends by itself, though nothing reaches it.
	left := func() []string {
		var l []string
		for _, p := range set.Procs(t, "h1") {
			for _, w := range []string{"perfbench", "mariadbd", "sysbench", "sshd: root"} {
				if strings.Contains(p.Command, w) {
					l = append(l, p.Command)
					break
				}
			}
		}
		return l
	}
	deadline := cut.Add(60 * time.Second)
	for len(left()) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("still on h1 %.0f s after the cut: %q", time.Since(cut).Seconds(), l)
	} else {
		t.Logf("nothing left on h1 %.1f s after the cut", time.Since(cut).Seconds())
	}
}
