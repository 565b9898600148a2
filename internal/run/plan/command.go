package plan

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Command is a command line of the plan (a custom step's, a managed
// server's start or stop) with its placeholders filled in.
type Command struct {
	// Argv is what runs.
	Argv []string
	// Env are NAME=value pairs the command needs besides perfbench's own
	// environment: the values of the placeholders inside shell scripts.
	Env []string
	// Shown is Argv for logs and Records: the values filled in where they
	// stand, and the values of secret placeholders as "***".
	Shown []string
}

// envPrefix starts the names of the environment variables that carry the
// values of placeholders into shell scripts: {password} is
// $PERFBENCH_PASSWORD, {table_size} $PERFBENCH_TABLE_SIZE.
const envPrefix = "PERFBENCH_"

// envName is the environment variable that carries the value of a
// placeholder into a shell script.
func envName(placeholder string) string { return envPrefix + strings.ToUpper(placeholder) }

// shells are the commands whose -c argument is a script.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "ksh": true, "mksh": true, "zsh": true}

// Expand replaces the placeholders {name} of a command line with values.
// The placeholders a plan accepts are checked when it is parsed:
//
//   - start and stop: {basedir} {datadir} {socket} {port} {pid_file}
//     {mycnf} {error_log} {out}
//   - custom steps: {host} {port} {socket} {user} {password} {db} {tables}
//     {table_size} {threads} {warmup} {duration} {time} (warm-up plus
//     duration plus tail, whole seconds) {out} {sysbench} {rand_type}
//     {sysbench_options} (a sysbench option file holding the password,
//     for --config-file)
//
// In an argument a placeholder is replaced by its value as it is: no shell
// reads it. In the script of a shell (sh -c SCRIPT, bash -ec SCRIPT, after
// a wrapper such as numactl or env too) a placeholder becomes a reference
// to an environment variable the command gets (envPrefix + NAME), quoted
// for where it stands (outside quotes, in '...' or in "..."): the shell
// expands it into one word and never reads the value as code, so that a
// password holding ' or $(...) runs nothing, and the value is not on the
// shell's command line. In the script of a shell the script starts (sh -c
// "timeout 5 sh -c 'MYSQL_PWD={password} mariadb'", or eval) the reference
// is quoted for the inner shell and reaches it as text: the inner shell
// expands it from the environment it inherits, and the value is never
// script text at any depth. The values of the placeholders named in secret
// are "***" in Command.Shown. A placeholder without a value is an error.
func Expand(argv []string, values map[string]string, secret ...string) (Command, error) {
	hidden := map[string]bool{}
	for _, s := range secret {
		hidden[s] = true
	}
	script := scriptIndex(argv)
	c := Command{Argv: make([]string, len(argv)), Shown: make([]string, len(argv))}
	envSet := map[string]bool{}
	var missing []string
	for i, a := range argv {
		var run, shown strings.Builder
		var refs map[int]string
		if i == script {
			refs = scriptRefs(a, envName)
		}
		last := 0
		for _, m := range placeholderRE.FindAllStringSubmatchIndex(a, -1) {
			name := a[m[2]:m[3]]
			run.WriteString(a[last:m[0]])
			shown.WriteString(a[last:m[0]])
			last = m[1]
			v, ok := values[name]
			if !ok {
				missing = append(missing, "{"+name+"}")
				continue
			}
			show := v
			if hidden[name] {
				show = "***"
			}
			shown.WriteString(show)
			if i != script {
				run.WriteString(v)
				continue
			}
			env := envName(name)
			if !envSet[env] {
				envSet[env] = true
				c.Env = append(c.Env, env+"="+v)
			}
			run.WriteString(refs[m[0]])
		}
		run.WriteString(a[last:])
		shown.WriteString(a[last:])
		c.Argv[i], c.Shown[i] = run.String(), shown.String()
	}
	if len(missing) > 0 {
		return Command{}, fmt.Errorf("command %q: no value for %s", strings.Join(argv, " "), strings.Join(missing, ", "))
	}
	return c, nil
}

// scriptIndex returns the index of the script argument of a shell in argv
// (sh -c SCRIPT, bash -o pipefail -ec SCRIPT, numactl ... sh -c SCRIPT), or
// -1.
func scriptIndex(argv []string) int {
	for i, a := range argv {
		if !shells[filepath.Base(a)] {
			continue
		}
		sawC := false
		for j := i + 1; j < len(argv); j++ {
			opt := argv[j]
			switch {
			case opt == "--":
				// Options end; a script follows only after -c.
			case opt == "-o" || opt == "+o" || opt == "-O" || opt == "+O":
				j++
			case strings.HasPrefix(opt, "--"):
			case len(opt) > 1 && (opt[0] == '-' || opt[0] == '+'):
				sawC = sawC || strings.ContainsRune(opt[1:], 'c')
			default:
				if sawC {
					return j
				}
				j = len(argv)
			}
		}
	}
	return -1
}

// Quoting states of a shell script.
const (
	unquoted = iota
	inSingle
	inDouble
)

// shellStates returns, for each byte of script, whether it stands outside
// quotes, inside '...' or inside "..." (backslash escapes followed).
func shellStates(script string) []int {
	states := make([]int, len(script)+1)
	state := unquoted
	for i := 0; i < len(script); i++ {
		states[i] = state
		c := script[i]
		switch state {
		case unquoted:
			switch c {
			case '\\':
				i++
				if i < len(script) {
					states[i] = state
				}
			case '\'':
				state = inSingle
			case '"':
				state = inDouble
			}
		case inSingle:
			if c == '\'' {
				state = unquoted
			}
		case inDouble:
			switch c {
			case '\\':
				i++
				if i < len(script) {
					states[i] = state
				}
			case '"':
				state = unquoted
			}
		}
	}
	states[len(script)] = state
	return states
}
