package perfevent

import (
	"fmt"
	"sort"
	"strings"
)

// DefaultBudget is the number of events the engine puts in one group on a
// core PMU whose counter budget the catalogue does not know: every x86 and
// Arm core PMU perf supports has at least 4 general-purpose counters per
// logical CPU.
const DefaultBudget = 4

// part is one perf_event_attr the engine opens per thread or CPU: one
// encoding of one event. Most events have one part; hybrid events have one
// per core PMU.
type part struct {
	event int // index in layout.events
	enc   int // index in the event's Encodings
	group int // index in layout.groups; -1 once found unsupported
	// reason is set when the part could not be opened on this machine.
	reason string
}

// group is a set of parts opened as one perf event group: the first part is
// the leader, read(2) on it returns them all.
type group struct {
	pmu   string
	parts []int // indices in layout.parts; parts[0] leads
	user  bool  // a {...} group the user asked for
}

// layout is the plan of what to open on every target: the events, their
// parts and the groups the parts go in.
type layout struct {
	events     []Event
	parts      []part
	eventParts [][]int // per event, indices of its parts
	groups     []group
	// number is the 1-based group number of each group with more than one
	// member, 0 for a group of one; set by renumber.
	number []int
	// reason is set for events that have no part at all.
	reason []string
	cgroup bool
}

// swPMU reports whether events of this PMU are scheduled without hardware
// counters, so they never multiplex and gain nothing from a group.
func swPMU(pmu string) bool {
	switch pmu {
	case "software", "tracepoint", "msr", "kprobe", "uprobe", "breakpoint":
		return true
	}
	return pmu == ""
}

// encPMU is the PMU an encoding is opened on, with a name for the encodings
// the catalogue left without one.
func encPMU(e Event, enc Encoding) string {
	if enc.PMU != "" {
		return enc.PMU
	}
	switch e.Kind {
	case KindSoftware:
		return "software"
	case kindTracepoint:
		return "tracepoint"
	}
	return "cpu"
}

// isCyclesOrInstructions reports whether enc is the generic cycles or
// instructions event (PERF_TYPE_HARDWARE, config 0 or 1; on hybrid CPUs the
// PMU type sits in the config's upper 32 bits).
func isCyclesOrInstructions(enc Encoding) (cycles, instructions bool) {
	if enc.Type != 0 {
		return false, false
	}
	low := enc.Config & 0xffffffff
	return low == 0, low == 1
}

// planLayout decides the groups: each user group as given (split per core
// PMU when its events span several, software members joining the first);
// the other events grouped per counter PMU in the order given, cycles and
// instructions together at the head of their PMU's first group, each group
// no larger than the PMU's budget (budgets[pmu], else DefaultBudget).
//
// Events of PMUs without counters (software, tracepoints, msr...) are
// opened one by one, each a group of one: they never multiplex, so a group
// buys them nothing, and a group is built one member at a time on a running
// thread, so a thread created between the leader's open and a member's
// inherits part of the group. Since the kernel's fix for CVE-2023-5717
// every group read of the creator then fails (ECHILD) for as long as that
// thread lives; an event alone has no such state.
func planLayout(events []Event, userGroups [][]int, budgets map[string]int) (*layout, error) {
	lay := &layout{events: events, eventParts: make([][]int, len(events)), reason: make([]string, len(events))}
	for i, e := range events {
		if len(e.Encodings) == 0 {
			lay.reason[i] = "no PMU on this machine provides it"
			continue
		}
		for j := range e.Encodings {
			lay.eventParts[i] = append(lay.eventParts[i], len(lay.parts))
			lay.parts = append(lay.parts, part{event: i, enc: j, group: -1})
		}
	}
	inUser := make([]bool, len(events))
	for gi, g := range userGroups {
		if len(g) == 0 {
			return nil, fmt.Errorf("event group %d is empty", gi+1)
		}
		for _, i := range g {
			if i < 0 || i >= len(events) {
				return nil, fmt.Errorf("event group %d names event %d of %d", gi+1, i, len(events))
			}
			if inUser[i] {
				return nil, fmt.Errorf("event %s is in two groups", events[i].Name)
			}
			inUser[i] = true
		}
	}
	for _, g := range userGroups {
		lay.addUserGroup(g)
	}

	// The other events: buckets per PMU, in order of first appearance.
	var order []string
	buckets := map[string][]int{}
	for i, e := range events {
		if inUser[i] {
			continue
		}
		for _, p := range lay.eventParts[i] {
			pmu := encPMU(e, e.Encodings[lay.parts[p].enc])
			if _, ok := buckets[pmu]; !ok {
				order = append(order, pmu)
			}
			buckets[pmu] = append(buckets[pmu], p)
		}
	}
	for _, pmu := range order {
		ps := buckets[pmu]
		// cycles first, instructions second, the rest in order given.
		rank := func(p int) int {
			pt := lay.parts[p]
			c, in := isCyclesOrInstructions(events[pt.event].Encodings[pt.enc])
			switch {
			case c:
				return 0
			case in:
				return 1
			}
			return 2
		}
		sort.SliceStable(ps, func(a, b int) bool { return rank(ps[a]) < rank(ps[b]) })
		size := 1
		if !swPMU(pmu) {
			size = DefaultBudget
			if n := budgets[pmu]; n > 0 {
				size = n
			}
		}
		for len(ps) > 0 {
			n := min(size, len(ps))
			lay.addGroup(group{pmu: pmu, parts: append([]int(nil), ps[:n]...)})
			ps = ps[n:]
		}
	}
	lay.renumber()
	return lay, nil
}

