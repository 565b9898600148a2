package insertbench

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/perfbench/perfbench/record"
)

// kind is what a step does.
type kind int

// Kinds of step.
const (
	// Load is l.i0: inserts in key order into tables without secondary
	// indexes, created by the step.
	Load kind = iota + 1
	// Index is l.x: create the three secondary indexes.
	Index
	// Insert is l.i1 and l.i2: inserts as fast as possible with a delete
	// per insert, so the tables keep their size.
	Insert
	// Query is qrN and qpN: queries as fast as possible while a background
	// writer per client inserts N rows/s and deletes as many.
	Query
)

// Step is one step of the insert benchmark.
type Step struct {
	// Name is the step's name as the benchmark spells it: "l.i0", "l.x",
	// "l.i1", "l.i2", "qr100", "qp1000".
	Name string
	Kind kind
	// Point is set for qpN steps: point queries on the primary key
	// instead of range queries on the secondary indexes.
	Point bool
	// Rate is N of qrN and qpN: the background writer's inserts/s per
	// client. DefaultOptions takes it as Options.Rate.
	Rate int
}

// Main is the kind of operation whose rate a step is judged by, and whose
// per-second rates give p50 and p99: record.OpQuery for the q steps, record.OpInsert for
// the l.i steps, "" for l.x (a single statement per table).
func (s Step) Main() string {
	switch s.Kind {
	case Load, Insert:
		return record.OpInsert
	case Query:
		return record.OpQuery
	}
	return ""
}

var queryStepRE = regexp.MustCompile(`^q([rp])([0-9]+)$`)

// ParseStep returns the step named name: l.i0, l.x, l.i1, l.i2, or qrN/qpN
// (range or point queries with N inserts/s per client in the background;
// the benchmark runs qr100, qp100, qr500, qp500, qr1000 and qp1000). An
// unknown name is an *OptionError for the field "step".
func ParseStep(name string) (Step, error) {
	switch name {
	case "l.i0":
		return Step{Name: name, Kind: Load}, nil
	case "l.x":
		return Step{Name: name, Kind: Index}, nil
	case "l.i1", "l.i2":
		return Step{Name: name, Kind: Insert}, nil
	}
	if m := queryStepRE.FindStringSubmatch(name); m != nil {
		rate, err := strconv.Atoi(m[2])
		if err == nil && rate > 0 {
			return Step{Name: name, Kind: Query, Point: m[1] == "p", Rate: rate}, nil
		}
		return Step{}, &OptionError{Step: name, Field: "step", Value: name,
			Reason: "the insert rate in the name must be a whole number above 0 (qr100, qp500, ...)"}
	}
	return Step{}, &OptionError{Step: name, Field: "step", Value: name,
		Reason: "unknown insert-benchmark step; the steps are l.i0, l.x, l.i1, l.i2, qr100, qp100, qr500, qp500, qr1000, qp1000 (qrN, qpN for other rates)"}
}

// Options say how to run a step. Start from DefaultOptions(step) and
// change what the user gave: the driver takes the fields as they are, and
// Validate refuses a 0 where a step needs a value.
type Options struct {
	Step Step
	// Tables is the number of tables, and of clients: one client per
	// table, table i (1-based) named Table+i.
	Tables int
	// Rows is, for l.i0, the rows loaded into each table, and for l.i1 and
	// l.i2 the rows inserted into (and as many deleted from) each table.
	// The other steps take no row count.
	Rows int64
	// RowsPerCommit is the rows of one INSERT (a transaction of its own)
	// and of one DELETE. l.x takes none. A q step's writer cannot batch
	// more rows than it inserts in a second.
	RowsPerCommit int
	// Rate is the background writer's inserts/s per client in a q step
	// (deletes follow at the same rate). Other steps take no rate.
	Rate int
	// Duration is how long a q step runs its queries. The l steps run
	// until their rows are in.
	Duration time.Duration
	// RowsPerQuery is the LIMIT of a range query and the number of ids a
	// point query looks up (q steps only).
	RowsPerQuery int
	// PadMin and PadMax bound the length of the padding column, chosen at
	// random per row; half of it is random letters, half a repeated
	// letter, so it compresses about 2:1.
	PadMin, PadMax int
	// Engine is the storage engine of the tables l.i0 creates.
	Engine string
	// Table is the prefix of the tables' names.
	Table string
	// StatementTimeout bounds every statement but the DDL: a server that
	// stops answering fails the step after this long.
	StatementTimeout time.Duration
	// DDLTimeout bounds DROP TABLE, CREATE TABLE and l.x's ALTER TABLE.
	DDLTimeout time.Duration
	// Seed makes the generated rows and queries repeatable: client i
	// draws from Seed+i.
	Seed uint64

	// AtStart, when set, is called once every connection is open and every
	// statement prepared, right before the first operation, with the
	// instant it is called; the load (and Result.Start) starts when it
	// returns, so AtStart may wait, for a measurement window to open.
	// AtEnd is called right after the last operation finished, before
	// anything is closed. A caller reads counters and server status there
	// so that its window holds the load and nothing else.
	AtStart func(time.Time) `json:"-"`
	AtEnd   func(time.Time) `json:"-"`

	clock clock // nil: the real clock (tests set a fake one)
}

