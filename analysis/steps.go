package analysis

import (
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/load/suite"
)

// isWarm reports whether the step is a cache warm-up (".warm" in the label).
// Tables leave warm-up steps out.
func isWarm(step string) bool { return strings.Contains(step, ".warm") }

// IsScan reports whether the step is a full table scan, whose operations are
// thousands of rows read rather than queries.
func IsScan(step string) bool { return suite.StepName(step) == "scan" }

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
	// orderInput lists steps in the order they first appear in the input.
	orderInput = "input"
	// orderName sorts steps by group and label (OrderSteps).
	orderName = "name"
)

// StepOrders lists the step orders.
var StepOrders = []string{OrderRun, orderInput, orderName}

// OrderSteps returns the steps in table order, without warm-up steps: by
// group (suite.GroupOf: point, range, writes, insert benchmark); inside the
// first three groups by label with the trailing range number compared last
// and largest first, which is the order of published tables (".pre" copies
// before the step itself, "_range=1000" before "_range=100" before
// "_range=10"); insert-benchmark steps keep the order they were given in,
// which is the order they run in.
func OrderSteps(steps []string) []string {
	return orderByGroup(steps, suite.GroupOf)
}

// orderByGroup is OrderSteps with the steps' groups given by group.
func orderByGroup(steps []string, group func(step string) suite.Group) []string {
	out := make([]string, 0, len(steps))
	seen := map[string]bool{}
	for _, s := range steps {
		if isWarm(s) || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		gi, gj := group(out[i]), group(out[j])
		if gi != gj {
			if gi.Rank() != gj.Rank() {
				return gi.Rank() < gj.Rank()
			}
			return gi < gj
		}
		if gi == suite.GroupInsert {
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
