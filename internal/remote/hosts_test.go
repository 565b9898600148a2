package remote

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseHosts(t *testing.T) {
	src := `# two lab servers
[[host]]
name = "icelake"
destination = "bench@10.0.0.5"
port = 2222
identity = "keys/lab_ed25519"
ssh_options = [
  "ProxyJump=gw.lab",
  "ServerAliveInterval 15",
]
workdir = "~/pb"
datadir = "/data/pb"
cpus = "0-15"
[host.basedirs]
"10.11" = "/opt/mariadb-10.11.9"
"11.4" = "/opt/mariadb-11.4.3"

[[host]]
name = "graviton"
destination = "lab-arm"   # an alias of ~/.ssh/config
`
	hosts, err := parseHostsFile("/etc/lab/hosts.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Host{{
		Name: "icelake", Destination: "bench@10.0.0.5", Port: 2222,
		Identity:   "/etc/lab/keys/lab_ed25519",
		SSHOptions: []string{"ProxyJump=gw.lab", "ServerAliveInterval 15"},
		WorkDir:    "pb", DataDir: "/data/pb", CPUs: "0-15",
		Basedirs: map[string]string{"10.11": "/opt/mariadb-10.11.9", "11.4": "/opt/mariadb-11.4.3"},
		File:     "/etc/lab/hosts.toml", Line: 2,
	}, {
		Name: "graviton", Destination: "lab-arm", WorkDir: defaultWorkDir,
		File: "/etc/lab/hosts.toml", Line: 18,
	}}
	if !reflect.DeepEqual(hosts, want) {
		t.Errorf("got  %+v\nwant %+v", hosts, want)
	}
}

func TestParseHostsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // every error, in order: "line: text it contains"
	}{
		{"duplicate name", `
[[host]]
name = "a"
destination = "x@h1"

[[host]]
name = "a"
destination = "x@h2"
`, []string{`7: host name "a" is already used by the host on line 2`}},
		{"missing destination", `
[[host]]
name = "a"
port = 22
`, []string{"2: host a has no destination; add destination"}},
		{"missing name", `
[[host]]
destination = "x@h"
`, []string{"2: [[host]] has no name"}},
		{"relative datadir", `
[[host]]
name = "a"
destination = "x@h"
datadir = "data/pb"
`, []string{`5: host a: datadir "data/pb" must be an absolute path on the host`}},
		{"unknown key", `
[[host]]
name = "a"
destination = "x@h"
basedir = "/opt/m"
`, []string{"5: unknown key basedir in [[host]]; the keys are basedirs, cpus, datadir, destination, identity, name, port, ssh_options, workdir"}},
		{"unknown top-level key", `
user = "root"
[[host]]
name = "a"
destination = "x@h"
`, []string{"2: unknown key user: a hosts file has [[host]] tables only"}},
		{"unknown table", `
[defaults]
port = 22
[[host]]
name = "a"
destination = "x@h"
`, []string{"2: unknown key defaults"}},
		{"port is a string", `
[[host]]
name = "a"
destination = "x@h"
port = "22"
`, []string{"5: host a: port must be a number, not a string"}},
		{"port out of range", `
[[host]]
name = "a"
destination = "x@h"
port = 70000
`, []string{"5: host a: port 70000 is not a TCP port"}},
		{"destination is a number", `
[[host]]
name = "a"
destination = 10
`, []string{"4: destination must be a string, not a number"}},
		{"destination is an option", `
[[host]]
name = "a"
destination = "-oProxyCommand=sh"
`, []string{"4: host a: destination \"-oProxyCommand=sh\" starts with -"}},
		{"ssh_options not a list", `
[[host]]
name = "a"
destination = "x@h"
ssh_options = "ProxyJump=gw"
`, []string{"5: host a: ssh_options must be a list"}},
		{"bad and managed ssh options on their lines", `
[[host]]
name = "a"
destination = "x@h"
ssh_options = [
  "ProxyJump=gw",
  "-v",
  "ControlPath=/tmp/x",
]
`, []string{`7: host a: ssh option "-v" is not Key=Value`, `8: host a: ssh option "ControlPath=/tmp/x": perfbench shares one connection per host`}},
		{"basedir not a string", `
[[host]]
name = "a"
destination = "x@h"
[host.basedirs]
"10.11" = 3
`, []string{"6: host a: basedir of version 10.11 must be a path, not a number"}},
		{"bad name", `
[[host]]
name = "my host"
destination = "x@h"
`, []string{`3: name "my host": use letters`}},
		{"host not tables", `
host = "x@h"
`, []string{"2: host must be [[host]] tables, not a string"}},
		{"no host", `
# nothing yet
`, []string{"no [[host]] table"}},
		{"syntax", `
[[host]]
name = "a"
destination = "x@h
`, []string{"4: "}},
		{"errors of two hosts, in line order", `
[[host]]
name = "a"
port = 0

[[host]]
name = "b"
destination = "x@h"
identity = 5
`, []string{"2: host a has no destination", "4: host a: port 0 is not a TCP port", "9: identity must be a string, not a number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hosts, err := parseHostsFile("hosts.toml", []byte(tc.src))
			if err == nil {
				t.Fatalf("accepted: %+v", hosts)
			}
			if !errors.Is(err, errInvalid) && tc.name != "syntax" {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %T is not Errors: %v", err, err)
			}
			if len(es) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(es), len(tc.want), err)
			}
			for i, w := range tc.want {
				got := es[i].Error()
				if !strings.HasPrefix(got, "hosts.toml:") || !strings.Contains(got, w) {
					t.Errorf("error %d: got %q, want it to contain %q", i, got, "hosts.toml:"+w)
				}
				if strings.Contains(got, "\n") {
					t.Errorf("error %d is not one line: %q", i, got)
				}
			}
		})
	}
}

