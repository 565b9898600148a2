package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/perfbench/perfbench/record"
)

// Names of the metrics computed from a Record. A counter's per-op metric is
// PerOpName(event); its misses per 1,000 instructions are MPKIName(event).
const (
	OpsPerSecond = "o/s"   // operations per second over the window
	CPUPerOp     = "cpu/o" // µs of CPU per op
	CSPerOp      = "cs/o"  // context switches per op
	ReadsPerOp   = "r/o"   // storage reads per op (disk stats)
	WritesPerOp  = "w/o"   // storage writes per op (disk stats)
	ReadKBPerOp  = "rKB/o" // KB read per op
	WriteKBPerOp = "wKB/o" // KB written per op
	IPC          = "IPC"   // instructions per cycle
	CPI          = "CPI"   // cycles per instruction
)

// CPUIOMetrics are the CPU and IO per-op columns of the sysbench posts, in
// table order (throughput first, so the QPS ratio sits next to the CPU and
// IO ratios that explain it; writes per op as the IO-bound posts show them).
var CPUIOMetrics = []string{OpsPerSecond, CPUPerOp, CSPerOp, ReadsPerOp, WritesPerOp, ReadKBPerOp, WriteKBPerOp}

// PerOpName is the metric name of a counter per op: "instructions/o".
func PerOpName(event string) string { return event + "/o" }

// MPKIName is the metric name of an event's misses per 1,000 instructions.
func MPKIName(event string) string { return "MPKI(" + event + ")" }

// EventOf returns the event of a per-op metric name, or "".
func EventOf(metric string) string {
	if e, ok := strings.CutSuffix(metric, "/o"); ok && !isCPUIO(metric) {
		return e
	}
	return ""
}

func isCPUIO(metric string) bool {
	switch metric {
	case CPUPerOp, CSPerOp, ReadsPerOp, WritesPerOp, ReadKBPerOp, WriteKBPerOp:
		return true
	}
	return false
}

// isMissEvent reports whether an event counts misses, so that its MPKI is
// worth printing (branch-misses, cache-misses, LLC-load-misses, ...).
func isMissEvent(event string) bool { return strings.Contains(event, "miss") }

// LowerIsBetter reports whether a smaller value of the metric is an
// improvement: true for costs per op, false for throughput and IPC.
func LowerIsBetter(metric string) bool {
	switch metric {
	case OpsPerSecond, IPC, "qps", "ips":
		return false
	}
	return true
}

// Names of the Record.Metrics keys of a table Record (from a CSV) that are not
// event totals.
const (
	TableQPS     = "qps"     // operations per second
	TableOps     = "ops"     // operations in the window
	TableSeconds = "seconds" // window length
)

// Options change how per-op metrics are computed. The zero value is the
// default.
type Options struct {
	// KeepScanOps keeps the Record's ops for scan steps instead of
	// normalizing per 1,000 rows read.
	KeepScanOps bool
	// Alpha is the significance level of comparisons to the base (0.05
	// when zero).
	Alpha float64
	// Confidence is the level of confidence intervals (0.95 when zero).
	Confidence float64
	// Order is the order of steps in the tables: OrderRun (when empty),
	// orderInput or orderName.
	Order string
}

func (o Options) alpha() float64 {
	if o.Alpha > 0 {
		return o.Alpha
	}
	return 0.05
}

func (o Options) confidence() float64 {
	if o.Confidence > 0 {
		return o.Confidence
	}
	return 0.95
}

// PerOp is the metrics of one Record.
type PerOp struct {
	// Failed is set for a Record of a failed step: every metric is Failed.
	Failed bool
	// Ops is the operation count used; OpsSource and OpsPer say what an op
	// is ("Questions", 1; "Rows_read", 1000). OpsEstimated is set when the
	// count was estimated, not counted in the window.
	Ops          float64
	OpsSource    string
	OpsPer       float64
	OpsEstimated bool
	// Seconds is the window length.
	Seconds float64
	// cells are the Record's metrics' cells, packed, where its layout
	// (shared by the Records computed alike) says: a report holds one of
	// these per Record.
	layout *layout
	cells  []packedCell
	// Events lists the events of the Record in its order.
	Events []string
	// Device is the block device of the Record's disk stats ("" without
	// them): r/o and w/o count every process's IO on it.
	Device string
	// Notes say which fallbacks were taken ("cpu/o from /proc").
	Notes []Note
	// TopDownSet is the metric set whose TopDown definitions gave the
	// topdown.*/o metrics ("" without them; see computeTopDown).
	TopDownSet string
}

