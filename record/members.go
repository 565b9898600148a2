package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// memberNamesOf are the names of a Record's members: the JSON names of
// Record's fields, as docs/record.md lists them.
var memberNamesOf = func() []string {
	var names []string
	t := reflect.TypeFor[Record]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}()

// memberIndex indexes memberNamesOf by name.
var memberIndex = func() map[string]int {
	m := map[string]int{}
	for i, name := range memberNamesOf {
		m[name] = i
	}
	return m
}()

// memberOf returns the index in memberNamesOf of the member of a Record
// that a JSON member named name is decoded into: its own name, or one
// that matches it in another case (as encoding/json matches names); -1
// for none.
func memberOf(name string) int {
	if i, ok := memberIndex[name]; ok {
		return i
	}
	for i, m := range memberNamesOf {
		if strings.EqualFold(m, name) {
			return i
		}
	}
	return -1
}

// memberWarnings returns a warning for each member name that is no member
// of a Record (a misspelt one, "opps": decoding ignores it, and the member
// meant is left unread), and for each member given more than once
// (decoding reads the values one over the other: the last one wins).
// names are a Record's member names in order.
func memberWarnings(names []string) []Warning {
	var ws []Warning
	var count [64]uint8
	for _, name := range names {
		m := memberOf(name)
		switch {
		case m < 0:
			text := fmt.Sprintf("the Record has a member %q, which is not a Record member: it was not read", name)
			if near := nearestMember(name); near != "" {
				text += fmt.Sprintf(" (did you mean %q?)", near)
			}
			ws = append(ws, Warning{Code: WarnGeneral, Text: text})
		case m < len(count) && count[m] < 2:
			count[m]++
			if count[m] == 2 {
				ws = append(ws, Warning{Code: WarnGeneral, Text: fmt.Sprintf("the Record gives its member %q more than once: the values were read one over the other, the last one winning; keep one", memberNamesOf[m])})
			}
		}
	}
	return ws
}

// nearestMember returns the Record member whose name is at most two
// edits from name (the nearest), or "".
func nearestMember(name string) string {
	best, bestD := "", 3
	for _, m := range memberNamesOf {
		if d := editDistance(strings.ToLower(name), m); d < bestD {
			best, bestD = m, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// memberNames returns the names of the members of the JSON object data
// holds (after leading white space), in order: escapes in names decoded;
// nil when data is not an object that can be followed (decoding then
// fails, or says why).
func memberNames(data []byte) []string {
	var names []string
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	_, ok := eachMember(data, i, func(key []byte, _, _ int) bool {
		names = append(names, string(key))
		return true
	}, nil)
	if ok {
		return names
	}
	// Names with escapes: the decoder's own tokens.
	names = names[:0]
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		name, isName := t.(string)
		var skip json.RawMessage
		if err != nil || !isName || dec.Decode(&skip) != nil {
			return nil
		}
		names = append(names, name)
	}
	return names
}

// trimLabels removes white space at both ends of the Record's labels, as
// a CSV table's cells are read: "8.0 " and "8.0" are one version.
func (r *Record) trimLabels() {
	for _, s := range []*string{&r.Host, &r.Version, &r.Step, &r.Group, &r.AAOf} {
		if t := strings.TrimSpace(*s); len(t) != len(*s) {
			*s = t
		}
	}
	if c := r.Comparison; c != nil {
		for i, v := range c.Versions {
			c.Versions[i] = strings.TrimSpace(v)
		}
	}
}
