package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

// A campaign runs one plan on several hosts at once: on each host
// perfbench is copied and checked (Prepare), the plan is copied into the
// host's work folder (mode 0600: it may hold the load's password), and
// perfbench run runs there with its progress lines streamed back with the
// host's name before them. The host's Records and logs come back as they
// are written (Pull) into
//
//	OUT/records/<host>/   the host's Records
//	OUT/hosts/<host>/     run.log (the remote run's output) and logs/
//
// A host that cannot be reached, or is lost during its run, does not stop
// the others; the measurements it did not bring back are recorded failed
// in OUT/records/<host>/ with the reason, so that every host's part of the
// plan has a Record. With Resume the remote run resumes over its own
// Records (the ok ones are not run again), and the failed Records written
// here move to OUT/records/<host>/.replaced/ as the runner moves its own.

// Campaign is a plan to run on several hosts.
type Campaign struct {
	Hosts []Host
	// Binary is the perfbench executable to copy to the hosts.
	Binary string
	// Plan is the plan, loaded here (to know its measurements); its file
	// is what each host runs.
	Plan *plan.Plan
	// Out is the local output folder.
	Out string
	// Resume and Only are passed to each host's perfbench run.
	Resume bool
	Only   []string
	// Console receives the hosts' progress lines (nil: discarded).
	Console *Console
}

// HostResult is how a host's part of a campaign ended.
type HostResult struct {
	Host Host
	// Err is why the host failed: not reachable or not ready, lost during
	// the run, interrupted, or its run failed (steps failed). Nil when
	// every measurement of the host has an ok Record.
	Err error
	// OK, Failed and Partial count the host's Records in the output folder
	// by outcome; Lost counts those of them written here for measurements
	// the host did not bring back.
	OK, Failed, Partial, Lost int
	// Started is how long the host took from the start of the campaign to
	// the moment it was ready to run the plan (connect, copy, check).
	Started time.Duration
	Elapsed time.Duration
}

// remoteOut is the host's output folder of a campaign, under its work
// folder: one per local output folder, so that two campaigns do not mix.
func remoteOut(out string) string {
	abs, err := filepath.Abs(out)
	if err != nil {
		abs = out
	}
	sum := sha256.Sum256([]byte(abs))
	return "runs/" + filepath.Base(abs) + "-" + hex.EncodeToString(sum[:4])
}

