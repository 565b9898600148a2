// Package tomlpos finds the line each key of a TOML document is on. The
// decoder keeps no positions, so the validation of a plan or a hosts file,
// which works on the decoded values, looks the line of a problem up here by
// the key's path.
//
// A path is the key's parts joined with dots, the elements of an array of
// tables numbered from 0 within their parent element: "run.threads",
// "version[1].basedir", "host[0].basedirs.10.11", "a[1].b[0]". A string
// inside an array or an inline table is indexed as the path, "=" and the
// string as the decoder gives it: "steps.list=point-query",
// "host[0].ssh_options=Foo=bar". Quoted key parts are decoded too. When two
// lines name the same path (a document the decoder refuses), the first
// keeps it.
//
// The scan is lenient: it expects a document the decoder has accepted, and
// on any other input indexes what it can read, without failing.
package tomlpos

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Lines maps the paths of a document's keys, tables and array strings to
// their lines (from 1).
type Lines map[string]int

// Line returns the line of path, else of its closest parent, else 0.
func (l Lines) Line(path string) int {
	for path != "" {
		if n, ok := l[path]; ok {
			return n
		}
		i := strings.LastIndexAny(path, ".[=")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// Path returns the path of a key as the decoder gives it (toml.Key: its
// parts, without element numbers): the path itself when it is indexed,
// else the first one indexed with element numbers added ("host", "port" is
// host[0].port when host[0] has a port, else host[1].port...), else the
// parts joined with dots.
func (l Lines) Path(key []string) string {
	var cands []string
	var walk func(prefix string, rest []string)
	walk = func(prefix string, rest []string) {
		if len(rest) == 0 {
			cands = append(cands, prefix)
			return
		}
		next := join(prefix, rest[0])
		walk(next, rest[1:])
		for i := 0; ; i++ {
			idx := next + "[" + strconv.Itoa(i) + "]"
			if _, ok := l[idx]; !ok {
				break
			}
			walk(idx, rest[1:])
		}
	}
	walk("", key)
	for _, c := range cands {
		if _, ok := l[c]; ok {
			return c
		}
	}
	return strings.Join(key, ".")
}

// add sets the line of path unless a line already has it.
func (l Lines) add(path string, line int) {
	if _, ok := l[path]; !ok {
		l[path] = line
	}
}

// Index returns the lines of src's headers, keys and the strings inside
// their arrays. It follows [table] and [[array]] headers, key = value lines
// (dotted and quoted keys), and values that span lines: arrays, inline
// tables and multi-line strings.
func Index(src string) Lines {
	l := Lines{}
	arrays := map[string]int{} // array of tables (path of its parent element) -> elements so far
	prefix := ""
	var v value
	for n, text := range strings.Split(src, "\n") {
		lineNo := n + 1
		if v.open() {
			v.scan(l, text, lineNo)
			continue
		}
		s := strings.TrimSpace(text)
		switch {
		case s == "" || s[0] == '#':
		case strings.HasPrefix(s, "[["):
			parts, _ := splitKey(s[2:], "]]")
			if len(parts) == 0 {
				continue
			}
			base := join(qualify(parts[:len(parts)-1], arrays), parts[len(parts)-1])
			arrays[base]++
			prefix = base + "[" + strconv.Itoa(arrays[base]-1) + "]"
			l.add(prefix, lineNo)
		case s[0] == '[':
			parts, _ := splitKey(s[1:], "]")
			if len(parts) == 0 {
				continue
			}
			prefix = qualify(parts, arrays)
			l.add(prefix, lineNo)
		default:
			parts, rest := splitKey(s, "=")
			if len(parts) == 0 {
				continue
			}
			v.key = join(prefix, strings.Join(parts, "."))
			l.add(v.key, lineNo)
			v.scan(l, rest, lineNo)
		}
	}
	return l
}

// qualify joins header parts, numbering the parts that are arrays of tables
// with their latest element: after [[host]] twice, [host.basedirs] is
// host[1].basedirs.
func qualify(parts []string, arrays map[string]int) string {
	out := ""
	for _, p := range parts {
		out = join(out, p)
		if n := arrays[out]; n > 0 {
			out += "[" + strconv.Itoa(n-1) + "]"
		}
	}
	return out
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// splitKey reads a dotted key of bare or quoted parts up to term and
// returns the parts and the text after term; no parts when it cannot.
func splitKey(s, term string) ([]string, string) {
	var parts []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, ""
		}
		var part string
		if q := s[0]; q == '"' || q == '\'' {
			end := closing(s, q)
			if end < 0 {
				return nil, ""
			}
			part, s = s[1:end], s[end+1:]
			if q == '"' {
				part = unescape(part)
			}
		} else {
			end := 0
			for end < len(s) && isBare(s[end]) {
				end++
			}
			if end == 0 {
				return nil, ""
			}
			part, s = s[:end], s[end:]
		}
		parts = append(parts, part)
		s = strings.TrimLeft(s, " \t")
		if rest, ok := strings.CutPrefix(s, term); ok {
			return parts, rest
		}
		if rest, ok := strings.CutPrefix(s, "."); ok {
			s = rest
			continue
		}
		return nil, ""
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// closing returns the index of the quote q that closes the one-line string
// opening s, or -1. In a basic string (q is '"') a backslash escapes the
// byte after it.
func closing(s string, q byte) int {
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == q:
			return i
		case q == '"' && s[i] == '\\':
			i++
		}
	}
	return -1
}

// escapes are the one-letter escapes of TOML's basic strings.
var escapes = map[byte]byte{'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', 'e': 0x1b, '"': '"', '\\': '\\'}

// unescape decodes the escapes of a basic string's text: the one-letter
// ones, \xHH, \uHHHH and \UHHHHHHHH (code points). Text with a malformed
// escape, which the decoder refuses, is returned as it is.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i++; i == len(s) {
			return s
		}
		if c, ok := escapes[s[i]]; ok {
			b.WriteByte(c)
			continue
		}
		n := 0
		switch s[i] {
		case 'x':
			n = 2
		case 'u':
			n = 4
		case 'U':
			n = 8
		}
		if n == 0 || i+n >= len(s) {
			return s
		}
		r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
		if err != nil || !utf8.ValidRune(rune(r)) {
			return s
		}
		b.WriteRune(rune(r))
		i += n
	}
	return b.String()
}