// Get returns the metric's cell: Failed for a failed Record, Missing when the
// Record has no source for it.
func (p *PerOp) Get(metric string) Cell { return p.get(metricIDOf(metric)) }

// get is Get by the metric's id.
func (p *PerOp) get(id metricID) Cell {
	if p.Failed {
		return Stated(Failed)
	}
	if i := p.layout.cell(id); i >= 0 {
		return p.cells[i].cell()
	}
	return Stated(Missing)
}

// Has reports whether the Record has the metric, with a value or a state.
func (p *PerOp) Has(metric string) bool {
	id, ok := lookupID(metric)
	return ok && p.layout.cell(id) >= 0
}

// Metrics returns the names of the metrics the Record has, sorted.
func (p *PerOp) Metrics() []string {
	if p.layout == nil {
		return []string{}
	}
	return slices.Clone(p.layout.names)
}

// packedCell is a Cell of one Record: what such a cell can hold (one
// repeat, no interval, no test) in a fraction of the space.
type packedCell struct {
	value, running float64
	why            uint16 // index in reasons
	state          State
	partial        bool
	estimated      bool
}

// reasons interns the Why of packed cells: a few distinct texts, each
// held once.
var reasons = struct {
	sync.RWMutex
	index map[string]uint16
	texts []string
}{index: map[string]uint16{"": 0}, texts: []string{""}}

func reasonIndex(why string) uint16 {
	if why == "" {
		return 0
	}
	reasons.RLock()
	i, ok := reasons.index[why]
	reasons.RUnlock()
	if ok {
		return i
	}
	reasons.Lock()
	defer reasons.Unlock()
	if i, ok := reasons.index[why]; ok {
		return i
	}
	if len(reasons.texts) == math.MaxUint16 {
		return 0 // not reached: reasons are a fixed set of texts
	}
	i = uint16(len(reasons.texts))
	reasons.index[why] = i
	reasons.texts = append(reasons.texts, why)
	return i
}

func reasonText(i uint16) string {
	if i == 0 {
		return ""
	}
	reasons.RLock()
	defer reasons.RUnlock()
	return reasons.texts[i]
}

func pack(c Cell) packedCell {
	return packedCell{value: c.Value, running: c.Running, why: reasonIndex(c.Why), state: c.State, partial: c.Partial, estimated: c.Estimated}
}

func (p packedCell) cell() Cell {
	c := Stated(p.state)
	if p.state == Measured {
		c = Val(p.value)
		c.Running = p.running
	}
	c.Why, c.Partial, c.Estimated = reasonText(p.why), p.partial, p.estimated
	return c
}

// reservedTableMetric reports whether a Record.Metrics key of a table Record
// is something other than an event total.
func reservedTableMetric(k string) bool {
	switch k {
	case TableQPS, TableOps, TableSeconds, OpsPerSecond, IPC, CPI, "tps":
		return true
	}
	return strings.HasSuffix(k, "/o") || strings.HasPrefix(k, "MPKI(") || isInsertColumn(k)
}

// eventCounters returns the Record's event totals: its Counters, and for a
// table Record its Metrics entries that name events (as counted counters).
func eventCounters(r *record.Record) []record.Counter {
	if r.Kind != record.KindTable || len(r.Metrics) == 0 {
		return r.Counters // the callers read it only
	}
	out := append([]record.Counter(nil), r.Counters...)
	have := map[string]bool{}
	for _, c := range out {
		have[c.Event] = true
	}
	keys := make([]string, 0, len(r.Metrics))
	for k := range r.Metrics {
		if !reservedTableMetric(k) && !have[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, record.Counter{Event: k, Value: r.Metrics[k], Status: record.StatusCounted})
	}
	return out
}

// counterCell is the scaled value of a counter with its state.
func counterCell(c record.Counter) Cell { return counterValueOf(c).cell() }

// counterValue is what a counter's cell holds (counterCell): a value and
// its running fraction, or a state without a value.
type counterValue struct {
	v, running float64
	state      State
}

