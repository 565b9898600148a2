package plan

import (
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/host/cpuset"
)

const placementVersion = `
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
`

func TestPlacementKeys(t *testing.T) {
	for _, c := range []struct {
		run          string
		mode         string
		cpus, server string
		client       string
	}{
		{"", defaultPlacement, "", "", ""},
		{`placement = "none"`, PlacementNone, "", "", ""},
		{`placement = "threads"`, PlacementThreads, "", "", ""},
		{`placement = "shared"` + "\ncpus = 0", PlacementShared, "0", "", ""},
		{`placement = "split"` + "\ncpus = \"2-5\"", PlacementSplit, "2-5", "", ""},
		{`server_cpus = "1,3"` + "\nclient_cpus = \"0\"", PlacementCPUs, "", "1,3", "0"},
		{`server_cpus = 1`, PlacementCPUs, "", "1", ""},
	} {
		p := mustParse(t, "[run]\n"+c.run+"\n"+placementVersion)
		pl := p.Placement
		if pl.Mode != c.mode || pl.CPUs.String() != c.cpus || pl.Server.String() != c.server || pl.Client.String() != c.client {
			t.Errorf("%q: placement %+v, want mode %s cpus %q server %q client %q", c.run, pl, c.mode, c.cpus, c.server, c.client)
		}
	}
}

// TestPlacementErrors: a bad CPU list, mode or combination is one line
// naming the key and its line.
func TestPlacementErrors(t *testing.T) {
	for _, c := range []struct{ run, want string }{
		{`server_cpus = "0-x"`, `bad.toml:3: server_cpus "0-x": not a CPU list: "0-x" is not a CPU number or range`},
		{`client_cpus = "3-1"`, `bad.toml:3: client_cpus "3-1": not a CPU list: "3-1" runs backwards (write it 1-3)`},
		{`cpus = ""`, `bad.toml:3: cpus "": not a CPU list: the list is empty`},
		{`cpus = [0, 1]`, `bad.toml:3: a CPU list is a string like "0-3,8" or one CPU number, not [0 1]`},
		{`placement = "pinned"`, `bad.toml:3: placement "pinned": use "split"`},
		{`placement = "split"` + "\nserver_cpus = \"1\"", `bad.toml:3: placement "split" and server_cpus/client_cpus say two things`},
		{`placement = "none"` + "\ncpus = \"1\"", `bad.toml:4: cpus is the CPUs placement "split", "shared" or "threads" ` +
			`uses; with placement "none" it does nothing`},
		{`server_cpus = "1"` + "\ncpus = \"1\"", `bad.toml:4: cpus is the CPUs placement "split", "shared" or "threads" uses; ` +
			`with server_cpus/client_cpus it does nothing`},
	} {
		_, err := parse("/plans/bad.toml", []byte("# plan\n[run]\n"+c.run+"\n"+placementVersion))
		if err == nil {
			t.Errorf("%q: accepted", c.run)
			continue
		}
		if !strings.HasPrefix(err.Error(), "/plans/"+c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got %v\nwant one line starting /plans/%s", c.run, err, c.want)
		}
	}
}

func TestPlacementResolve(t *testing.T) {
	set := func(s string) cpuset.Set {
		if s == "" {
			return nil
		}
		c, err := cpuset.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct {
		pl                   Placement
		own                  string
		threads              int
		server, client, fail string
	}{
		{Placement{Mode: PlacementSplit}, "0-1", 1, "1", "0", ""},
		{Placement{Mode: PlacementSplit}, "0-7", 1, "4-7", "0-3", ""},
		{Placement{Mode: PlacementSplit}, "0-2", 1, "1-2", "0", ""},
		{Placement{Mode: PlacementSplit}, "3", 1, "3", "3", ""},
		{Placement{Mode: PlacementSplit, CPUs: set("2-3")}, "0-7", 1, "3", "2", ""},
		{Placement{Mode: PlacementShared}, "0-1", 1, "0-1", "0-1", ""},
		{Placement{Mode: PlacementShared, CPUs: set("0")}, "0-1", 1, "0", "0", ""},
		{Placement{Mode: PlacementNone}, "0-1", 1, "", "", ""},
		{Placement{Mode: PlacementThreads}, "0-1", 1, "0", "0", ""},
		{Placement{Mode: PlacementThreads}, "0-1", 2, "0-1", "0-1", ""},
		{Placement{Mode: PlacementThreads}, "0-1", 64, "0-1", "0-1", ""},
		{Placement{Mode: PlacementThreads, CPUs: set("4-7")}, "0-7", 3, "4-6", "4-6", ""},
		{Placement{Mode: PlacementCPUs, Server: set("1")}, "0-1", 1, "1", "", ""},
		{Placement{Mode: PlacementCPUs, Server: set("1-2"), Client: set("0"), lines: map[string]int{"server_cpus": 7}}, "0-1", 1, "", "",
			"server_cpus 1-2 (line 7 of the plan): CPU 2 is not among those perfbench may run on here (0-1)"},
		{Placement{Mode: PlacementShared, CPUs: set("4")}, "0-1", 1, "", "", "cpus 4: CPU 4 is not among"},
	} {
		server, client, err := c.pl.Resolve(set(c.own), c.threads)
		switch {
		case c.fail != "":
			if err == nil || !strings.HasPrefix(err.Error(), c.fail) {
				t.Errorf("%+v on %s: %v, want %q", c.pl, c.own, err, c.fail)
			}
		case err != nil || server.String() != c.server || client.String() != c.client:
			t.Errorf("%+v on %s at %d threads: server %q client %q %v, want %q %q", c.pl, c.own, c.threads, server, client, err, c.server, c.client)
		}
	}
}