// Run runs the campaign on every host at once. done, if not nil, is called
// with each host's result as the host ends. The results are in the order
// of the hosts.
func (c *Campaign) Run(ctx context.Context, done func(HostResult)) ([]HostResult, error) {
	planData, err := os.ReadFile(c.Plan.File)
	if err != nil {
		return nil, fmt.Errorf("read the plan: %w", err)
	}
	plans := make([][]byte, len(c.Hosts))
	for i, h := range c.Hosts {
		if plans[i], err = hostPlan(planData, c.Plan, h); err != nil {
			return nil, err
		}
	}
	if c.Console == nil {
		c.Console = NewConsole(io.Discard)
	}
	g, err := NewGroup()
	if err != nil {
		return nil, err
	}
	defer g.Close()
	start := time.Now()
	out := make([]HostResult, len(c.Hosts))
	var wg sync.WaitGroup
	for i, h := range c.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = c.runHost(ctx, g, h, plans[i], start)
			out[i].Elapsed = time.Since(start)
			if done != nil {
				done(out[i])
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// hostPlan is the plan file a host runs: the plan as written, or, when
// the plan has [[host]] tables or the host overrides it, the plan without
// its [[host]] tables and with the host's basedirs (a version's basedir),
// datadir (output.datadir) and cpus (run.cpus: the CPUs the plan's
// placement uses on that host).
func hostPlan(data []byte, p *plan.Plan, h Host) ([]byte, error) {
	if err := checkHostCPUs(p, h); err != nil {
		return nil, err
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, fmt.Errorf("host %s: read plan %s: %w", h.Name, p.File, err)
	}
	_, hasHosts := doc["host"]
	if !hasHosts && len(h.Basedirs) == 0 && h.DataDir == "" && h.CPUs == "" {
		return data, nil
	}
	delete(doc, "host")
	labels := map[string]bool{}
	for _, v := range p.Versions {
		labels[v.Label] = true
	}
	for _, l := range sortedKeys(h.Basedirs) {
		if !labels[l] {
			return nil, fmt.Errorf("%s:%d: host %s: basedirs names version %q, which plan %s does not have", h.File, h.Line, h.Name, l, p.File)
		}
	}
	versions, _ := doc["version"].([]map[string]any)
	for _, v := range versions {
		label, _ := v["label"].(string)
		if dir, ok := h.Basedirs[label]; ok {
			v["basedir"] = dir
		}
	}
	if h.DataDir != "" {
		out, ok := doc["output"].(map[string]any)
		if !ok {
			out = map[string]any{}
			doc["output"] = out
		}
		out["datadir"] = h.DataDir
	}
	if h.CPUs != "" {
		run, ok := doc["run"].(map[string]any)
		if !ok {
			run = map[string]any{}
			doc["run"] = run
		}
		run["cpus"] = h.CPUs
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(doc); err != nil {
		return nil, fmt.Errorf("host %s: write plan %s for the host: %w", h.Name, p.File, err)
	}
	return b.Bytes(), nil
}

// checkHostCPUs checks a host's cpus: a CPU list, for a plan whose
// placement uses CPUs (split, shared or threads).
func checkHostCPUs(p *plan.Plan, h Host) error {
	if h.CPUs == "" {
		return nil
	}
	if _, err := cpuset.Parse(h.CPUs); err != nil {
		return fmt.Errorf("%s:%d: host %s: cpus %q: %w", h.File, h.Line, h.Name, h.CPUs, err)
	}
	if m := p.Placement.Mode; m == plan.PlacementNone || m == plan.PlacementCPUs {
		return fmt.Errorf("%s:%d: host %s: cpus are the CPUs the plan's placement uses on the host, and plan %s has placement "+
			"%q, which uses none: remove cpus, or set placement = %q, %q or %q in the plan's [run]",
			h.File, h.Line, h.Name, p.File, m, plan.PlacementSplit, plan.PlacementShared, plan.PlacementThreads)
	}
	return nil
}

// runHost runs the host's part: ready the host, run the plan there, bring
// its Records back, and record failed what it did not bring back.
func (c *Campaign) runHost(ctx context.Context, g *Group, h Host, planData []byte, start time.Time) HostResult {
	res := HostResult{Host: h}
	recDir := filepath.Join(c.Out, "records", h.Name)
	hostDir := filepath.Join(c.Out, "hosts", h.Name)
	if err := os.MkdirAll(hostDir, 0o755); err != nil {
		res.Err = fmt.Errorf("host %s: make %s: %w", h.Name, hostDir, err)
		return res
	}
	if c.Resume {
		if err := setAsideNotOK(recDir); err != nil {
			res.Err = fmt.Errorf("host %s: %w", h.Name, err)
			return res
		}
	}
	ready := prepare(ctx, g, h, c.Binary, c.Plan)
	if len(ready.Cleaned) > 0 {
		lines := c.Console.Writer(h.Name + ": perfbench: ")
		for _, l := range ready.Cleaned {
			fmt.Fprintln(lines, l)
		}
	}
	hostname := h.Name
	if ready.Err == nil {
		if b, err := ready.Conn.output(ctx, "uname -n", nil); err == nil {
			if s := lastLine(string(b)); s != "" {
				hostname = s
			}
		}
		res.Started = time.Since(start)
		res.Err = c.runRemote(ctx, ready, planData, recDir, hostDir)
	} else {
		res.Err = ready.Err
	}
	// What the host did not bring back is recorded failed, unless the
	// user stopped the run (the host wrote partial what it was measuring).
	if res.Err != nil && ctx.Err() == nil {
		n, err := c.recordLost(recDir, hostname, res.Err)
		res.Lost = n
		if err != nil {
			res.Err = fmt.Errorf("%w; and %w", res.Err, err)
		}
	}
	res.OK, res.Failed, res.Partial = countOutcomes(recDir)
	if res.Err == nil && res.Failed+res.Partial > 0 {
		res.Err = fmt.Errorf("host %s: %d of %d measurements failed (their Records say why)", h.Name, res.Failed+res.Partial, res.OK+res.Failed+res.Partial)
	}
	return res
}

// runRemote copies the plan to the host, runs it there, and pulls the
// Records and logs back until the run ends.
func (c *Campaign) runRemote(ctx context.Context, r Ready, planData []byte, recDir, hostDir string) error {
	conn, h := r.Conn, r.Host
	remoteOut := remoteOut(c.Out)
	remotePlan := remoteOut + "/plan/" + filepath.Base(c.Plan.File)
	if err := conn.putPrivate(ctx, remotePlan, planData); err != nil {
		return err
	}
	// The pulls outlive ctx: after Ctrl-C they bring back the partial
	// Records the remote run writes as it stops.
	bg := context.WithoutCancel(ctx)
	recs, err := conn.Pull(bg, r.Installed.Path, remoteOut+"/records", recDir, nil)
	if err != nil {
		return err
	}
	logs, err := conn.Pull(bg, r.Installed.Path, remoteOut+"/logs", filepath.Join(hostDir, "logs"), nil)
	if err != nil {
		recs.Finish()
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(hostDir, "run.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		recs.Finish()
		logs.Finish()
		return fmt.Errorf("host %s: open its run log: %w", h.Name, err)
	}
	defer logFile.Close()
	lines := c.Console.Writer(h.Name + ": ")
	argv := []string{r.Installed.Path, "run", remotePlan, "--out", remoteOut}
	if c.Resume {
		argv = append(argv, "--resume")
	}
	if len(c.Only) > 0 {
		argv = append(argv, "--only", strings.Join(c.Only, ","))
	}
	fmt.Fprintf(logFile, "# %s\n", strings.Join(argv, " "))
	var fails failLines
	w := io.MultiWriter(lines, logFile, &fails)
	runErr := conn.Run(ctx, argv, runOptions{Stdout: w, Stderr: w, Guard: r.Installed.Path})
	lines.Flush()
	recErr, logErr := recs.Finish(), logs.Finish()
	// The plan may hold the load's password: it does not stay on the host
	// (a lost host keeps it until the campaign runs there again).
	if !errors.Is(runErr, errUnreachable) {
		rctx, cancel := context.WithTimeout(bg, 15*time.Second)
		conn.Remove(rctx, conn.WorkDir+"/"+remotePlan)
		cancel()
	}
	switch {
	case errors.Is(runErr, errUnreachable) && ctx.Err() == nil:
		// The last line ssh passed on is the run's progress, not a reason.
		return fmt.Errorf("host %s (%s): %w: the connection was lost during the run (ssh gives a link up after %s without an answer; the host stops its run %s after its last heartbeat); check that the host is up and reachable, then run again with --resume",
			h.Name, h.Destination, errUnreachable, lostAfter, heartbeatTimeout)
	case runErr != nil && ctx.Err() == nil && len(fails.lines) > 0:
		// The run's last line is a hint (next: perfbench report); the
		// reason is in the lines of the failed measurements.
		more := ""
		if n := len(fails.lines) - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more; their Records say why)", n)
		}
		return fmt.Errorf("host %s: %s%s", h.Name, fails.lines[0], more)
	case runErr != nil:
		return runErr
	case recErr != nil:
		return recErr
	default:
		return logErr
	}
}

// failLines keeps the lines of a remote perfbench run that say why a
// measurement failed or was not written.
type failLines struct {
	lines []string
	part  []byte
}

func (f *failLines) Write(p []byte) (int, error) {
	f.part = append(f.part, p...)
	for {
		i := bytes.IndexByte(f.part, '\n')
		if i < 0 {
			break
		}
		line := string(f.part[:i])
		f.part = f.part[i+1:]
		for _, what := range []string{"failed", "not written"} {
			if rest, ok := strings.CutPrefix(line, "perfbench run: "+what+": "); ok {
				id, why, _ := strings.Cut(rest, ": ")
				f.lines = append(f.lines, id+" "+what+": "+why)
			}
		}
	}
	if len(f.part) > 1<<16 {
		f.part = nil // no line of the run is that long
	}
	return len(p), nil
}

// putPrivate writes data to path (relative to the work folder) on the
// host, readable by the login user alone; the data travels on stdin.
func (c *Conn) putPrivate(ctx context.Context, path string, data []byte) error {
	script := fmt.Sprintf(`cd %s && umask 077 && mkdir -p %s && t=%s.$$ && cat >"$t" && mv -f "$t" %s`,
		quote(c.Host.WorkDir), quote(filepath.Dir(path)), quote(path), quote(path))
	if _, err := c.output(ctx, script, data); err != nil {
		return fmt.Errorf("copy the plan to %s: %w", path, err)
	}
	return nil
}

// recordLost writes a failed Record, saying why, for every measurement of
// the plan (less Only) that has no Record in recDir, and returns how many
// it wrote.
func (c *Campaign) recordLost(recDir, hostname string, why error) (int, error) {
	have := map[string]bool{}
	if _, err := os.Stat(recDir); err == nil {
		recs, _, err := record.Load([]string{recDir}, true)
		if err != nil {
			return 0, fmt.Errorf("read the Records in %s: %w", recDir, err)
		}
		for _, l := range recs {
			have[plan.RecordID(l.Record)] = true
		}
	}
	n := 0
	for _, it := range c.Plan.Expand() {
		if it.Action != plan.ActionMeasure || have[it.ID] || !StepSelected(it.Step, c.Only) {
			continue
		}
		rec := record.New(record.KindStep)
		rec.Outcome = record.OutcomeFailed
		rec.Error = fmt.Sprintf("not measured: %s; run the campaign again with --resume", oneLine(why.Error()))
		rec.Host, rec.Provenance.Hostname = hostname, hostname
		rec.Version, rec.Step, rec.Threads, rec.Repeat = it.Version.Label, it.Step.Label, it.Threads, it.Repeat
		rec.Group = string(it.Step.Group)
		rec.Provenance.Plan = c.Plan.File
		rec.Provenance.Written = time.Now().UTC()
		if err := record.Write(filepath.Join(recDir, record.FileName(rec)), rec); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// StepSelected says whether only (perfbench run --only; empty: every
// step) selects a step: by label, or by the suite step's name (every range
// of it).
func StepSelected(st *plan.Step, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, name := range only {
		if st.Label == name || st.Suite != nil && st.Suite.Name == name {
			return true
		}
	}
	return false
}

// setAsideNotOK moves the failed and partial Records of recDir to
// recDir/.replaced/ before a resumed run measures them again.
func setAsideNotOK(recDir string) error {
	if _, err := os.Stat(recDir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	recs, _, err := record.Load([]string{recDir}, true)
	if err != nil {
		return fmt.Errorf("read the Records in %s: %w", recDir, err)
	}
	for _, l := range recs {
		if l.Record.Outcome == record.OutcomeOK {
			continue
		}
		aside := filepath.Join(recDir, ".replaced", filepath.Base(l.Path)+"."+time.Now().UTC().Format("20060102T150405"))
		if err := os.MkdirAll(filepath.Dir(aside), 0o755); err != nil {
			return fmt.Errorf("set aside %s: %w", l.Path, err)
		}
		if err := os.Rename(l.Path, aside); err != nil {
			return fmt.Errorf("set aside %s: %w", l.Path, err)
		}
	}
	return nil
}

// countOutcomes counts the Records of recDir by outcome.
func countOutcomes(recDir string) (ok, failed, partial int) {
	recs, _, err := record.Load([]string{recDir}, true)
	if err != nil {
		return 0, 0, 0
	}
	for _, l := range recs {
		switch l.Record.Outcome {
		case record.OutcomeOK:
			ok++
		case record.OutcomeFailed:
			failed++
		case record.OutcomePartial:
			partial++
		}
	}
	return ok, failed, partial
}

// oneLine folds a multi-line text into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
