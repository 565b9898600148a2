package plan

import (
	"path/filepath"
	"regexp"
	"strings"
)

// word is a word of a shell script as the shell hands it to a command:
// its quotes removed, its expansions ($X, $(...)) left as text. pos[i] is
// the offset in the script of text[i]. A word with sep set is no word but
// the end of a command (; & | ( ) < > or a new line).
type word struct {
	text string
	pos  []int
	sep  bool
}

// scriptWords splits a shell script into words and command ends. It is the
// shell's reading as far as perfbench needs it to find the scripts of
// shells inside the script and the arguments of its commands; here-documents,
// $(...) and `...` are read as if they were words of the script itself.
func scriptWords(script string) []word {
	var words []word
	var cur word
	open := false // a word has started, perhaps with "" only
	flush := func() {
		if open {
			words = append(words, cur)
		}
		cur, open = word{}, false
	}
	add := func(i int) {
		cur.text += script[i : i+1]
		cur.pos = append(cur.pos, i)
		open = true
	}
	state := unquoted
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch state {
		case inSingle:
			if c == '\'' {
				state = unquoted
			} else {
				add(i)
			}
		case inDouble:
			switch {
			case c == '"':
				state = unquoted
			case c == '\\' && i+1 < len(script) && strings.IndexByte("$`\"\\\n", script[i+1]) >= 0:
				i++
				if script[i] != '\n' {
					add(i)
				}
			default:
				add(i)
			}
		default:
			switch {
			case c == '\\':
				if i++; i < len(script) && script[i] != '\n' {
					add(i)
				}
			case c == '\'':
				state, open = inSingle, true
			case c == '"':
				state, open = inDouble, true
			case c == ' ' || c == '\t':
				flush()
			case strings.IndexByte(";&|()<>\n", c) >= 0:
				flush()
				words = append(words, word{sep: true})
			default:
				add(i)
			}
		}
	}
	flush()
	return words
}

// nestedScripts returns the indexes of the words of a script that a shell
// reads as a script again: the script of a shell the script starts (sh -c
// SCRIPT, timeout 5 bash -ec SCRIPT) and the words of eval.
func nestedScripts(words []word) []int {
	var nested []int
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w.sep {
			continue
		}
		if w.text == "eval" {
			for i++; i < len(words) && !words[i].sep; i++ {
				nested = append(nested, i)
			}
			continue
		}
		if !shells[filepath.Base(w.text)] {
			continue
		}
		argv := []string{w.text}
		for j := i + 1; j < len(words) && !words[j].sep; j++ {
			argv = append(argv, words[j].text)
		}
		if s := scriptIndex(argv); s > 0 {
			nested = append(nested, i+s)
			i += s
		}
	}
	return nested
}

// scriptRefs returns, for each placeholder of a shell script (by its
// offset), the text that stands for it: a reference to the environment
// variable that holds its value, quoted so that the shell which reads the
// value, the script's own or a shell the script starts (sh -c '...' inside
// sh -c, eval), expands it into one word and never reads the value as code.
// env names a placeholder's variable.
func scriptRefs(script string, env func(name string) string) map[int]string {
	states := shellStates(script)
	refs := map[int]string{}
	for _, m := range placeholderRE.FindAllStringSubmatchIndex(script, -1) {
		refs[m[0]] = envRef(states[m[0]], env(script[m[2]:m[3]]))
	}
	words := scriptWords(script)
	for _, n := range nestedScripts(words) {
		w := words[n]
		for off, inner := range scriptRefs(w.text, env) {
			end := off + len(placeholderRE.FindString(w.text[off:])) - 1
			start := w.pos[off]
			if w.pos[end] != start+end-off {
				continue // quotes inside the placeholder: no placeholder in the script
			}
			refs[start] = quoteAs(states[start], inner)
		}
	}
	return refs
}

// envRef is a reference to the environment variable env that a shell
// expands into one word where the quoting state is state.
func envRef(state int, env string) string {
	switch state {
	case inSingle:
		return `'"$` + env + `"'`
	case inDouble:
		return "${" + env + "}"
	default:
		return `"$` + env + `"`
	}
}

// quoteAs returns shell text that, where the quoting state is state, is
// the literal text s.
func quoteAs(state int, s string) string {
	switch state {
	case inSingle:
		return strings.ReplaceAll(s, `'`, `'\''`)
	case inDouble:
		return doubleQuoteRE.ReplaceAllString(s, `\$0`)
	default:
		return `'` + strings.ReplaceAll(s, `'`, `'\''`) + `'`
	}
}

// doubleQuoteRE matches the characters that are special inside "...".
var doubleQuoteRE = regexp.MustCompile("[$`\"\\\\]")

// assignmentRE matches a word that assigns a variable (NAME=value).
var assignmentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// quietBuiltins are commands of the shell itself: their arguments are on
// no process's command line.
var quietBuiltins = map[string]bool{"echo": true, "printf": true, "export": true, "local": true, "readonly": true,
	"declare": true, "typeset": true, "test": true, "[": true, "[[": true, ":": true}

// scriptShowsPassword reports whether a shell script, or a script a shell
// it starts reads, gives {password} to a command as an argument (mariadb
// -p'{password}'), where every local user can read it in
// /proc/PID/cmdline; a variable assignment (MYSQL_PWD={password} mariadb,
// env MYSQL_PWD={password} ...) and the arguments of echo and printf are
// not on a command line.
func scriptShowsPassword(script string) bool {
	words := scriptWords(script)
	nested := map[int]bool{}
	for _, n := range nestedScripts(words) {
		nested[n] = true
		if scriptShowsPassword(words[n].text) {
			return true
		}
	}
	command := ""
	for i, w := range words {
		switch {
		case w.sep:
			command = ""
		case command == "" && assignmentRE.MatchString(w.text):
		case command == "":
			command = w.text
		case nested[i] || quietBuiltins[command] || assignmentRE.MatchString(w.text):
		case strings.Contains(w.text, "{password}"):
			return true
		}
	}
	return false
}
