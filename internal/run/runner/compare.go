package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/host/proc"
	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/record"
)

// A comparison measures every version of a step at a thread count and
// repeat together (plan.Step.Compare), so that whatever the host does to
// the machine's speed falls on every version alike:
//
//   - duet: every version's server and load run at once, each on CPUs of
//     its own (as many as the client threads); after every slice the sets
//     of CPUs move one version on, so that over a turn (as many slices as
//     versions) every version ran once on each set, and a slow CPU or a
//     busy sibling thread of the host hits every version alike.
//   - slices: every version's load is connected and warmed (all at once),
//     then stopped (SIGSTOP); one runs at a time (SIGCONT), a slice each,
//     in a random order every turn; the servers share the plan's CPUs.
//
// Every server is read (counters, SHOW GLOBAL STATUS, its CPU time) at the
// same instants, at every slice's edges, and so is the host's CPU time
// (what other processes used). Each version's Record keeps every slice
// (record.Comparison), so that reports pair a version's slices with the
// base's of the same turn.

// compareExtra is how much longer than its slices a comparison's load
// is given to run, as a fraction of the window, and at least compareSlack:
// every slice edge reads every server, which takes a few milliseconds, and
// on a loaded machine opening every server's window takes seconds.
const (
	compareExtra = 0.25
	compareSlack = 4 * time.Second
)

// member is one version of a comparison.
type member struct {
	sr    *stepRun
	it    plan.Item
	sess  session
	log   *os.File
	rm    func() // removes the load's option file
	rec   *record.Record
	merr  error
	cpus  cpuset.Set // duet: the CPUs it starts on
	ticks chan time.Time
	done  chan struct{} // closed to end its window
	// ended is closed when its load or its server exits.
	ended  chan struct{}
	active bool // in the window, acknowledging ticks
}

// comparison is one comparison being measured.
type comparison struct {
	r       *runner
	id      string
	mode    string
	slice   time.Duration
	st      *plan.Step
	threads int
	members []*member
	// inWindow are the members whose loads ran into the window, in the
	// schedule's order (slots index it).
	inWindow []*member
	// sets are the duet's sets of CPUs, one per version.
	sets []cpuset.Set
	// slots is the comparison's schedule: per slice, the member that ran
	// (slices) or the first set's member (duet: member i ran on set
	// (i+k) mod n in slice k).
	slots []int
	// other and busy are the host's other CPU over each slice; unknown
	// is set for a slice whose edges were not both read (hostErr says
	// why, the first time).
	other   []float64
	busy    []bool
	unknown []bool
	hostErr error
	// edges are the host's CPU times at each slice edge.
	edges []measure.HostEdge
	// deadline is when the window must end for the loads to run past it.
	deadline time.Time
	// cut is how many of the planned slices were left out because the
	// window ran late.
	cut, planned int
}

// compare measures the items of one comparison, says so, and writes their
// Records; i counts the measurements begun. It reports whether the run was
// interrupted.
func (r *runner) compare(ctx context.Context, items []plan.Item, i *int) (interrupted bool) {
	first := *i + 1
	*i += len(items)
	r.prog.beginGroup(first, items)
	recs := r.compareGroup(ctx, items)
	for n, rec := range recs {
		if r.plan.Auto != nil {
			r.ran = append(r.ran, rec)
		}
		werr := r.finish(rec)
		r.prog.endOf(first+n, items[n], rec, werr)
		interrupted = interrupted || (rec.Outcome == record.OutcomePartial && ctx.Err() != nil)
	}
	return interrupted
}

