package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// ErrCSV is wrapped by every error of ReadCSV.
var ErrCSV = errors.New("bad long-format CSV")

// ReadCSV parses a long-format CSV table into Records of kind table, so the
// report renders numbers from anywhere the same way. The header names the
// columns, in any order: version, step, threads, metric and value are
// required, host and repeat optional. One Record is made per (host, version,
// step, threads, repeat), in order of first appearance. metric is one of:
//
//	qps, ops, seconds        throughput, operations and length of the window
//	a perf event name        the event's total over the window
//	cpu/o, cs/o, r/o, ...    a per-op metric given directly ("<event>/o" too)
//	IPC, CPI, MPKI(<event>)  given directly
//	ips, rps, ..., maxop     an insert-benchmark column (metrics reference);
//	                         with ips given, qps is the queries/s column
//	target_ips               the target insert rate of a read+write step
//	hist:<kind>:<bucket>     % of the query, insert or delete operations in
//	                         a response-time bucket ("hist:delete:1ms")
//	max:<kind>               slowest operation of that kind, s
//
// An event's value may be "n/a" (not supported) or "nc" (not counted); any
// other value must be a number. name is used in errors and Record.Source.
func ReadCSV(r io.Reader, name string) ([]*record.Record, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%w: %s is empty: want a header line version,step,threads,metric,value", ErrCSV, name)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrCSV, name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		switch h {
		case "version", "step", "threads", "metric", "value", "host", "repeat":
		default:
			return nil, fmt.Errorf("%w: %s line 1: unknown column %q: the columns are version, step, threads, metric, value and optionally host, repeat", ErrCSV, name, h)
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("%w: %s line 1: column %q appears twice", ErrCSV, name, h)
		}
		col[h] = i
	}
	for _, need := range []string{"version", "step", "threads", "metric", "value"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%w: %s line 1: no %q column (header must name version, step, threads, metric, value)", ErrCSV, name, need)
		}
	}
	get := func(row []string, c string) string {
		i, ok := col[c]
		if !ok || i >= len(row) {
			return ""
		}
		return strings.TrimSpace(row[i])
	}
	type key struct {
		record.Key
		repeat int
	}
	recs := map[key]*record.Record{}
	var order []*record.Record
	seen := map[string]int{}
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrCSV, name, err)
		}
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue
		}
		if len(row) != len(header) {
			return nil, fmt.Errorf("%w: %s line %d: %d fields, the header has %d", ErrCSV, name, line, len(row), len(header))
		}
		k := key{Key: record.Key{Host: get(row, "host"), Version: get(row, "version"), Step: get(row, "step")}, repeat: 1}
		if k.Version == "" || k.Step == "" {
			return nil, fmt.Errorf("%w: %s line %d: version and step must not be empty", ErrCSV, name, line)
		}
		if s := get(row, "threads"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: %s line %d: threads %q is not a whole number", ErrCSV, name, line, s)
			}
			k.Threads = n
		}
		if s := get(row, "repeat"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: %s line %d: repeat %q is not a whole number", ErrCSV, name, line, s)
			}
			k.repeat = n
		}
		metric, value := get(row, "metric"), get(row, "value")
		if metric == "" {
			return nil, fmt.Errorf("%w: %s line %d: empty metric", ErrCSV, name, line)
		}
		id := fmt.Sprintf("%q %q %q %d %d %q", k.Host, k.Version, k.Step, k.Threads, k.repeat, metric)
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("%w: %s line %d: %s of %s %s (threads %d, repeat %d) was already given on line %d", ErrCSV, name, line, metric, k.Version, k.Step, k.Threads, k.repeat, prev)
		}
		seen[id] = line
		rec := recs[k]
		if rec == nil {
			rec = record.New(record.KindTable)
			rec.Host, rec.Version, rec.Step, rec.Threads, rec.Repeat = k.Host, k.Version, k.Step, k.Threads, k.repeat
			rec.Metrics = map[string]float64{}
			rec.Source = []string{name}
			recs[k] = rec
			order = append(order, rec)
		}
		switch strings.ToLower(value) {
		case "n/a", "not supported", "<not supported>":
			if !isEventName(metric) {
				return nil, fmt.Errorf("%w: %s line %d: %s: only an event can be %q", ErrCSV, name, line, metric, value)
			}
			rec.Counters = append(rec.Counters, record.Counter{Event: metric, Status: record.StatusNotSupported})
			continue
		case "nc", "not counted", "<not counted>":
			if !isEventName(metric) {
				return nil, fmt.Errorf("%w: %s line %d: %s: only an event can be %q", ErrCSV, name, line, metric, value)
			}
			rec.Counters = append(rec.Counters, record.Counter{Event: metric, Status: record.StatusNotCounted})
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s line %d: value %q of %s is not a number (or n/a, nc for an event)", ErrCSV, name, line, value, metric)
		}
		rec.Metrics[metric] = v
		switch metric {
		case analysis.TableSeconds:
			rec.Window.Seconds = v
		case analysis.TableOps:
			rec.Ops = record.Ops{Source: "ops", Count: v, Per: 1}
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%w: %s has a header but no rows", ErrCSV, name)
	}
	return order, nil
}

// isEventName reports whether a CSV metric names a perf event total.
func isEventName(metric string) bool {
	switch metric {
	case analysis.TableQPS, analysis.TableOps, analysis.TableSeconds, analysis.OpsPerSecond, analysis.IPC, analysis.CPI:
		return false
	}
	return !strings.HasSuffix(metric, "/o") && !strings.HasPrefix(metric, "MPKI(")
}