// TestPlanHosts: the [[host]] tables of a plan are read as a hosts file's,
// with the plan file's lines, and the plan's own keys are not theirs; a
// plan without them has no hosts.
func TestPlanHosts(t *testing.T) {
	src := `name = "lab"
[steps]
list = ["point-query"]
[steps.override."read-write"]
threads = [1, 16]
[[steps.custom]]
name = "sleep"
command = [
  "sleep", "{time}",
]
[[version]]
label = "a"
basedir = "installed"

[[host]]
name = "h1"
destination = "bench@10.0.0.5"
datadir = "/data/pb"
[host.basedirs]
"a" = "/opt/a"
[[version]]
label = "b"
basedir = "installed"
[[host]]
name = "h2"
destination = "h2"
`
	hosts, err := PlanHosts("/plans/lab.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Host{{
		Name: "h1", Destination: "bench@10.0.0.5", WorkDir: defaultWorkDir, DataDir: "/data/pb",
		Basedirs: map[string]string{"a": "/opt/a"}, File: "/plans/lab.toml", Line: 15,
	}, {
		Name: "h2", Destination: "h2", WorkDir: defaultWorkDir, File: "/plans/lab.toml", Line: 24,
	}}
	if !reflect.DeepEqual(hosts, want) {
		t.Errorf("got  %+v\nwant %+v", hosts, want)
	}

	hosts, err = PlanHosts("/plans/lab.toml", []byte(src[:strings.Index(src, "\n[[host]]")]))
	if hosts != nil || err != nil {
		t.Errorf("a plan without hosts: %v, %v", hosts, err)
	}

	bad := strings.Replace(src, `destination = "h2"`, `destination = "h2"`+"\nport = 0\nuser = \"x\"", 1)
	_, err = PlanHosts("/plans/lab.toml", []byte(bad))
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 ||
		es[0].Error() != "/plans/lab.toml:27: host h2: port 0 is not a TCP port (1 to 65535)" ||
		!strings.HasPrefix(es[1].Error(), "/plans/lab.toml:28: unknown key user in [[host]]") {
		t.Errorf("errors: %v", err)
	}
}

func TestLoadHostsMissingFile(t *testing.T) {
	_, err := LoadHosts(filepath.Join(t.TempDir(), "nope.toml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error", err)
	}
}
