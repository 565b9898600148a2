package record

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Select says which of the bulky members of a Record a reader needs: the
// thread roles and the per-second series are most of a Record's bytes,
// with the server's status deltas and the client's per-interval lines,
// and most readers need few of them.
type Select struct {
	Roles  bool // the counters by thread role
	Series bool // the per-second series
	// ClientLists reads the client's per-interval lines and histogram.
	ClientLists bool
	// Extras reads the members no report reads: the gauges, the server
	// but for its version, the client's command and the provenance but
	// for the machine's host name, CPU model and CPU count (what tells
	// machines and builds apart).
	Extras bool
	// Status lists the only server status variables read (exact names);
	// nil reads them all.
	Status []string
}

// Selective reads Records without the members its Select leaves out,
// reusing its buffers from one Record to the next: one per goroutine.
//
// Parse gives what record.Parse gives for the Record's JSON without those
// members (the members pruned as JSON, then decoded), and the same
// error. Records as perfbench writes them take a faster path: the
// members left out are skipped as bytes, the counters (of the Record and
// of its roles), the status variables and the small members (see small)
// are decoded by hand, and only the members left (warnings, series, ...)
// go through the general decoder. Anything that path does not follow
// exactly as encoding/json would (escaped member names, names in another
// case, a member given twice, a value of another type, numbers out of
// range) goes the general way, which decides: a member of a Record whole,
// the Record itself when that cannot be done member by member.
type Selective struct {
	sel   Select
	prune map[string]member
	// Buffers kept from one Record to the next.
	rest  []byte
	lean  []byte
	lists []counterList
	// counters are those of the Record being read, decoded into the
	// free part of slab: the counters of many Records share one array,
	// each Record keeping the part its own counters fill (see
	// placeCounters).
	counters []Counter
	slab     []Counter
	slabbed  int    // how many counters the slabs made hold
	roleBuf  []Role // the roles of the Record being read
	// events are the event names of the counters of the Record read
	// before, by position: the next Record's are most often the same.
	events []string
	// names interns event and role names, counter statuses and units:
	// a campaign repeats a few dozen of them millions of times.
	names map[string]string
	// shapes are the counters of the Record read before, by position,
	// as the bytes between their numbers (see counterShape).
	shapes []counterShape
	// members are the member names of the Record being read, in order.
	members []string
}

// NewSelective returns a reader of the members sel names.
func NewSelective(sel Select) *Selective {
	return &Selective{sel: sel, prune: sel.pruning(), names: map[string]string{}}
}

// Parse decodes one Record without the members left out (see Selective).
func (d *Selective) Parse(data []byte) (*Record, error) {
	if r, ok := d.fast(data); ok {
		return r, nil
	}
	return d.general(data)
}

// ParseStart is kept for callers written when a Record's first bytes
// could hold all that Parse reads of it. They never do: a Record's
// members may come in any order (an edit with jq or Python moves them),
// so a member that matters may follow any member left out, and every
// member is read. It reports false: Parse of the whole JSON decides.
func (d *Selective) ParseStart(start []byte) (r *Record, used int, ok bool) {
	return nil, 0, false
}

// general prunes data as JSON and decodes what is left with Parse, the
// member names checked on data as given (see memberWarnings); JSON the
// pruning cannot follow is decoded whole, for Parse's error.
func (d *Selective) general(data []byte) (*Record, error) {
	whole := data
	if l, ok := pruneObject(d.lean[:0], data, d.prune); ok {
		d.lean = l
		data = l
	}
	return parse(data, whole)
}

// member says what reading a Record does with one member of a JSON object.
type member struct {
	drop bool
	// keep, for an object, lists the only members kept; nil keeps all.
	keep []string
	// sub prunes the members of an object.
	sub map[string]member
}

