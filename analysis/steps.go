package analysis

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Group is the row group of a step in the tables.
type Group int

// Row groups, in the order tables print them.
const (
	GroupPoint  Group = iota // point queries: "point" in the name
	GroupRange               // everything else that reads
	GroupWrites              // delete, insert, update, write in the name
	GroupInsert              // insert-benchmark steps (l.i0, l.x, qr100, ...)
)

func (g Group) String() string {
	switch g {
	case GroupPoint:
		return "point"
	case GroupRange:
		return "range"
	case GroupWrites:
		return "writes"
	case GroupInsert:
		return "insert benchmark"
	}
	return "other"
}

var insertStep = regexp.MustCompile(`^(l\.[a-z]+[0-9]*|q[rp]?[0-9]+(\.[0-9]+)?)$`)

// IsInsertStep reports whether the label names an insert-benchmark step:
// l.i0, l.x, l.i1, l.i2, qr100, qp500, q1000.1 and the like.
func IsInsertStep(step string) bool { return insertStep.MatchString(step) }

// IsWarm reports whether the step is a cache warm-up (".warm" in the label).
// Tables leave warm-up steps out.
func IsWarm(step string) bool { return strings.Contains(step, ".warm") }

// StepName is the label without its parameters and copy suffix:
// "read-only.pre_range=100" gives "read-only". Parameters are the
// "_name=value" parts; the underscores of sysbench's own test names stay
// ("oltp_update_index" is a name, a write step).
func StepName(step string) string {
	for i := 0; i < len(step); i++ {
		if step[i] != '_' {
			continue
		}
		seg := step[i+1:]
		if j := strings.IndexByte(seg, '_'); j >= 0 {
			seg = seg[:j]
		}
		if strings.Contains(seg, "=") {
			step = step[:i]
			break
		}
	}
	if i := strings.IndexByte(step, '.'); i > 0 && !IsInsertStep(step) {
		step = step[:i]
	}
	return step
}

// IsScan reports whether the step is a full table scan, whose operations are
// thousands of rows read rather than queries.
func IsScan(step string) bool { return StepName(step) == "scan" }

// GroupOf returns the step's row group (microbenchmarks reference): a name
// with delete, insert, update or write is a write step (read-write
// included), else a name with "point" is a point-query step, else a range
// step. Insert-benchmark labels form their own group.
func GroupOf(step string) Group {
	if IsInsertStep(step) {
		return GroupInsert
	}
	name := StepName(step)
	for _, w := range []string{"delete", "insert", "update", "write"} {
		if strings.Contains(name, w) {
			return GroupWrites
		}
	}
	if strings.Contains(name, "point") {
		return GroupPoint
	}
	return GroupRange
}

// splitTrailingNumber splits "x_range=100" into "x_range=" and 100; a label
// without trailing digits gives n = -1.
func splitTrailingNumber(s string) (prefix string, n int64) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) {
		return s, -1
	}
	v, err := strconv.ParseInt(s[i:], 10, 64)
	if err != nil {
		return s, -1
	}
	return s[:i], v
}

// Step orders of the tables (Options.Order).
const (
	// OrderRun lists steps in the order they were measured: by the
	// earliest window start of their Records; steps without one (tables
	// from a CSV) follow in input order. The default.
	OrderRun = "run"
	// OrderInput lists steps in the order they first appear in the input.
	OrderInput = "input"
	// OrderName sorts steps by group and label (OrderSteps).
	OrderName = "name"
)

// StepOrders lists the step orders.
var StepOrders = []string{OrderRun, OrderInput, OrderName}

// OrderSteps returns the steps in table order, without warm-up steps: by
// group (point, range, writes, insert benchmark); inside the first three
// groups by label with the trailing range number compared last and largest
// first, which is the order of published tables (".pre" copies before the
// step itself, "_range=1000" before "_range=100" before "_range=10");
// insert-benchmark steps keep the order they were given in, which is the
// order they run in.
func OrderSteps(steps []string) []string {
	out := make([]string, 0, len(steps))
	seen := map[string]bool{}
	for _, s := range steps {
		if IsWarm(s) || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		gi, gj := GroupOf(out[i]), GroupOf(out[j])
		if gi != gj {
			return gi < gj
		}
		if gi == GroupInsert {
			return false
		}
		pi, ni := splitTrailingNumber(out[i])
		pj, nj := splitTrailingNumber(out[j])
		if pi != pj {
			return pi < pj
		}
		return ni > nj
	})
	return out
}
