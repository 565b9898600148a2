package remote

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/run/plan"
)

// TestPlanNeeds lists what a plan needs on a host and runs each check in
// bash here (the shell of the test hosts' root): a program here is found,
// a basedir with no server or a socket that is not there is missing.
func TestPlanNeeds(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "none.sock")
	path := filepath.Join(dir, "plan.toml")
	text := `name = "n"
[[version]]
label = "a"
basedir = "/opt/a"
[[version]]
label = "b"
socket = "` + sock + `"
[steps]
list = ["point-query", "mine"]
[[steps.custom]]
name = "mine"
command = ["perfbench-no-such-program", "{threads}"]
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir() // a basedir with no server in it
	needs := planNeeds(p, Host{Name: "h", Basedirs: map[string]string{"a": empty}})
	var whats []string
	for _, n := range needs {
		whats = append(whats, n.what)
	}
	want := []string{
		"the server of version a (mariadbd or mysqld under " + empty + ")",
		"the running server of version b (socket " + sock + ")",
		"sysbench",
		"perfbench-no-such-program",
	}
	if strings.Join(whats, "|") != strings.Join(want, "|") {
		t.Fatalf("needs %q, want %q", whats, want)
	}
	_, sysbenchErr := exec.LookPath("sysbench")
	for _, n := range needs {
		err := exec.Command("bash", "-c", n.check).Run()
		wantFound := n.what == "sysbench" && sysbenchErr == nil
		if (err == nil) != wantFound {
			t.Errorf("%s: check says found=%v, want %v", n.what, err == nil, wantFound)
		}
	}
	// Without a plan: a server (installed, here none is asked for under
	// the host's basedirs) and sysbench.
	if n := planNeeds(nil, Host{}); len(n) != 2 || n[0].what != "a server binary (mariadbd or mysqld in PATH or /usr/sbin)" || n[1].what != "sysbench" {
		t.Errorf("needs without a plan: %+v", n)
	}
}