// compareGroup measures the consecutive items of one comparison and
// returns their Records, in the items' order (never nil).
func (r *runner) compareGroup(ctx context.Context, items []plan.Item) []*record.Record {
	c := &comparison{r: r, id: items[0].Comparison, slice: r.plan.Slice, st: items[0].Step, threads: items[0].Threads}
	c.mode = c.resolveMode(items)
	out := make([]*record.Record, len(items))
	for i, it := range items {
		s := r.server(it.Version)
		r.setAside(it)
		s.placed = nil
		m, rec := c.prepare(ctx, s, it, len(items))
		if rec != nil {
			out[i] = rec
			continue
		}
		c.members = append(c.members, m)
	}
	c.run(ctx)
	j := 0
	for i, it := range items {
		if out[i] == nil {
			m := c.members[j]
			j++
			out[i] = m.rec
			c.describe(m)
		}
		out[i] = r.complete(ctx, out[i], r.server(it.Version), it)
	}
	return out
}

// prepare gets one version ready: its server running with its data, its
// counters open and its load's command line. A version that cannot be
// measured gets its failed Record instead.
func (c *comparison) prepare(ctx context.Context, s *server, it plan.Item, n int) (*member, *record.Record) {
	r := c.r
	if err := s.ensure(ctx); err != nil {
		return nil, r.abandoned(ctx, it, "the server is not available: %v", err)
	}
	if err := s.ensureData(ctx); err != nil {
		return nil, r.abandoned(ctx, it, "the data set is not loaded: %v", err)
	}
	if err := r.defaultEvents(s.pid); err != nil {
		return nil, failed(r.newRecord(it), "%v", err)
	}
	if err := r.setRotation(); err != nil {
		return nil, failed(r.newRecord(it), "%v", err)
	}
	cmd, rm, err := r.stepCommand(s, it, r.tail+c.extraTime(n))
	if err != nil {
		return nil, failed(r.newRecord(it), "%v", err)
	}
	sr := &stepRun{r: r, s: s, it: it, st: it.Step, cmd: cmd, logPath: r.logPath(it)}
	log, err := createOut(sr.logPath)
	if err != nil {
		rm()
		return nil, failed(r.newRecord(it), "create the load's log: %v", err)
	}
	fmt.Fprintf(log, "# %s\n", strings.Join(cmd.Shown, " "))
	sess, rec := sr.open(ctx)
	if rec != nil {
		log.Close()
		rm()
		return nil, rec
	}
	return &member{sr: sr, it: it, sess: sess, log: log, rm: rm, ticks: make(chan time.Time, 1),
		done: make(chan struct{}), ended: make(chan struct{})}, nil
}

// extraTime is how much longer than a window alone the load of a
// comparison of n versions runs: in slices, every other version's share
// of the window, and some slack for the slice edges.
func (c *comparison) extraTime(n int) time.Duration {
	window := c.window(n)
	return window - c.st.Duration + max(time.Duration(compareExtra*float64(window)), compareSlack)
}

// slicesPerVersion is how many slices each version runs: the step's
// window in slices, at least one.
func (c *comparison) slicesPerVersion() int {
	return max(int((c.st.Duration+c.slice-1)/c.slice), 1)
}

// slices is the number of slices of a comparison of n versions: in duet,
// the step's window in slices, rounded up to whole turns (every version
// once on every set of CPUs); in slices, that many for every version.
func (c *comparison) slices(n int) int {
	k := c.slicesPerVersion()
	if c.mode == record.ComparisonDuet {
		return (k + n - 1) / n * n
	}
	return k * n
}

// window is the comparison's window for n versions: in duet, the
// step's window (every version runs all along); in slices, n times it.
func (c *comparison) window(n int) time.Duration {
	return time.Duration(c.slices(n)) * c.slice
}

// resolveMode decides duet or slices: duet when the plan asks for it or,
// under auto, when every version can have CPUs of its own (as many as
// the measurement's client threads) and every server is one perfbench
// starts (a duet moves them from CPU to CPU). It also sets the duet's
// sets of CPUs.
func (c *comparison) resolveMode(items []plan.Item) string {
	r := c.r
	n := len(items)
	pool := r.comparePool()
	duetOK := n >= 2 && len(pool) >= n*c.threads && r.place.mode == plan.PlacementThreads
	for _, it := range items {
		duetOK = duetOK && it.Version.Managed != nil
	}
	// compare = "duet" where it cannot be was refused before the run
	// (checkDuet): slices is what is left.
	if c.st.Compare == plan.CompareSlices || !duetOK {
		return record.ComparisonSlices
	}
	for i := 0; i < n; i++ {
		c.sets = append(c.sets, pool[i*c.threads:(i+1)*c.threads])
	}
	return record.ComparisonDuet
}

