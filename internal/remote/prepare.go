package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/perfbench/perfbench/internal/host/hostinfo"
	"github.com/perfbench/perfbench/internal/run/plan"
)

// Ready is a host made ready to run perfbench, or the reason it is not.
type Ready struct {
	Host Host
	// Conn is the shared connection; nil when connecting failed.
	Conn      *Conn
	Installed Installed
	// Doctor is perfbench doctor's report on the host; nil when it did
	// not run.
	Doctor *hostinfo.Report
	// Err is why the host is not ready: unreachable, host key, platform,
	// copy, perfbench cannot count there, or the host lacks what the plan
	// needs.
	Err error
	// Cleaned says what perfbench processes an earlier campaign left on
	// the host were stopped, one line each (see Clean).
	Cleaned []string
	// Connect, Copy and Check are how long each stage took (Copy is the
	// checksum comparison alone when the binary was there); Elapsed is
	// from the start of Prepare to the end of the host's check.
	Connect, Copy, Check, Elapsed time.Duration
}

// Prepare makes every host ready to run, all at once: it connects, copies
// binary (a perfbench executable built for the hosts) unless an identical
// one is there, runs perfbench doctor there, and checks that the host has
// what plan p needs (server binaries or running servers, sysbench, the
// custom steps' programs; with no plan, the installed server or the
// host's basedirs, and sysbench). The result is in the
// order of hosts; each stands on its own (one host failing stops no
// other). The connections stay open in g.
func Prepare(ctx context.Context, g *Group, hosts []Host, binary string, p *plan.Plan) []Ready {
	start := time.Now()
	out := make([]Ready, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = prepare(ctx, g, h, binary, p)
			out[i].Elapsed = time.Since(start)
		}()
	}
	wg.Wait()
	return out
}

func prepare(ctx context.Context, g *Group, h Host, binary string, p *plan.Plan) Ready {
	r := Ready{Host: h}
	t := time.Now()
	r.Conn, r.Err = g.Connect(ctx, h)
	r.Connect = time.Since(t)
	if r.Err != nil {
		return r
	}
	t = time.Now()
	r.Installed, r.Err = r.Conn.Install(ctx, binary)
	r.Copy = time.Since(t)
	if r.Err != nil {
		return r
	}
	t = time.Now()
	cleaned, err := r.Conn.Output(ctx, []string{r.Installed.Path, "hosts", "clean", "."}, runOptions{})
	if err != nil {
		r.Err = fmt.Errorf("host %s: stop what earlier runs left: %w", h.Name, err)
		return r
	}
	for _, l := range strings.Split(strings.TrimSpace(string(cleaned)), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "stopped pid ") {
			r.Cleaned = append(r.Cleaned, l)
		}
	}
	out, err := r.Conn.Output(ctx, []string{r.Installed.Path, "doctor", "--format", "json"}, runOptions{})
	r.Check = time.Since(t)
	// doctor exits 1 when perfbench cannot count; its report says why.
	var rep hostinfo.Report
	if jerr := json.Unmarshal(out, &rep); jerr != nil || len(rep.Checks) == 0 {
		if err == nil {
			err = fmt.Errorf("read its report: %w", jerr)
		}
		r.Err = fmt.Errorf("host %s: run perfbench doctor: %w", h.Name, err)
		return r
	}
	r.Doctor = &rep
	if !rep.Usable {
		r.Err = fmt.Errorf("host %s: perfbench cannot count there: %s", h.Name, failed(rep))
		return r
	}
	miss, err := r.Conn.missing(ctx, planNeeds(p, h))
	r.Check = time.Since(t)
	switch {
	case err != nil:
		r.Err = err
	case len(miss) > 0 && p == nil:
		r.Err = fmt.Errorf("%w (checked for the suite's steps on the installed server or the host's basedirs; give the plan to check what it needs)", missingError(h, miss))
	case len(miss) > 0:
		r.Err = missingError(h, miss)
	}
	return r
}

// failed lists the failing checks of a doctor report with their fixes.
func failed(rep hostinfo.Report) string {
	s := ""
	for _, c := range rep.Checks {
		if c.Verdict != hostinfo.Fail {
			continue
		}
		if s != "" {
			s += "; "
		}
		s += c.Name + ": " + c.Detail
		if c.Fix != "" {
			s += " (fix: " + c.Fix + ")"
		}
	}
	return s
}
