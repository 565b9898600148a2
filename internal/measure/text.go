package measure

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perfbench/perfbench/record"
)

// TextOptions are what WriteText needs beyond the Record. The zero value
// prints the Record alone.
type TextOptions struct {
	// Interval is the planned length of the series' intervals (stat
	// --interval): rows of intervals that lasted more than stallFactor
	// times it are flagged. 0 flags none.
	Interval time.Duration
}

// WriteText prints a measured window as perfbench stat shows it: a header
// naming the server, the window and the op count; one line per event with its
// total, rate per second, value per op and status (a multiplexed event with
// the fraction of the time it ran, an unmeasured one as <not supported> or
// <not counted> with the reason, never a number); IPC and MPKI where both
// events were measured; the series, one row per interval, when the Record has
// one; the split by thread role when the Record has one; then the Record's
// error and warnings.
//
// Values per op are printed with about four significant digits in decimal
// notation (20,000; 25.00; 1.050; 0.0004764; 0.00002027), 0 as 0.
func WriteText(w io.Writer, r *record.Record, o TextOptions) error {
	bw := bufio.NewWriter(w)
	writeHeader(bw, r)
	writeCounters(bw, r)
	if derived := derivedLines(r); len(derived) > 0 {
		fmt.Fprintln(bw)
		for _, d := range derived {
			fmt.Fprintln(bw, d)
		}
	}
	if len(r.Series) > 0 {
		writeSeries(bw, r, o.Interval)
	}
	if len(r.Roles) > 0 {
		writeRoles(bw, r)
	}
	if r.Error != "" || len(r.Warnings) > 0 {
		fmt.Fprintln(bw)
	}
	if r.Error != "" {
		fmt.Fprintf(bw, "%s: %s\n", r.Outcome, r.Error)
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(bw, "warning: %s\n", wn.Text)
	}
	return bw.Flush()
}

// writeHeader prints the server, the window and the op count.
func writeHeader(bw *bufio.Writer, r *record.Record) {
	name := "process"
	if r.Server != nil && r.Server.Version != "" {
		name = "server " + r.Server.Version
	}
	pid := 0
	if r.Server != nil {
		pid = r.Server.Pid
	}
	fmt.Fprintf(bw, "perfbench stat: %s, pid %d\n", name, pid)
	win := fmt.Sprintf("%.3f s", r.Window.Seconds)
	if r.Window.Warmup > 0 {
		win += fmt.Sprintf(" after a %.3f s warm-up", r.Window.Warmup)
	}
	switch r.Outcome {
	case record.OutcomePartial:
		win += " (partial)"
	case record.OutcomeFailed:
		win += " (failed)"
	}
	fmt.Fprintf(bw, "window: %s\n", win)
	opName := opLabel(r.Ops)
	hasOps := r.Ops.Count > 0
	switch {
	case hasOps:
		fmt.Fprintf(bw, "ops: %s %s", count(r.Ops.Count), opName)
		if r.Window.Seconds > 0 {
			fmt.Fprintf(bw, " (%s/s)", rate(r.Ops.Count/r.Window.Seconds))
		}
		fmt.Fprintln(bw)
	case r.Ops.Source != "" && opsMissing(r):
		fmt.Fprintf(bw, "ops: %s not counted (see the warnings): no per-op values\n", opName)
	case r.Ops.Source != "":
		fmt.Fprintf(bw, "ops: 0 %s in the window: no per-op values\n", opName)
	case r.Outcome == record.OutcomeFailed:
		fmt.Fprintln(bw, "ops: not counted (the window failed): no per-op values")
	default:
		fmt.Fprintln(bw, "ops: none (no connection to the server): no per-op values")
	}
	fmt.Fprintln(bw)
}

