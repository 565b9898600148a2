package measure

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// roleUnattributed is the role of counts whose thread could not be named.
const roleUnattributed = "unattributed"

// splitRoles sums the per-thread counts of a window by the role roleOf gives
// each row (roleUnattributed for ""), in the order of mysqld.RoleNames,
// roleUnattributed last. Roles without threads are left out.
//
// Raw counts and enabled and running times add up exactly to the window's
// total. A role's value is the sum of its rows' counts, each scaled by its
// own enabled/running times, as the total's is: roles of a counted event add
// up exactly to the total's value, those of a multiplexed event too, but
// for a thread counted twice, whose own and descendants' rows are scaled
// apart. An event the window did not support, or whose
// count is unknown, is so in every role, with the reason. A role whose
// threads never ran during the window counted 0 (its threads had counters
// and did nothing); a role whose threads ran while the event was never
// scheduled on the PMU has it not counted.
func splitRoles(total perfevent.Reading, roleOf func(perfevent.ThreadCounts) string) []record.Role {
	if len(total.Threads) == 0 {
		return nil
	}
	type acc struct {
		threads int
		counts  []perfevent.Count
		values  []float64
		scaled  []bool
	}
	by := map[string]*acc{}
	for _, th := range total.Threads {
		if th.Descendants && idle(th) {
			continue // no thread created inside the window ran
		}
		role := roleOf(th)
		if role == "" {
			role = roleUnattributed
		}
		a := by[role]
		if a == nil {
			n := len(total.Events)
			a = &acc{counts: make([]perfevent.Count, n), values: make([]float64, n), scaled: make([]bool, n)}
			by[role] = a
		}
		if !th.Descendants {
			a.threads++
		}
		for i, c := range th.Counts {
			if i < len(a.counts) {
				a.counts[i] = a.counts[i].Add(c)
				a.values[i] += c.Scaled()
				a.scaled[i] = a.scaled[i] || (c.Enabled > 0 && c.Running < c.Enabled)
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
		if !contains(mysqld.RoleNames, n) && n != roleUnattributed {
			others = append(others, n)
		}
	}
	sort.Strings(others)
	names = append(names, others...)
	if by[roleUnattributed] != nil {
		names = append(names, roleUnattributed)
	}

	out := make([]record.Role, 0, len(names))
	for _, n := range names {
		a := by[n]
		role := record.Role{Name: n, Threads: a.threads, Counters: make([]record.Counter, len(total.Events))}
		for i, ec := range total.Events {
			c := a.counts[i]
			rc := record.Counter{
				Event:   ec.Event.RecordName(),
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
			case ec.Missing != "":
				rc.Status, rc.Reason = record.StatusNotCounted, ec.Missing
				rc.Raw, rc.Enabled, rc.Running = 0, 0, 0
			case c.Enabled == 0:
				// The role's threads had counters but never ran in
				// the window: they did nothing, a measured 0.
				rc.Status = record.StatusCounted
				rc.Reason = "no thread of this role ran during the window"
			case c.Running == 0:
				rc.Status = record.StatusNotCounted
				rc.Reason = "enabled but never scheduled on the PMU"
			case a.scaled[i]:
				rc.Status = record.StatusScaled
				rc.Value = a.values[i]
			default:
				rc.Status = record.StatusCounted
				rc.Value = a.values[i]
			}
			role.Counters[i] = rc
		}
		out = append(out, role)
	}
	return out
}

// idle reports whether a row counted nothing.
func idle(th perfevent.ThreadCounts) bool {
	for _, c := range th.Counts {
		if c != (perfevent.Count{}) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// roleLog merges the server's thread listings (mysqld.DB.ThreadRoles) taken
// over one window: when it opens, while it runs (see watchRoles) and when it
// closes. A thread's role is the most telling one any listing gave it: a
// connection at any listing is a connection, else a named background role
// beats other-background. A connection thread that the server keeps in its
// thread cache between connections is listed as nothing (other-background):
// a cached thread that existed before the window and served the load's
// connections during it is a connection only because some listing saw it
// serving one, so the listings taken while the load runs are what name it.
//
// A thread is known by its tid and its start time (read from /proc next to
// each listing): a tid the kernel gave to a new thread after the first one
// exited is another thread, whose role is not the dead one's.
type roleLog struct {
	pid      int
	mu       sync.Mutex
	roles    map[threadKey]string
	n        int
	warnings []record.Warning
	// startOf reads a thread's start time (ticks since boot); tests
	// replace it.
	startOf func(pid, tid int) uint64
}

// threadKey is a thread: its tid and its start time (0 when unknown).
type threadKey struct {
	tid   int
	start uint64
}

func newRoleLog(pid int) *roleLog {
	return &roleLog{pid: pid, roles: map[threadKey]string{}, startOf: threadStart}
}

// threadStart is the start time of thread tid of pid, in clock ticks since
// boot (/proc/PID/task/TID/stat); 0 when it cannot be read.
func threadStart(pid, tid int) uint64 {
	st, err := procfs.New("").Proc(pid).Task(tid).Stat()
	if err != nil {
		return 0
	}
	return st.StartTime
}

// add merges a listing.
func (l *roleLog) add(m *mysqld.ThreadMap) {
	if l == nil || m == nil {
		return
	}
	starts := make([]uint64, len(m.Threads))
	for i, th := range m.Threads {
		starts[i] = l.startOf(l.pid, th.Tid)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	for i, th := range m.Threads {
		k := threadKey{th.Tid, starts[i]}
		l.roles[k] = preferRole(l.roles[k], th.Role)
	}
	for _, w := range m.Warnings {
		if !slices.ContainsFunc(l.warnings, func(o record.Warning) bool { return o.Text == w.Text }) {
			l.warnings = append(l.warnings, w)
		}
	}
}

// preferRole returns the more telling of a thread's role so far (old, "" for
// none) and the role a new listing gives it.
func preferRole(old, role string) string {
	rank := func(r string) int {
		switch r {
		case "", roleUnattributed:
			return 0
		case mysqld.RoleOther:
			return 1
		case mysqld.RoleConnection:
			return 3
		}
		return 2
	}
	if rank(role) > rank(old) {
		return role
	}
	return old
}

// listings is how many listings were merged.
func (l *roleLog) listings() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// roleOf returns the role of a row of a window's threads. A thread's own
// row has the merged role of that thread (its tid and start time; any
// start time when either is unknown), RoleMain for the thread-group leader
// no listing named, roleUnattributed for a thread no listing saw (it
// exited between two). A row of descendants (threads a thread created
// inside the window, counted through it: see Config.PerRole) has the role
// of the threads the main thread creates, connection, when it is the main
// thread's, else its creator's role.
func (l *roleLog) roleOf(th perfevent.ThreadCounts) string {
	if th.Descendants && th.Tid == l.pid {
		return mysqld.RoleConnection
	}
	l.mu.Lock()
	r := ""
	for k, role := range l.roles {
		if k.tid == th.Tid && (k.start == th.Start || k.start == 0 || th.Start == 0) {
			r = preferRole(r, role)
		}
	}
	l.mu.Unlock()
	switch {
	case r != "":
		return r
	case th.Tid == l.pid:
		return mysqld.RoleMain
	}
	return roleUnattributed
}

// all returns tid → role for every thread a listing saw (for a tid two
// threads had in turn, the more telling role).
func (l *roleLog) all() map[int]string {
	l.mu.Lock()
	keys := make([]threadKey, 0, len(l.roles))
	for k := range l.roles {
		keys = append(keys, k)
	}
	l.mu.Unlock()
	out := make(map[int]string, len(keys))
	for _, k := range keys {
		out[k.tid] = preferRole(out[k.tid], l.roleOf(perfevent.ThreadCounts{Tid: k.tid, Start: k.start}))
	}
	return out
}

// Role listings while the window runs: the first soon after it opens (a
// load started with the window has connected by then), then one a second.
var (
	roleWatchFirst = 250 * time.Millisecond
	roleWatchEvery = time.Second
)

// watchRoles lists the server's threads into l while the window runs, until
// the returned function is called (it waits for a listing in flight).
// Listings that fail are skipped: the ones at the window's edges say why.
func (s *Session) watchRoles(ctx context.Context, l *roleLog) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(roleWatchFirst)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if m, err := s.cfg.DB.ThreadRoles(ctx, s.cfg.Pid); err == nil {
				l.add(m)
			}
			t.Reset(roleWatchEvery)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-done
		})
	}
}

// startedInside counts by role the threads a listing saw that have no
// counters of their own in att: they were created after the attach.
func (l *roleLog) startedInside(att *perfevent.Attachment) map[string]int {
	if att == nil || l == nil {
		return nil
	}
	attached := map[int]bool{}
	for _, tid := range att.Threads() {
		attached[tid] = true
	}
	count := map[string]int{}
	for tid, role := range l.all() {
		if !attached[tid] {
			count[role]++
		}
	}
	return count
}

// inheritedNote says how many threads started inside the window (by role,
// from startedInside), counted through the thread that created them: a
// roles warning about their roles and the connection role (that of the
// threads the main thread creates). ok is false when none started.
func inheritedNote(inside map[string]int) (w record.Warning, ok bool) {
	count := map[string]int{}
	n := 0
	for r, k := range inside {
		count[r] = k
		n += k
	}
	if n == 0 {
		return record.Warning{}, false
	}
	others := n - count[mysqld.RoleConnection]
	var parts, roles []string
	for _, r := range append(append([]string(nil), mysqld.RoleNames...), roleUnattributed) {
		if count[r] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, count[r]))
			roles = append(roles, r)
			delete(count, r)
		}
	}
	rest := slices.Sorted(maps.Keys(count))
	for _, r := range rest {
		parts = append(parts, fmt.Sprintf("%s %d", r, count[r]))
	}
	roles = append(roles, rest...)
	if others > 0 && !slices.Contains(roles, mysqld.RoleConnection) {
		roles = append(roles, mysqld.RoleConnection)
	}
	msg := fmt.Sprintf("%d threads started inside the window (%s): they have no counters of their own and are counted "+
		"through the thread that created them, those of the main thread (which accepts connections) as connection, others in their creator's role",
		n, strings.Join(parts, ", "))
	if others > 0 {
		msg += fmt.Sprintf("; %d of them are not connections: if the main thread created them, they are counted as connection", others)
	}
	return record.Warning{Code: record.WarnRoles, Roles: roles, Text: msg}, true
}