// checkDuet refuses, before anything starts, a plan that forces compare =
// "duet" where it cannot be: a comparison whose versions need more CPUs of
// their own (as many as its client threads each) than perfbench may run on
// here, or a version whose server perfbench does not start (a duet moves
// every server from CPU to CPU).
func (r *runner) checkDuet(pending []plan.Item) error {
	if r.plan.Compare != plan.CompareDuet {
		return nil
	}
	where := ""
	if r.plan.CompareLine > 0 {
		where = fmt.Sprintf(" (line %d of %s)", r.plan.CompareLine, r.plan.File)
	}
	pool := r.comparePool()
	n := map[string]int{}
	for _, it := range pending {
		if it.Action != plan.ActionMeasure || it.Comparison == "" {
			continue
		}
		if it.Version.Managed == nil {
			return fmt.Errorf("compare = %q%s: version %s is a server perfbench does not start, and a duet moves every server from CPU to CPU: use compare = %q",
				plan.CompareDuet, where, it.Version.Label, plan.CompareSlices)
		}
		n[it.Comparison]++
		if need := n[it.Comparison] * it.Threads; need > len(pool) {
			return fmt.Errorf("compare = %q%s: %s at %d threads needs %d CPUs (%d versions × %d threads, each on CPUs of its "+
				"own) and perfbench may use %d here (%s): use compare = %q (duet where the CPUs allow it, slices otherwise) or %q",
				plan.CompareDuet, where, it.Step.Label, it.Threads, need, n[it.Comparison], it.Threads, len(pool), pool, plan.CompareAuto, plan.CompareSlices)
		}
	}
	return nil
}

// comparePool is the CPUs a duet places its versions on: the plan's cpus,
// else all perfbench may run on.
func (r *runner) comparePool() cpuset.Set {
	if len(r.plan.Placement.CPUs) > 0 {
		return r.plan.Placement.CPUs
	}
	return r.place.own
}

// run starts the loads, warms them up and measures the comparison's
// window; each member ends with its Record.
func (c *comparison) run(ctx context.Context) {
	defer func() {
		for _, m := range c.members {
			m.log.Close()
			m.rm()
			m.sess.Close()
		}
	}()
	c.startLoads(ctx)
	live := c.live()
	if len(live) > 0 && c.warmUp(ctx, live) {
		c.measure(ctx, live)
	}
	if c.mode == record.ComparisonSlices {
		for _, m := range live {
			proc.Resume(m.sr.load.Pid())
		}
	}
	// Each load ends by itself after its tail; they are waited for
	// together, so that each is judged as the window closed.
	var wg sync.WaitGroup
	for _, m := range live {
		wg.Add(1)
		go func(m *member) {
			defer wg.Done()
			m.rec = m.sr.finish(ctx, m.rec, m.merr)
		}(m)
	}
	wg.Wait()
	for _, m := range c.members {
		if m.sr.load != nil {
			m.sr.load.Stop(2 * time.Second)
		}
	}
}

