package mysqld

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// optionFile is a parsed MySQL option file (my.cnf).
//
// The syntax is the MySQL one: [group] headers; "name=value" or "name" (a
// flag) lines; "#" and ";" comment lines; "#" also starts a comment after
// an unquoted value; values may be quoted with ' or " and then keep
// whitespace and "#"; inside quotes \n \t \r \b \s \\ \' \" are escapes;
// "-" and "_" are the same in option names, and names and groups are case
// insensitive. "!include FILE" and "!includedir DIR" are recorded in
// Includes; loadOptionFile follows them.
type optionFile struct {
	// Groups maps a group name (lower case) to its options in file order.
	Groups map[string][]option
	// Includes are the !include and !includedir directives, in order.
	Includes []include
	// Files are the files read, the first one and every included one.
	Files []string

	// entries keeps options and includes in file order, so that
	// loadOptionFile reads an included file where its directive is.
	entries []entry
}

type entry struct {
	group   string
	opt     option
	include *include
}

// option is one option of a group.
type option struct {
	// Name is lower case with "_" turned into "-".
	Name string
	// Value is the unquoted value; HasValue is false for a bare "name".
	Value    string
	HasValue bool
}

// include is an !include or !includedir directive.
type include struct {
	Dir  bool // !includedir
	Path string
	Line int
}

// normName folds an option name the way MySQL compares them.
func normName(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
}

// parseOptionFile parses an option file; name is used in error messages.
func parseOptionFile(r io.Reader, name string) (*optionFile, error) {
	of := &optionFile{Groups: map[string][]option{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	group := ""
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		switch {
		case line == "", line[0] == '#', line[0] == ';':
			continue
		case line[0] == '!':
			dir := strings.HasPrefix(line, "!includedir")
			arg, ok := strings.CutPrefix(line, "!includedir")
			if !ok {
				arg, ok = strings.CutPrefix(line, "!include")
			}
			arg = strings.TrimSpace(arg)
			if !ok || arg == "" {
				return nil, fmt.Errorf("parse option file %s line %d: unknown directive %q (want !include FILE or !includedir DIR)", name, n, line)
			}
			inc := include{Dir: dir, Path: arg, Line: n}
			of.Includes = append(of.Includes, inc)
			of.entries = append(of.entries, entry{include: &inc})
			continue
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, fmt.Errorf("parse option file %s line %d: group header %q has no closing ]", name, n, line)
			}
			group = strings.ToLower(strings.TrimSpace(line[1:end]))
			if group == "" {
				return nil, fmt.Errorf("parse option file %s line %d: empty group name", name, n)
			}
			continue
		}
		if group == "" {
			return nil, fmt.Errorf("parse option file %s line %d: option %q before any [group] header", name, n, line)
		}
		opt, err := parseOptionLine(line)
		if err != nil {
			return nil, fmt.Errorf("parse option file %s line %d: %w", name, n, err)
		}
		of.Groups[group] = append(of.Groups[group], opt)
		of.entries = append(of.entries, entry{group: group, opt: opt})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read option file %s: %w", name, err)
	}
	return of, nil
}

func parseOptionLine(line string) (option, error) {
	eq := strings.IndexByte(line, '=')
	if eq < 0 {
		// A bare name; a trailing comment may follow.
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		return option{Name: normName(line)}, nil
	}
	name := normName(line[:eq])
	if name == "" {
		return option{}, fmt.Errorf("option with no name: %q", line)
	}
	v := strings.TrimSpace(line[eq+1:])
	if v != "" && (v[0] == '"' || v[0] == '\'') {
		val, rest, err := unquote(v)
		if err != nil {
			return option{}, fmt.Errorf("option %s: %w", name, err)
		}
		rest = strings.TrimSpace(rest)
		if rest != "" && rest[0] != '#' {
			return option{}, fmt.Errorf("option %s: text %q after the closing quote", name, rest)
		}
		return option{Name: name, Value: val, HasValue: true}, nil
	}
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return option{Name: name, Value: v, HasValue: true}, nil
}

// unquote reads a quoted value at the start of s and returns it and what
// follows the closing quote.
func unquote(s string) (val, rest string, err error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), s[i+1:], nil
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 's':
				b.WriteByte(' ')
			case '\\', '\'', '"':
				b.WriteByte(s[i])
			default:
				// MySQL keeps an unknown escape as is.
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("missing closing quote")
}

// Get returns the last value of option name in group (later lines win),
// whether it is present, and whether it has a value.
func (of *optionFile) Get(group, name string) (option, bool) {
	name = normName(name)
	opts := of.Groups[strings.ToLower(group)]
	for i := len(opts) - 1; i >= 0; i-- {
		if opts[i].Name == name {
			return opts[i], true
		}
	}
	return option{}, false
}

// loadOptionFile reads the option file at path and, like MySQL clients, the
// files its !include directives name and the *.cnf files of its
// !includedir directories (in name order), merged in reading order.
func loadOptionFile(path string) (*optionFile, error) {
	out := &optionFile{Groups: map[string][]option{}}
	if err := loadInto(out, path, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func loadInto(out *optionFile, path string, depth int) error {
	if depth > 10 {
		return fmt.Errorf("read option file %s: includes nested more than 10 deep (a loop?)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read option file: %w", err)
	}
	of, err := parseOptionFile(f, path)
	f.Close()
	if err != nil {
		return err
	}
	out.Files = append(out.Files, path)
	for _, e := range of.entries {
		if e.include == nil {
			out.Groups[e.group] = append(out.Groups[e.group], e.opt)
			continue
		}
		inc := *e.include
		out.Includes = append(out.Includes, inc)
		p := inc.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		if !inc.Dir {
			if err := loadInto(out, p, depth+1); err != nil {
				return err
			}
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return fmt.Errorf("read option file %s line %d: !includedir: %w", path, inc.Line, err)
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".cnf") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if err := loadInto(out, filepath.Join(p, n), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