func counterValueOf(c record.Counter) counterValue {
	switch c.Status {
	case record.StatusCounted:
		return counterValue{c.Value, 1, Measured}
	case record.StatusScaled:
		f := c.RunningFraction()
		if f <= 0 || f > 1 {
			f = 1
		}
		return counterValue{c.Value, f, Measured}
	case record.StatusNotCounted:
		return counterValue{running: 1, state: NotCounted}
	case record.StatusNotSupported:
		return counterValue{running: 1, state: NotSupported}
	}
	return counterValue{running: 1, state: Missing}
}

func (a counterValue) cell() Cell {
	if a.state != Measured {
		return Stated(a.state)
	}
	return scaled(a.v, a.running)
}

// combine is the package's combine of the two counters' cells, which
// carry no reason, partial window, estimate or repeat counts.
func (a counterValue) combine(b counterValue, f func(x, y float64) float64) counterValue {
	if a.state != Measured || b.state != Measured {
		if stateFromB(a.state, b.state) {
			return counterValue{running: 1, state: b.state}
		}
		return counterValue{running: 1, state: a.state}
	}
	return counterValue{f(a.v, b.v), math.Min(a.running, b.running), Measured}
}

// windowSeconds is the window length of r.
func windowSeconds(r *record.Record) float64 {
	if r.Kind == record.KindTable {
		if s, ok := r.Metrics[TableSeconds]; ok {
			return s
		}
	}
	if a := r.ActiveSeconds(); a > 0 {
		// Measured in a comparison: the slices in which its load ran.
		return a
	}
	if r.Window.Seconds > 0 {
		return r.Window.Seconds
	}
	if d := r.Window.End.Sub(r.Window.Start).Seconds(); d > 0 {
		return d
	}
	return 0
}

// rowsRead returns the rows-read status delta of r and its name.
func rowsRead(r *record.Record) (float64, string) {
	for _, k := range []string{"Rows_read", "Innodb_rows_read"} {
		if v, ok := r.Status[k]; ok && v > 0 {
			return v, k
		}
	}
	return 0, ""
}

// compute returns the per-op metrics of one Record.
func compute(r *record.Record, opt Options) *PerOp { return computeWith(r, opt, newNamer()) }

// computeWith is compute with the namer of the calling goroutine.
func computeWith(r *record.Record, opt Options, n *namer) *PerOp {
	k := &computation{r: r, p: &PerOp{OpsPer: 1}, partial: r.Outcome == record.OutcomePartial, n: n}
	if r.Outcome == record.OutcomeFailed {
		k.p.Failed = true
		return k.p
	}
	k.p.Seconds = windowSeconds(r)
	k.countOps(opt)
	k.throughput()
	k.events()
	k.rotation()
	k.topDown()
	k.cpu()
	k.io()
	if r.Kind == record.KindTable {
		k.tableValues()
	}
	insertMetrics(r, k.p, k.counters, k.set)
	k.roleShares()
	n.finish(k.p)
	return k.p
}

// computation is the state of Compute: the Record, the metrics computed so
// far, its op count as a cell and its counters by event.
type computation struct {
	r       *record.Record
	p       *PerOp
	partial bool
	ops     Cell
	haveOps bool
	// zeroOps is set when the Record counted 0 operations.
	zeroOps  bool
	counters map[string]Cell
	n        *namer
}

// set records a metric: a non-finite value becomes "not finite", and
// every value of a partial window is marked partial.
func (k *computation) set(name string, c Cell) { k.setID(k.n.id(name), c) }

// setID is set by the metric's id.
func (k *computation) setID(id metricID, c Cell) {
	if c.OK() && !finite(c.Value) {
		c = NoValue(WhyNotFinite)
	}
	c.Partial = c.Partial || k.partial
	// In the order set: computeWith stores them once at the end.
	k.n.set = append(k.n.set, idCell{id, pack(c)})
}

// setCounter is setID of v.cell(), packed without making the Cell: a
// Record sets a share for each role and event.
func (k *computation) setCounter(id metricID, v counterValue) {
	p := packedCell{running: 1, state: v.state, partial: k.partial}
	switch {
	case v.state != Measured:
	case !finite(v.v):
		p.state, p.why = NotComputable, reasonIndex(WhyNotFinite)
	default:
		p.value, p.running = v.v, v.running
	}
	k.n.set = append(k.n.set, idCell{id, p})
}

