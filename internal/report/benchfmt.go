package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/perf/benchfmt"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// benchUnit is how a metric is written in the Go benchmark format.
type benchUnit struct {
	unit  string
	scale float64 // benchfmt value = metric value × scale
}

// benchUnitOf maps a per-op metric to its benchmark unit; "" skips it.
func benchUnitOf(metric string) benchUnit {
	switch metric {
	case analysis.CPUPerOp:
		return benchUnit{"cpu-sec/op", 1e-6}
	case analysis.CSPerOp:
		return benchUnit{"cs/op", 1}
	case analysis.ReadsPerOp:
		return benchUnit{"reads/op", 1}
	case analysis.WritesPerOp:
		return benchUnit{"writes/op", 1}
	case analysis.ReadKBPerOp:
		return benchUnit{"read-B/op", 1024}
	case analysis.WriteKBPerOp:
		return benchUnit{"write-B/op", 1024}
	case analysis.IPC:
		return benchUnit{"instructions/cycle", 1}
	case analysis.CPI:
		return benchUnit{"cycles/instruction", 1}
	}
	if strings.HasPrefix(metric, "MPKI(") && strings.HasSuffix(metric, ")") {
		return benchUnit{unitToken(metric[5:len(metric)-1]) + "/kinstr", 1}
	}
	if e := analysis.EventOf(metric); e != "" {
		return benchUnit{unitToken(e) + "/op", 1}
	}
	return benchUnit{}
}

// throughputUnit names ops per second after what an op is.
func throughputUnit(p *analysis.PerOp) string {
	switch {
	case p.OpsPer == 1000:
		return "krows/s"
	case p.OpsSource == "client.transactions":
		return "transactions/s"
	case p.OpsSource == "client.inserts":
		return "inserts/s"
	case p.OpsSource == "Questions" || p.OpsSource == "client.queries" || strings.HasPrefix(p.OpsSource, "Com_"):
		return "queries/s"
	}
	return "ops/s"
}

// unitToken makes s usable as a unit or a name part: no spaces, no slashes.
func unitToken(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '/' {
			return '_'
		}
		return r
	}, s)
}

// camel turns "point-query.pre" into "PointQueryPre".
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '-' || r == '.' || r == '_' || unicode.IsSpace(r) || r == '/' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// benchName is the benchmark name of a step for a version and thread
// count: "point-query_range=100" gives
// "PointQuery/range=100/v=VERSION/threads=N". benchstat -col /v puts the
// versions side by side.
func benchName(step, version string, threads int) string {
	label, params := step, []string(nil)
	if i := strings.IndexByte(step, '_'); i >= 0 {
		label, params = step[:i], strings.Split(step[i+1:], "_")
	}
	name := camel(label)
	if name == "" {
		name = "Step"
	}
	var subs []string
	for _, p := range params {
		if strings.Contains(p, "=") {
			subs = append(subs, unitToken(p))
		} else {
			name += camel(p)
		}
	}
	subs = append(subs, "v="+unitToken(version), fmt.Sprintf("threads=%d", threads))
	return name + "/" + strings.Join(subs, "/")
}