// startLoads places every version and starts its load, then waits for
// every load's threads to start. A load that does not start, or ends
// before its window, fails its member.
func (c *comparison) startLoads(ctx context.Context) {
	r := c.r
	for i, m := range c.members {
		sr := m.sr
		client := cpuset.Set(nil)
		if c.mode == record.ComparisonDuet {
			m.cpus = c.sets[i]
			c.pin(m, m.cpus)
			client = m.cpus
		} else {
			sr.s.placeServer(c.threads)
			_, client = r.place.at(c.threads)
		}
		load, err := sr.startLoad(m.log, client)
		if err != nil {
			m.rec = failed(sr.newRecord(), "%v", err)
			continue
		}
		sr.load = load
		sr.s.placed = r.observePlacement(sr.s, client, load.Pid())
	}
	deadline := time.After(startTimeout)
	for _, m := range c.members {
		if m.sr.load == nil {
			continue
		}
		select {
		case <-m.sr.load.ThreadsStarted():
		case <-m.sr.load.Exited():
		case <-ctx.Done():
		case <-deadline:
		}
		if !m.sr.load.Running() && ctx.Err() == nil {
			m.rec = m.sr.endedBeforeWindow(ctx)
		}
	}
}

// live returns the members whose loads run.
func (c *comparison) live() []*member {
	var out []*member
	for _, m := range c.members {
		if m.rec == nil && m.sr.load != nil {
			out = append(out, m)
		}
	}
	return out
}

// pin moves a version's server (managed: perfbench started it) and its
// load, every thread, to cpus; the server remembers where it is.
func (c *comparison) pin(m *member, cpus cpuset.Set) {
	s := m.sr.s
	if _, err := cpuset.PinProcess(s.pid, cpus); err != nil {
		s.notes = append(s.notes, fmt.Sprintf("duet: the server could not be moved to CPUs %s: %v", cpus, err))
	} else {
		s.cpus = cpus
	}
	if m.sr.load != nil {
		if _, err := cpuset.PinProcess(m.sr.load.Pid(), cpus); err != nil {
			s.notes = append(s.notes, fmt.Sprintf("duet: the load could not be moved to CPUs %s: %v", cpus, err))
		}
	}
}

// warmUp runs every load together for the step's warm-up; in slices, every
// load is stopped after it. It reports whether ctx is still live.
func (c *comparison) warmUp(ctx context.Context, live []*member) bool {
	if d := c.st.Warmup; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	if ctx.Err() != nil {
		for _, m := range live {
			m.rec = failed(m.sr.newRecord(), "interrupted during the %s warm-up: nothing was measured", c.st.Warmup)
		}
		return false
	}
	if c.mode == record.ComparisonSlices {
		for _, m := range live {
			proc.Pause(m.sr.load.Pid())
		}
	}
	return true
}

// result is a member's window, as Measure returned it.
type result struct {
	m    *member
	rec  *record.Record
	merr error
}

// measure opens every live member's window at once and walks the
// schedule: at every slice edge every member reads its server (a tick,
// acknowledged once read) and the host's CPU times are read; after the
// last slice every window closes together.
func (c *comparison) measure(ctx context.Context, live []*member) {
	c.inWindow = live
	n := len(live)
	acks := make(chan *member, n)
	opened := make(chan struct{}, n)
	results := make(chan result, n)
	for _, m := range live {
		m.active = true
		go c.watch(ctx, m)
		go func(m *member) {
			rec, err := m.sess.Measure(ctx, measure.WindowSpec{
				Done: mergeDone(m.done, m.ended), Ticks: m.ticks, TickEvery: c.slice,
				Opened:  func(time.Time) { opened <- struct{}{} },
				OnPoint: func(int) { acks <- m },
			})
			results <- result{m, rec, err}
		}(m)
	}
	for range live {
		select {
		case <-opened:
		case res := <-results: // a window that could not open
			c.take(res)
		}
	}
	c.readHost()
	slots := c.slices(n)
	// Keep at least half the tail under load after the window.
	c.deadline = c.loadsEnd(live).Add(-c.r.tail / 2)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x9e3779b97f4a7c15))
	var order []int
	cut := 0
	for slot := 0; slot < slots && ctx.Err() == nil; slot++ {
		if time.Now().Add(c.slice).After(c.deadline) {
			// The slice edges ran late (a stalled machine): the loads
			// end at their planned time, so the window ends here.
			cut = slots - slot
			break
		}
		var running *member
		if c.mode == record.ComparisonDuet {
			// Member i runs on set (i+slot) mod n. Moving one version
			// onto a set another still holds makes them share it until
			// that one moves too, so the order changes every slice:
			// over a turn every version is moved first once.
			for _, i := range firstFrom(slot, n) {
				c.pin(live[i], c.sets[(i+slot)%n])
			}
			c.slots = append(c.slots, slot%n)
		} else {
			if slot%n == 0 {
				order = rng.Perm(n)
			}
			c.slots = append(c.slots, order[slot%n])
			running = live[order[slot%n]]
			proc.Resume(running.sr.load.Pid())
		}
		sleep(ctx, c.slice)
		if running != nil {
			proc.Pause(running.sr.load.Pid())
		}
		if slot == slots-1 || ctx.Err() != nil {
			break
		}
		// Who is read first changes every slice, as who is moved first.
		order := make([]*member, 0, n)
		for _, i := range firstFrom(slot+1, n) {
			order = append(order, live[i])
		}
		c.tick(ctx, order, acks, results)
	}
	c.cut, c.planned = cut, slots
	for _, m := range live {
		if m.active {
			close(m.done)
		}
	}
	c.readHost()
	open := 0
	for _, m := range live {
		if m.active {
			open++
		}
	}
	// A window's last reading is acknowledged too, and a tick left
	// early (ctx ended) may leave acks behind: take them while waiting,
	// so that no Measure blocks on a full acks before sending its result.
	for open > 0 {
		select {
		case res := <-results:
			c.take(res)
			open--
		case <-acks:
		}
	}
}

