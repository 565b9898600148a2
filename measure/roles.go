package measure

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// RoleUnattributed is the role of counts whose thread could not be named.
const RoleUnattributed = "unattributed"

// SplitRoles sums the per-thread counts of a window by the role roleOf gives
// each attached thread (RoleUnattributed for ""), in the order of
// mysqld.RoleNames, RoleUnattributed last. Roles without threads are left out.
//
// Raw counts and enabled and running times add up exactly to the window's
// total. A role's value is its raw count scaled by its own enabled/running
// times: roles of a counted event add up exactly to the total's value, those
// of a multiplexed event approximately. An event the window did not support
// is not supported in every role. A role whose threads never ran during the
// window counted 0 (its threads had counters and did nothing); a role whose
// threads ran while the event was never scheduled on the PMU has it not
// counted.
func SplitRoles(total perfevent.Reading, roleOf func(tid int) string) []record.Role {
	if len(total.Threads) == 0 {
		return nil
	}
	type acc struct {
		threads int
		counts  []perfevent.Count
	}
	by := map[string]*acc{}
	for _, th := range total.Threads {
		role := roleOf(th.Tid)
		if role == "" {
			role = RoleUnattributed
		}
		a := by[role]
		if a == nil {
			a = &acc{counts: make([]perfevent.Count, len(total.Events))}
			by[role] = a
		}
		a.threads++
		for i, c := range th.Counts {
			if i < len(a.counts) {
				a.counts[i] = a.counts[i].Add(c)
			}
		}
	}
	var names []string
	for _, n := range mysqld.RoleNames {
		if by[n] != nil {
			names = append(names, n)
		}
	}
	var others []string
	for n := range by {
		if !contains(mysqld.RoleNames, n) && n != RoleUnattributed {
			others = append(others, n)
		}
	}
	sort.Strings(others)
	names = append(names, others...)
	if by[RoleUnattributed] != nil {
		names = append(names, RoleUnattributed)
	}

	out := make([]record.Role, 0, len(names))
	for _, n := range names {
		a := by[n]
		role := record.Role{Name: n, Threads: a.threads, Counters: make([]record.Counter, len(total.Events))}
		for i, ec := range total.Events {
			c := a.counts[i]
			name := ec.Event.Canonical
			if name == "" {
				name = ec.Event.Name
			}
			rc := record.Counter{
				Event:   name,
				Group:   ec.Group,
				Raw:     c.Raw,
				Enabled: c.Enabled,
				Running: c.Running,
				Unit:    ec.Event.Unit,
				Scale:   ec.Event.Scale,
			}
			switch {
			case ec.Status == perfevent.StatusNotSupported:
				rc.Status, rc.Reason = record.StatusNotSupported, ec.Reason
				rc.Raw, rc.Enabled, rc.Running = 0, 0, 0
			case c.Enabled == 0:
				// The role's threads had counters but never ran in
				// the window: they did nothing, a measured 0.
				rc.Status = record.StatusCounted
				rc.Reason = "no thread of this role ran during the window"
			case c.Running == 0:
				rc.Status = record.StatusNotCounted
				rc.Reason = "enabled but never scheduled on the PMU"
			default:
				rc.Status = c.Status().String()
				rc.Value = c.Scaled()
			}
			role.Counters[i] = rc
		}
		out = append(out, role)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mergeRoles returns tid → role: the listing taken before the window first
// (the thread the counters were opened on had that role then), the one taken
// after it for threads the first did not have; the thread-group leader is
// RoleMain when neither names it.
func mergeRoles(pid int, start, end *mysqld.ThreadMap) func(int) string {
	m := map[int]string{}
	if end != nil {
		for tid, r := range end.Map() {
			m[tid] = r
		}
	}
	if start != nil {
		for tid, r := range start.Map() {
			m[tid] = r
		}
	}
	return func(tid int) string {
		if r, ok := m[tid]; ok {
			return r
		}
		if tid == pid {
			return mysqld.RoleMain
		}
		return RoleUnattributed
	}
}

// inheritedNote says how many threads alive at the window's end have no
// counters of their own: they were created after the attach and are counted
// in the role of the thread that created them.
func inheritedNote(att *perfevent.Attachment, end *mysqld.ThreadMap) string {
	if att == nil || end == nil {
		return ""
	}
	attached := map[int]bool{}
	for _, tid := range att.Threads() {
		attached[tid] = true
	}
	count := map[string]int{}
	n := 0
	for _, th := range end.Threads {
		if !attached[th.Tid] {
			count[th.Role]++
			n++
		}
	}
	if n == 0 {
		return ""
	}
	var parts []string
	for _, r := range append(append([]string(nil), mysqld.RoleNames...), RoleUnattributed) {
		if count[r] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, count[r]))
			delete(count, r)
		}
	}
	var rest []string
	for r := range count {
		rest = append(rest, fmt.Sprintf("%s %d", r, count[r]))
	}
	sort.Strings(rest)
	parts = append(parts, rest...)
	return fmt.Sprintf("%d threads started inside the window (%s): their counts are in the role of the thread that created them (the main thread for connections); start the window after the load has connected (a warm-up) to count them in their own role",
		n, strings.Join(parts, ", "))
}
