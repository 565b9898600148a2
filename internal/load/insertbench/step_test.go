package insertbench

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

func TestParseStep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  kind
		point bool
		rate  int
		main  string
	}{
		{"l.i0", Load, false, 0, record.OpInsert},
		{"l.x", Index, false, 0, ""},
		{"l.i1", Insert, false, 0, record.OpInsert},
		{"l.i2", Insert, false, 0, record.OpInsert},
		{"qr100", Query, false, 100, record.OpQuery},
		{"qp100", Query, true, 100, record.OpQuery},
		{"qr500", Query, false, 500, record.OpQuery},
		{"qp1000", Query, true, 1000, record.OpQuery},
	} {
		s, err := ParseStep(tc.name)
		if err != nil {
			t.Fatalf("ParseStep(%q): %v", tc.name, err)
		}
		if s.Name != tc.name || s.Kind != tc.kind || s.Point != tc.point || s.Rate != tc.rate || s.Main() != tc.main {
			t.Errorf("ParseStep(%q) = %+v (main %q), want kind %d point %v rate %d main %q", tc.name, s, s.Main(), tc.kind, tc.point, tc.rate, tc.main)
		}
	}
	for _, name := range []string{"", "l.i3", "l.x1", "qr", "qr0", "qx100", "qr-5", "q100", "QR100", "qr99999999999999999999"} {
		_, err := ParseStep(name)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Field != "step" || oe.Value != name {
			t.Errorf("ParseStep(%q) = %v, want an *OptionError for the field step", name, err)
		}
	}
}

func mustStep(t testing.TB, name string) Step {
	t.Helper()
	s, err := ParseStep(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDefaultOptions(t *testing.T) {
	for _, name := range []string{"l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000", "qr50"} {
		o := DefaultOptions(mustStep(t, name))
		if err := o.Validate(); err != nil {
			t.Errorf("DefaultOptions(%s) does not validate: %v", name, err)
		}
	}
	for _, tc := range []struct {
		name     string
		rpc      int
		rate     int
		duration time.Duration
	}{
		{"l.i0", 100, 0, 0},
		{"l.x", 0, 0, 0},
		{"l.i1", 50, 0, 0},
		{"l.i2", 5, 0, 0},
		{"qr100", 100, 100, time.Hour},
		{"qp1000", 100, 1000, time.Hour},
		{"qr50", 50, 50, time.Hour}, // a commit holds at most a second of rows
	} {
		o := DefaultOptions(mustStep(t, tc.name))
		if o.RowsPerCommit != tc.rpc || o.Rate != tc.rate || o.Duration != tc.duration {
			t.Errorf("DefaultOptions(%s): rows per commit %d, rate %d, duration %s; want %d, %d, %s",
				tc.name, o.RowsPerCommit, o.Rate, o.Duration, tc.rpc, tc.rate, tc.duration)
		}
	}
}

// fields returns the fields of the *OptionErrors joined in err.
func fields(t *testing.T, err error) []string {
	t.Helper()
	var out []string
	var walk func(error)
	walk = func(e error) {
		var oe *OptionError
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		} else if errors.As(e, &oe) {
			out = append(out, oe.Field)
		} else if e != nil {
			t.Errorf("not an *OptionError: %v", e)
		}
	}
	walk(err)
	return out
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		step   string
		change func(*Options)
		want   []string // fields, in order
	}{
		{"l.i0", func(o *Options) { o.Rows = 0 }, []string{"rows"}},
		{"l.i0", func(o *Options) { o.Rows = -5 }, []string{"rows"}},
		{"l.i1", func(o *Options) { o.RowsPerCommit = 0 }, []string{"rows_per_commit"}},
		{"l.i0", func(o *Options) { o.Tables = 0 }, []string{"tables"}},
		{"qr100", func(o *Options) { o.Rate = 0 }, []string{"rate"}},
		{"qr100", func(o *Options) { o.Rate = -100 }, []string{"rate"}},
		{"qr100", func(o *Options) { o.RowsPerCommit = 101 }, []string{"rows_per_commit"}},
		{"qr100", func(o *Options) { o.Duration = 0 }, []string{"duration"}},
		{"qp100", func(o *Options) { o.RowsPerQuery = 0 }, []string{"rows_per_query"}},
		{"qr100", func(o *Options) { o.Rows = 10 }, []string{"rows"}},
		{"l.i1", func(o *Options) { o.Rate = 100 }, []string{"rate"}},
		{"l.i0", func(o *Options) { o.Duration = time.Second }, []string{"duration"}},
		{"l.x", func(o *Options) { o.RowsPerCommit = 10 }, []string{"rows_per_commit"}},
		{"l.i0", func(o *Options) { o.PadMin, o.PadMax = 30, 20 }, []string{"pad_max"}},
		{"l.i0", func(o *Options) { o.PadMax = 5000 }, []string{"pad_max"}},
		{"l.i0", func(o *Options) { o.Engine = "InnoDB; DROP DATABASE x" }, []string{"engine"}},
		{"l.i0", func(o *Options) { o.Table = "pi-" }, []string{"table"}},
		{"l.i0", func(o *Options) { o.StatementTimeout = 0 }, []string{"statement_timeout"}},
		{"l.x", func(o *Options) { o.DDLTimeout = -time.Second }, []string{"ddl_timeout"}},
		// Every problem is reported, not only the first.
		{"qr100", func(o *Options) { o.Tables, o.Rate, o.Duration = 0, 0, 0 }, []string{"tables", "rate", "duration"}},
	} {
		o := DefaultOptions(mustStep(t, tc.step))
		tc.change(&o)
		err := o.Validate()
		if got := fields(t, err); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Validate() = %v: fields %q, want %q", tc.step, err, got, tc.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "insert-benchmark step "+tc.step+": ") {
			t.Errorf("%s: error %q does not name the step", tc.step, err)
		}
	}
	// An unknown step, or one that is not what its name says, is refused
	// before anything else.
	for _, s := range []Step{{Name: "l.i9", Kind: Load}, {Name: "l.i0", Kind: Query}, {Name: "qr100", Kind: Query, Point: true, Rate: 100}} {
		o := DefaultOptions(s)
		if got := fields(t, o.Validate()); !slices.Equal(got, []string{"step"}) {
			t.Errorf("step %+v: fields %q, want [step]", s, got)
		}
	}
}

