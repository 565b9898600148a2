package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfbench/perfbench/record"
)

// rotationNotes say which events of a rotation (record.Rotation) no repeat
// counted because fewer repeats ran than the rotation has groups: those
// events have no value in those cells, and no table when no cell counted
// them. Without this note a report asked for the counters tables alone
// dropped them without a word.
func rotationNotes(recs []*record.Record) []string {
	type measurement struct {
		key    record.Key
		rot    *record.Rotation
		groups []int // the groups its Records counted
		ran    int
	}
	var order []record.Key
	ms := map[record.Key]*measurement{}
	for _, r := range recs {
		if r.Rotation == nil || len(r.Rotation.Groups) < 2 || r.Kind == record.KindTable {
			continue
		}
		k := r.Key()
		m := ms[k]
		if m == nil {
			m = &measurement{key: k, rot: r.Rotation}
			ms[k] = m
			order = append(order, k)
		}
		m.ran++
		if !slices.Contains(m.groups, r.Rotation.Group) {
			m.groups = append(m.groups, r.Rotation.Group)
		}
	}
	// The measurements that missed the same events, in input order.
	type miss struct {
		events string
		need   int
		where  []string
	}
	var misses []*miss
	for _, k := range order {
		m := ms[k]
		var events []string
		for i, g := range m.rot.Groups {
			if !slices.Contains(m.groups, i+1) {
				events = append(events, g...)
			}
		}
		if len(events) == 0 {
			continue
		}
		e := strings.Join(events, ", ")
		i := slices.IndexFunc(misses, func(x *miss) bool { return x.events == e })
		if i < 0 {
			misses = append(misses, &miss{events: e, need: len(m.rot.Groups)})
			i = len(misses) - 1
		}
		misses[i].where = append(misses[i].where, fmt.Sprintf("%s %s (%s, %s ran)", k.Version, k.Step, scopeText(k.Host, k.Threads), plural(m.ran, "repeat")))
	}
	var out []string
	for _, m := range misses {
		where := m.where
		more := ""
		if len(where) > 3 {
			more = fmt.Sprintf(" and %d more", len(where)-3)
			where = where[:3]
		}
		out = append(out, fmt.Sprintf("counted in no repeat, too few repeats for the event rotation (%d groups, one a repeat): %s, in %s%s: no value there (no table when no cell counted them); run at least %d repeats",
			m.need, m.events, strings.Join(where, "; "), more, m.need))
	}
	return out
}