// writeCounters prints the table of events: total, per second, per op and
// status.
func writeCounters(bw *bufio.Writer, r *record.Record) {
	opName := opLabel(r.Ops)
	perOpHead := "per op"
	if r.Ops.Count > 0 {
		perOpHead = "per " + opName
	}
	rows := [][]string{{"event", "total", "per second", perOpHead, "status"}}
	for _, c := range r.Counters {
		row := []string{c.Event, "", "", "", ""}
		switch c.Status {
		case record.StatusCounted, record.StatusScaled:
			unit := ""
			if c.Unit != "" {
				unit = " " + c.Unit
			}
			row[1] = count(c.Value) + unit
			if r.Window.Seconds > 0 {
				row[2] = rate(c.Value/r.Window.Seconds) + unit + "/s"
			}
			if c.PerOp != nil {
				row[3] = perOp(*c.PerOp) + unit
			} else {
				row[3] = "n/a"
			}
			row[4] = string(c.Status)
			if c.Status == record.StatusScaled {
				row[4] = fmt.Sprintf("scaled (running %.1f%%)", 100*c.RunningFraction())
			}
		default:
			row[1] = "<" + string(c.Status) + ">"
			row[4] = c.Reason
		}
		rows = append(rows, row)
	}
	writeTable(bw, rows, []bool{false, true, true, true, false})
}

// writeSeries prints one row per interval of the series, flagging those
// that lasted over stallFactor times interval.
func writeSeries(bw *bufio.Writer, r *record.Record, interval time.Duration) {
	fmt.Fprintln(bw)
	head := []string{"ends at (s)", "length (s)", "ops", "CPU s"}
	var names []string
	for _, c := range r.Counters {
		if c.Measured() {
			names = append(names, c.Event)
		}
	}
	head = append(head, names...)
	rows := [][]string{head}
	stalled := 0
	for _, p := range r.Series {
		length := strconv.FormatFloat(p.Seconds, 'f', 3, 64)
		if longInterval(p, interval) {
			length += " (stall)"
			stalled++
		}
		row := []string{strconv.FormatFloat(p.T, 'f', 3, 64), length, "", strconv.FormatFloat(p.CPUSeconds, 'f', 3, 64)}
		if r.Ops.Source != "" && !IsClientOp(r.Ops.Source) && !opsMissing(r) {
			row[2] = count(p.Ops)
		} else {
			row[2] = "n/a"
		}
		for _, n := range names {
			if v, ok := p.Counters[n]; ok {
				row = append(row, count(v))
			} else {
				row = append(row, "not counted")
			}
		}
		rows = append(rows, row)
	}
	right := make([]bool, len(head))
	for i := range right {
		right[i] = true
	}
	writeTable(bw, rows, right)
	if stalled > 0 {
		fmt.Fprintf(bw, "(stall): the interval lasted more than %gx the planned %g s: the machine or the server stalled\n", stallFactor, interval.Seconds())
	}
}

// writeRoles prints the split of the counters by thread role, and the
// total.
func writeRoles(bw *bufio.Writer, r *record.Record) {
	fmt.Fprintln(bw)
	head := []string{"by thread role", "threads"}
	for _, c := range r.Counters {
		head = append(head, c.Event)
	}
	rows := [][]string{head}
	threads := 0
	for _, role := range r.Roles {
		threads += role.Threads
		row := []string{role.Name, strconv.Itoa(role.Threads)}
		for _, c := range role.Counters {
			row = append(row, cell(c))
		}
		rows = append(rows, row)
	}
	tot := []string{"total", strconv.Itoa(threads)}
	for _, c := range r.Counters {
		tot = append(tot, cell(c))
	}
	rows = append(rows, tot)
	right := make([]bool, len(head))
	for i := 1; i < len(right); i++ {
		right[i] = true
	}
	writeTable(bw, rows, right)
}

// opLabel names the op source as the tables say it: "Questions",
// "Rows_read/1000".
func opLabel(o record.Ops) string {
	if o.Per > 1 {
		return fmt.Sprintf("%s/%g", o.Source, o.Per)
	}
	return o.Source
}

func cell(c record.Counter) string {
	switch c.Status {
	case record.StatusCounted:
		return count(c.Value)
	case record.StatusScaled:
		return count(c.Value) + fmt.Sprintf(" (%.0f%%)", 100*c.RunningFraction())
	case record.StatusNotSupported:
		return "n/a"
	}
	return "not counted"
}

