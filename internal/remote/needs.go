package remote

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/run/plan"
)

// What a plan's steps need on a host, besides perfbench and counting
// (perfbench doctor checks that): the server binaries of the versions it
// starts, a server to attach to for the ones it does not, sysbench for the
// suite's steps and the program of each custom step. A host that lacks
// one is not ready: the run would fail there.

// need is one thing a host must have.
type need struct {
	what  string // "sysbench", "the server of version 11.4 (mariadbd or mysqld under /opt/m)"
	check string // a shell test that succeeds when the host has it
	fix   string // how to get it
}

const (
	installServer   = "install it: apt-get install mariadb-server, or set the version's basedir for the host ([host.basedirs])"
	installSysbench = "install it: apt-get install sysbench"
)

// programNeed is a program that must be in the host's PATH.
func programNeed(name, fix string) need {
	return need{what: name, check: inPath(name), fix: fix}
}

// inPath is a shell test that name is a program the host's shell runs
// (bash's command -v also names a file it cannot run, when no other is
// found).
func inPath(name string) string {
	return `{ p=$(command -v ` + quote(name) + `) && case $p in /*) test -x "$p" ;; esac; }`
}

// serverNeed is the server binary of a managed version: under basedir, or
// installed when basedir is "" (as package sandbox looks for it).
func serverNeed(label, basedir string) need {
	var paths []string
	where := "in PATH or /usr/sbin"
	if basedir == "" {
		for _, d := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin", "/usr/libexec"} {
			paths = append(paths, d+"/mariadbd", d+"/mysqld")
		}
	} else {
		where = "under " + basedir
		dir := quote(basedir)
		if rest, ok := strings.CutPrefix(basedir, "~/"); ok {
			dir = `"$HOME"/` + quote(rest)
		}
		for _, d := range []string{"sbin", "bin", "libexec"} {
			paths = append(paths, dir+"/"+d+"/mariadbd", dir+"/"+d+"/mysqld")
		}
	}
	var tests []string
	if basedir == "" {
		tests = append(tests, inPath("mariadbd"), inPath("mysqld"))
	}
	for _, p := range paths {
		tests = append(tests, "test -x "+p)
	}
	fix := installServer
	if basedir != "" {
		fix = "unpack the server there, or set the version's basedir for the host ([host.basedirs])"
	}
	what := "a server binary"
	if label != "" {
		what = "the server of version " + label
	}
	return need{what: fmt.Sprintf("%s (mariadbd or mysqld %s)", what, where), check: "{ " + strings.Join(tests, " || ") + "; }", fix: fix}
}

// planNeeds lists what plan p needs on host h (with the host's basedirs);
// with no plan, what a plan of the suite on the installed server (or on
// the host's basedirs) needs.
func planNeeds(p *plan.Plan, h Host) []need {
	if p == nil {
		var out []need
		if len(h.Basedirs) == 0 {
			out = append(out, serverNeed("", ""))
		}
		for _, l := range sortedKeys(h.Basedirs) {
			out = append(out, serverNeed(l, h.Basedirs[l]))
		}
		return append(out, programNeed("sysbench", installSysbench))
	}
	var out []need
	seen := map[string]bool{}
	add := func(n need) {
		if !seen[n.check] {
			seen[n.check] = true
			out = append(out, n)
		}
	}
	for _, v := range p.Versions {
		switch {
		case v.Managed != nil && len(v.Managed.Start) > 0:
			if prog := v.Managed.Start[0]; !strings.Contains(prog, "{") {
				add(programNeed(prog, "install it, or give its full path in version "+v.Label+"'s start command"))
			}
		case v.Managed != nil:
			basedir := v.Managed.Basedir
			if b, ok := h.Basedirs[v.Label]; ok {
				basedir = b
			}
			if basedir == plan.Installed {
				basedir = ""
			}
			add(serverNeed(v.Label, basedir))
		case v.Target != nil:
			add(targetNeed(v.Label, v.Target))
		}
	}
	for i := range p.Steps {
		st := &p.Steps[i]
		switch {
		case st.Suite != nil:
			add(programNeed("sysbench", installSysbench))
		case len(st.Command) > 0 && strings.HasPrefix(st.Command[0], "{sysbench}"):
			add(programNeed("sysbench", installSysbench))
		case len(st.Command) > 0 && !strings.Contains(st.Command[0], "{"):
			add(programNeed(st.Command[0], "install it, or give its full path in step "+st.Label+"'s command"))
		}
	}
	return out
}

// targetNeed is the running server a version attaches to: its socket, pid
// file or process (one given by host and port alone is not checked).
func targetNeed(label string, t *plan.Target) need {
	what := "the running server of version " + label
	fix := "start the server, or correct version " + label + "'s target in the plan"
	switch {
	case t.Socket != "":
		return need{what: what + " (socket " + t.Socket + ")", check: "test -S " + quote(t.Socket), fix: fix}
	case t.PidFile != "":
		return need{what: what + " (pid file " + t.PidFile + ")", check: `{ p=$(cat ` + quote(t.PidFile) + ` 2>/dev/null) && test -d "/proc/$p"; }`, fix: fix}
	case t.Pid > 0:
		return need{what: what + " (pid " + strconv.Itoa(t.Pid) + ")", check: "test -d /proc/" + strconv.Itoa(t.Pid), fix: fix}
	}
	return need{}
}

// missing checks needs on the host in one round trip and returns those it
// lacks.
func (c *Conn) missing(ctx context.Context, needs []need) ([]need, error) {
	var b strings.Builder
	b.WriteString("echo " + probeMark + "\n")
	for i, n := range needs {
		if n.check == "" {
			continue
		}
		fmt.Fprintf(&b, "%s 2>/dev/null || echo missing %d\n", n.check, i)
	}
	b.WriteString("true\n")
	out, err := c.output(ctx, b.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("check what the plan needs: %w", err)
	}
	_, after, _ := strings.Cut(string(out), probeMark+"\n")
	var miss []need
	for _, line := range strings.Split(after, "\n") {
		if s, ok := strings.CutPrefix(line, "missing "); ok {
			if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(needs) {
				miss = append(miss, needs[i])
			}
		}
	}
	return miss, nil
}

// missingError says what a host lacks and how to get each.
func missingError(h Host, miss []need) error {
	s := make([]string, len(miss))
	for i, n := range miss {
		s[i] = n.what + " not found (" + n.fix + ")"
	}
	return fmt.Errorf("host %s: not ready to run the plan: %s", h.Name, strings.Join(s, "; "))
}
