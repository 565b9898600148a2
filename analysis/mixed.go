package analysis

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/record"
)

// errMixedCell is wrapped by New's error for a cell (host, version, step,
// threads) whose repeats come from more than one machine, server build or
// kind of Record: its median would describe none of them.
var errMixedCell = errors.New("one cell mixes")

// mixes are the facts that must be one in a cell, with what to do when
// they are not: each returns a Record's value ("" when it does not say).
var mixes = []struct {
	what, fix string
	of        func(*record.Record) string
}{
	{"machines (host names)", "give each machine its own host label (perfbench import --host), or report each machine's Records on their own",
		func(r *record.Record) string { return r.Provenance.Hostname }},
	{"machines (CPU models)", "report each machine's Records on their own, or give each its own host label (perfbench import --host)",
		func(r *record.Record) string { return r.Provenance.CPUModel }},
	{"machines (CPU counts)", "report each machine's Records on their own, or give each its own host label (perfbench import --host)",
		func(r *record.Record) string {
			if r.Provenance.CPUs == 0 {
				return ""
			}
			return strconv.Itoa(r.Provenance.CPUs)
		}},
	{"server builds (server.version)", "give each build its own version label (the plan's versions, perfbench stat --label, perfbench import --version)",
		func(r *record.Record) string {
			if r.Server == nil {
				return ""
			}
			return r.Server.Version
		}},
	{"kinds of Record", "perfbench run's and perfbench stat's windows are measured otherwise: give the stat Records their own --label or --step, or report them on their own",
		func(r *record.Record) string { return string(r.Kind) }},
}

// checkMixed refuses a Comparison one of whose cells has repeats of more
// than one machine, server build or kind of Record (see mixes), keys in
// order of first appearance; a Record that does not say is taken for any.
func (c *Comparison) checkMixed(keys []record.Key) error {
	for _, k := range keys {
		s := c.samples[k]
		if len(s.Records) < 2 {
			continue
		}
		for _, m := range mixes {
			var values []string
			reps := map[string][]int{}
			for _, r := range s.Records {
				v := m.of(r)
				if v == "" {
					continue
				}
				if reps[v] == nil {
					values = append(values, v)
				}
				reps[v] = append(reps[v], r.Repeat)
			}
			if len(values) < 2 {
				continue
			}
			parts := make([]string, len(values))
			for i, v := range values {
				rs := slices.Clone(reps[v])
				slices.Sort(rs)
				parts[i] = fmt.Sprintf("%q (%s)", v, strings.TrimSpace(repeatList(rs, false)))
			}
			return fmt.Errorf("%s: %w %s: %s; its median would describe none of them: %s",
				describeKey(k), errMixedCell, m.what, strings.Join(parts, ", "), m.fix)
		}
	}
	return nil
}
