package plan

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testenv"
)

// hostile is a password a shell would run code from if it were pasted into
// a script: quotes of both kinds, $(...), backquotes, ;, a space, a
// backslash, a glob.
const hostile = `p'w"$(touch dollar)` + "`touch backquote`" + ` ;touch semi; a\b *`

// TestExpandShellScript runs the scripts Expand makes with a real shell: the
// password reaches the script as one word, unchanged, wherever the
// placeholder stands (outside quotes, in '...', in "...", next to other
// text); nothing in it runs; it is not on the shell's command line; and
// Shown hides it.
func TestExpandShellScript(t *testing.T) {
	sh := testenv.NeedBinary(t, "sh", "dash")
	for _, pw := range []string{hostile, "x';touch semi;'", `x";touch semi;"`, "$(touch dollar)"} {
		expandShell(t, sh, pw)
	}
}

func expandShell(t *testing.T, sh, password string) {
	dir := t.TempDir()
	script := `cd ` + dir + ` && printf '%s\n' {password} > unquoted && printf '%s\n' '{password}' > single && ` +
		`printf '%s\n' "{password}" > double && printf '%s\n' -p{password}x > adjacent && printf '%s\n' "{user}" > user`
	values := map[string]string{"password": password, "user": "sb test"}
	for _, argv := range [][]string{
		{"sh", "-c", script},
		{"env", "LC_ALL=C", sh, "-o", "noglob", "-ec", script, "name"},
	} {
		c, err := Expand(argv, values, "password")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.Argv {
			if strings.Contains(a, "touch") {
				t.Fatalf("the password is on the command line: %q", c.Argv)
			}
		}
		if shown := strings.Join(c.Shown, " "); strings.Contains(shown, "touch") || !strings.Contains(shown, "printf '%s\\n' '***' > single") ||
			!strings.Contains(shown, `"sb test"`) {
			t.Errorf("shown: %s", shown)
		}
		want := []string{"PERFBENCH_PASSWORD=" + password, "PERFBENCH_USER=sb test"}
		if !reflect.DeepEqual(c.Env, want) {
			t.Errorf("env %q, want %q", c.Env, want)
		}
		cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
		cmd.Env = append(os.Environ(), c.Env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%q: %v: %s", c.Argv, err, out)
		}
		for file, w := range map[string]string{"unquoted": password, "single": password, "double": password, "adjacent": "-p" + password + "x", "user": "sb test"} {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if got := strings.TrimSuffix(string(b), "\n"); err != nil || got != w {
				t.Errorf("%v: %s: %q, %v; want %q", argv[0], file, got, err, w)
			}
		}
		for _, f := range []string{"dollar", "backquote", "semi"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("%v: the password ran code: %s exists", argv[0], f)
			}
		}
	}
}

// TestExpandArguments: outside a shell script a value is an argument as it
// is, and hidden in Shown; a shell given a file and no -c has no script.
func TestExpandArguments(t *testing.T) {
	values := map[string]string{"password": "se cret", "socket": "/s"}
	for _, c := range []struct {
		argv, run, shown []string
	}{
		{[]string{"tool", "--password={password}", "-S", "{socket}"},
			[]string{"tool", "--password=se cret", "-S", "/s"}, []string{"tool", "--password=***", "-S", "/s"}},
		{[]string{"sh", "run.sh", "{password}"},
			[]string{"sh", "run.sh", "se cret"}, []string{"sh", "run.sh", "***"}},
		{[]string{"bash", "--norc", "-c", "x -S {socket}"},
			[]string{"bash", "--norc", "-c", `x -S "$PERFBENCH_SOCKET"`}, []string{"bash", "--norc", "-c", "x -S /s"}},
	} {
		got, err := Expand(c.argv, values, "password")
		if err != nil || !reflect.DeepEqual(got.Argv, c.run) || !reflect.DeepEqual(got.Shown, c.shown) {
			t.Errorf("Expand(%q) = %q, %q, %v; want %q, %q", c.argv, got.Argv, got.Shown, err, c.run, c.shown)
		}
	}
}

// TestPasswordOnCommandLineWarning: a custom step that gives a set
// password to a command as an argument is warned of; in a shell script, or
// with the default password, it is not.
func TestPasswordOnCommandLineWarning(t *testing.T) {
	src := `
[data]
password = "s3cret"
[steps]
list = ["arg", "script"]
[[steps.custom]]
name = "arg"
command = ["sysbench", "--mysql-password={password}", "run"]
[[steps.custom]]
name = "script"
command = ["sh", "-c", "MYSQL_PWD={password} mariadb -e 'select 1'; sleep {time}"]
[[version]]
label = "a"
socket = "/s"
`
	p, err := parse("p.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.HasPrefix(p.Warnings[0], "custom step arg (line 8) puts {password} on a command line") {
		t.Errorf("warnings %q", p.Warnings)
	}
	p, err = parse("p.toml", []byte(strings.Replace(src, `password = "s3cret"`, "", 1)))
	if err != nil || len(p.Warnings) != 0 {
		t.Errorf("the default password: warnings %q, %v", p.Warnings, err)
	}
}

