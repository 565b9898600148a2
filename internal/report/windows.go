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

// unpairedNotes name the cells of versions compared with the base that
// have no rQPS because the base did not run their step at their thread
// count (on their host), with the thread counts the base ran it at: base
// and version at 8 and 16 threads gave no rQPS table and no word why.
func (b *builder) unpairedNotes() []string {
	c := b.c
	var cells []string
	for _, host := range c.Hosts {
		for _, v := range b.others() {
			for _, step := range c.Steps {
				var lacking, baseRan []string
				for _, th := range c.Threads {
					k := record.Key{Host: host, Version: v, Step: step, Threads: th}
					switch {
					case c.Has(c.BaseKey(k)):
						baseRan = append(baseRan, strconv.Itoa(th))
					case c.Has(k):
						lacking = append(lacking, strconv.Itoa(th))
					}
				}
				if len(lacking) == 0 {
					continue
				}
				where := fmt.Sprintf("%s %s at %s threads", v, step, strings.Join(lacking, ", "))
				if host != "" {
					where += " on host " + host
				}
				if len(baseRan) > 0 {
					where += " (the base ran it at " + strings.Join(baseRan, ", ") + ")"
				} else {
					where += " (the base did not run it)"
				}
				cells = append(cells, where)
			}
		}
	}
	if len(cells) == 0 {
		return nil
	}
	more := ""
	if len(cells) > 5 {
		more = fmt.Sprintf("; and %d more", len(cells)-5)
		cells = cells[:5]
	}
	return []string{fmt.Sprintf("no rQPS where the base (%s) did not run the step at the same thread count on the same host, since a ratio compares like with like: %s%s; run the base there too", c.Base, strings.Join(cells, "; "), more)}
}