func (k *computation) note(t Topic, text string) {
	k.p.Notes = append(k.p.Notes, Note{Text: text, Topic: t})
}

// perOp divides a cell by the op count.
func (k *computation) perOp(c Cell, scale float64) Cell {
	return combine(c, k.ops, func(x, y float64) float64 { return x * scale / y })
}

// countOps sets the op count: the Record's, a table's ops or qps × seconds,
// thousands of rows read for a scan step (unless opt.KeepScanOps).
func (k *computation) countOps(opt Options) {
	r, p := k.r, k.p
	p.Ops, p.OpsSource = r.Ops.Count, r.Ops.Source
	if r.Ops.Per > 0 {
		p.OpsPer = r.Ops.Per
	}
	if r.Kind == record.KindTable {
		p.OpsSource = "table"
		if v, ok := r.Metrics[TableOps]; ok {
			p.Ops = v
		} else if q, ok := r.Metrics[TableQPS]; ok && p.Seconds > 0 {
			p.Ops = q * p.Seconds
		}
	}
	if IsScan(r.Step) && !opt.KeepScanOps && p.OpsPer != 1000 {
		if rows, name := rowsRead(r); rows > 0 {
			p.Ops, p.OpsSource, p.OpsPer = rows/1000, name, 1000
		} else if r.Kind != record.KindTable {
			k.note(TopicPerOp, fmt.Sprintf("scan step normalized per %s: the record has no rows-read status to count 1,000-row "+
				"operations", orDefault(p.OpsSource, "op")))
		}
	}
	k.haveOps = p.Ops > 0
	p.OpsEstimated = k.haveOps && opsEstimated(r)
	k.ops = Val(p.Ops)
	k.ops.Estimated = p.OpsEstimated
	switch {
	case !k.haveOps:
		k.ops = NoValue(whyNoOps)
	case !finite(p.Ops):
		k.ops = NoValue(WhyNotFinite)
	}
	k.opsCounted()
}

// opsCounted applies what the Record says of its op count (a table's
// rows aside): uncounted (Ops.Counted unset), its count means nothing,
// and nothing is divided by it, nor is its QPS taken from it; counted
// as 0, the window's QPS is 0 and no per-op value has anything to divide
// by. Each says so in a note, unless the Record's own warning does.
func (k *computation) opsCounted() {
	r, p := k.r, k.p
	if r.Kind == record.KindTable {
		return
	}
	switch {
	case r.Ops.Source == "":
		p.Ops, p.OpsEstimated, k.haveOps = 0, false, false
		k.ops = NoValue(whyNoOps)
	case !r.OpsCounted():
		p.Ops, p.OpsEstimated, k.haveOps = 0, false, false
		k.ops = NoValue(whyOpsNotCounted)
		if !slices.ContainsFunc(r.Warnings, func(w record.Warning) bool { return w.Code == record.WarnOpsNotCounted }) {
			k.note(TopicGeneral, fmt.Sprintf("the Record says its %s count was not counted over the window (ops.counted false): no QPS and no per-op values from it", r.Ops.Source))
		}
	case p.Ops == 0:
		k.zeroOps = true
		k.ops = NoValue(whyZeroOps)
		k.note(TopicGeneral, fmt.Sprintf("the window counted 0 operations (%s): its QPS is 0 and it has no per-op values", r.Ops.Source))
	}
}

// throughput sets the ops per second. An insert-benchmark table's
// throughput is its queries/s when the step ran queries, else its
// inserts/s (load steps, whose qps is 0): a ratio of two zero query rates
// says nothing.
func (k *computation) throughput() {
	r, table := k.r, k.r.Kind == record.KindTable
	if q, ok := r.Metrics[TableQPS]; ok && table && !(q == 0 && hasMetric(r, "ips")) {
		k.set(OpsPerSecond, Val(q))
	} else if ips, ok := r.Metrics["ips"]; ok && table {
		k.set(OpsPerSecond, Val(ips))
	} else if q, ok := r.Metrics[OpsPerSecond]; ok && table {
		k.set(OpsPerSecond, Val(q))
	} else if k.zeroOps && k.p.Seconds > 0 {
		k.set(OpsPerSecond, Val(0))
	} else if k.p.Seconds > 0 {
		k.set(OpsPerSecond, combine(k.ops, Val(k.p.Seconds), func(x, y float64) float64 { return x / y }))
	} else if k.haveOps {
		k.set(OpsPerSecond, NoValue(whyNoDuration))
	}
}