func TestCheckOrder(t *testing.T) {
	opts := func(tables int, names ...string) []Options {
		var out []Options
		for _, n := range names {
			o := DefaultOptions(mustStep(t, n))
			o.Tables = tables
			out = append(out, o)
		}
		return out
	}
	full := opts(2, "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000")
	if err := CheckOrder(State{}, full); err != nil {
		t.Errorf("the benchmark's own order: %v", err)
	}
	if err := CheckOrder(State{Tables: 2, Indexes: true}, opts(2, "qr100", "l.i1")); err != nil {
		t.Errorf("q and l.i1 steps on existing tables: %v", err)
	}
	for _, tc := range []struct {
		start State
		steps []Options
		index int
		want  string
	}{
		{State{}, opts(1, "qr100"), 0, "run l.i0 first"},
		{State{}, opts(1, "l.x"), 0, "run l.i0 first"},
		{State{}, opts(1, "l.i0", "qr100"), 1, "run l.x first"},
		{State{}, opts(1, "l.i0", "l.i1"), 1, "run l.x first"},
		{State{}, opts(1, "l.i0", "l.x", "l.x"), 2, "exist already"},
		{State{Tables: 2, Indexes: true}, opts(3, "qp100"), 0, "needs 3 tables but only 2 exist"},
		// l.i0 recreates its tables without indexes.
		{State{Tables: 2, Indexes: true}, opts(2, "l.i0", "qr100"), 1, "run l.x first"},
		// Tables past l.i0's are stale.
		{State{Tables: 4, Indexes: true}, append(opts(2, "l.i0", "l.x"), opts(4, "qr100")...), 2, "needs 4 tables but only 2 exist"},
	} {
		err := CheckOrder(tc.start, tc.steps)
		var oe *OrderError
		if !errors.As(err, &oe) || oe.Index != tc.index || !strings.Contains(oe.Missing, tc.want) {
			t.Errorf("CheckOrder(%+v, %d steps) = %v, want an *OrderError at step %d saying %q", tc.start, len(tc.steps), err, tc.index+1, tc.want)
		}
	}
}
