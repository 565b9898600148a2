package plan

import (
	"strconv"
	"strings"
)

// lineIndex maps keys of a TOML document to the lines they are on, so that
// validation errors (which the TOML decoder knows nothing about) can name a
// line. Keys are dotted paths with array-of-tables elements indexed from 0:
// "run.threads", "version[1].basedir", "steps.override.read-write.duration".
// A string inside an array is indexed as path + "=" + value:
// "steps.list=point-query".
type lineIndex map[string]int

// line returns the line of path, else of its closest parent, else 0.
func (ix lineIndex) line(path string) int {
	for path != "" {
		if n, ok := ix[path]; ok {
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

// scanState is the lexical state carried from one line to the next.
type scanState struct {
	depth     int    // open [ and { of a value
	multi     string // open """ or ''' string, if any
	key       string // key whose value is being scanned
	inStr     bool   // inside a one-line string of an array element
	strQuote  byte
	strBuf    strings.Builder
	strEscape bool
}

// indexLines builds the line index of src. It is lenient: the TOML decoder
// has already rejected malformed documents.
func indexLines(src string) lineIndex {
	ix := lineIndex{}
	arrays := map[string]int{} // normalized array-of-tables path -> elements so far
	prefix := ""
	var st scanState
	for n, line := range strings.Split(src, "\n") {
		lineNo := n + 1
		if st.multi != "" || st.depth > 0 {
			st.scanValue(ix, line, lineNo)
			continue
		}
		s := strings.TrimSpace(line)
		switch {
		case s == "" || s[0] == '#':
			continue
		case strings.HasPrefix(s, "[["):
			parts, _ := parseKey(s[2:], "]]")
			if len(parts) == 0 {
				continue
			}
			parent := normalize(parts[:len(parts)-1], arrays)
			base := join(parent, parts[len(parts)-1])
			i := arrays[base]
			arrays[base] = i + 1
			prefix = base + "[" + strconv.Itoa(i) + "]"
			ix[prefix] = lineNo
		case s[0] == '[':
			parts, _ := parseKey(s[1:], "]")
			if len(parts) == 0 {
				continue
			}
			prefix = normalize(parts, arrays)
			if _, ok := ix[prefix]; !ok {
				ix[prefix] = lineNo
			}
		default:
			parts, rest := parseKey(s, "=")
			if len(parts) == 0 {
				continue
			}
			key := join(prefix, strings.Join(parts, "."))
			ix[key] = lineNo
			st.key = key
			st.scanValue(ix, rest, lineNo)
		}
	}
	return ix
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// normalize joins header parts, indexing the parts that are arrays of tables
// with their current (last) element.
func normalize(parts []string, arrays map[string]int) string {
	cur := ""
	for _, p := range parts {
		cur = join(cur, p)
		if n, ok := arrays[cur]; ok && n > 0 {
			cur += "[" + strconv.Itoa(n-1) + "]"
		}
	}
	return cur
}

// parseKey reads a dotted key (bare or quoted parts) up to the terminator
// and returns its parts and the text after the terminator.
func parseKey(s, term string) ([]string, string) {
	var parts []string
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return nil, ""
		}
		var part string
		switch s[i] {
		case '"', '\'':
			q := s[i]
			j := i + 1
			var b strings.Builder
			for j < len(s) && s[j] != q {
				if q == '"' && s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
				j++
			}
			part = b.String()
			i = j + 1
		default:
			j := i
			for j < len(s) && (isBare(s[j])) {
				j++
			}
			if j == i {
				return nil, ""
			}
			part = s[i:j]
			i = j
		}
		parts = append(parts, part)
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if strings.HasPrefix(s[i:], term) {
			return parts, s[i+len(term):]
		}
		if i < len(s) && s[i] == '.' {
			i++
			continue
		}
		return nil, ""
	}
	return nil, ""
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// scanValue follows strings, brackets and comments through one line of a
// value, indexing the strings found inside arrays.
func (st *scanState) scanValue(ix lineIndex, s string, lineNo int) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if st.multi != "" {
			if strings.HasPrefix(s[i:], st.multi) {
				i += len(st.multi) - 1
				st.multi = ""
			} else if c == '\\' && st.multi == `"""` {
				i++
			}
			continue
		}
		if st.inStr {
			switch {
			case st.strEscape:
				st.strBuf.WriteByte(c)
				st.strEscape = false
			case c == '\\' && st.strQuote == '"':
				st.strEscape = true
			case c == st.strQuote:
				st.inStr = false
				if st.depth > 0 {
					k := st.key + "=" + st.strBuf.String()
					if _, ok := ix[k]; !ok {
						ix[k] = lineNo
					}
				}
			default:
				st.strBuf.WriteByte(c)
			}
			continue
		}
		switch c {
		case '#':
			return
		case '"', '\'':
			q := strings.Repeat(string(c), 3)
			if strings.HasPrefix(s[i:], q) {
				st.multi = q
				i += 2
				continue
			}
			st.inStr, st.strQuote = true, c
			st.strBuf.Reset()
		case '[', '{':
			st.depth++
		case ']', '}':
			if st.depth > 0 {
				st.depth--
			}
		}
	}
	// A one-line string cannot span lines; recover from broken input.
	st.inStr = false
}