// value follows a key's value across lines: the depth of its arrays and
// inline tables, one-line strings (the ones inside them are indexed) and
// multi-line strings.
type value struct {
	key   string
	depth int
	multi string // the open """ or ''', if any
}

func (v *value) open() bool { return v.depth > 0 || v.multi != "" }

// scan follows one line of the value, s, which is on line lineNo.
func (v *value) scan(l Lines, s string, lineNo int) {
	for i := 0; i < len(s); i++ {
		if v.multi != "" {
			if strings.HasPrefix(s[i:], v.multi) {
				i += len(v.multi) - 1
				v.multi = ""
			} else if s[i] == '\\' && v.multi == `"""` {
				i++
			}
			continue
		}
		switch c := s[i]; c {
		case '#':
			return
		case '[', '{':
			v.depth++
		case ']', '}':
			if v.depth > 0 {
				v.depth--
			}
		case '"', '\'':
			if q := strings.Repeat(string(c), 3); strings.HasPrefix(s[i:], q) {
				v.multi = q
				i += 2
				continue
			}
			end := closing(s[i:], c)
			if end < 0 {
				return // a one-line string cannot go on: recover on the next line
			}
			str := s[i+1 : i+end]
			if c == '"' {
				str = unescape(str)
			}
			if v.depth > 0 {
				l.add(v.key+"="+str, lineNo)
			}
			i += end
		}
	}
}
