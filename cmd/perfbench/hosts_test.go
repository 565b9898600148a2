package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testhosts"
)

// TestHostsCheck: three test hosts, one with its sshd stopped. The two
// others are made ready (perfbench copied, doctor run there), the third is
// reported unreachable, each on one line, and the exit status is 1.
func TestHostsCheck(t *testing.T) {
	set := testhosts.New(t, 3)
	bin := testhosts.Perfbench(t)
	set.StopSSHD(t, "h3")

	code, out, errs := runCLI(t, "hosts", "check", "--binary", bin, set.HostsFile)
	if code != exitFailure || errs != "perfbench hosts: 1 of 3 hosts not ready\n" {
		t.Errorf("exit %d, stderr %q; want 1 and one host not ready", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want one line per host, got:\n%s", out)
	}
	ready := regexp.MustCompile(`^h[12]  ready  Linux \S+; perfbench copied \([0-9.]+ MB\); doctor: can count(, warn: ` +
		`[a-zA-Z_ ,]+)?; ready in [0-9.]+ s \(connect [0-9.]+ s, copy [0-9.]+ s, doctor [0-9.]+ s\)$`)
	for i, name := range []string{"h1", "h2"} {
		if !strings.HasPrefix(lines[i], name+" ") || !ready.MatchString(lines[i]) {
			t.Errorf("line %d: %q, want %s ready", i+1, lines[i], name)
		}
		if _, err := os.Stat(filepath.Join(set.Host(t, name).Home, "perfbench", "bin", "perfbench")); err != nil {
			t.Errorf("perfbench not on %s: %v", name, err)
		}
	}
	h3 := "h3  fail   host h3 (root@" + set.Host(t, "h3").Address + "): host unreachable: ssh: connect to host " +
		set.Host(t, "h3").Address + " port 22: Connection refused"
	if lines[2] != h3 {
		t.Errorf("line 3: %q, want %q", lines[2], h3)
	}

	// Again with h3 back: nothing to copy to h1 and h2.
	set.StartSSHD(t, "h3")
	code, out, errs = runCLI(t, "hosts", "check", "--binary", bin, set.HostsFile)
	if code != exitOK || errs != "" {
		t.Errorf("second check: exit %d, stderr %q", code, errs)
	}
	if got := strings.Count(out, "perfbench there already"); got != 2 || strings.Count(out, "perfbench copied") != 1 {
		t.Errorf("second check copied again:\n%s", out)
	}
}

// TestHostsCheckRefusesBadFileFirst: a malformed hosts file is refused
// with its lines before any host is contacted.
func TestHostsCheckRefusesBadFileFirst(t *testing.T) {
	set := testhosts.New(t, 1)
	good, err := os.ReadFile(set.HostsFile)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "lab.toml")
	bad := string(good) + "\n[[host]]\nname = \"h1\"\nport = \"22\"\n"
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(good), "\n") + 2 // the second [[host]]
	code, out, errs := runCLI(t, "hosts", "check", "--binary", testhosts.Perfbench(t), file)
	want := []string{
		file + ":" + strconv.Itoa(n) + ": host h1 has no destination",
		file + ":" + strconv.Itoa(n+2) + ": host h1: port must be a number, not a string",
	}
	if code != exitFailure || out != "" || strings.Count(errs, "\n") != len(want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want one line per problem", code, out, errs)
	}
	for _, w := range want {
		if !strings.Contains(errs, "perfbench hosts: "+w) {
			t.Errorf("stderr %q does not say %q", errs, w)
		}
	}
	if n := set.Logins(t, "h1"); n != 0 {
		t.Errorf("perfbench logged in to h1 %d times although the hosts file is malformed", n)
	}
	// The count would have seen a login.
	if code, out, _ := runCLI(t, "hosts", "check", "--binary", testhosts.Perfbench(t), set.HostsFile); code != exitOK || set.Logins(t, "h1") == 0 {
		t.Errorf("check of the good file: exit %d, %d logins: %s", code, set.Logins(t, "h1"), out)
	}
}

func TestHostsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"hosts"}, "missing form"},
		{[]string{"hosts", "list", "x"}, `unknown form "list"`},
		{[]string{"hosts", "check"}, "hosts check takes one hosts file"},
		{[]string{"hosts", "check", "--interval", "1s", "x.toml"}, "--interval and --heartbeat are for hosts watch"},
		{[]string{"hosts", "watch", "--binary", "pb", "d"}, "--binary, --plan and --timeout are for hosts check"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want usage error %q", tc.args, code, errs, tc.want)
		}
	}
}