// events sets the counters per op, IPC, CPI and MPKI.
func (k *computation) events() {
	p := k.p
	counters := eventCounters(k.r)
	k.counters = k.n.counters()
	events := k.n.events[:0]
	for _, c := range counters {
		if _, dup := k.counters[c.Event]; dup {
			continue
		}
		cell := counterCell(c)
		k.counters[c.Event] = cell
		events = append(events, c.Event)
		k.setID(k.n.perOpID(c.Event), k.perOp(cell, 1))
	}
	k.n.events = events
	p.Events = k.n.sharedEvents(events)
	if ins, ok := k.counters["instructions"]; ok {
		if cyc, ok := k.counters["cycles"]; ok {
			k.set(IPC, quotient(ins, cyc, "cycles", 1))
			k.set(CPI, quotient(cyc, ins, "instructions", 1))
		}
		for _, e := range p.Events {
			if isMissEvent(e) {
				k.setID(k.n.mpkiID(e), quotient(k.counters[e], ins, "instructions", 1000))
			}
		}
	}
}

// cpu sets CPU per op: the kernel's CPU time of what was counted when
// the Record has it, else task-clock (ns), else cpu-clock, else /proc
// user+sys; and context switches per op: the counter, else /proc's.
func (k *computation) cpu() {
	r := k.r
	cpu, cpuFound := Cell{}, false
	events := []string{"task-clock", "cpu-clock"}
	if kc := r.KernelCPU; kc != nil && kc.Seconds >= 0 {
		cpu, cpuFound, events = k.perOp(Val(kc.Seconds), 1e6), true, nil
		if kc.LeavesOut != "" && k.haveOps {
			k.note(TopicCPU, "cpu/o from the kernel's CPU time, which leaves out the "+kc.LeavesOut+" (task-clock/o counts them)")
		}
	}
	for _, e := range events {
		if c, ok := k.counters[e]; ok {
			if c.OK() {
				cpu, cpuFound = k.perOp(c, 1e-3), true
				break
			}
			if !cpuFound {
				cpu, cpuFound = c, true
			}
		}
	}
	if (!cpuFound || !cpu.OK()) && r.OS != nil {
		cpu, cpuFound = k.perOp(Val(r.OS.UserSeconds+r.OS.SystemSeconds), 1e6), true
		if k.haveOps {
			k.note(TopicCPU, "cpu/o from /proc user+system time (task-clock not measured)")
		}
	}
	if cpuFound {
		k.set(CPUPerOp, cpu)
	}

	if c, ok := k.counters["context-switches"]; ok && (c.OK() || r.OS == nil) {
		k.set(CSPerOp, k.perOp(c, 1))
	} else if r.OS != nil {
		k.set(CSPerOp, k.perOp(Val(r.OS.VoluntaryCS+r.OS.InvoluntaryCS), 1))
	}
}

// io sets IO per op. Reads and writes per op exist only for the device:
// every process on it. KB per op come from the server's own /proc io
// whenever the Record has it, a 0 included; the device's sectors are the
// fallback of Records without it.
func (k *computation) io() {
	r, p := k.r, k.p
	if r.OS != nil && r.OS.Disk != nil {
		d := r.OS.Disk
		p.Device = orDefault(d.Device, "the data directory's device")
		k.set(ReadsPerOp, k.perOp(Val(d.Reads), 1))
		k.set(WritesPerOp, k.perOp(Val(d.Writes), 1))
	}
	switch {
	case r.OS != nil && hasProcIO(r):
		k.set(ReadKBPerOp, k.perOp(Val(r.OS.ReadBytes), 1.0/1024))
		k.set(WriteKBPerOp, k.perOp(Val(r.OS.WriteBytes), 1.0/1024))
	case r.OS != nil && r.OS.Disk != nil:
		k.set(ReadKBPerOp, k.perOp(Val(r.OS.Disk.ReadSectors), 512.0/1024))
		k.set(WriteKBPerOp, k.perOp(Val(r.OS.Disk.WriteSectors), 512.0/1024))
		if k.haveOps {
			k.note(TopicIO, fmt.Sprintf("rKB/o and wKB/o from the sectors of %s, device-wide: every process on %s (the Record "+
				"has no /proc/PID/io of the server)", p.Device, p.Device))
		}
	}
}