// DefaultOptions returns the options the benchmark runs step with: 1 table;
// l.i0 loads 1,000,000 rows per table 100 per commit; l.i1 and l.i2 insert
// 1,000,000 rows per table 50 and 5 per commit; q steps run for 1 hour
// with 100 rows per commit (fewer when the rate is lower) and 10 rows per
// query; padding of 10 to 20 bytes; InnoDB; tables pi1, pi2, ...;
// statements time out after 60 s, DDL after 24 h.
func DefaultOptions(step Step) Options {
	o := Options{
		Step:             step,
		Tables:           1,
		PadMin:           10,
		PadMax:           20,
		Engine:           "InnoDB",
		Table:            "pi",
		StatementTimeout: time.Minute,
		DDLTimeout:       24 * time.Hour,
	}
	switch step.Kind {
	case Load:
		o.Rows, o.RowsPerCommit = 1_000_000, 100
	case Insert:
		o.Rows, o.RowsPerCommit = 1_000_000, 50
		if step.Name == "l.i2" {
			o.RowsPerCommit = 5
		}
	case Query:
		o.Rate, o.Duration, o.RowsPerQuery = step.Rate, time.Hour, 10
		o.RowsPerCommit = min(100, step.Rate)
	}
	return o
}

// OptionError is a bad option: Field names it as a plan spells it ("step",
// "tables", "rows", "rows_per_commit", "rate", "duration",
// "rows_per_query", "pad_min", "pad_max", "engine", "table",
// "statement_timeout", "ddl_timeout"), so that a plan parser can point at
// the line that set it.
type OptionError struct {
	Step   string
	Field  string
	Value  string
	Reason string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("insert-benchmark step %s: %s = %s: %s", e.Step, e.Field, e.Value, e.Reason)
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks o and returns every problem as an *OptionError, joined
// (errors.Join; errors.As finds the first).
func (o Options) Validate() error {
	var errs []error
	bad := func(field string, value any, format string, args ...any) {
		errs = append(errs, &OptionError{Step: o.Step.Name, Field: field, Value: fmt.Sprint(value), Reason: fmt.Sprintf(format, args...)})
	}
	named, err := ParseStep(o.Step.Name)
	if err != nil {
		return err
	}
	if named.Kind != o.Step.Kind || named.Point != o.Step.Point {
		return &OptionError{Step: o.Step.Name, Field: "step", Value: o.Step.Name, Reason: "the step does not match its name (use ParseStep)"}
	}
	k := o.Step.Kind
	if o.Tables <= 0 {
		bad("tables", o.Tables, "must be 1 or more (one client per table)")
	}
	switch {
	case k == Load || k == Insert:
		if o.Rows <= 0 {
			bad("rows", o.Rows, "must be 1 or more (rows per table)")
		}
	case o.Rows != 0:
		bad("rows", o.Rows, "%s takes no row count (only l.i0, l.i1 and l.i2 do)", o.Step.Name)
	}
	switch {
	case k == Index:
		if o.RowsPerCommit != 0 {
			bad("rows_per_commit", o.RowsPerCommit, "l.x commits nothing row by row; leave it out")
		}
	case o.RowsPerCommit <= 0:
		bad("rows_per_commit", o.RowsPerCommit, "must be 1 or more")
	case k == Query && o.Rate > 0 && o.RowsPerCommit > o.Rate:
		bad("rows_per_commit", o.RowsPerCommit, "above the insert rate %d/s: a commit would hold more than a second of inserts; use at most %d", o.Rate, o.Rate)
	}
	if k == Query {
		if o.Rate <= 0 {
			bad("rate", o.Rate, "must be 1 or more (inserts/s per client)")
		}
		if o.Duration <= 0 {
			bad("duration", o.Duration, "must be above 0")
		}
		if o.RowsPerQuery <= 0 {
			bad("rows_per_query", o.RowsPerQuery, "must be 1 or more")
		}
	} else {
		if o.Rate != 0 {
			bad("rate", o.Rate, "%s is not rate limited (only the q steps are)", o.Step.Name)
		}
		if o.Duration != 0 {
			bad("duration", o.Duration, "%s runs until its rows are done (only the q steps run for a time)", o.Step.Name)
		}
		if o.RowsPerQuery != 0 {
			bad("rows_per_query", o.RowsPerQuery, "%s runs no queries", o.Step.Name)
		}
	}
	if k != Index {
		if o.PadMin < 0 {
			bad("pad_min", o.PadMin, "must be 0 or more")
		}
		if o.PadMax < o.PadMin || o.PadMax > 4000 {
			bad("pad_max", o.PadMax, "must be between pad_min (%d) and 4000", o.PadMin)
		}
	}
	if !identRE.MatchString(o.Engine) {
		bad("engine", fmt.Sprintf("%q", o.Engine), "must be a storage engine name (InnoDB, RocksDB, ...)")
	}
	if !identRE.MatchString(o.Table) || len(o.Table) > 40 {
		bad("table", fmt.Sprintf("%q", o.Table), "must be a table name prefix of letters, digits and _, at most 40 long")
	}
	if o.StatementTimeout <= 0 {
		bad("statement_timeout", o.StatementTimeout, "must be above 0")
	}
	if o.DDLTimeout <= 0 {
		bad("ddl_timeout", o.DDLTimeout, "must be above 0")
	}
	return errors.Join(errs...)
}

// State is what a sequence of steps finds in the database before its
// first step: how many benchmark tables exist and whether they have the
// secondary indexes.
type State struct {
	Tables  int
	Indexes bool
}

// OrderError is a step that runs before what it needs exists: Index is its
// position in the sequence (0-based), Missing what it lacks.
type OrderError struct {
	Index   int
	Step    string
	Missing string
}

func (e *OrderError) Error() string {
	return fmt.Sprintf("insert-benchmark step %d (%s): %s", e.Index+1, e.Step, e.Missing)
}

// CheckOrder checks that each step of steps finds what it needs, starting
// from start: l.i0 (re)creates its tables without secondary indexes; l.x
// needs the tables without the indexes; l.i1, l.i2 and the q steps need
// the tables with the indexes. The first problem is an *OrderError.
func CheckOrder(start State, steps []Options) error {
	st := start
	for i, o := range steps {
		fail := func(format string, args ...any) error {
			return &OrderError{Index: i, Step: o.Step.Name, Missing: fmt.Sprintf(format, args...)}
		}
		if o.Step.Kind == Load {
			// Tables past o.Tables, left from before, are stale: later
			// steps may not use them.
			st = State{Tables: o.Tables}
			continue
		}
		if st.Tables == 0 {
			return fail("the tables do not exist yet: run l.i0 first")
		}
		if o.Tables > st.Tables {
			return fail("needs %d tables but only %d exist: give l.i0 as many tables", o.Tables, st.Tables)
		}
		switch {
		case o.Step.Kind == Index && st.Indexes:
			return fail("the secondary indexes exist already: l.x runs once after l.i0")
		case o.Step.Kind != Index && !st.Indexes:
			return fail("the secondary indexes do not exist yet: run l.x first")
		}
		if o.Step.Kind == Index {
			st.Indexes = true
		}
	}
	return nil
}

// tableName is the name of table i (1-based).
func (o Options) tableName(i int) string { return o.Table + strconv.Itoa(i) }