// firstFrom is 0..n-1 rotated to start at k mod n: the order in which a
// comparison's members are moved and read at slice k, so that over n
// slices each of them comes first once.
func firstFrom(k, n int) []int {
	out := make([]int, n)
	for j := range out {
		out[j] = (k + j) % n
	}
	return out
}

// loadsEnd is when the first of the loads ends by itself: it was started
// to run its warm-up, the comparison's window, the tail and the slack.
func (c *comparison) loadsEnd(live []*member) time.Time {
	var end time.Time
	n := len(c.members)
	for _, m := range live {
		e := m.sr.load.Started().Add(c.st.Warmup + c.st.Duration + c.r.tail + c.extraTime(n))
		if end.IsZero() || e.Before(end) {
			end = e
		}
	}
	return end
}

// take keeps a member's window.
func (c *comparison) take(res result) {
	m := res.m
	m.active = false
	m.rec, m.merr = res.rec, res.merr
	if m.rec == nil {
		m.rec = m.sr.newRecord()
		if m.merr == nil {
			m.merr = fmt.Errorf("no record")
		}
	}
	if m.rec.Comparison != nil {
		m.rec.Comparison.Mode = c.mode // known to what reads the Record before describe
	}
}

// tick reads every member still in its window at once and waits until
// each has read (or its window ended).
func (c *comparison) tick(ctx context.Context, live []*member, acks chan *member, results chan result) {
	now := time.Now()
	waiting := map[*member]bool{}
	for _, m := range live {
		if !m.active {
			continue
		}
		select {
		case m.ticks <- now:
			waiting[m] = true
		default:
			// A tick it has not taken: its window ended (its load or
			// its server exited), and its Record comes on results.
		}
	}
	// The host's CPU times at the same instant, while the servers are
	// read.
	c.readHost()
	for len(waiting) > 0 {
		select {
		case m := <-acks:
			delete(waiting, m)
		case res := <-results:
			delete(waiting, res.m)
			c.take(res)
		case <-ctx.Done():
			return
		}
	}
}