// derivedLines computes IPC (instructions/cycles) and MPKI (misses per 1,000
// instructions) for the events measured with the same modifiers.
func derivedLines(r *record.Record) []string {
	measured := map[string]record.Counter{}
	for _, c := range r.Counters {
		if c.Measured() {
			measured[c.Event] = c
		}
	}
	scaledNote := func(cs ...record.Counter) string {
		for _, c := range cs {
			if c.Status == record.StatusScaled {
				return " (from multiplexed counts)"
			}
		}
		return ""
	}
	var out []string
	if k := r.KernelCPU; k != nil {
		out = append(out, kernelCPULine(r, k))
	}
	for _, c := range r.Counters {
		base, mods, _ := strings.Cut(c.Event, ":")
		suffix := ""
		if mods != "" {
			suffix = ":" + mods
		}
		ins, okI := measured["instructions"+suffix]
		if !okI || !c.Measured() || ins.Value == 0 {
			continue
		}
		switch {
		case base == "cycles":
			if c.Value > 0 {
				out = append(out, fmt.Sprintf("IPC%s %.3f instructions per cycle%s", suffix, ins.Value/c.Value, scaledNote(c, ins)))
			}
		case strings.HasSuffix(base, "-misses"):
			out = append(out, fmt.Sprintf("%s MPKI %.3f per 1,000 instructions%s", c.Event, 1000*c.Value/ins.Value, scaledNote(c, ins)))
		}
	}
	return out
}

// kernelCPULine says the window's CPU time by the kernel's accounting,
// per op, and how far task-clock is from it.
func kernelCPULine(r *record.Record, k *record.KernelCPU) string {
	src := map[string]string{
		record.KernelCPUCgroup:  "the cgroup's cpu.stat usage_usec",
		record.KernelCPUAlone:   "cpu.stat usage_usec of the cgroup the process is alone in",
		record.KernelCPUProcess: "the process's CPU clock and its children's",
	}[k.Source]
	line := fmt.Sprintf("CPU %s ms by the kernel's accounting (%s)", count(k.Seconds*1e3), cmp.Or(src, k.Source))
	if r.Ops.Count > 0 {
		line += fmt.Sprintf(", %s µs per %s", perOp(k.Seconds*1e6/r.Ops.Count), opLabel(r.Ops))
	}
	if k.LeavesOut != "" {
		line += ", leaving out the " + k.LeavesOut
	}
	if tc, ok := r.Counter("task-clock"); ok && tc.Measured() && k.Seconds > 0 {
		d := tc.Value/1e9/k.Seconds - 1
		dir := "above"
		if d < 0 {
			dir = "below"
		}
		line += fmt.Sprintf("; task-clock %.1f%% %s it", 100*math.Abs(d), dir)
		if k.ContextSwitches > 0 {
			line += fmt.Sprintf(" (%+.2f µs a context switch)", k.GapPerSwitch)
		}
	}
	return line
}

// writeTable prints rows with columns padded to their widest cell; right[i]
// right-aligns column i.
func writeTable(w io.Writer, rows [][]string, right []bool) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			if i < len(width) && len(c) > width[i] {
				width[i] = len(c)
			}
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if right[i] {
				b.WriteString(pad + c)
			} else if i < len(row)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// count prints v rounded to an integer with thousands separators.
func count(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// rate prints a per-second value: integers with separators from 1,000 up,
// two decimals below.
func rate(v float64) string {
	if math.Abs(v) >= 1000 {
		return count(v)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// perOp prints a per-op value with about four significant digits, in
// decimal notation whatever its size, and 0 as 0.
func perOp(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case a == 0:
		return "0"
	case a >= 10000:
		return count(v)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	// 0.5 → 0.5000, 0.04764 → 0.04764, 2.027e-05 → 0.00002027.
	decimals := min(3-int(math.Floor(math.Log10(a))), 20)
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// opsMissing reports whether r's op source was not counted (as opposed to
// counted 0): the window failed, or the op source had no count for it
// (record.Record.OpsCounted).
func opsMissing(r *record.Record) bool {
	return !r.OpsCounted()
}

// OpsWarning returns the text of the warning of r that says why its op
// source has no count, or "" when it was counted.
func OpsWarning(r *record.Record) string {
	if r.OpsCounted() {
		return ""
	}
	for _, w := range r.Warnings {
		if w.Code == record.WarnOpsNotCounted {
			return w.Text
		}
	}
	return ""
}
