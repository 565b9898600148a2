package remote

import (
	"strconv"
	"strings"
)

// keyLines maps the keys of a TOML document to their lines, so that
// validation errors (the decoder keeps no positions) can name one. Paths
// are dotted, with the elements of arrays of tables numbered from 0
// ("host[1].port", "host[0].basedirs.10.11"); a string inside an array is
// path + "=" + the string ("host[0].ssh_options=Foo=bar").
type keyLines map[string]int

// line returns the line of path, else of its closest parent, else 0.
func (kl keyLines) line(path string) int {
	for path != "" {
		if n, ok := kl[path]; ok {
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

// scanKeyLines indexes a document the decoder has accepted. It follows
// headers, key = value lines, multi-line strings and multi-line arrays.
func scanKeyLines(src string) keyLines {
	kl := keyLines{}
	arrays := map[string]int{} // array-of-tables header -> elements so far
	prefix := ""
	var v valueScan
	for n, text := range strings.Split(src, "\n") {
		lineNo := n + 1
		if v.open() {
			v.scan(kl, text, lineNo)
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
			// Elements are numbered across the whole document (a hosts file
			// has no arrays of tables nested in others).
			name := joinKey(qualify(parts[:len(parts)-1], arrays), parts[len(parts)-1])
			plain := strings.Join(parts, ".")
			arrays[plain]++
			prefix = name + "[" + strconv.Itoa(arrays[plain]-1) + "]"
			kl[prefix] = lineNo
		case s[0] == '[':
			parts, _ := splitKey(s[1:], "]")
			prefix = qualify(parts, arrays)
			kl[prefix] = lineNo
		default:
			parts, rest := splitKey(s, "=")
			if len(parts) == 0 {
				continue
			}
			v.key = joinKey(prefix, strings.Join(parts, "."))
			kl[v.key] = lineNo
			v.scan(kl, rest, lineNo)
		}
	}
	return kl
}

// qualify joins header parts, numbering the parts that are arrays of
// tables with their latest element: [host.basedirs] is host[N].basedirs.
func qualify(parts []string, arrays map[string]int) string {
	out, plain := "", ""
	for _, p := range parts {
		plain = joinKey(plain, p)
		out = joinKey(out, p)
		if n := arrays[plain]; n > 0 {
			out += "[" + strconv.Itoa(n-1) + "]"
		}
	}
	return out
}

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// splitKey reads a dotted key of bare or quoted parts up to term and
// returns the parts and the text after term.
func splitKey(s, term string) ([]string, string) {
	var parts []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, ""
		}
		var part string
		if q := s[0]; q == '"' || q == '\'' {
			end := 1
			for end < len(s) && s[end] != q {
				if q == '"' && s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, ""
			}
			part, s = s[1:end], s[end+1:]
			if q == '"' {
				if u, err := strconv.Unquote(`"` + part + `"`); err == nil {
					part = u
				}
			}
		} else {
			end := strings.IndexFunc(s, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
			})
			if end <= 0 {
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

// valueScan follows a value across lines: brackets, one-line strings (the
// ones inside brackets are indexed) and multi-line strings.
type valueScan struct {
	key   string
	depth int
	multi string // the open """ or ''', if any
}

func (v *valueScan) open() bool { return v.depth > 0 || v.multi != "" }

func (v *valueScan) scan(kl keyLines, s string, lineNo int) {
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
			end := i + 1
			for end < len(s) && s[end] != c {
				if c == '"' && s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return
			}
			str := s[i+1 : end]
			if c == '"' {
				if u, err := strconv.Unquote(`"` + str + `"`); err == nil {
					str = u
				}
			}
			if v.depth > 0 {
				if _, seen := kl[v.key+"="+str]; !seen {
					kl[v.key+"="+str] = lineNo
				}
			}
			i = end
		}
	}
}
