package remote

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/plan"
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
// alone in the plan it runs; without basedirs it runs the plan as written;
// a basedir of a version the plan does not have is refused with the
// hosts file's line.
func TestHostPlan(t *testing.T) {
	p, err := plan.Parse("two.toml", []byte(campaignPlan))
	if err != nil {
		t.Fatal(err)
	}
	same, err := hostPlan([]byte(campaignPlan), p, Host{Name: "h1"})
	if err != nil || !bytes.Equal(same, []byte(campaignPlan)) {
		t.Errorf("without basedirs: %v, plan changed:\n%s", err, same)
	}

	got, err := hostPlan([]byte(campaignPlan), p, Host{Name: "h1", Basedirs: map[string]string{"b": "/opt/mariadb-11.4.5"}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := plan.Parse("two.toml", got)
	if err != nil {
		t.Fatalf("the host's plan does not parse: %v\n%s", err, got)
	}
	if len(q.Versions) != 2 || q.Versions[0].Managed.Basedir != plan.Installed || q.Versions[1].Managed.Basedir != "/opt/mariadb-11.4.5" ||
		len(q.Versions[1].Managed.Options) != 1 || q.Name != "two" || len(q.Steps) != 1 {
		t.Errorf("the host's plan: %+v %+v\n%s", q.Versions[0].Managed, q.Versions[1].Managed, got)
	}

	_, err = hostPlan([]byte(campaignPlan), p, Host{Name: "h2", File: "lab.toml", Line: 7, Basedirs: map[string]string{"c": "/opt/x"}})
	if err == nil || !strings.HasPrefix(err.Error(), `lab.toml:7: host h2: basedirs names version "c", which plan two.toml does not have`) {
		t.Errorf("unknown version: %v", err)
	}
}

// TestCampaignRefusesDatadirAndCPUs: overrides perfbench run does not
// apply yet are refused, with the line, before anything connects.
func TestCampaignRefusesDatadirAndCPUs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "two.toml")
	if err := os.WriteFile(file, []byte(campaignPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	// Were it contacted, ssh would run false instead of connecting.
	h := Host{Name: "h1", Destination: "h1.invalid", SSHOptions: []string{"ProxyCommand=false"}, File: "lab.toml", Line: 3, CPUs: "0-3"}
	c := &Campaign{Hosts: []Host{h}, Plan: p, Out: t.TempDir()}
	res, err := c.Run(t.Context(), nil)
	if res != nil || err == nil || err.Error() != "lab.toml:3: host h1: datadir and cpus are not applied by perfbench run yet; remove them from the hosts file" {
		t.Errorf("Run: %v, %v", res, err)
	}
}
