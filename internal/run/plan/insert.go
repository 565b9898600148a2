package plan

import (
	"errors"
	"fmt"
	"regexp"
	"sort"

	"github.com/perfbench/perfbench/internal/load/insertbench"
	"github.com/perfbench/perfbench/internal/load/suite"
)

// rawInsert is the plan's [insert] table: the insert benchmark's settings
// for every insert-benchmark step, and [insert.step."NAME"] for one step.
type rawInsert struct {
	Tables           *int                     `toml:"tables"`
	Rows             *int64                   `toml:"rows"`
	InsertRows       *int64                   `toml:"insert_rows"`
	Duration         duration                 `toml:"duration"`
	RowsPerQuery     *int                     `toml:"rows_per_query"`
	PadMin           *int                     `toml:"pad_min"`
	PadMax           *int                     `toml:"pad_max"`
	Engine           string                   `toml:"engine"`
	Table            string                   `toml:"table"`
	StatementTimeout duration                 `toml:"statement_timeout"`
	Step             map[string]rawInsertStep `toml:"step"`
}

// rawInsertStep is [insert.step."NAME"]: one step's own settings.
type rawInsertStep struct {
	Rows          *int64   `toml:"rows"`
	RowsPerCommit *int     `toml:"rows_per_commit"`
	Rate          *int     `toml:"rate"`
	Duration      duration `toml:"duration"`
}

// insertLike reports whether name is spelled nearly like an
// insert-benchmark step ("qp-5", "l.I0"; suite.IsInsertStep has "l.i3" and
// "qr0"), so that a misspelt one is refused with the insert benchmark's
// steps, not the sysbench suite's.
var insertLike = regexp.MustCompile(`^(l\.|q[rp][-+0-9])`)

// insertStep returns the plan Step of the insert-benchmark step name, its
// options from [insert] and [insert.step."name"]; problems are reported at
// their keys. The step runs at one "thread count": its clients, one per
// table. l steps run until their rows are in (Duration 0), q steps for
// their duration; none has a warm-up: the window is the load.
func (p *parser) insertStep(key, name string, in *rawInsert) *Step {
	is, err := insertbench.ParseStep(name)
	if err != nil {
		p.wrapf(key, err, "steps.list: %v", err)
		return nil
	}
	o := insertbench.DefaultOptions(is)
	o.Seed = 1
	if in.Tables != nil {
		o.Tables = *in.Tables
	}
	switch is.Kind {
	case insertbench.Load:
		if in.Rows != nil {
			o.Rows = *in.Rows
		}
	case insertbench.Insert:
		switch {
		case in.InsertRows != nil:
			o.Rows = *in.InsertRows
		case in.Rows != nil:
			o.Rows = *in.Rows
		}
	case insertbench.Query:
		if in.Duration.set {
			o.Duration = in.Duration.d
		}
		if in.RowsPerQuery != nil {
			o.RowsPerQuery = *in.RowsPerQuery
		}
	}
	if in.PadMin != nil {
		o.PadMin = *in.PadMin
	}
	if in.PadMax != nil {
		o.PadMax = *in.PadMax
	}
	if in.Engine != "" {
		o.Engine = in.Engine
	}
	if in.Table != "" {
		o.Table = in.Table
	}
	if in.StatementTimeout.set {
		o.StatementTimeout = in.StatementTimeout.d
	}
	skey := "insert.step." + name
	if s, ok := in.Step[name]; ok {
		if s.Rows != nil {
			o.Rows = *s.Rows
		}
		if s.RowsPerCommit != nil {
			o.RowsPerCommit = *s.RowsPerCommit
		}
		if s.Rate != nil {
			o.Rate = *s.Rate
			if is.Kind == insertbench.Query && s.RowsPerCommit == nil && o.Rate > 0 {
				o.RowsPerCommit = min(100, o.Rate)
			}
		}
		if s.Duration.set {
			o.Duration = s.Duration.d
		}
	}
	if err := o.Validate(); err != nil {
		p.insertOptionErrors(skey, err)
	}
	st := &Step{Label: name, Group: suite.GroupInsert, Write: true, Ops: insertOps, OpsPer: 1,
		Threads: []int{o.Tables}, Duration: o.Duration, Insert: &o, Line: p.lines.line(key)}
	return st
}

// insertOps is the op source of the insert-benchmark steps: the driver's
// count of the step's main operation (rows inserted, queries, rows indexed).
const insertOps = "client.events"

// insertOptionErrors reports each *insertbench.OptionError of err at the
// line of its key: the step's own table when it sets the key, else [insert].
func (p *parser) insertOptionErrors(skey string, err error) {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var oe *insertbench.OptionError
		if !errors.As(e, &oe) {
			p.wrapf(skey, e, "%v", e)
			continue
		}
		key := skey + "." + oe.Field
		if _, ok := p.lines[key]; !ok {
			key = "insert." + oe.Field
			if oe.Field == "rows" && oe.Step != "l.i0" && p.lines["insert.insert_rows"] > 0 {
				key = "insert.insert_rows"
			}
		}
		p.wrapf(key, e, "%v", e)
	}
}

// insertPlan checks the insert-benchmark steps of the plan together: each
// finds the tables it needs (l.i0 first, then l.x, then the others), and
// [insert.step] names insert-benchmark steps (one the plan does not run is
// a warning, as in steps.override).
func (p *parser) insertPlan(plan *Plan, in *rawInsert) {
	var opts []insertbench.Options
	var steps []*Step
	for i := range plan.Steps {
		if st := &plan.Steps[i]; st.Insert != nil {
			opts = append(opts, *st.Insert)
			steps = append(steps, st)
		}
	}
	names := make([]string, 0, len(in.Step))
	for n := range in.Step {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		found := false
		for _, st := range steps {
			found = found || st.Label == n
		}
		switch _, err := insertbench.ParseStep(n); {
		case found:
		case err != nil:
			p.wrapf("insert.step."+n, err, "%v", err)
		default:
			// A step the plan could run: left out of steps.list, as
			// steps.override of a step not selected is.
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("insert.step.%q: %s is not among the selected steps", n, n))
		}
	}
	if len(steps) == 0 {
		return
	}
	var oe *insertbench.OrderError
	if err := insertbench.CheckOrder(insertbench.State{}, opts); errors.As(err, &oe) {
		p.errs = append(p.errs, &planError{File: p.file, Line: steps[oe.Index].Line,
			Msg: fmt.Sprintf("step %s: %s (insert-benchmark steps run in the order of steps.list)", oe.Step, oe.Missing), Err: err})
	}
}