// addUserGroup adds the groups for one user {...} group: one per counter
// PMU among its parts (hybrid events span several), with the software-like
// parts in the first; a group of software-like parts only stays one group.
func (lay *layout) addUserGroup(members []int) {
	var hwOrder []string
	hw := map[string][]int{}
	var soft []int
	softPMU := ""
	for _, i := range members {
		e := lay.events[i]
		for _, p := range lay.eventParts[i] {
			pmu := encPMU(e, e.Encodings[lay.parts[p].enc])
			if swPMU(pmu) {
				soft = append(soft, p)
				if softPMU == "" {
					softPMU = pmu
				}
				continue
			}
			if _, ok := hw[pmu]; !ok {
				hwOrder = append(hwOrder, pmu)
			}
			hw[pmu] = append(hw[pmu], p)
		}
	}
	if len(hwOrder) == 0 {
		if len(soft) > 0 {
			lay.addGroup(group{pmu: softPMU, parts: soft, user: true})
		}
		return
	}
	for k, pmu := range hwOrder {
		ps := hw[pmu]
		if k == 0 {
			ps = append(ps, soft...)
		}
		lay.addGroup(group{pmu: pmu, parts: ps, user: true})
	}
}

func (lay *layout) addGroup(g group) {
	for _, p := range g.parts {
		lay.parts[p].group = len(lay.groups)
	}
	lay.groups = append(lay.groups, g)
}

// renumber gives the groups of more than one member the numbers 1, 2, ...
// in order; groups of one get 0.
func (lay *layout) renumber() {
	lay.number = make([]int, len(lay.groups))
	n := 0
	for i, g := range lay.groups {
		if len(g.parts) > 1 {
			n++
			lay.number[i] = n
		}
	}
}

func (lay *layout) groupNumber(g int) int {
	if g < 0 || g >= len(lay.number) {
		return 0
	}
	return lay.number[g]
}

// drop marks part p unsupported with reason and removes it from its group;
// the next member leads a group whose leader is dropped.
func (lay *layout) drop(p int, reason string) {
	pt := &lay.parts[p]
	pt.reason = reason
	if pt.group < 0 {
		return
	}
	g := &lay.groups[pt.group]
	for k, q := range g.parts {
		if q == p {
			g.parts = append(g.parts[:k:k], g.parts[k+1:]...)
			break
		}
	}
	pt.group = -1
}

// eventReason is why event i is not supported: its own reason, or its parts'
// (one line per PMU for a hybrid event).
func (lay *layout) eventReason(i int) string {
	if lay.reason[i] != "" {
		return lay.reason[i]
	}
	var rs []string
	e := lay.events[i]
	for _, p := range lay.eventParts[i] {
		r := lay.parts[p].reason
		if r == "" {
			continue
		}
		if len(e.Encodings) > 1 {
			r = encPMU(e, e.Encodings[lay.parts[p].enc]) + ": " + r
		}
		rs = append(rs, r)
	}
	return strings.Join(rs, "; ")
}

// partName names part p in messages: the event, with its PMU for a hybrid
// event.
func (lay *layout) partName(p int) string {
	pt := lay.parts[p]
	e := lay.events[pt.event]
	if len(e.Encodings) > 1 {
		return fmt.Sprintf("%s on %s", e.Name, encPMU(e, e.Encodings[pt.enc]))
	}
	return e.Name
}

// rowName names part p on row target id in messages: "task-clock on tid
// 4187" (or "on CPU 3" in cgroup mode).
func (lay *layout) rowName(p, id int) string {
	if lay.cgroup {
		return fmt.Sprintf("%s on CPU %d", lay.partName(p), id)
	}
	return fmt.Sprintf("%s on tid %d", lay.partName(p), id)
}

// openParts is the number of parts opened per target: all parts before the
// probe, those that opened after it.
func (lay *layout) openParts() int {
	n := 0
	for _, g := range lay.groups {
		n += len(g.parts)
	}
	return n
}

// describe lists the groups as perf would write them, for messages and
// tests: "{cycles,instructions},task-clock" (an event opened alone has no
// braces).
func (lay *layout) describe() string {
	var b strings.Builder
	for _, g := range lay.groups {
		if len(g.parts) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if len(g.parts) == 1 {
			b.WriteString(lay.partName(g.parts[0]))
			continue
		}
		b.WriteByte('{')
		for k, p := range g.parts {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(lay.partName(p))
		}
		b.WriteByte('}')
	}
	return b.String()
}

// splitGroups makes every group of several parts a group of one per part,
// for kernels that refuse group reads of inherited counters.
func (lay *layout) splitGroups() {
	var groups []group
	for _, g := range lay.groups {
		if len(g.parts) == 1 {
			groups = append(groups, g)
			continue
		}
		for _, p := range g.parts {
			groups = append(groups, group{pmu: g.pmu, parts: []int{p}, user: g.user})
		}
	}
	lay.groups = nil
	for i := range lay.parts {
		if lay.parts[i].group >= 0 {
			lay.parts[i].group = -1
		}
	}
	for _, g := range groups {
		lay.addGroup(g)
	}
	lay.renumber()
}
