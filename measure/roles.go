package measure

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

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

// roleLog merges the server's thread listings (mysqld.ThreadRoles) taken
// over one window: when it opens, while it runs (see watchRoles) and when it
// closes. A thread's role is the most telling one any listing gave it: a
// connection at any listing is a connection, else a named background role
// beats other-background. A connection thread that the server keeps in its
// thread cache between connections is listed as nothing (other-background):
// a cached thread that existed before the window and served the load's
// connections during it is a connection only because some listing saw it
// serving one, so the listings taken while the load runs are what name it.
type roleLog struct {
	pid      int
	mu       sync.Mutex
	roles    map[int]string
	n        int
	warnings []string
}

func newRoleLog(pid int) *roleLog {
	return &roleLog{pid: pid, roles: map[int]string{}}
}

// add merges a listing.
func (l *roleLog) add(m *mysqld.ThreadMap) {
	if l == nil || m == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	for _, th := range m.Threads {
		l.roles[th.Tid] = preferRole(l.roles[th.Tid], th.Role)
	}
	l.warnings = appendNew(l.warnings, m.Warnings...)
}

// preferRole returns the more telling of a thread's role so far (old, "" for
// none) and the role a new listing gives it.
func preferRole(old, role string) string {
	rank := func(r string) int {
		switch r {
		case "", RoleUnattributed:
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

// roleOf returns the role of tid: the merged one, RoleMain for the
// thread-group leader no listing named, RoleUnattributed for a thread no
// listing saw (it exited between two).
func (l *roleLog) roleOf(tid int) string {
	l.mu.Lock()
	r, ok := l.roles[tid]
	l.mu.Unlock()
	switch {
	case ok && r != "":
		return r
	case tid == l.pid:
		return mysqld.RoleMain
	}
	return RoleUnattributed
}

// all returns tid → role for every thread a listing saw.
func (l *roleLog) all() map[int]string {
	l.mu.Lock()
	tids := make([]int, 0, len(l.roles))
	for tid := range l.roles {
		tids = append(tids, tid)
	}
	l.mu.Unlock()
	out := make(map[int]string, len(tids))
	for _, tid := range tids {
		out[tid] = l.roleOf(tid)
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

// inheritedNote says how many threads a listing saw that have no counters
// of their own: they were created after the attach and are counted in the
// role of the thread that created them.
func inheritedNote(att *perfevent.Attachment, l *roleLog) string {
	if att == nil || l == nil {
		return ""
	}
	attached := map[int]bool{}
	for _, tid := range att.Threads() {
		attached[tid] = true
	}
	count := map[string]int{}
	n := 0
	for tid, role := range l.all() {
		if !attached[tid] {
			count[role]++
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