// pruning returns what s leaves out of a Record's JSON.
func (s Select) pruning() map[string]member {
	p := map[string]member{}
	if s.Status != nil {
		p["status"] = member{keep: s.Status}
	}
	client := map[string]member{}
	if !s.ClientLists {
		client["intervals"], client["histogram"] = member{drop: true}, member{drop: true}
	}
	if !s.Extras {
		client["command"] = member{drop: true}
		p["gauges"] = member{drop: true}
		prov, server := map[string]member{}, map[string]member{}
		for _, m := range provenanceExtras {
			prov[m] = member{drop: true}
		}
		for _, m := range serverMembers {
			if m != "version" {
				server[m] = member{drop: true}
			}
		}
		p["provenance"], p["server"] = member{sub: prov}, member{sub: server}
	}
	if len(client) > 0 {
		p["client"] = member{sub: client}
	}
	if !s.Roles {
		p["roles"] = member{drop: true}
	}
	if !s.Series {
		p["series"] = member{drop: true}
	}
	return p
}

// counterList is where one list of counters went in Selective.counters.
type counterList struct {
	start, end int
	null       bool // absent or null: a nil list
	// role is the index of the role the list belongs to, -1 for the
	// Record's own.
	role int
}

// fast decodes data as Parse does, or reports false when it cannot be
// sure to (then nothing it did counts). It reads every member: those
// left out are skipped as bytes, wherever they stand.
func (d *Selective) fast(data []byte) (r *Record, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	d.rest = append(d.rest[:0], '{')
	if cap(d.slab) < max(len(d.events), 1) {
		d.newSlab()
	}
	d.counters, d.lists, d.members = d.slab[:0], d.lists[:0], d.members[:0]
	var w wireRecord
	var seen [len(hotMembers)]bool
	var smallSeen uint32
	first := true
	end, ok := eachMemberUntil(data, i, func(key []byte, v int) (int, bool) {
		name, ok := d.key(key)
		if !ok {
			return v, false
		}
		d.members = append(d.members, name)
		h := hotMember(key)
		switch {
		case h == len(hotMembers):
			return v, false
		case h >= 0 && seen[h]:
			return v, false
		case h >= 0:
			seen[h] = true
			if end, ok, done := d.hot(hotMembers[h], data, v, &w.Record); done {
				return end, ok
			}
		default:
			n, end, ok := d.small(key, data, v, &w.Record)
			switch {
			case n == foldedSmall || (n >= 0 && smallSeen&(1<<n) != 0):
				return v, false
			case n >= 0:
				smallSeen |= 1 << n
				if ok {
					return end, true
				}
			}
		}
		end, ok := skipValue(data, v)
		return end, ok && end > v && d.keep(data, key, &first, i, v, end)
	}, &i)
	if !ok || skipSpace(data, end) != len(data) {
		return nil, false
	}
	if len(d.rest) > 1 {
		// Members the fast path left to the general decoder.
		d.rest = append(d.rest, '}')
		if decode(d.rest, &w) != nil {
			return nil, false
		}
	}
	d.placeCounters(&w.Record)
	w.members = d.members
	r, err := w.finish(false)
	return r, err == nil
}

// hot reads the hot member named name at src[v] into r, and reports
// done, or leaves it to fast to keep for the general decoder: the series
// (unless left out) and a client the fast path cannot follow.
func (d *Selective) hot(name string, src []byte, v int, r *Record) (end int, ok, done bool) {
	switch name {
	case "counters":
		end, ok = d.counterList(src, v, -1)
	case "roles":
		if !d.sel.Roles {
			return v, false, false
		}
		r.Roles, end, ok = d.roles(src, v)
	case "status":
		r.Status, end, ok = d.status(src, v)
	case "client":
		if end, ok = d.client(src, v, &r.Client); !ok {
			return v, false, false
		}
	default:
		return v, false, false
	}
	return end, ok, true
}

// keep copies the member of data at i, named key, value data[v:end],
// for the general decoder, pruned as Select says (the member itself
// dropped, or some of its members).
func (d *Selective) keep(data, key []byte, first *bool, i, v, end int) bool {
	m, pruned := d.prune[string(key)]
	if m.drop {
		return true
	}
	if !*first {
		d.rest = append(d.rest, ',')
	}
	*first = false
	if pruned && (m.sub != nil || m.keep != nil) && data[v] == '{' {
		d.rest = append(d.rest, data[i:v]...)
		rest, e, ok := pruneAt(d.rest, data, v, m.sub, m.keep)
		d.rest = rest
		return ok && e == end
	}
	d.rest = append(d.rest, data[i:end]...)
	return true
}

