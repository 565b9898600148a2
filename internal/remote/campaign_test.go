package remote

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/run/plan"
)

const campaignPlan = `name = "two"
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
[[version]]
label = "b"
basedir = "installed"
options = ["performance_schema=ON"]
`

// TestHostPlan: a host's basedirs replace the basedir of those versions
// alone in the plan it runs, and its datadir becomes the plan's
// output.datadir; without overrides or [[host]] tables it runs the plan as
// written; a basedir of a version the plan does not have is refused with
// the hosts file's line.
func TestHostPlan(t *testing.T) {
	file := filepath.Join(t.TempDir(), "two.toml")
	p, err := loadPlan(t, file, []byte(campaignPlan))
	if err != nil {
		t.Fatal(err)
	}
	same, err := hostPlan([]byte(campaignPlan), p, Host{Name: "h1"})
	if err != nil || !bytes.Equal(same, []byte(campaignPlan)) {
		t.Errorf("without overrides: %v, plan changed:\n%s", err, same)
	}

	got, err := hostPlan([]byte(campaignPlan), p, Host{Name: "h1", Basedirs: map[string]string{"b": "/opt/mariadb-11.4.5"}, DataDir: "/data/pb"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := loadPlan(t, filepath.Join(t.TempDir(), "two.toml"), got)
	if err != nil {
		t.Fatalf("the host's plan does not parse: %v\n%s", err, got)
	}
	if len(q.Versions) != 2 || q.Versions[0].Managed.Basedir != plan.Installed || q.Versions[1].Managed.Basedir != "/opt/mariadb-11.4.5" ||
		len(q.Versions[1].Managed.Options) != 1 || q.Name != "two" || len(q.Steps) != 1 || q.ServersDir != "/data/pb" || p.ServersDir != "" {
		t.Errorf("the host's plan: %+v %+v %q\n%s", q.Versions[0].Managed, q.Versions[1].Managed, q.ServersDir, got)
	}

	_, err = hostPlan([]byte(campaignPlan), p, Host{Name: "h2", File: "lab.toml", Line: 7, Basedirs: map[string]string{"c": "/opt/x"}})
	if err == nil || !strings.HasPrefix(err.Error(), `lab.toml:7: host h2: basedirs names version "c", which plan `+file+` does not have`) {
		t.Errorf("unknown version: %v", err)
	}
}

// TestHostPlanWithoutHostTables: the plan a host runs has none of the
// plan's [[host]] tables (the host would otherwise see a campaign) and
// keeps the rest, the plan's own output.datadir included unless the host
// gives one.
func TestHostPlanWithoutHostTables(t *testing.T) {
	src := campaignPlan + `[output]
dir = "out"
datadir = "/srv/pb"
[[host]]
name = "h1"
destination = "bench@10.0.0.5"
[[host]]
name = "h2"
destination = "h2"
datadir = "/data/pb"
`
	dir := t.TempDir()
	p, err := loadPlan(t, filepath.Join(dir, "two.toml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := PlanHosts("/plans/two.toml", []byte(src))
	if err != nil || len(hosts) != 2 {
		t.Fatalf("hosts: %v, %v", hosts, err)
	}
	for _, tc := range []struct {
		h       Host
		datadir string
	}{{hosts[0], "/srv/pb"}, {hosts[1], "/data/pb"}} {
		got, err := hostPlan([]byte(src), p, tc.h)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(got), "host") || strings.Contains(string(got), "bench@") {
			t.Errorf("host %s: the plan it runs has [[host]] tables:\n%s", tc.h.Name, got)
		}
		if hs, err := PlanHosts("/plans/two.toml", got); hs != nil || err != nil {
			t.Errorf("host %s: hosts in its plan: %v, %v", tc.h.Name, hs, err)
		}
		q, err := loadPlan(t, filepath.Join(dir, "two.toml"), got)
		if err != nil {
			t.Fatalf("host %s: the plan does not parse: %v\n%s", tc.h.Name, err, got)
		}
		if q.ServersDir != tc.datadir || q.OutDir != filepath.Join(dir, "out") || len(q.Versions) != 2 ||
			q.Versions[1].Managed.Options[0] != "performance_schema=ON" {
			t.Errorf("host %s: datadir %q, out %q, versions %+v", tc.h.Name, q.ServersDir, q.OutDir, q.Versions)
		}
	}
}

// TestHostCPUs: a host's cpus become the run.cpus of the plan it runs,
// which the plan's placement uses there.
func TestHostCPUs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "two.toml")
	p, err := loadPlan(t, file, []byte(campaignPlan))
	if err != nil {
		t.Fatal(err)
	}
	got, err := hostPlan([]byte(campaignPlan), p, Host{Name: "h1", CPUs: "2-5", File: "lab.toml", Line: 3})
	if err != nil {
		t.Fatal(err)
	}
	q, err := loadPlan(t, file, got)
	if err != nil {
		t.Fatalf("the host's plan does not parse: %v\n%s", err, got)
	}
	if q.Placement.Mode != "threads" || q.Placement.CPUs.String() != "2-5" {
		t.Errorf("the host's placement is %+v, want threads (the default) on CPUs 2-5", q.Placement)
	}
	server, client, err := q.Placement.Resolve(q.Placement.CPUs, 2)
	if err != nil || server.String() != "2-3" || client.String() != "2-3" {
		t.Errorf("on the host at 2 threads: server %v, load %v, %v; want 2-3 and 2-3", server, client, err)
	}
}

// TestCampaignRefusesCPUs: a host's cpus that are no CPU list, or that a
// plan's placement would not use, are refused with the line before
// anything connects.
func TestCampaignRefusesCPUs(t *testing.T) {
	for _, tc := range []struct{ run, cpus, want string }{
		{"", "0-x", `lab.toml:3: host h1: cpus "0-x": not a CPU list: "0-x" is not a CPU number or range`},
		{`server_cpus = "1"`, "0-3", `lab.toml:3: host h1: cpus are the CPUs the plan's placement uses on the host, and plan ` +
			`%s has placement "cpus", which uses none`},
		{`placement = "none"`, "0-3", `lab.toml:3: host h1: cpus are the CPUs the plan's placement uses on the host, and plan ` +
			`%s has placement "none", which uses none`},
	} {
		file := filepath.Join(t.TempDir(), "two.toml")
		src := campaignPlan + "[run]\n" + tc.run + "\n"
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := plan.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		// Were it contacted, ssh would run false instead of connecting.
		h := Host{Name: "h1", Destination: "h1.invalid", SSHOptions: []string{"ProxyCommand=false"}, File: "lab.toml", Line: 3, CPUs: tc.cpus, DataDir: "/data/pb"}
		c := &Campaign{Hosts: []Host{h}, Plan: p, Out: t.TempDir()}
		want := tc.want
		if strings.Contains(want, "%s") {
			want = fmt.Sprintf(want, file)
		}
		res, err := c.Run(t.Context(), nil)
		if res != nil || err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q, cpus %q: Run: %v, %v; want %s", tc.run, tc.cpus, res, err, want)
		}
	}
}

// loadPlan writes data to file and loads it as perfbench run does.
func loadPlan(t *testing.T, file string, data []byte) (*plan.Plan, error) {
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return plan.Load(file)
}
