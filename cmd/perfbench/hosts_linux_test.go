package main

import (
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/internal/testhosts"
	"github.com/perfbench/perfbench/mysqld/sandbox"
)

// hideOn makes the server binary or sysbench missing on a test host.
func hideOn(t *testing.T, set *testhosts.Set, host, path string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	set.Hide(t, host, real)
}

// fakeServer listens on a unix socket in a folder the test hosts share
// with this machine: a "running server" that is no server (its process is
// the test), so that a run's steps fail there at once.
func fakeServer(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "mysqld.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return sock
}

// TestHostsCheckFindsMissing: of three test hosts, h2 lacks sysbench and
// h3 the server binary. hosts check says so per host, with how to install
// each, and calls neither ready; with a plan whose steps need no sysbench
// and whose server runs already, h2 and h3 are ready.
func TestHostsCheckFindsMissing(t *testing.T) {
	testdb.NeedServer(t)
	sysbench := testdb.NeedSysbench(t)
	server, err := sandbox.FindServerBinary("")
	if err != nil {
		t.Fatal(err)
	}
	set := testhosts.New(t, 3)
	bin := testhosts.Perfbench(t)
	hideOn(t, set, "h2", sysbench)
	hideOn(t, set, "h3", server)
	// The hiding works: the host's shell finds no such program.
	for _, c := range []struct{ host, prog string }{{"h2", "sysbench"}, {"h3", filepath.Base(server)}} {
		out, err := exec.Command("nsenter", "-t", pidOfSSHD(t, set, c.host), "-m", "sh", "-c", "command -v "+c.prog+" && test -x $(command -v "+c.prog+")").CombinedOutput()
		if err == nil {
			t.Fatalf("%s still finds %s: %s", c.host, c.prog, out)
		}
	}

	code, out, errs := runCLI(t, "hosts", "check", "--binary", bin, set.HostsFile)
	t.Logf("no plan:\n%s%s", out, errs)
	if code != exitFailure || errs != "perfbench hosts: 2 of 3 hosts not ready\n" {
		t.Errorf("exit %d, stderr %q; want 1 and two hosts not ready", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want one line per host, got:\n%s", out)
	}
	if !strings.HasPrefix(lines[0], "h1  ready  ") {
		t.Errorf("h1: %q, want ready", lines[0])
	}
	if want := "h2  fail   host h2: not ready to run the plan: sysbench not found (install it: apt-get install sysbench) (checked for"; !strings.HasPrefix(lines[1], want) {
		t.Errorf("h2: %q, want %q...", lines[1], want)
	}
	if want := "h3  fail   host h3: not ready to run the plan: a server binary (mariadbd or mysqld in PATH or /usr/sbin) not found (install it: apt-get install mariadb-server"; !strings.HasPrefix(lines[2], want) || strings.Contains(lines[2], "sysbench") {
		t.Errorf("h3: %q, want %q... and nothing of sysbench", lines[2], want)
	}

	// A plan of a custom step on a running server needs neither; one
	// socket that is not there is missing on every host.
	sock := fakeServer(t)
	planFile := writeRunPlan(t, `name = "needs"
[[version]]
label = "running"
socket = "`+sock+`"
[[version]]
label = "gone"
socket = "`+sock+`.gone"
[steps]
list = ["probe"]
[[steps.custom]]
name = "probe"
command = ["sh", "-c", "true"]
`)
	code, out, _ = runCLI(t, "hosts", "check", "--binary", bin, "--plan", planFile, set.HostsFile)
	t.Logf("plan:\n%s", out)
	missing := regexp.MustCompile(`(?m)^h[123]  fail   host h[123]: not ready to run the plan: the running server of version gone \(socket \S+\.gone\) not found \(start the server, or correct version gone's target in the plan\)$`)
	if code != exitFailure || len(missing.FindAllString(out, -1)) != 3 || strings.Contains(out, "sysbench") || strings.Contains(out, "version running") {
		t.Errorf("exit %d; want every host to miss version gone's server alone:\n%s", code, out)
	}
}

func pidOfSSHD(t *testing.T, set *testhosts.Set, host string) string {
	t.Helper()
	for _, p := range set.Procs(t, host) {
		if strings.Contains(p.Command, "[listener]") || strings.Contains(p.Command, "sshd -f") {
			return strconv.Itoa(p.Pid)
		}
	}
	t.Fatalf("no sshd on %s", host)
	return ""
}

// TestRunHostsShowsStepErrors: a campaign on two hosts whose server is no
// server. h2 lacks sysbench, which the plan's suite step needs: it is
// refused before its run, saying so. h1 runs, its steps fail, and its
// line says why (the first failure's error), not the run's last line (a
// hint to run perfbench report).
func TestRunHostsShowsStepErrors(t *testing.T) {
	sysbench := testdb.NeedSysbench(t)
	set := testhosts.New(t, 2)
	bin := testhosts.Perfbench(t)
	hideOn(t, set, "h2", sysbench)
	sock := fakeServer(t)
	planFile := writeRunPlan(t, `name = "fails"
[run]
warmup = "0s"
duration = "1s"
[[version]]
label = "notaserver"
socket = "`+sock+`"
[steps]
list = ["point-query", "probe"]
[[steps.custom]]
name = "probe"
command = ["sh", "-c", "true"]
`)
	out := filepath.Join(t.TempDir(), "out")
	code, _, errs := runCLI(t, "run", planFile, "--hosts", set.HostsFile, "--binary", bin, "--out", out)
	t.Logf("stderr:\n%s", errs)
	if code != exitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	h1 := regexp.MustCompile(`(?m)^h1  fail  0 ok, 2 failed, 0 partial; host h1: notaserver/\S+ failed: the server is not available: .*not a mysqld or mariadbd process.* \(and 1 more; their Records say why\)$`)
	if !h1.MatchString(errs) {
		t.Errorf("h1's line does not give its first failure's error")
	}
	if strings.Contains(errs, "failed: host h1 (root@") || regexp.MustCompile(`(?m)^(h1  fail|perfbench run: host h1 failed).*next: perfbench report`).MatchString(errs) {
		t.Errorf("h1's line gives the run's last line (a hint), not the error")
	}
	h2 := regexp.MustCompile(`(?m)^perfbench run: host h2 failed: host h2: not ready to run the plan: sysbench not found \(install it: apt-get install sysbench\)$`)
	if !h2.MatchString(errs) || strings.Contains(errs, "h2: perfbench run:") {
		t.Errorf("h2 is not refused before its run for want of sysbench")
	}
}

// TestHostsCheckCleansUp: a file watcher left running on a host, as a
// campaign left it when its link dropped (its input open, no heartbeat),
// is stopped by the next hosts check, which says so.
func TestHostsCheckCleansUp(t *testing.T) {
	set := testhosts.New(t, 1)
	bin := testhosts.Perfbench(t)
	if code, out, errs := runCLI(t, "hosts", "check", "--binary", bin, "--plan", writeRunPlan(t, "name = \"x\"\n[[version]]\nlabel = \"a\"\npid = 1\n[steps]\nlist = [\"probe\"]\n[[steps.custom]]\nname = \"probe\"\ncommand = [\"true\"]\n"), set.HostsFile); code != exitOK {
		t.Fatalf("first check: exit %d: %s%s", code, out, errs)
	}
	// The watcher, in the host's namespaces, its input open.
	left := exec.Command("nsenter", "-t", pidOfSSHD(t, set, "h1"), "-m", "-n", "-u", "--", "sh", "-c",
		"cd /root/perfbench && exec /root/perfbench/bin/perfbench hosts watch --interval 500ms runs/x/records")
	stdin, err := left.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	defer left.Process.Kill()
	time.Sleep(time.Second)
	select {
	case err := <-exited:
		t.Fatalf("the watcher exited by itself: %v", err)
	default:
	}

	code, out, errs := runCLI(t, "hosts", "check", "--binary", bin, "--plan", writeRunPlan(t, "name = \"x\"\n[[version]]\nlabel = \"a\"\npid = 1\n[steps]\nlist = [\"probe\"]\n[[steps.custom]]\nname = \"probe\"\ncommand = [\"true\"]\n"), set.HostsFile)
	t.Logf("second check:\n%s%s", out, errs)
	want := "; cleaned up: stopped pid " + strconv.Itoa(left.Process.Pid) + " (perfbench hosts watch --interval 500ms runs/x/records), left running by an earlier campaign whose link dropped\n"
	if code != exitOK || !strings.HasPrefix(out, "h1  ready  ") || !strings.HasSuffix(out, want) {
		t.Errorf("exit %d; want h1 ready, saying it stopped the watcher (%q)", code, want)
	}
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Errorf("the watcher still runs 15 s after the check")
	}
}