// tableValues sets the values a table Record gives directly, over the
// computed ones; the insert benchmark's per-operation columns stand for
// the per-op metrics the table does not give (wpi and wkbpi only where an
// operation is an insert: steps without queries).
func (k *computation) tableValues() {
	r := k.r
	for m, v := range r.Metrics {
		if m == TableQPS || m == TableOps || m == TableSeconds {
			continue
		}
		if reservedTableMetric(m) {
			k.set(m, Val(v))
		}
	}
	inserts := hasMetric(r, "ips") && r.Metrics[TableQPS] == 0
	for _, m := range insertPerOp {
		v, ok := r.Metrics[m.column]
		if _, given := r.Metrics[m.metric]; ok && !given && (inserts || !m.perInsert) {
			k.set(m.metric, Val(v))
		}
	}
}

// insertPerOp maps the insert benchmark's per-operation columns to the
// per-op metrics of the CPU and IO tables; perInsert columns are per
// insert, which is an operation only on steps without queries.
var insertPerOp = []struct {
	column, metric string
	perInsert      bool
}{
	{"cpupq", CPUPerOp, false}, {"cspq", CSPerOp, false}, {"rpq", ReadsPerOp, false}, {"rkbpq", ReadKBPerOp, false},
	{"wpi", WritesPerOp, true}, {"wkbpi", WriteKBPerOp, true},
}

// quotient is x / y × scale for a quantity derived inside one window (IPC,
// CPI, MPKI): when y, the event den, counted 0 there is no value (neither 1
// for 0/0 nor infinity) and the cell says why.
func quotient(x, y Cell, den string, scale float64) Cell {
	if y.OK() && y.Value == 0 {
		return NoValue(zeroDenominator(den))
	}
	return combine(x, y, func(a, b float64) float64 { return a / b * scale })
}

// hasProcIO reports whether the Record's read_bytes and write_bytes were read
// from the server's /proc/PID/io: it has /proc deltas and no warning says the
// IO was not measured.
func hasProcIO(r *record.Record) bool {
	return r.OS != nil && !slices.ContainsFunc(r.Warnings, func(w record.Warning) bool { return w.Code == record.WarnIONotMeasured })
}

// opsEstimated reports whether the Record's op count was estimated rather
// than counted in its window (record.Ops.Estimated).
func opsEstimated(r *record.Record) bool { return r.Ops.Estimated }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// roleShares sets "role:<name>:<event>" to the role's share (0–1) of the
// event's total over all roles, and "role:<name>:threads".
func (k *computation) roleShares() {
	r := k.r
	if len(r.Roles) == 0 {
		return
	}
	// Each event's total, in order of first appearance: the roles of a
	// Record mostly count the same events in the same order, so an event
	// is mostly where the previous role had it.
	totals := k.n.totals[:0]
	find := func(event string, guess int) int {
		if guess < len(totals) && totals[guess].event == event {
			return guess
		}
		for i := range totals {
			if totals[i].event == event {
				return i
			}
		}
		return -1
	}
	sum := func(x, y float64) float64 { return x + y }
	for _, role := range r.Roles {
		for j, c := range role.Counters {
			v := counterValueOf(c)
			if i := find(c.Event, j); i >= 0 {
				totals[i].total = totals[i].total.combine(v, sum)
			} else {
				totals = append(totals, eventTotal{c.Event, v})
			}
		}
	}
	k.n.totals = totals
	quo := func(x, y float64) float64 { return x / y }
	i := 0 // the role metric's place in the Record
	for _, role := range r.Roles {
		k.setID(k.n.roleID(i, role.Name, "threads"), Val(float64(role.Threads)))
		i++
		for j := range role.Counters {
			c := &role.Counters[j]
			t := totals[find(c.Event, j)].total
			id := k.n.roleID(i, role.Name, c.Event)
			if t.state == Measured && t.v == 0 {
				k.setID(id, NoValue(whyZeroTotal)) // no share of nothing
			} else {
				k.setCounter(id, counterValueOf(*c).combine(t, quo))
			}
			i++
		}
	}
}

// RoleMetric is the metric name of a thread role's share of an event.
func RoleMetric(role, event string) string { return "role:" + role + ":" + event }

// median of sorted values, for callers that need one without intervals.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
