package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/analysis"
	"github.com/perfbench/perfbench/record"
)

// windowSpread is the ratio of the longest to the shortest window of a
// cell's repeats above which the report says that its median takes them
// as equals.
const windowSpread = 2

// windowNotes name the cells (version, step, scope) whose complete
// repeats ran windows of very different lengths, 1 s and 100 s: each
// median weighs them the same, though a short window's rate is noisier
// and may cover another phase of the step. Failed and partial repeats
// are left out (those are marked on their own).
func windowNotes(c *analysis.Comparison) []string {
	var cells []string
	for _, sc := range c.Scopes {
		for _, v := range c.Versions {
			for _, step := range c.Steps {
				s := c.Sample(analysis.Key(sc, v, step))
				if s == nil {
					continue
				}
				lo, hi, n := math.Inf(1), 0.0, 0
				for _, r := range s.Records {
					if r.Kind == record.KindTable || r.Outcome == record.OutcomeFailed || r.Outcome == record.OutcomePartial || !(r.Window.Seconds > 0) {
						continue
					}
					lo, hi, n = math.Min(lo, r.Window.Seconds), math.Max(hi, r.Window.Seconds), n+1
				}
				if n >= 2 && hi > windowSpread*lo {
					where := v + " " + step
					if s := scopeText(sc.Host, sc.Threads); s != "" {
						where += " (" + s + ")"
					}
					cells = append(cells, fmt.Sprintf("%s: %d repeats, windows of %s s to %s s", where, n, strconv.FormatFloat(lo, 'g', 3, 64), strconv.FormatFloat(hi, 'g', 3, 64)))
				}
			}
		}
	}
	if len(cells) == 0 {
		return nil
	}
	more := ""
	if len(cells) > 3 {
		more = fmt.Sprintf("; and %d more", len(cells)-3)
		cells = cells[:3]
	}
	return []string{fmt.Sprintf("repeats with windows of very different lengths (the longest more than %d times the shortest), which each median takes as equals though a short window's rate is noisier and may cover another phase of the step: %s%s; measure every repeat over the same window", windowSpread, strings.Join(cells, "; "), more)}
}