// readHost reads the host's CPU times at a slice edge, and what other
// processes used over the slice that ended there.
func (c *comparison) readHost() {
	e, err := measure.ReadHostEdge()
	if err != nil && c.hostErr == nil {
		c.hostErr = err
	}
	c.edges = append(c.edges, e) // zero when it failed: the slices on either side are not checked
	if len(c.edges) < 2 {
		return
	}
	var own []int
	for _, m := range c.members {
		own = append(own, m.sr.s.pid)
	}
	other, busy, known := measure.OtherCPU(c.edges[len(c.edges)-2], c.edges[len(c.edges)-1], own)
	c.other = append(c.other, other)
	c.busy = append(c.busy, busy)
	c.unknown = append(c.unknown, !known)
}

// watch closes m.ended when its load or its server exits, until its window
// ends.
func (c *comparison) watch(ctx context.Context, m *member) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-m.done:
		case <-wctx.Done(): // a member whose window ended early is never done
		}
		cancel()
	}()
	select {
	case <-m.sr.load.Exited():
	case <-m.sr.s.exited(wctx):
	case <-wctx.Done():
		return
	}
	close(m.ended)
}

// mergeDone returns a channel closed when either is.
func mergeDone(a, b <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-a:
		case <-b:
		}
		close(out)
	}()
	return out
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// describe completes a member's Record.Comparison: the mode, the versions,
// and for every slice its turn, whether its load ran, its CPUs (duet) and
// what other processes used of the host.
func (c *comparison) describe(m *member) {
	rec := m.rec
	if rec.Comparison == nil {
		return
	}
	cmp := rec.Comparison
	cmp.Mode, cmp.ID, cmp.SliceSeconds = c.mode, c.id, c.slice.Seconds()
	pos := -1
	for i, x := range c.inWindow {
		cmp.Versions = append(cmp.Versions, x.it.Version.Label)
		if x == m {
			pos = i
		}
	}
	n := len(c.inWindow)
	if len(cmp.Slices) != len(c.slots) {
		rec.Warnf(record.WarnGeneral, "comparison %s: the window has %d slices where the schedule has %d (it ended early): "+
			"its slices are not paired", c.id, len(cmp.Slices), len(c.slots))
		for i := range cmp.Slices {
			cmp.Slices[i].Error = "the window's slices do not match the comparison's schedule"
		}
	}
	if c.cut > 0 && rec.Outcome == record.OutcomeOK {
		// A window shorter than planned: partial, and --resume measures
		// it again.
		rec.Outcome = record.OutcomePartial
		rec.Error = fmt.Sprintf("comparison %s ran %d of its %d slices: the windows opened or their slice edges ran late (the "+
			"machine or a server stalled), and the loads end at their planned time", c.id, c.planned-c.cut, c.planned)
	}
	busy, unknown := 0, 0
	for i := range cmp.Slices {
		sl := &cmp.Slices[i]
		sl.Turn = i / n
		if i < len(c.slots) {
			if c.mode == record.ComparisonDuet {
				sl.Ran = true
				sl.CPUs = c.sets[(pos+i)%n].String()
			} else {
				sl.Ran = c.slots[i] == pos
			}
		}
		if i < len(c.other) {
			sl.OtherCPUSeconds = c.other[i]
			sl.Busy = c.busy[i]
		}
		if sl.Busy && sl.Ran {
			busy++
		}
		if sl.Ran && i < len(c.unknown) && c.unknown[i] {
			unknown++
		}
	}
	if unknown > 0 {
		why := "a slice edge was not read"
		if c.hostErr != nil {
			why = c.hostErr.Error()
		}
		rec.Warnf(record.WarnGeneral, "comparison %s: whether other processes were busy is not known for %d of the %d slices this version ran (%s): their pairs are kept unchecked", c.id, unknown, ranSlices(cmp.Slices), why)
	}
	if busy > 0 {
		rec.Warnf(record.WarnGeneral, "comparison %s: other processes were busy in %d of the %d slices this version ran: "+
			"their pairs are left out", c.id, busy, ranSlices(cmp.Slices))
	}
}

// ranSlices counts the slices in which the load ran.
func ranSlices(sl []record.Slice) int {
	n := 0
	for _, s := range sl {
		if s.Ran {
			n++
		}
	}
	return n
}