// hotMembers are the members of a Record that fast reads itself.
var hotMembers = [...]string{"counters", "roles", "status", "series", "client"}

// hotMember returns the index in hotMembers of the member named key, or
// -1 for any other member; hotMember of a name that matches one in
// another case (as encoding/json would) returns len(hotMembers), which
// fast refuses.
func hotMember(key []byte) int {
	for i, h := range hotMembers {
		if string(key) == h {
			return i
		}
	}
	for _, h := range hotMembers {
		if bytes.EqualFold(key, []byte(h)) {
			return len(hotMembers) // seen[] has no room: refused below
		}
	}
	return -1
}

// eachMember calls f with each member of the object at src[*at] (name
// without quotes, start and end of the value) and returns the index after
// the object. It fails on JSON it cannot follow, on names with escapes,
// and when f fails. *at is left at the start of each member for f.
func eachMember(src []byte, i int, f func(key []byte, v, end int) bool, at *int) (int, bool) {
	end, ok := eachMemberUntil(src, i, func(key []byte, v int) (int, bool) {
		end, ok := skipValue(src, v)
		return end, ok && end > v && f(key, v, end)
	}, at)
	return end, ok
}

// eachMemberUntil is eachMember for an f that reads the value starting at
// v itself and returns where it ends (a value is not scanned once to find
// its end and again to read it).
func eachMemberUntil(src []byte, i int, f func(key []byte, v int) (int, bool), at *int) (end int, ok bool) {
	i = skipSpace(src, i+1)
	if i < len(src) && src[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(src) || src[i] != '"' {
			return i, false
		}
		keyEnd, ok := skipString(src, i)
		if !ok {
			return i, false
		}
		key := src[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return i, false
		}
		v := skipSpace(src, keyEnd)
		if v >= len(src) || src[v] != ':' {
			return i, false
		}
		v = skipSpace(src, v+1)
		if v >= len(src) {
			return i, false
		}
		if at != nil {
			*at = i
		}
		end, ok := f(key, v)
		if !ok || end <= v {
			return i, false
		}
		i = skipSpace(src, end)
		if i >= len(src) {
			return i, false
		}
		switch src[i] {
		case ',':
			i = skipSpace(src, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// eachElementAt calls f with the start of each element of the array in
// src (all of it, after leading white space); f reads the element and
// returns where it ends (the elements are not scanned once to find their
// end and again to read them). It reports whether it could follow the
// array.
func eachElementAt(src []byte, f func(v int) (end int, ok bool)) bool {
	end, ok := eachElementFrom(src, skipSpace(src, 0), f)
	return ok && skipSpace(src, end) == len(src)
}

// eachElementFrom is eachElementAt for the array at src[i]: it returns
// the index after the array.
func eachElementFrom(src []byte, i int, f func(v int) (end int, ok bool)) (int, bool) {
	if i >= len(src) || src[i] != '[' {
		return i, false
	}
	i = skipSpace(src, i+1)
	if i < len(src) && src[i] == ']' {
		return i + 1, true
	}
	for {
		if i >= len(src) {
			return i, false
		}
		end, ok := f(i)
		if !ok || end <= i {
			return i, false
		}
		i = skipSpace(src, end)
		if i >= len(src) {
			return i, false
		}
		switch src[i] {
		case ',':
			i = skipSpace(src, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// scalarAt returns the end of the value at src[v] and whether it is
// null, for a reader of an array or object that also takes null: any
// other value that is not an array or object fails.
func scalarAt(src []byte, v int) (end int, null, ok bool) {
	if src[v] == '[' || src[v] == '{' {
		return v, false, true
	}
	end, ok = skipValue(src, v)
	return end, ok && isNull(src[v:end]), ok
}

// counterList decodes the list of counters at src[v] into d.counters,
// for the role numbered role (-1: the Record's own), and returns where
// it ends.
func (d *Selective) counterList(src []byte, v, role int) (int, bool) {
	l := counterList{start: len(d.counters), role: role}
	end, null, ok := scalarAt(src, v)
	switch {
	case !ok || (end > v && !null):
		return end, false
	case null:
		l.null = true
	default:
		end, ok = eachElementFrom(src, v, func(v int) (int, bool) {
			if src[v] != '{' {
				return v, false
			}
			d.counters = append(d.counters, Counter{})
			k := len(d.counters) - 1
			if end, ok := d.shaped(src, v, k); ok {
				return end, true
			}
			return d.counter(src, v, k)
		})
		if !ok {
			return end, false
		}
	}
	l.end = len(d.counters)
	d.lists = append(d.lists, l)
	return end, true
}

// counter decodes the counter object at src[i] into d.counters[k] and
// returns where it ends.
func (d *Selective) counter(src []byte, i, k int) (int, bool) {
	c := &d.counters[k]
	var seen uint16
	var sh shapeSlots
	end, ok := eachMemberUntil(src, i, func(key []byte, v int) (int, bool) {
		var bit uint16
		end, ok := v, true
		switch string(key) {
		case "event":
			bit = 1 << 0
			end, ok = skipValue(src, v)
			c.Event, ok = d.event(src[v:end], k, ok)
		case "group":
			bit = 1 << 1
			var x uint64
			if x, end, ok = digitsAt(src, v, 18); !ok {
				end, ok = skipValue(src, v)
				c.Group, ok = parseIntOK(src[v:end], ok)
			} else {
				c.Group = int(x)
			}
		case "raw":
			bit = 1 << 2
			c.Raw, end, ok = uintAt(src, v)
			sh.add(slotRaw, v, end)
		case "time_enabled_ns":
			bit = 1 << 3
			c.Enabled, end, ok = uintAt(src, v)
			sh.add(slotEnabled, v, end)
		case "time_running_ns":
			bit = 1 << 4
			c.Running, end, ok = uintAt(src, v)
			sh.add(slotRunning, v, end)
		case "value":
			bit = 1 << 5
			c.Value, end, ok = floatAt(src, v)
			sh.add(slotValue, v, end)
		case "status":
			bit = 1 << 6
			var s string
			end, ok = skipValue(src, v)
			s, ok = d.strOK(src[v:end], true, ok)
			c.Status = Status(s)
		case "reason":
			bit = 1 << 7
			end, ok = skipValue(src, v)
			c.Reason, ok = d.strOK(src[v:end], false, ok)
		case "unit":
			bit = 1 << 8
			end, ok = skipValue(src, v)
			c.Unit, ok = d.strOK(src[v:end], true, ok)
		case "scale":
			bit = 1 << 9
			c.Scale, end, ok = floatAt(src, v)
		case "per_op":
			bit = 1 << 10
			end, ok = skipValue(src, v)
			if ok && !isNull(src[v:end]) {
				var x float64
				if x, ok = parseFloat(src[v:end]); ok {
					c.PerOp = &x
				}
			}
		default:
			return v, false // not written by perfbench: the general way decides
		}
		if seen&bit != 0 {
			return v, false
		}
		seen |= bit
		return end, ok
	}, nil)
	if ok {
		d.keepShape(src, i, end, k, &sh)
	}
	return end, ok
}

// event decodes the name of the event of the counter at position k of
// the Record, a value skipValue read (ok as it said): the string of the
// counter at that position in the Record before when it is the same.
func (d *Selective) event(val []byte, k int, ok bool) (string, bool) {
	if ok && len(val) >= 2 && val[0] == '"' && k < len(d.events) && d.events[k] == string(val[1:len(val)-1]) &&
		bytes.IndexByte(val[1:len(val)-1], '\\') < 0 {
		return d.events[k], true
	}
	e, ok := d.strOK(val, true, ok)
	if ok {
		if k < len(d.events) {
			d.events[k] = e
		} else if k == len(d.events) {
			d.events = append(d.events, e)
		}
	}
	return e, ok
}

// counterShape is a counter as the bytes of its JSON object but for its
// four numbers (raw, time_enabled_ns, time_running_ns, value), and what
// those bytes decode to: a counter whose object has the same bytes around
// its numbers decodes to the same counter with its own numbers (each read
// by the same function as counter reads it with, ending where the next
// bytes begin). Records as perfbench writes them list the same events in
// the same order, so most counters have the shape of the counter at the
// same position in the Record before.
type counterShape struct {
	c   Counter
	lit []byte // the object's bytes without the numbers
	shapeSlots
}

// shapeSlots are where a counter's numbers are: the number slot[j] is
// at[j] to end[j] in the bytes of its object; in a shape, at[j] is where
// it goes in the bytes without the numbers.
type shapeSlots struct {
	n    int
	slot [4]uint8
	at   [4]int
	end  [4]int
}

const (
	slotRaw = iota
	slotEnabled
	slotRunning
	slotValue
)

func (s *shapeSlots) add(slot uint8, v, end int) {
	if s.n < len(s.slot) {
		s.slot[s.n], s.at[s.n], s.end[s.n] = slot, v, end
	}
	s.n++
}

// keepShape keeps the shape of the counter d.counters[k], decoded from
// the object src[i:end] whose numbers are at sh (offsets in src).
func (d *Selective) keepShape(src []byte, i, end, k int, sh *shapeSlots) {
	if k >= len(d.shapes) {
		if k > len(d.shapes) {
			return
		}
		d.shapes = append(d.shapes, counterShape{})
	}
	s := &d.shapes[k]
	s.shapeSlots = shapeSlots{}
	s.lit = s.lit[:0]
	c := d.counters[k]
	if c.PerOp != nil || sh.n > len(sh.slot) {
		// A pointer would be shared between Records: this counter is
		// read the general way (an empty shape matches nothing).
		return
	}
	s.c = c
	s.n = sh.n
	prev := i
	for j := range sh.n {
		s.lit = append(s.lit, src[prev:sh.at[j]]...)
		s.slot[j] = sh.slot[j]
		s.at[j] = len(s.lit)
		prev = sh.end[j]
	}
	s.lit = append(s.lit, src[prev:end]...)
}

// shaped decodes the counter object at src[i] into d.counters[k] when it
// has the shape of the counter at position k in the Record before, and
// returns where it ends; it reports false (having changed nothing) for
// any other.
func (d *Selective) shaped(src []byte, i, k int) (int, bool) {
	if k >= len(d.shapes) {
		return i, false
	}
	s := &d.shapes[k]
	if len(s.lit) == 0 {
		return i, false
	}
	c := s.c
	prev := 0
	for j := range s.n {
		lit := s.lit[prev:s.at[j]]
		if !bytes.HasPrefix(src[i:], lit) {
			return i, false
		}
		i += len(lit)
		var ok bool
		switch s.slot[j] {
		case slotRaw:
			c.Raw, i, ok = uintAt(src, i)
		case slotEnabled:
			c.Enabled, i, ok = uintAt(src, i)
		case slotRunning:
			c.Running, i, ok = uintAt(src, i)
		default:
			c.Value, i, ok = floatAt(src, i)
		}
		if !ok {
			return i, false
		}
		prev = s.at[j]
	}
	lit := s.lit[prev:]
	if !bytes.HasPrefix(src[i:], lit) {
		return i, false
	}
	d.counters[k] = c
	return i + len(lit), true
}

// digitsAt reads the plain decimal integer at src[v] (digits only, no
// sign, no leading zero, at most max digits, followed by what may follow
// a value), as Records hold their counts: ok false for anything else,
// which the caller then reads the general way.
func digitsAt(src []byte, v, max int) (x uint64, end int, ok bool) {
	end = v
	for end < len(src) && end-v < max+1 && src[end] >= '0' && src[end] <= '9' {
		x = x*10 + uint64(src[end]-'0')
		end++
	}
	n := end - v
	if n == 0 || n > max || (n > 1 && src[v] == '0') || end >= len(src) {
		return 0, v, false
	}
	switch src[end] {
	case ',', '}', ']', ' ', '\n', '\t', '\r':
		return x, end, true
	}
	return 0, v, false
}

// uintAt and floatAt read the number at src[v] into a field of their
// type as parseUint and parseFloat do, and return where it ends; plain
// integers (of at most 19 digits, or 15 for a float64, which holds them
// exactly) are read without strconv.
func uintAt(src []byte, v int) (uint64, int, bool) {
	if x, end, ok := digitsAt(src, v, 19); ok {
		return x, end, true
	}
	end, ok := skipValue(src, v)
	if !ok || end == v {
		return 0, end, false
	}
	x, ok := parseUint(src[v:end])
	return x, end, ok
}

func floatAt(src []byte, v int) (float64, int, bool) {
	if x, end, ok := digitsAt(src, v, 15); ok {
		return float64(x), end, true
	}
	end, ok := skipValue(src, v)
	if !ok || end == v {
		return 0, end, false
	}
	x, ok := parseFloat(src[v:end])
	return x, end, ok
}

// roles decodes the list of roles at src[v], their counters into
// d.counters, and returns where it ends.
func (d *Selective) roles(src []byte, v int) ([]Role, int, bool) {
	if end, null, ok := scalarAt(src, v); !ok || end > v {
		return nil, end, ok && null
	}
	roles := d.roleBuf[:0]
	end, ok := eachElementFrom(src, v, func(i int) (int, bool) {
		if src[i] != '{' {
			return i, false
		}
		roles = append(roles, Role{})
		r := &roles[len(roles)-1]
		var seen uint8
		end, ok := eachMemberUntil(src, i, func(key []byte, v int) (int, bool) {
			bit, end, ok := uint8(0), v, true
			switch string(key) {
			case "name":
				bit = 1
				end, ok = skipValue(src, v)
				r.Name, ok = d.strOK(src[v:end], true, ok)
			case "threads":
				bit = 2
				end, ok = skipValue(src, v)
				r.Threads, ok = parseIntOK(src[v:end], ok)
			case "counters":
				bit = 4
				end, ok = d.counterList(src, v, len(roles)-1)
			default:
				return v, false
			}
			if seen&bit != 0 {
				return v, false
			}
			seen |= bit
			return end, ok
		}, nil)
		return end, ok
	})
	// The roles are copied from the buffer kept from one Record to the
	// next into a list of their exact number.
	d.roleBuf = roles
	return append(make([]Role, 0, len(roles)), roles...), end, ok
}

// status decodes the status variables Select keeps from the object at
// src[v] and returns where it ends.
func (d *Selective) status(src []byte, v int) (map[string]float64, int, bool) {
	end, null, ok := scalarAt(src, v)
	if !ok || end > v || src[v] != '{' {
		return nil, end, ok && null
	}
	m := make(map[string]float64, len(d.sel.Status))
	end, ok = eachMember(src, v, func(key []byte, v, end int) bool {
		if d.sel.Status != nil && !keeps(d.sel.Status, key) {
			return true
		}
		for _, c := range key {
			if c < 0x20 {
				return false
			}
		}
		if !utf8.Valid(key) {
			return false
		}
		x, ok := parseFloat(src[v:end])
		if ok && isNull(src[v:end]) {
			return false // encoding/json would store a 0
		}
		m[string(key)] = x
		return ok
	}, nil)
	// The variables left out are skipped as bytes: the general way
	// checks that they end where the object skipped whole does.
	return m, end, ok && skipsAlike(src, v, end)
}

// slabCounters is how many counters a slab holds: those of a few dozen
// Records as perfbench writes them. Once a Selective has made slabs for
// bigSlabsAfter counters (those of about 500 Records), it makes slabs of
// bigSlabCounters (7.5 MB): a report of a few hundred Records holds
// little more memory than its counters fill, one of a campaign makes few
// large arrays (in huge pages where perfbench report asked for them, see
// internal/hugeheap).
const (
	slabCounters    = 1024
	bigSlabsAfter   = 64 * slabCounters
	bigSlabCounters = 64 * slabCounters
)

// newSlab starts a slab for the counters of the Records read next, with
// room for those of one like the Record read before at least.
func (d *Selective) newSlab() {
	n := slabCounters
	if d.slabbed >= bigSlabsAfter {
		n = bigSlabCounters
	}
	d.slab = make([]Counter, 0, max(n, len(d.events)))
	d.slabbed += cap(d.slab)
}

// placeCounters gives the Record and its roles their counter lists, in
// one array of their exact number as Parse packs them: the part of the
// slab they were decoded into, which the next Record's counters follow.
// (Counters the slab had no room for were decoded into an array of
// their own, which they keep.)
func (d *Selective) placeCounters(r *Record) {
	n := len(d.counters)
	var all []Counter
	switch {
	case n == 0:
		// Parse keeps lists as decoded when there are no counters.
		all = []Counter{}
	default:
		all = d.counters[:n:n]
		if cap(d.counters) == cap(d.slab) {
			d.slab = d.slab[n:n]
		}
	}
	d.counters = nil
	if len(d.events) > n {
		d.events = d.events[:n]
	}
	for _, l := range d.lists {
		var cs []Counter
		if !l.null {
			cs = all[l.start:l.end:l.end]
			if n == 0 {
				cs = []Counter{}
			}
		}
		if l.role < 0 {
			r.Counters = cs
		} else if l.role < len(r.Roles) {
			r.Roles[l.role].Counters = cs
		}
	}
}

// str decodes a JSON string (null: ""), interning it when intern is set.
func (d *Selective) str(val []byte, intern bool) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", isNull(val)
	}
	s := val[1 : len(val)-1]
	ascii := true
	for _, c := range s {
		switch {
		case c < 0x20:
			return "", false
		case c == '\\':
			// Escapes as encoding/json reads them; a string it had to
			// mend (invalid UTF-8, lone surrogates) goes the general way.
			var out string
			if json.Unmarshal(val, &out) != nil || strings.ContainsRune(out, utf8.RuneError) {
				return "", false
			}
			return out, true
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(s) {
		return "", false
	}
	if !intern {
		return string(s), true
	}
	if v, ok := d.names[string(s)]; ok {
		return v, true
	}
	v := string(s)
	d.names[v] = v
	return v, true
}

// strOK is str of a value skipValue read, ok as it said.
func (d *Selective) strOK(val []byte, intern, ok bool) (string, bool) {
	if !ok || len(val) == 0 {
		return "", false
	}
	return d.str(val, intern)
}

// parseIntOK is parseInt of a value skipValue read, ok as it said.
func parseIntOK(val []byte, ok bool) (int, bool) {
	if !ok || len(val) == 0 {
		return 0, false
	}
	return parseInt(val)
}

func isNull(val []byte) bool { return string(val) == "null" }

// number reports whether val is a JSON number.
func number(val []byte) bool {
	i := 0
	if i < len(val) && val[i] == '-' {
		i++
	}
	switch {
	case i < len(val) && val[i] == '0':
		i++
	case i < len(val) && val[i] >= '1' && val[i] <= '9':
		for i < len(val) && val[i] >= '0' && val[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(val) && val[i] == '.' {
		i++
		if i >= len(val) || val[i] < '0' || val[i] > '9' {
			return false
		}
		for i < len(val) && val[i] >= '0' && val[i] <= '9' {
			i++
		}
	}
	if i < len(val) && (val[i] == 'e' || val[i] == 'E') {
		i++
		if i < len(val) && (val[i] == '+' || val[i] == '-') {
			i++
		}
		if i >= len(val) || val[i] < '0' || val[i] > '9' {
			return false
		}
		for i < len(val) && val[i] >= '0' && val[i] <= '9' {
			i++
		}
	}
	return i == len(val)
}

// parseFloat, parseInt and parseUint decode a number as encoding/json
// does into a field of their type (null leaves 0); a number the field
// cannot hold fails.
func parseFloat(val []byte) (float64, bool) {
	if isNull(val) {
		return 0, true
	}
	if !number(val) {
		return 0, false
	}
	x, err := strconv.ParseFloat(string(val), 64)
	return x, err == nil
}

func parseInt(val []byte) (int, bool) {
	if isNull(val) {
		return 0, true
	}
	if !number(val) {
		return 0, false
	}
	x, err := strconv.ParseInt(string(val), 10, 0)
	return int(x), err == nil
}

func parseUint(val []byte) (uint64, bool) {
	if isNull(val) {
		return 0, true
	}
	if !number(val) {
		return 0, false
	}
	x, err := strconv.ParseUint(string(val), 10, 64)
	return x, err == nil
}

// pruneObject appends to dst the JSON object that src holds (after
// leading white space) without the members spec drops, matching names as
// encoding/json does (ignoring case) unless a keep list names them
// (map keys: exact). It reports false when src is not an object it can
// follow.
func pruneObject(dst, src []byte, spec map[string]member) ([]byte, bool) {
	out, end, ok := pruneAt(dst, src, skipSpace(src, 0), spec, nil)
	return out, ok && skipSpace(src, end) == len(src)
}

func pruneAt(dst, src []byte, i int, spec map[string]member, keep []string) ([]byte, int, bool) {
	if i >= len(src) || src[i] != '{' {
		return dst, i, false
	}
	dst = append(dst, '{')
	i = skipSpace(src, i+1)
	first := true
	if i < len(src) && src[i] == '}' {
		return append(dst, '}'), i + 1, true
	}
	for {
		if i >= len(src) || src[i] != '"' {
			return dst, i, false
		}
		keyEnd, ok := skipString(src, i)
		if !ok {
			return dst, i, false
		}
		key := src[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal(src[i:keyEnd], &k) != nil {
				return dst, i, false
			}
			key = []byte(k)
		}
		v := skipSpace(src, keyEnd)
		if v >= len(src) || src[v] != ':' {
			return dst, i, false
		}
		v = skipSpace(src, v+1)
		end, ok := skipValue(src, v)
		if !ok {
			return dst, i, false
		}
		m, known := lookup(spec, key)
		if keep != nil {
			known, m = true, member{drop: !keeps(keep, key)}
		}
		if !m.drop {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, src[i:keyEnd]...)
			dst = append(dst, ':')
			if known && (m.keep != nil || m.sub != nil) && src[v] == '{' {
				var e int
				dst, e, ok = pruneAt(dst, src, v, m.sub, m.keep)
				if !ok || e != end {
					return dst, i, false
				}
			} else {
				dst = append(dst, src[v:end]...)
			}
		}
		i = skipSpace(src, end)
		if i >= len(src) {
			return dst, i, false
		}
		switch src[i] {
		case ',':
			i = skipSpace(src, i+1)
		case '}':
			return append(dst, '}'), i + 1, true
		default:
			return dst, i, false
		}
	}
}

// lookup finds the rule for an object member by its name, ignoring case
// as encoding/json does for struct fields.
func lookup(spec map[string]member, key []byte) (member, bool) {
	for name, m := range spec {
		if len(name) == len(key) && strings.EqualFold(name, string(key)) {
			return m, true
		}
	}
	return member{}, false
}

func keeps(list []string, key []byte) bool {
	for _, s := range list {
		if s == string(key) {
			return true
		}
	}
	return false
}

func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\n' || src[i] == '\t' || src[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at src[i].
// A backslash escapes the byte after it (\uXXXX goes on with plain hex
// digits); strings in Records are short, so a loop beats a search.
func skipString(src []byte, i int) (int, bool) {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '"':
			return j + 1, true
		case '\\':
			j++
		}
	}
	return len(src), false
}

// container marks the bytes skipValue looks at inside an object or array.
var container = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// skipValue returns the index after the JSON value that starts at src[i].
// Brackets are counted, not matched: what is kept is checked again by the
// decoder.
func skipValue(src []byte, i int) (int, bool) {
	if i >= len(src) {
		return i, false
	}
	switch src[i] {
	case '"':
		return skipString(src, i)
	case '{', '[':
		depth := 0
		for i < len(src) {
			for i < len(src) && !container[src[i]] {
				i++
			}
			if i == len(src) {
				break
			}
			switch src[i] {
			case '"':
				e, ok := skipString(src, i)
				if !ok {
					return e, false
				}
				i = e
				continue
			case '{', '[':
				depth++
			default:
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	for i < len(src) {
		switch src[i] {
		case ',', '}', ']', ' ', '\n', '\t', '\r':
			return i, true
		}
		i++
	}
	return i, true
}