// TestPasswordInScriptWarning: a script, or a shell's script inside it,
// that gives {password} to a command as an argument is warned of; one that
// sets it in the environment, or prints it into a pipe, is not.
func TestPasswordInScriptWarning(t *testing.T) {
	for script, warn := range map[string]bool{
		`mariadb -p'{password}' -e 'select 1'`:                                               true,
		`timeout {time} sh -c 'mariadb --password="{password}" -e "select 1"'`:               true,
		`sh -c "timeout 5 sh -c 'mariadb -p{password}'"`:                                     true,
		`eval "mariadb -p'{password}'"`:                                                      true,
		`timeout {time} sh -c 'MYSQL_PWD={password} mariadb -e "select 1"'`:                  false,
		`sh -c "env MYSQL_PWD='{password}' mariadb"; sleep {time}`:                           false,
		`printf '[client]\npassword=%s\n' '{password}' | mariadb --defaults-file=/dev/stdin`: false,
	} {
		src := "[data]\npassword = \"s3cret\"\n[steps]\nlist = [\"s\"]\n[[steps.custom]]\nname = \"s\"\ncommand = [\"sh\", \"-c\", " +
			strconv.Quote(script) + "]\n[[version]]\nlabel = \"a\"\nsocket = \"/s\"\n"
		p, err := parse("p.toml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		got := len(p.Warnings) == 1 && strings.HasPrefix(p.Warnings[0], "custom step s (line 7): its script gives {password} to a command as an argument")
		if got != warn || len(p.Warnings) > 1 || (!warn && len(p.Warnings) != 0) {
			t.Errorf("%s: warnings %q, want a warning: %v", script, p.Warnings, warn)
		}
	}
}

// TestPasswordSysbenchCannotRead: a data password that sysbench's option
// file cannot hold is refused at its line, since perfbench does not put it
// on a command line.
func TestPasswordSysbenchCannotRead(t *testing.T) {
	got := parseErrors(t, "[data]\npassword = '''it's a \"test\"'''\n"+minimal)
	if len(got) != 1 || !strings.HasPrefix(got[0], "2: invalid sysbench options: sysbench 1.0 cannot read a password that holds both quote characters") {
		t.Errorf("errors %q", got)
	}
}

// TestExpandNestedShell runs scripts that start a shell inside the shell
// (sh -c "timeout 5 sh -c '...'", three deep, eval) with a real shell: the
// password reaches the innermost script as one word, unchanged, and nothing
// in it runs, whatever the quotes around the inner script.
func TestExpandNestedShell(t *testing.T) {
	sh := testenv.NeedBinary(t, "sh", "dash")
	testenv.NeedBinary(t, "timeout", "coreutils")
	for _, pw := range []string{hostile, "x';touch semi;'", `x";touch semi;"`, "$(touch dollar)", `\'$(touch dollar)\'`} {
		dir := t.TempDir()
		scripts := map[string]string{
			"single":    `timeout 5 sh -c 'printf "%s\n" {password} > a'`,
			"assign":    `timeout {time} sh -c 'MYSQL_PWD={password}; printf "%s\n" "$MYSQL_PWD" > b'`,
			"double":    `sh -c "printf '%s\n' '{password}' > c"`,
			"threedeep": `sh -c 'sh -c "printf \"%s\n\" {password} > d"'`,
			"eval":      `eval "printf '%s\n' {password} > e"`,
		}
		files := map[string]string{"single": "a", "assign": "b", "double": "c", "threedeep": "d", "eval": "e"}
		for name, script := range scripts {
			c, err := Expand([]string{sh, "-c", "cd " + dir + " && " + script}, map[string]string{"password": pw, "time": "5"}, "password")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(strings.Join(c.Argv, " "), "touch") {
				t.Fatalf("%s: the password is in the script: %q", name, c.Argv)
			}
			cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
			cmd.Env = append(os.Environ(), c.Env...)
			out, err := cmd.CombinedOutput()
			b, rerr := os.ReadFile(filepath.Join(dir, files[name]))
			if got := strings.TrimSuffix(string(b), "\n"); err != nil || rerr != nil || got != pw {
				t.Errorf("%s with password %q: %q (%v, %v: %s); want the password; script %q", name, pw, got, rerr, err, out, c.Argv[2])
			}
		}
		for _, f := range []string{"dollar", "backquote", "semi"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("password %q ran code: %s exists", pw, f)
			}
		}
	}
}
