package analysis

import (
	"encoding/binary"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// metricID numbers a metric name in this process: every Record of a report
// has the same few names, so a Record keeps its cells by number and a
// lookup is an index, not a search by name.
type metricID uint32

// metricIDs numbers metric names, once each per process. The tables of a
// report look names up millions of times on every CPU: they read a copy
// of the numbering that is never written (read), without a lock; a name
// numbered since the copy was made is found under the lock, and has the
// copy made again with it. Names are numbered as Records are computed,
// before the tables look them up: the copy is made once or twice.
var metricIDs struct {
	sync.RWMutex
	index map[string]metricID
	names []string // by id
	read  atomic.Pointer[map[string]metricID]
}

// idOf returns the number of a metric name, numbering it when new.
func idOf(name string) metricID {
	if id, ok := lookupID(name); ok {
		return id
	}
	metricIDs.Lock()
	defer metricIDs.Unlock()
	if id, ok := metricIDs.index[name]; ok {
		return id
	}
	if metricIDs.index == nil {
		metricIDs.index = map[string]metricID{}
	}
	id := metricID(len(metricIDs.names))
	metricIDs.index[name] = id
	metricIDs.names = append(metricIDs.names, name)
	return id
}

// lookupID returns the number of a metric name, if it has one: a name
// without one is a metric no Record has.
func lookupID(name string) (metricID, bool) {
	if m := metricIDs.read.Load(); m != nil {
		if id, ok := (*m)[name]; ok {
			return id, true
		}
	}
	metricIDs.RLock()
	id, ok := metricIDs.index[name]
	metricIDs.RUnlock()
	if ok {
		// Numbered since the copy was made: copy again.
		metricIDs.Lock()
		if m := metricIDs.read.Load(); m == nil || len(*m) < len(metricIDs.index) {
			read := maps.Clone(metricIDs.index)
			metricIDs.read.Store(&read)
		}
		metricIDs.Unlock()
	}
	return id, ok
}

// noMetric is an id no metric has: that of a name never numbered.
const noMetric = ^metricID(0)

// metricIDOf is the number of a metric name, noMetric when it has none.
func metricIDOf(name string) metricID {
	if id, ok := lookupID(name); ok {
		return id
	}
	return noMetric
}

// nameOf returns the metric name numbered id.
func nameOf(id metricID) string {
	metricIDs.RLock()
	defer metricIDs.RUnlock()
	return metricIDs.names[id]
}

// layout is where a Record's metrics are in its cells: Records computed
// alike (every Record of a campaign step, most of a campaign) share one.
type layout struct {
	slot []int32 // the cell of each metric id, -1 when absent; ids past its end are absent
	// names are the metrics' names, sorted.
	names []string
}

// cell returns the index of the metric's cell, or -1.
func (l *layout) cell(id metricID) int {
	if l == nil || int(id) >= len(l.slot) {
		return -1
	}
	return int(l.slot[id])
}

// layouts interns layouts by their ids, as bytes.
var layouts = struct {
	sync.RWMutex
	byIDs map[string]*layout
}{byIDs: map[string]*layout{}}

// layoutOf returns the shared layout of these ids (each once), key being
// their bytes (idsKey).
func layoutOf(ids []metricID, key []byte) *layout {
	layouts.RLock()
	l := layouts.byIDs[string(key)]
	layouts.RUnlock()
	if l != nil {
		return l
	}
	l = newLayout(ids)
	layouts.Lock()
	defer layouts.Unlock()
	if old := layouts.byIDs[string(key)]; old != nil {
		return old
	}
	layouts.byIDs[string(key)] = l
	return l
}

func newLayout(ids []metricID) *layout {
	l := &layout{}
	var top metricID
	for _, id := range ids {
		top = max(top, id)
	}
	if len(ids) > 0 {
		l.slot = make([]int32, top+1)
	}
	for i := range l.slot {
		l.slot[i] = -1
	}
	l.names = make([]string, len(ids))
	for i, id := range ids {
		l.slot[id] = int32(i)
		l.names[i] = nameOf(id)
	}
	slices.Sort(l.names)
	return l
}

// idsKey appends the bytes of ids to buf: the key of their layout.
func idsKey(buf []byte, ids []metricID) []byte {
	for _, id := range ids {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
	}
	return buf
}

// namer numbers the metrics of the Records one goroutine computes, with
// its own memory of the names it has seen so that the shared numbering is
// read once per name, and scratch space reused from Record to Record.
type namer struct {
	plain map[string]metricID
	perOp map[string]metricID    // event: PerOpName(event)
	mpki  map[string]metricID    // event: MPKIName(event)
	role  map[[2]string]metricID // role, event: RoleMetric(role, event)
	// layouts are the layouts of this goroutine's Records, by idsKey.
	layouts map[string]*layout

	// Scratch of one Record: its cells as set, the cell of each metric
	// (by id, -1 when not set), the ids of its layout and their key.
	set   []idCell
	at    []int32
	ids   []metricID
	key   []byte
	cells []packedCell
	// slab is where the cells of the Records go, each Record's next to
	// the last one's.
	slab []packedCell
	// totals is roleShares' scratch: each event's total over all roles.
	totals []eventTotal
	// roleIDs are the role metrics of the last Record with roles, in the
	// order set: the next Record's are mostly the same.
	roleIDs []roleID
	// counted is the counters of one Record by event (computation.counters).
	counted map[string]Cell
	// events is the events of one Record as they are found, and
	// lastEvents the last Record's events, shared with Records that have
	// the same.
	events, lastEvents []string
}

// roleID is the id of a role metric.
type roleID struct {
	role, event string
	id          metricID
}

// idCell is a cell set by a computation and the metric it is for.
type idCell struct {
	id metricID
	packedCell
}

// eventTotal is an event's total over the roles of a Record.
type eventTotal struct {
	event string
	total counterValue
}

func newNamer() *namer {
	return &namer{plain: map[string]metricID{}, perOp: map[string]metricID{}, mpki: map[string]metricID{},
		role: map[[2]string]metricID{}, layouts: map[string]*layout{}}
}

func (n *namer) id(name string) metricID {
	id, ok := n.plain[name]
	if !ok {
		id = idOf(name)
		n.plain[name] = id
	}
	return id
}

// derived is the id of a name built from parts k, kept in m: name builds
// the name the first time only.
func derived[K comparable](m map[K]metricID, k K, name func() string) metricID {
	id, ok := m[k]
	if !ok {
		id = idOf(name())
		m[k] = id
	}
	return id
}

func (n *namer) perOpID(event string) metricID {
	return derived(n.perOp, event, func() string { return PerOpName(event) })
}

func (n *namer) mpkiID(event string) metricID {
	return derived(n.mpki, event, func() string { return MPKIName(event) })
}

// roleID is the id of the role metric set i-th in the Record: mostly where
// the last Record with roles had it.
func (n *namer) roleID(i int, role, event string) metricID {
	if i < len(n.roleIDs) && n.roleIDs[i].role == role && n.roleIDs[i].event == event {
		return n.roleIDs[i].id
	}
	id := derived(n.role, [2]string{role, event}, func() string { return RoleMetric(role, event) })
	r := roleID{role, event, id}
	switch {
	case i < len(n.roleIDs):
		n.roleIDs[i] = r
	case i == len(n.roleIDs):
		n.roleIDs = append(n.roleIDs, r)
	}
	return id
}

// counters returns the namer's map of a Record's counters by event, empty.
func (n *namer) counters() map[string]Cell {
	if n.counted == nil {
		n.counted = map[string]Cell{}
	}
	clear(n.counted)
	return n.counted
}

// sharedEvents returns a Record's events: those of the last Record when
// they are the same, else a copy of events of its own. The slice has no
// spare capacity, so that an append to it copies.
func (n *namer) sharedEvents(events []string) []string {
	if len(events) == 0 {
		return nil
	}
	if !slices.Equal(events, n.lastEvents) {
		n.lastEvents = slices.Clip(slices.Clone(events))
	}
	return n.lastEvents
}

// finish stores the cells set in p: each metric once, as set last, in the
// order first set (in the namer's slab, with no spare capacity), and p's
// shared layout.
func (n *namer) finish(p *PerOp) {
	n.ids, n.cells = n.ids[:0], n.cells[:0]
	for _, c := range n.set {
		for int(c.id) >= len(n.at) {
			n.at = append(n.at, -1)
		}
		if i := n.at[c.id]; i >= 0 {
			n.cells[i] = c.packedCell // set again later
			continue
		}
		n.at[c.id] = int32(len(n.ids))
		n.ids = append(n.ids, c.id)
		n.cells = append(n.cells, c.packedCell)
	}
	for _, id := range n.ids {
		n.at[id] = -1
	}
	n.set = n.set[:0]
	n.key = idsKey(n.key[:0], n.ids)
	l := n.layouts[string(n.key)]
	if l == nil {
		l = layoutOf(n.ids, n.key)
		n.layouts[string(n.key)] = l
	}
	p.layout = l
	if len(n.cells) == 0 {
		return
	}
	if cap(n.slab)-len(n.slab) < len(n.cells) {
		n.slab = make([]packedCell, 0, max(len(n.cells), min(2*cap(n.slab), slabCells)))
	}
	start := len(n.slab)
	n.slab = append(n.slab, n.cells...)
	p.cells = n.slab[start:len(n.slab):len(n.slab)]
}

// slabCells is how many cells the namer allocates at once, at most: the
// Records of a report hold theirs for as long as the report.
const slabCells = 4096