// writeBenchfmt writes the Records in the Go benchmark format, one result line
// per repeat: iterations are the window's operations, values are the
// window's throughput and per-op metrics, with unit metadata saying whether
// higher or lower is better. Only measured values are written: failed
// steps, unsupported and never-counted events are listed in comment lines,
// which benchstat ignores, as are multiplexed counters and partial windows
// whose values are written. The base version's results come first so that
// `benchstat -col /v FILE` compares every version with it.
func writeBenchfmt(w io.Writer, recs []*record.Record, opt Options) error {
	c, err := analysis.New(recs, opt.Base, opt.Analysis)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# perfbench results in the Go benchmark format; compare the versions with the base (%s):\n#   benchstat -col /v FILE\n", c.Base)
	b := &benchResults{units: map[string]int{},
		metrics: append([]string{analysis.CPUPerOp, analysis.CSPerOp, analysis.ReadsPerOp, analysis.ReadKBPerOp, analysis.WriteKBPerOp, analysis.WritesPerOp},
			c.CounterMetrics()...)}
	versions := append([]string{c.Base}, c.Others()...)
	for _, step := range c.Steps {
		for _, sc := range c.Scopes {
			for _, v := range versions {
				s := c.Sample(analysis.Key(sc, v, step))
				if s == nil {
					continue
				}
				name := benchName(step, v, sc.Threads)
				for i, r := range s.Records {
					b.results = append(b.results, b.repeat(name, r, s.PerOp[i]))
				}
			}
		}
	}
	if err := b.write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// benchResult is the result line of one repeat, if it has a measured
// value, and the comment lines before it.
type benchResult struct {
	comments []string
	res      *benchfmt.Result
}

// benchResults are the results of Benchfmt with the units they use, in
// order of first use, and the devices their reads/op come from.
type benchResults struct {
	metrics   []string // the per-op metrics written, after throughput
	results   []benchResult
	devices   []string
	units     map[string]int // unit → better (1 higher, -1 lower)
	unitOrder []string
}

func (b *benchResults) addUnit(u string, better int) {
	if _, ok := b.units[u]; !ok {
		b.units[u] = better
		b.unitOrder = append(b.unitOrder, u)
	}
}

// repeat is the result of Record r (a repeat of benchmark name) with its
// per-op metrics p.
func (b *benchResults) repeat(name string, r *record.Record, p *analysis.PerOp) benchResult {
	comment := func(format string, args ...any) string {
		return fmt.Sprintf("# %s repeat %d: ", name, r.Repeat) + fmt.Sprintf(format, args...)
	}
	if p.Failed {
		return benchResult{comments: []string{comment("failed: %s", oneLine(r.Error))}}
	}
	var comments []string
	if r.Outcome == record.OutcomePartial {
		comments = append(comments, comment("partial window (%.0f s): %s", p.Seconds, oneLine(r.Error)))
	}
	iters := 1
	if p.Ops >= 1 && p.Ops < 1e15 {
		iters = int(math.Round(p.Ops))
	}
	res := &benchfmt.Result{Name: benchfmt.Name(name), Iters: iters}
	res.Config = []benchfmt.Config{{Key: "host", Value: []byte(orDash(r.Host)), File: true}}
	if q := p.Get(analysis.OpsPerSecond); q.OK() && !math.IsInf(q.Value, 0) && !math.IsNaN(q.Value) {
		u := throughputUnit(p)
		b.addUnit(u, 1)
		res.Values = append(res.Values, benchfmt.Value{Value: round12(q.Value), Unit: u})
	}
	na, nc, mux := b.values(res, p)
	if len(mux) > 0 {
		comments = append(comments, comment("multiplexed, values scaled: %s", strings.Join(mux, ", ")))
	}
	if len(na) > 0 {
		comments = append(comments, comment("not supported: %s", strings.Join(na, ", ")))
	}
	if len(nc) > 0 {
		comments = append(comments, comment("not counted: %s", strings.Join(nc, ", ")))
	}
	if p.OpsEstimated {
		comments = append(comments, comment("operations estimated from the client's whole-run rate, not counted in the window"))
	}
	for _, wn := range r.Warnings {
		comments = append(comments, comment("%s", oneLine(wn.Text)))
	}
	for _, n := range p.Notes {
		comments = append(comments, comment("%s", oneLine(n.Text)))
	}
	if p.Device != "" && !contains(b.devices, p.Device) {
		b.devices = append(b.devices, p.Device)
	}
	if len(res.Values) == 0 {
		comments = append(comments, comment("no measured value"))
		res = nil
	}
	return benchResult{comments: comments, res: res}
}

// values adds the measured per-op metrics of p to res; it returns the
// metrics not supported, not counted, and multiplexed (with the share of
// the window counted).
func (b *benchResults) values(res *benchfmt.Result, p *analysis.PerOp) (na, nc, mux []string) {
	for _, m := range b.metrics {
		cell := p.Get(m)
		bu := benchUnitOf(m)
		if bu.unit == "" {
			continue
		}
		switch cell.State {
		case analysis.NotSupported:
			na = append(na, m)
			continue
		case analysis.NotCounted:
			nc = append(nc, m)
			continue
		case analysis.Measured:
		default:
			continue
		}
		// In the unit's scale (KB to bytes) a value near the float64
		// limit can overflow: no value then.
		scaled := cell.Value * bu.scale
		if math.IsInf(scaled, 0) || math.IsNaN(scaled) {
			continue
		}
		if cell.Multiplexed() {
			mux = append(mux, fmt.Sprintf("%s (counted %d%%)", m, runningPct(cell.Running)))
		}
		b.addUnit(bu.unit, better(m))
		res.Values = append(res.Values, benchfmt.Value{Value: round12(scaled), Unit: bu.unit})
	}
	return na, nc, mux
}

// write writes the device note, the units' metadata and the results.
func (b *benchResults) write(bw *bufio.Writer) error {
	if _, ok := b.units["reads/op"]; ok && len(b.devices) > 0 {
		sort.Strings(b.devices)
		fmt.Fprintf(bw, "# reads/op and writes/op are device-wide: every process on %s, not only the server\n", strings.Join(b.devices, ", "))
	}
	bwf := benchfmt.NewWriter(bw)
	for _, u := range b.unitOrder {
		val := "lower"
		if b.units[u] > 0 {
			val = "higher"
		}
		if err := bwf.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u, Key: "better"}, OrigUnit: u, Value: val}); err != nil {
			return err
		}
	}
	for _, r := range b.results {
		for _, cm := range r.comments {
			bw.WriteString(cm + "\n")
		}
		if r.res != nil {
			if err := bwf.Write(r.res); err != nil {
				return err
			}
		}
	}
	return nil
}

// round12 rounds to 12 significant digits, so that 9e-05 does not print as
// 8.999999999999999e-05.
func round12(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if err != nil {
		return v
	}
	return r
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
